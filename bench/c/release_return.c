/* Sorts a file of records through libxsort's Nsort-style calls, in memory: reads the whole file,
 * then times xsort_define, xsort_release_recs in CHUNK-byte pieces, xsort_release_end and
 * xsort_return_recs into a CHUNK-byte buffer, and writes the sorted records to OUTPUT after the
 * clock stops (for valsort). bench/library.sh runs it.
 *
 *   release_return STATEMENTS CHUNK INPUT OUTPUT
 *
 * Prints one line of JSON: {"release_s": ..., "return_s": ..., "total_s": ...}. */
#include "common.h"
#include "xsort.h"

static void fail(const char *what, int code, xsort_t *ctx) {
    fprintf(stderr, "release_return: %s: %d: %s\n", what, code, ctx ? xsort_message(ctx) : "");
    exit(2);
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: release_return STATEMENTS CHUNK INPUT OUTPUT\n");
        return 2;
    }
    size_t chunk = strtoull(argv[2], NULL, 10), len;
    char *data, *out;
    load_input(argv[3], chunk, &data, &out, &len); /* both touched before the clock starts */

    double t0 = now();
    xsort_t ctx;
    int rc = xsort_define(argv[1], 0, NULL, &ctx);
    if (rc < 0) fail("define", rc, NULL);
    for (size_t at = 0; at < len; at += chunk) {
        size_t n = len - at < chunk ? len - at : chunk;
        if ((rc = xsort_release_recs(data + at, n, &ctx)) < 0) fail("release", rc, &ctx);
    }
    if ((rc = xsort_release_end(&ctx)) < 0) fail("release_end", rc, &ctx);
    double t1 = now();
    size_t got = 0;
    for (;;) {
        size_t size = chunk;
        rc = xsort_return_recs(out + got, &size, &ctx);
        if (rc == XSORT_END_OF_OUTPUT) break;
        if (rc < 0) fail("return", rc, &ctx);
        got += size;
    }
    double t2 = now();
    xsort_end(&ctx);
    if (got != len) { fprintf(stderr, "release_return: returned %zu of %zu bytes\n", got, len); return 1; }
    FILE *o = fopen(argv[4], "wb");
    if (!o || fwrite(out, 1, len, o) != len || fclose(o) != 0) { perror(argv[4]); return 2; }
    printf("{\"release_s\": %.3f, \"return_s\": %.3f, \"total_s\": %.3f}\n", t1 - t0, t2 - t1, t2 - t0);
    return 0;
}
