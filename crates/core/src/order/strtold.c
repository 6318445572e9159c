/* xsort-core: long double parsing for GNU sort's -g (general numeric) ordering.
 *
 * GNU sort parses -g keys with strtold and compares the results as long double
 * (80-bit extended precision on x86).  Rust has no such type, so the parsing and
 * the comparison happen here, in C, where `long double` is whatever the platform's
 * C compiler (and GNU sort) uses.  Parsing uses the locale object the caller
 * passes (its decimal point, as GNU's strtold uses LC_NUMERIC's), or the C
 * locale when it passes NULL.
 */
#define _GNU_SOURCE 1
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <float.h>

#if LDBL_MANT_DIG == 64
# define LD_VALUE_BYTES 10
#else
# define LD_VALUE_BYTES sizeof (long double)
#endif

#if defined __GLIBC__
static locale_t c_locale_handle (void)
{
  static locale_t cached;
  locale_t loc = __atomic_load_n (&cached, __ATOMIC_ACQUIRE);
  if (!loc)
    {
      locale_t fresh = newlocale (LC_ALL_MASK, "C", (locale_t) 0);
      if (!fresh)
        return (locale_t) 0;
      locale_t expected = (locale_t) 0;
      if (__atomic_compare_exchange_n (&cached, &expected, fresh, 0,
                                       __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        loc = fresh;
      else
        {
          freelocale (fresh);
          loc = expected;
        }
    }
  return loc;
}
#endif

static long double parse_ld (const char *s, char **end, void *given)
{
#if defined __GLIBC__
  locale_t loc = given ? (locale_t) given : c_locale_handle ();
  if (loc)
    return strtold_l (s, end, loc);
#endif
  return strtold (s, end);
}

/* GNU sort 9.1's general_numcompare on NUL-terminated strings: strings without a
   number first, then NaNs, then numbers by value (-0 == 0).  GNU 9.1 orders two NaNs
   by memcmp of their representations; only the value bytes are compared here (x86's
   80-bit long double has 6 padding bytes whose content GNU does not control).  */
int xsort_order_gcmp (const char *sa, const char *sb, void *loc)
{
  char *ea;
  char *eb;
  long double a = parse_ld (sa, &ea, loc);
  long double b = parse_ld (sb, &eb, loc);
  if (sa == ea)
    return sb == eb ? 0 : -1;
  if (sb == eb)
    return 1;
  if (a < b)
    return -1;
  if (a > b)
    return 1;
  if (a == b)
    return 0;
  if (b == b)
    return -1;
  if (a == a)
    return 1;
  int d = memcmp (&a, &b, LD_VALUE_BYTES);
  return (d > 0) - (d < 0);
}

/* Number of bytes of S that strtold consumes (0: no number).  */
size_t xsort_order_gend (const char *s, void *loc)
{
  char *end;
  (void) parse_ld (s, &end, loc);
  return (size_t) (end - s);
}

/* Classifies S for an order-preserving prefix:
   0 no number, 1 or 2 NaN, 3 -inf, 4 negative, 5 zero, 6 positive, 7 +inf.
   For 4 and 6, *EXP and *MANT give |x| = (*MANT / 2^64) * 2^*EXP with the top
   bit of *MANT set (the mantissa truncated to 64 bits where long double is wider).  */
int xsort_order_gkey (const char *s, int *exp, unsigned long long *mant,
                     void *loc)
{
  char *end;
  long double x = parse_ld (s, &end, loc);
  *exp = 0;
  *mant = 0;
  if (end == s)
    return 0;
  if (isnan (x))
    return signbit (x) ? 1 : 2;
  if (isinf (x))
    return x < 0 ? 3 : 7;
  if (x == 0)
    return 5;
  int e;
  long double m = frexpl (fabsl (x), &e);
  *exp = e;
  *mant = (unsigned long long) ldexpl (m, 64);
  return x < 0 ? 4 : 6;
}
