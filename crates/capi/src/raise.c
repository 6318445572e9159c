/* raise.c - the jump behind Nsort's nsort_raise_error, for libxsort's merge input callbacks and
 * declared comparison functions.
 *
 * nsort_raise_error does not return to the callback that calls it: it jumps back to where the
 * callback was called. The trampoline that calls callbacks is C, so that the jump crosses only the
 * program's callback and nsort_raise_error (a Rust function that only calls xsort_raise, holding
 * nothing to drop), never a Rust frame with something to clean up. The message is copied before
 * the jump, since it may live in the callback's frame.
 */
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

typedef int (*xsort_merge_input_fn)(int merge_index, char *buf, int size, void *arg);
typedef int (*xsort_compare_fn)(void *a, void *b, int len_a, int len_b, void *arg);

/* The trampoline running a callback on this thread, if any, and the message raised. */
static __thread jmp_buf *raise_target;
static __thread char raised[1024];

/* Calls f(merge_index, buf, size, arg); when the callback raises an error, returns -1 and sets
 * *error to its message (until the next raise on this thread), else sets *error to NULL. */
int xsort_call_merge_input(xsort_merge_input_fn f, int merge_index, char *buf, int size, void *arg, const char **error) {
    jmp_buf here;
    jmp_buf *volatile outer = raise_target;
    if (setjmp(here) != 0) {
        raise_target = outer;
        *error = raised;
        return -1;
    }
    raise_target = &here;
    int n = f(merge_index, buf, size, arg);
    raise_target = outer;
    *error = NULL;
    return n;
}

/* Calls f(a, b, len_a, len_b, arg), as xsort_call_merge_input calls a merge input: when the
 * function raises an error, returns 0 and sets *error to its message, else sets *error to NULL. */
int xsort_call_compare(xsort_compare_fn f, void *a, void *b, int len_a, int len_b, void *arg, const char **error) {
    jmp_buf here;
    jmp_buf *volatile outer = raise_target;
    if (setjmp(here) != 0) {
        raise_target = outer;
        *error = raised;
        return 0;
    }
    raise_target = &here;
    int order = f(a, b, len_a, len_b, arg);
    raise_target = outer;
    *error = NULL;
    return order;
}

/* Jumps back to the trampoline with err_msg; returns why it cannot when no callback is running on
 * this thread. */
const char *xsort_raise(const char *err_msg) {
    if (raise_target == NULL) {
        return "nsort_raise_error: called outside a comparison function or a merge input callback";
    }
    snprintf(raised, sizeof raised, "%s", err_msg != NULL ? err_msg : "(no message)");
    longjmp(*raise_target, 1);
}
