/* What the C programs of bench/ share: a monotonic clock, and an input file loaded into memory
 * beside a touched output buffer, both before any clock starts. Included, not linked: each
 * program is one `cc` command in its script. */
#ifndef XSORT_BENCH_COMMON_H
#define XSORT_BENCH_COMMON_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* Reads all of PATH into *data (its length in *len) and gives *out LEN + CHUNK bytes, zeroed, so
 * that both are touched before the timing starts; exits with status 2 and a message on failure. */
static inline void load_input(const char *path, size_t chunk, char **data, char **out, size_t *len) {
    FILE *in = fopen(path, "rb");
    if (!in || chunk == 0) { perror(path); exit(2); }
    fseek(in, 0, SEEK_END);
    *len = ftell(in);
    fseek(in, 0, SEEK_SET);
    *data = malloc(*len + 1);
    *out = malloc(*len + chunk);
    if (!*data || !*out || fread(*data, 1, *len, in) != *len) { perror("read"); exit(2); }
    fclose(in);
    memset(*out, 0, *len + chunk);
}
#endif
