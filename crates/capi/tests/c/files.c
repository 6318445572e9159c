/* files.c - a sort that reads -in_file and, with OUTPUT, returns its records to the program, or
 * without, writes its -out_file itself (it runs at release_end); prints the statistics.
 *
 *   files STATEMENTS [OUTPUT]
 */
#include "check.h"

int main(int argc, char **argv) {
    REQUIRE(argc == 2 || argc == 3, "usage: files STATEMENTS [OUTPUT]");
    ctx_t ctx;
    EXPECT(DEFINE(argv[1], &ctx), CODE(SUCCESS), &ctx);
    if (argc == 3) {
        FILE *out = fopen(argv[2], "wb");
        REQUIRE(out != NULL, "cannot create %s", argv[2]);
        char *buf = xmalloc(100 * 1000 + 1);
        for (;;) {
            size_t size = 100 * 1000 + 1;
            int status = API(return_recs)(buf, &size, &ctx);
            if (status == CODE(END_OF_OUTPUT)) break;
            EXPECT(status, CODE(SUCCESS), &ctx);
            fwrite(buf, 1, size, out);
        }
        REQUIRE(fclose(out) == 0, "cannot close %s", argv[2]);
        free(buf);
    } else {
        EXPECT(API(release_end)(&ctx), CODE(SUCCESS), &ctx);
    }
    EXPECT(API(print_stats)(&ctx, stdout), CODE(SUCCESS), &ctx);
    EXPECT(API(end)(&ctx), CODE(SUCCESS), &ctx);
    return 0;
}
