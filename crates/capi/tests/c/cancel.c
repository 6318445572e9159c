/* cancel.c - sorts ended early leave no temp file: a spilling sort ended while records are being
 * released, and one ended after returning only part of its output. Temp files (named in the
 * directory or open in this process) must exist while each sort is under way (so the sort did
 * spill) and none after xsort_end.
 *
 *   cancel STATEMENTS TEMP_DIR RECORDS
 */
#include <dirent.h>
#include <stdint.h>
#include <unistd.h>

#include "check.h"

/* Entries in dir, "." and ".." aside. */
static size_t count_files(const char *dir) {
    DIR *d = opendir(dir);
    REQUIRE(d != NULL, "cannot open %s", dir);
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
    }
    closedir(d);
    return n;
}

/* Files in dir that this process has open: xsort's temp files are unnamed (O_TMPFILE), so they
 * show only here, as "DIR/#NNN (deleted)", and hold their space until closed. */
static size_t count_open(const char *dir) {
    DIR *d = opendir("/proc/self/fd");
    REQUIRE(d != NULL, "cannot open /proc/self/fd");
    size_t n = 0, len = strlen(dir);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char link[300], target[4096];
        snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
        ssize_t t = readlink(link, target, sizeof target - 1);
        if (t <= 0) continue;
        target[t] = '\0';
        if (strncmp(target, dir, len) == 0 && target[len] == '/') n++;
    }
    closedir(d);
    return n;
}

/* Temp files in dir, named or open. */
static size_t temp_files(const char *dir) {
    return count_files(dir) + count_open(dir);
}

static void release_all(ctx_t *ctx, size_t records) {
    unsigned char *chunk = xmalloc(100 * 1000);
    uint64_t x = 42;
    for (size_t done = 0; done < records; done += 1000) {
        for (size_t i = 0; i < 100 * 1000; i++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            chunk[i] = (unsigned char)(x >> 56);
        }
        EXPECT(API(release_recs)(chunk, 100 * 1000, ctx), CODE(SUCCESS), ctx);
    }
    free(chunk);
}

int main(int argc, char **argv) {
    REQUIRE(argc == 4, "usage: cancel STATEMENTS TEMP_DIR RECORDS");
    const char *dir = argv[2];
    size_t records = (size_t)atol(argv[3]);
    ctx_t ctx;

    /* Ended during the input. */
    EXPECT(DEFINE(argv[1], &ctx), CODE(SUCCESS), &ctx);
    release_all(&ctx, records);
    REQUIRE(temp_files(dir) > 0, "no temp file while %zu records were released: the sort did not spill", records);
    EXPECT(API(end)(&ctx), CODE(SUCCESS), &ctx);
    REQUIRE(temp_files(dir) == 0, "%zu temp files left after ending a sort during its input", temp_files(dir));

    /* Ended during the output. */
    EXPECT(DEFINE(argv[1], &ctx), CODE(SUCCESS), &ctx);
    release_all(&ctx, records);
    EXPECT(API(release_end)(&ctx), CODE(SUCCESS), &ctx);
    char buf[100 * 10];
    size_t size = sizeof buf;
    EXPECT(API(return_recs)(buf, &size, &ctx), CODE(SUCCESS), &ctx);
    REQUIRE(temp_files(dir) > 0, "no temp file while the merge was under way");
    EXPECT(API(end)(&ctx), CODE(SUCCESS), &ctx);
    REQUIRE(temp_files(dir) == 0, "%zu temp files left after ending a sort during its output", temp_files(dir));
    puts("cancel: no temp file left");
    return 0;
}
