/* lines.c - sorts delimited records (text lines): reads INPUT, releases whole lines in chunks of
 * varying line counts, returns them into buffers of odd sizes, some smaller than the longest
 * line (XSORT_RETURN_BUF_SMALL, then a larger buffer), and writes them to OUTPUT. Prints how many
 * returns were refused as too small.
 *
 *   lines STATEMENTS INPUT OUTPUT [resized]
 *
 * With "resized", the statements select, rewrite or mark records: the output may hold fewer or
 * more bytes than the input.
 */
#include "check.h"

int main(int argc, char **argv) {
    REQUIRE(argc == 4 || (argc == 5 && strcmp(argv[4], "resized") == 0), "usage: lines STATEMENTS INPUT OUTPUT [resized]");
    size_t len;
    char *data = read_file(argv[2], &len);
    REQUIRE(len > 0 && data[len - 1] == '\n', "the input does not end with a newline");

    ctx_t ctx;
    EXPECT(DEFINE(argv[1], &ctx), CODE(SUCCESS), &ctx);
    static const size_t counts[] = {1, 7, 300, 2, 12345, 64};
    size_t off = 0;
    for (size_t i = 0; off < len; i++) {
        size_t end = off, lines = counts[i % (sizeof counts / sizeof counts[0])];
        while (end < len && lines > 0) {
            char *nl = memchr(data + end, '\n', len - end);
            end = (size_t)(nl - data) + 1;
            lines--;
        }
        EXPECT(API(release_recs)(data + off, end - off, &ctx), CODE(SUCCESS), &ctx);
        off = end;
    }
    EXPECT(API(release_end)(&ctx), CODE(SUCCESS), &ctx);

    FILE *out = fopen(argv[3], "wb");
    REQUIRE(out != NULL, "cannot create %s", argv[3]);
    static const size_t sizes[] = {40, 7, 1 << 16, 333, 1 << 20};
    char *buf = xmalloc(1 << 20);
    size_t returned = 0, small = 0;
    for (size_t i = 0;; i++) {
        size_t cap = sizes[i % (sizeof sizes / sizeof sizes[0])];
        size_t size = cap;
        int status = API(return_recs)(buf, &size, &ctx);
        if (status == CODE(END_OF_OUTPUT)) break;
        if (status == CODE(RETURN_BUF_SMALL)) {
            REQUIRE(size == 0, "%zu bytes returned with RETURN_BUF_SMALL", size);
            small++;
            continue;
        }
        EXPECT(status, CODE(SUCCESS), &ctx);
        REQUIRE(size > 0 && size <= cap && buf[size - 1] == '\n', "returned %zu bytes into %zu, not whole lines", size, cap);
        fwrite(buf, 1, size, out);
        returned += size;
    }
    REQUIRE(fclose(out) == 0, "cannot close %s", argv[3]);
    REQUIRE(returned == len || argc == 5, "returned %zu bytes of %zu", returned, len);
    EXPECT(API(end)(&ctx), CODE(SUCCESS), &ctx);
    printf("small %zu\n", small);
    free(buf);
    free(data);
    return 0;
}
