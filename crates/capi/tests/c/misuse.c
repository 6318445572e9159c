/* misuse.c - every misuse of the library gets Nsort's status code and a one-line message, and
 * the program goes on: out-of-order calls, partial records, a small return buffer, unknown and
 * invalid statements (a 1 MB one included), NULL pointers, unknown and ended contexts, records
 * released to a sort that reads -in_file or asked of one that writes -out_file, statistics asked
 * for too early (which stops nothing) and misuse after the end of the output (which keeps them).
 *
 *   misuse DIR      (DIR: an empty directory for the -in_file / -out_file cases)
 */
#include <stdarg.h>

#include "check.h"

/* The message is one non-empty line; optionally it contains `part`. */
static void one_line(ctx_t *ctx, const char *part) {
    const char *m = API(message)(ctx);
    REQUIRE(m != NULL && m[0] != '\0' && strchr(m, '\n') == NULL, "not a one-line message: '%s'", m ? m : "(null)");
    REQUIRE(part == NULL || strstr(m, part) != NULL, "the message '%s' does not mention '%s'", m, part);
}

/* Defines a sort of 100-byte records. */
static ctx_t fixed(void) {
    ctx_t ctx;
    EXPECT(DEFINE("-format=size:100 -key=position:1,size:10", &ctx), CODE(SUCCESS), &ctx);
    return ctx;
}

static void bad_statements(void) {
    ctx_t ctx;
    EXPECT(DEFINE("-format=size:100 -frobnicate=3", &ctx), CODE(UNKNOWN_KEYWORD), &ctx);
    one_line(&ctx, "frobnicate");
    EXPECT(API(release_recs)("x", 0, &ctx), CODE(INVALID_PHASE), &ctx);
    one_line(&ctx, "earlier error");
    EXPECT(API(end)(&ctx), CODE(SUCCESS), &ctx);

    EXPECT(DEFINE("-format=size:lots", &ctx), CODE(SYNTAX_ERROR), &ctx);
    one_line(&ctx, "size");
    EXPECT(API(end)(&ctx), CODE(SUCCESS), &ctx);

    EXPECT(DEFINE("-format=size:10 -key=position:6,size:10", &ctx), CODE(KEY_BEYOND_END), &ctx);
    one_line(&ctx, "past the end");
    EXPECT(API(end)(&ctx), CODE(SUCCESS), &ctx);

    /* Only paths may hold bytes that are not UTF-8; the message shows them as \xNN. */
    EXPECT(DEFINE("-format=size:100 -field=name:k\xff,size:2", &ctx), CODE(SYNTAX_ERROR), &ctx);
    one_line(&ctx, "-field=name:k\\xff,size:2': -field is not UTF-8 text");
    EXPECT(API(end)(&ctx), CODE(SUCCESS), &ctx);

    /* A 1 MB statement is quoted by an excerpt and its length, not whole. */
    size_t big = 1 << 20;
    char *huge = xmalloc(big + 1);
    memset(huge, 'x', big);
    huge[0] = '-';
    huge[big] = '\0';
    EXPECT(DEFINE(huge, &ctx), CODE(UNKNOWN_KEYWORD), &ctx);
    one_line(&ctx, "... (1048576 bytes in all)");
    REQUIRE(strlen(API(message)(&ctx)) < 600, "a %zu-byte message", strlen(API(message)(&ctx)));
    EXPECT(API(end)(&ctx), CODE(SUCCESS), &ctx);
    free(huge);

    EXPECT(DEFINE(NULL, &ctx), CODE(INVALID_ARGUMENT), &ctx);
    one_line(&ctx, "NULL");
    EXPECT(API(end)(&ctx), CODE(SUCCESS), &ctx);

    EXPECT(DEFINE("-format=size:100", NULL), CODE(INVALID_ARGUMENT), NULL);
    one_line(NULL, "NULL");

#ifdef USE_NSORT
    EXPECT(nsort_define("-format=size:100", 0x80, NULL, &ctx), NSORT_INVALID_ARGUMENT, &ctx);
    EXPECT(nsort_end(&ctx), NSORT_SUCCESS, &ctx);
    /* Nsort's NSORT_NO_DEFAULTS option is accepted (xsort reads no nsort.params). */
    EXPECT(nsort_define("-format=size:100", NSORT_NO_DEFAULTS, NULL, &ctx), NSORT_SUCCESS, &ctx);
    EXPECT(nsort_end(&ctx), NSORT_SUCCESS, &ctx);
#else
    int reserved;
    EXPECT(xsort_define("-format=size:100", 1, NULL, &ctx), XSORT_INVALID_ARGUMENT, &ctx);
    EXPECT(xsort_end(&ctx), XSORT_SUCCESS, &ctx);
    EXPECT(xsort_define("-format=size:100", 0, &reserved, &ctx), XSORT_INVALID_ARGUMENT, &ctx);
    one_line(&ctx, "reserved");
    EXPECT(xsort_end(&ctx), XSORT_SUCCESS, &ctx);
#endif
}

static void out_of_order(void) {
    char rec[300] = {0};
    size_t size = sizeof rec;
    ctx_t ctx = fixed();
    EXPECT(API(return_recs)(rec, &size, &ctx), CODE(INVALID_PHASE), &ctx);
    one_line(&ctx, "release_end");
    REQUIRE(size == 0, "size %zu after a refused return", size);
    EXPECT(API(end)(&ctx), CODE(SUCCESS), &ctx);

    ctx = fixed();
    EXPECT(API(release_recs)(rec, 200, &ctx), CODE(SUCCESS), &ctx);
    EXPECT(API(release_end)(&ctx), CODE(SUCCESS), &ctx);
    EXPECT(API(release_recs)(rec, 100, &ctx), CODE(INVALID_PHASE), &ctx);
    one_line(&ctx, "after release_end");
    EXPECT(API(end)(&ctx), CODE(SUCCESS), &ctx);

    ctx = fixed();
    EXPECT(API(release_end)(&ctx), CODE(SUCCESS), &ctx);
    EXPECT(API(release_end)(&ctx), CODE(INVALID_PHASE), &ctx);
    one_line(&ctx, "twice");
    EXPECT(API(end)(&ctx), CODE(SUCCESS), &ctx);

    /* Statistics come only after the end of the output; asking earlier is refused and stops
     * nothing: the sort goes on to its end. */
    char recs[300];
    memset(recs, 'c', 100);
    memset(recs + 100, 'a', 100);
    memset(recs + 200, 'b', 100);
    ctx = fixed();
    REQUIRE(API(get_stats)(&ctx) == NULL, "statistics before the sort ran");
    one_line(&ctx, "not finished");
    EXPECT(API(print_stats)(&ctx, stderr), CODE(INVALID_PHASE), &ctx);
    EXPECT(API(print_stats)(&ctx, NULL), CODE(INVALID_ARGUMENT), &ctx);
    EXPECT(API(release_recs)(recs, 300, &ctx), CODE(SUCCESS), &ctx);
    EXPECT(API(release_end)(&ctx), CODE(SUCCESS), &ctx);
    REQUIRE(API(get_stats)(&ctx) == NULL, "statistics before the end of the output");
#ifndef USE_NSORT
    REQUIRE(xsort_get_stats_json(&ctx) == NULL, "JSON statistics before the end of the output");
#endif
    size = sizeof rec;
    EXPECT(API(return_recs)(rec, &size, &ctx), CODE(SUCCESS), &ctx);
    REQUIRE(size == 300 && rec[0] == 'a' && rec[100] == 'b' && rec[200] == 'c', "returned %zu bytes", size);
    EXPECT(API(return_recs)(rec, &size, &ctx), CODE(END_OF_OUTPUT), &ctx);

    /* Misuse after the end of the output is refused, and the statistics stay until end. */
    EXPECT(API(release_recs)(recs, 100, &ctx), CODE(INVALID_PHASE), &ctx);
    const char *stats = API(get_stats)(&ctx);
    REQUIRE(stats != NULL, "no statistics after a misuse at the end of the output: %s", API(message)(&ctx));
    EXPECT(API(release_end)(&ctx), CODE(INVALID_PHASE), &ctx);
    size = sizeof rec;
    EXPECT(API(return_recs)(NULL, &size, &ctx), CODE(INVALID_ARGUMENT), &ctx);
    EXPECT(API(print_stats)(&ctx, NULL), CODE(INVALID_ARGUMENT), &ctx);
    REQUIRE(API(get_stats)(&ctx) == stats, "the statistics after a misuse: %s", API(message)(&ctx));
#ifndef USE_NSORT
    REQUIRE(xsort_get_stats_json(&ctx) != NULL, "no JSON statistics after a misuse: %s", xsort_message(&ctx));
#endif
    FILE *devnull = fopen("/dev/null", "w");
    REQUIRE(devnull != NULL, "cannot open /dev/null");
    EXPECT(API(print_stats)(&ctx, devnull), CODE(SUCCESS), &ctx);
    fclose(devnull);
    EXPECT(API(return_recs)(rec, &size, &ctx), CODE(END_OF_OUTPUT), &ctx);
    EXPECT(API(end)(&ctx), CODE(SUCCESS), &ctx);
}

static void bad_records(void) {
    char rec[300] = {0};
    ctx_t ctx = fixed();
    EXPECT(API(release_recs)(rec, 150, &ctx), CODE(PARTIAL_RECORD), &ctx);
    one_line(&ctx, "150 bytes");
    /* A negative status stops the sort: later calls say so. */
    EXPECT(API(release_recs)(rec, 100, &ctx), CODE(INVALID_PHASE), &ctx);
    one_line(&ctx, "150 bytes");
    EXPECT(API(end)(&ctx), CODE(SUCCESS), &ctx);

    EXPECT(DEFINE("-format=delimiter:'\\n'", &ctx), CODE(SUCCESS), &ctx);
    EXPECT(API(release_recs)("b\na", 3, &ctx), CODE(PARTIAL_RECORD), &ctx);
    one_line(&ctx, "delimiter");
    EXPECT(API(end)(&ctx), CODE(SUCCESS), &ctx);

    ctx = fixed();
    EXPECT(API(release_recs)(NULL, 100, &ctx), CODE(INVALID_ARGUMENT), &ctx);
    one_line(&ctx, "NULL");
    EXPECT(API(end)(&ctx), CODE(SUCCESS), &ctx);

    /* A zero-byte release is no records, whatever the pointer. */
    ctx = fixed();
    EXPECT(API(release_recs)(NULL, 0, &ctx), CODE(SUCCESS), &ctx);
    EXPECT(API(end)(&ctx), CODE(SUCCESS), &ctx);
}

static void small_buffer(void) {
    char recs[300];
    memset(recs, 'c', 100);
    memset(recs + 100, 'a', 100);
    memset(recs + 200, 'b', 100);
    char out[300];
    ctx_t ctx = fixed();
    EXPECT(API(release_recs)(recs, 300, &ctx), CODE(SUCCESS), &ctx);
    EXPECT(API(release_end)(&ctx), CODE(SUCCESS), &ctx);
    size_t size = 99;
    EXPECT(API(return_recs)(out, &size, &ctx), CODE(RETURN_BUF_SMALL), &ctx);
    REQUIRE(size == 0, "%zu bytes returned into a too-small buffer", size);
    one_line(&ctx, "99 bytes");
    EXPECT(API(return_recs)(out, NULL, &ctx), CODE(INVALID_ARGUMENT), &ctx);
    /* RETURN_BUF_SMALL is a warning: the sort goes on with a larger buffer (but INVALID_ARGUMENT
     * was an error, so this sort is over; do it again). */
    EXPECT(API(return_recs)(out, &size, &ctx), CODE(INVALID_PHASE), &ctx);
    EXPECT(API(end)(&ctx), CODE(SUCCESS), &ctx);

    ctx = fixed();
    EXPECT(API(release_recs)(recs, 300, &ctx), CODE(SUCCESS), &ctx);
    EXPECT(API(release_end)(&ctx), CODE(SUCCESS), &ctx);
    size = 99;
    EXPECT(API(return_recs)(out, &size, &ctx), CODE(RETURN_BUF_SMALL), &ctx);
    size = 199;
    EXPECT(API(return_recs)(out, &size, &ctx), CODE(SUCCESS), &ctx);
    REQUIRE(size == 100 && out[0] == 'a', "first return: %zu bytes starting '%c'", size, out[0]);
    size = sizeof out;
    EXPECT(API(return_recs)(out, &size, &ctx), CODE(SUCCESS), &ctx);
    REQUIRE(size == 200 && out[0] == 'b' && out[100] == 'c', "second return: %zu bytes", size);
    EXPECT(API(return_recs)(out, &size, &ctx), CODE(END_OF_OUTPUT), &ctx);
    size = sizeof out;
    EXPECT(API(return_recs)(NULL, &size, &ctx), CODE(INVALID_ARGUMENT), &ctx);
    EXPECT(API(end)(&ctx), CODE(SUCCESS), &ctx);
}

static void bad_contexts(void) {
    char rec[100] = {0};
    size_t size = sizeof rec;
    ctx_t ctx = 987654321;
    EXPECT(API(release_recs)(rec, 100, &ctx), CODE(INVALID_CONTEXT), &ctx);
    one_line(&ctx, "987654321");
    EXPECT(API(release_end)(&ctx), CODE(INVALID_CONTEXT), &ctx);
    /* A refused return sets *size to 0, whatever the context, so that a loop cannot take the
     * capacity for bytes returned. */
    EXPECT(API(return_recs)(rec, &size, &ctx), CODE(INVALID_CONTEXT), &ctx);
    REQUIRE(size == 0, "size %zu after a return from no sort", size);
    size = sizeof rec;
    EXPECT(API(return_recs)(rec, &size, NULL), CODE(INVALID_ARGUMENT), NULL);
    REQUIRE(size == 0, "size %zu after a return with no context", size);
    REQUIRE(API(get_stats)(&ctx) == NULL, "statistics of no sort");
    EXPECT(API(end)(&ctx), CODE(INVALID_CONTEXT), &ctx);
    EXPECT(API(release_end)(NULL), CODE(INVALID_ARGUMENT), NULL);
    one_line(NULL, "NULL");

    ctx = fixed();
    ctx_t copy = ctx;
    EXPECT(API(end)(&ctx), CODE(SUCCESS), &ctx);
    REQUIRE(ctx == 0, "end left the id %u", ctx);
    EXPECT(API(release_recs)(rec, 100, &copy), CODE(INVALID_CONTEXT), &copy);
    one_line(&copy, "ended");
    size = sizeof rec;
    EXPECT(API(return_recs)(rec, &size, &copy), CODE(INVALID_CONTEXT), &copy);
    REQUIRE(size == 0, "size %zu after a return from an ended sort", size);
    EXPECT(API(end)(&copy), CODE(INVALID_CONTEXT), &copy);
    EXPECT(API(end)(&ctx), CODE(INVALID_CONTEXT), &ctx);
}

static void no_client_io(const char *dir) {
    char path[4096], statements[8192], rec[300];
    snprintf(path, sizeof path, "%s/in", dir);
    FILE *f = fopen(path, "wb");
    REQUIRE(f != NULL, "cannot create %s", path);
    memset(rec, 'z', 100);
    memset(rec + 100, 'y', 100);
    fwrite(rec, 1, 200, f);
    fclose(f);

    ctx_t ctx;
    snprintf(statements, sizeof statements, "-format=size:100 -in_file=%s", path);
    EXPECT(DEFINE(statements, &ctx), CODE(SUCCESS), &ctx);
    EXPECT(API(release_recs)(rec, 100, &ctx), CODE(NO_CLIENT_INPUT), &ctx);
    one_line(&ctx, "-in_file");
    /* A warning: the sort goes on, reading its file (no release_end needed). */
    size_t size = sizeof rec;
    EXPECT(API(return_recs)(rec, &size, &ctx), CODE(SUCCESS), &ctx);
    REQUIRE(size == 200 && rec[0] == 'y' && rec[100] == 'z', "returned %zu bytes from the -in_file sort", size);
    EXPECT(API(return_recs)(rec, &size, &ctx), CODE(END_OF_OUTPUT), &ctx);
    EXPECT(API(end)(&ctx), CODE(SUCCESS), &ctx);

    snprintf(statements, sizeof statements, "-format=size:100 -out_file=%s/out", dir);
    EXPECT(DEFINE(statements, &ctx), CODE(SUCCESS), &ctx);
    EXPECT(API(release_recs)(rec, 200, &ctx), CODE(SUCCESS), &ctx);
    size = sizeof rec;
    EXPECT(API(return_recs)(rec, &size, &ctx), CODE(NO_CLIENT_OUTPUT), &ctx);
    one_line(&ctx, "-out_file");
    EXPECT(API(release_end)(&ctx), CODE(SUCCESS), &ctx);
    EXPECT(API(return_recs)(rec, &size, &ctx), CODE(NO_CLIENT_OUTPUT), &ctx);
    REQUIRE(API(get_stats)(&ctx) != NULL, "no statistics after the -out_file sort: %s", API(message)(&ctx));
    EXPECT(API(end)(&ctx), CODE(SUCCESS), &ctx);
}

#ifdef USE_NSORT
/* Nsort's error callback gets each status and the message as its one detail. */
static int callback_calls;
static nsort_msg_t callback_status;
static char callback_detail[1024];

static void on_error(void *arg, nsort_msg_t msg, nsort_t context, char *definition, int offset, int ndetails, ...) {
    (void)definition;
    (void)offset;
    callback_calls += *(int *)arg;
    callback_status = msg;
    REQUIRE(ndetails == 1, "%d details", ndetails);
    va_list ap;
    va_start(ap, ndetails);
    snprintf(callback_detail, sizeof callback_detail, "%s", va_arg(ap, char *));
    va_end(ap);
    /* A handler may call the library: the context's message is the detail. */
    REQUIRE(strcmp(nsort_message(&context), callback_detail) == 0, "in the handler: '%s'", nsort_message(&context));
}

static void error_callback(void) {
    int one = 1;
    nsort_error_callback_t cb = {on_error, &one};
    nsort_t ctx;
    EXPECT(nsort_define("-format=size:100 -frobnicate", 0, &cb, &ctx), NSORT_UNKNOWN_KEYWORD, &ctx);
    REQUIRE(callback_calls == 1 && callback_status == NSORT_UNKNOWN_KEYWORD, "callback: %d calls, status %d", callback_calls, callback_status);
    REQUIRE(strcmp(callback_detail, nsort_message(&ctx)) == 0, "callback detail '%s'", callback_detail);
    EXPECT(nsort_end(&ctx), NSORT_SUCCESS, &ctx);

    EXPECT(nsort_define("-format=size:100", 0, &cb, &ctx), NSORT_SUCCESS, &ctx);
    EXPECT(nsort_release_recs("abc", 3, &ctx), NSORT_PARTIAL_RECORD, &ctx);
    REQUIRE(callback_calls == 2 && callback_status == NSORT_PARTIAL_RECORD, "callback: %d calls, status %d", callback_calls, callback_status);
    EXPECT(nsort_end(&ctx), NSORT_SUCCESS, &ctx);
}
#endif

int main(int argc, char **argv) {
    REQUIRE(argc == 2, "usage: misuse DIR");
    bad_statements();
    out_of_order();
    bad_records();
    small_buffer();
    bad_contexts();
    no_client_io(argv[1]);
#ifdef USE_NSORT
    error_callback();
#endif
    REQUIRE(strncmp(API(version)(), "xsort ", 6) == 0, "version '%s'", API(version)());
    puts("misuse: all checks passed");
    return 0;
}
