/* check.h - helpers of the C test programs (crates/capi/tests/c_api.rs compiles and runs them).
 * Compile with -DUSE_NSORT to call Nsort's names (nsort.h) instead of xsort's (xsort.h): API(x)
 * is then nsort_x, CODE(x) NSORT_x and ctx_t nsort_t.
 */
#ifndef CHECK_H
#define CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef USE_NSORT
#include "nsort.h"
#define API(name) nsort_##name
#define CODE(name) NSORT_##name
typedef nsort_t ctx_t;
/* nsort_define takes Nsort's error callback where xsort_define takes a reserved pointer. */
#define DEFINE(statements, ctx) nsort_define((statements), 0, NULL, (ctx))
#else
#include "xsort.h"
#define API(name) xsort_##name
#define CODE(name) XSORT_##name
typedef xsort_t ctx_t;
#define DEFINE(statements, ctx) xsort_define((statements), 0, NULL, (ctx))
#endif

/* Fails the program when a call's status is not the one expected, showing the message. */
#define EXPECT(call, want, ctxp)                                                                  \
    do {                                                                                          \
        int got_ = (call);                                                                        \
        if (got_ != (want)) {                                                                     \
            fprintf(stderr, "%s:%d: %s returned %d, expected %d (%s): %s\n", __FILE__, __LINE__, \
                    #call, got_, (int)(want), #want, API(message)(ctxp));                         \
            exit(1);                                                                              \
        }                                                                                         \
    } while (0)

/* Fails the program unless cond holds. */
#define REQUIRE(cond, ...)                                       \
    do {                                                         \
        if (!(cond)) {                                           \
            fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                        \
            fputc('\n', stderr);                                 \
            exit(1);                                             \
        }                                                        \
    } while (0)

static inline void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    REQUIRE(p != NULL, "out of memory");
    return p;
}

/* A whole file in memory. */
static inline char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    REQUIRE(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *data = xmalloc((size_t)n);
    REQUIRE(fread(data, 1, (size_t)n, f) == (size_t)n, "cannot read %s", path);
    fclose(f);
    *len = (size_t)n;
    return data;
}

#endif
