/* records.c - sorts fixed-size records through the library: reads INPUT, releases its records in
 * chunks of odd sizes (7, 12345, 1, ... records), ends the input, returns the sorted records into
 * buffers of odd sizes (one record, 7.5 records, 64 KiB + 17...), writes them to OUTPUT and the
 * statistics to STATS.
 *
 *   records STATEMENTS RECORD_SIZE INPUT OUTPUT STATS
 */
#include "check.h"

int main(int argc, char **argv) {
    REQUIRE(argc == 6, "usage: records STATEMENTS RECORD_SIZE INPUT OUTPUT STATS");
    const char *statements = argv[1];
    size_t rs = (size_t)atol(argv[2]);
    size_t len;
    char *data = read_file(argv[3], &len);
    REQUIRE(len % rs == 0, "the input is not whole records");

    ctx_t ctx;
    EXPECT(DEFINE(statements, &ctx), CODE(SUCCESS), &ctx);
    static const size_t chunks[] = {7, 12345, 1, 999, 65537, 3, 4096, 100001};
    size_t off = 0;
    for (size_t i = 0; off < len; i++) {
        size_t n = chunks[i % (sizeof chunks / sizeof chunks[0])] * rs;
        if (n > len - off) n = len - off;
        EXPECT(API(release_recs)(data + off, n, &ctx), CODE(SUCCESS), &ctx);
        off += n;
    }
    EXPECT(API(release_end)(&ctx), CODE(SUCCESS), &ctx);

    FILE *out = fopen(argv[4], "wb");
    REQUIRE(out != NULL, "cannot create %s", argv[4]);
    const size_t sizes[] = {rs, rs * 15 / 2, 65536 + 17, rs * 3 + rs - 1, 1 << 20, rs * 12345 + 99};
    char *buf = xmalloc((1 << 20) + rs * 12345 + 99);
    size_t returned = 0;
    for (size_t i = 0;; i++) {
        size_t cap = sizes[i % (sizeof sizes / sizeof sizes[0])];
        size_t size = cap;
        int status = API(return_recs)(buf, &size, &ctx);
        if (status == CODE(END_OF_OUTPUT)) {
            REQUIRE(size == 0, "end of output with %zu bytes", size);
            break;
        }
        EXPECT(status, CODE(SUCCESS), &ctx);
        REQUIRE(size > 0 && size <= cap && size % rs == 0, "returned %zu bytes into a buffer of %zu", size, cap);
        REQUIRE(fwrite(buf, 1, size, out) == size, "cannot write %s", argv[4]);
        returned += size;
    }
    REQUIRE(fclose(out) == 0, "cannot close %s", argv[4]);
    REQUIRE(returned == len, "returned %zu bytes of %zu", returned, len);
    /* After the end, more returns keep saying so. */
    size_t size = rs;
    EXPECT(API(return_recs)(buf, &size, &ctx), CODE(END_OF_OUTPUT), &ctx);

    FILE *stats = fopen(argv[5], "w");
    REQUIRE(stats != NULL, "cannot create %s", argv[5]);
    EXPECT(API(print_stats)(&ctx, stats), CODE(SUCCESS), &ctx);
    fclose(stats);
    const char *text = API(get_stats)(&ctx);
    REQUIRE(text != NULL && strstr(text, "xsort statistics") != NULL, "no statistics: %s", API(message)(&ctx));
#ifndef USE_NSORT
    const char *json = xsort_get_stats_json(&ctx);
    REQUIRE(json != NULL && json[0] == '{', "no JSON statistics: %s", xsort_message(&ctx));
#endif
    EXPECT(API(end)(&ctx), CODE(SUCCESS), &ctx);
    REQUIRE(ctx == 0, "end left the context id %u", ctx);
    free(buf);
    free(data);
    return 0;
}
