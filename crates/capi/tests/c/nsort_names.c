/* nsort_names.c - a program written only against Nsort's published names: it includes nsort.h
 * and nothing of xsort's (not even check.h, which would bring xsort.h), declares something of each
 * of Nsort's typedefs, tests codes with the NSORT_MSG_IS_* macros, and sorts a few thousand records
 * through nsort_define / release / return / end with Nsort's error callback. It proves that such
 * a program compiles warning-free against our headers and runs against libxsort.
 *
 *   nsort_names        (prints "nsort names passed")
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nsort.h"

#define RECORD 16
#define KEY 8
#define COUNT 5000

#define CHECK(cond)                                                                   \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #cond);        \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

/* The macros and the values are constant expressions: a wrong header fails the build. */
_Static_assert(NSORT_SUCCESS == 0 && !NSORT_MSG_IS_ERROR(NSORT_SUCCESS), "success is no error");
_Static_assert(NSORT_MSG_IS_ERROR(NSORT_INVALID_PHASE) && NSORT_INVALID_PHASE == -183, "an error");
_Static_assert(NSORT_MSG_IS_ERROR(NSORT_KEY_DIFF_CONFLICT) && NSORT_KEY_DIFF_CONFLICT == -217, "the last error");
_Static_assert(NSORT_MSG_IS_WARNING(NSORT_END_OF_OUTPUT) && !NSORT_MSG_IS_ERROR(NSORT_END_OF_OUTPUT), "a warning");
_Static_assert(NSORT_MSG_IS_WARNING(NSORT_NO_CLIENT_OUTPUT) && !NSORT_MSG_IS_INFO(NSORT_NO_CLIENT_OUTPUT), "a warning");
_Static_assert(NSORT_MSG_IS_INFO(NSORT_FIRST_INFO) && !NSORT_MSG_IS_WARNING(NSORT_FIRST_INFO), "information");

/* What the error handler saw. */
struct seen {
    int calls;
    nsort_msg_t last;
    char detail[1024];
    const char *definition; /* for a statement that did not parse: the definition */
    int offset;             /* and where the statement starts in it */
};

/* An nsort_error_t: remembers the code and the first detail (the message). */
static void on_error(void *arg, nsort_msg_t msg, nsort_t context, char *definition, int offset, int ndetails, ...) {
    struct seen *seen = arg;
    (void)context;
    seen->definition = definition;
    seen->offset = offset;
    seen->calls++;
    seen->last = msg;
    seen->detail[0] = '\0';
    if (ndetails > 0) {
        va_list ap;
        va_start(ap, ndetails);
        const char *d = va_arg(ap, char *);
        snprintf(seen->detail, sizeof seen->detail, "%s", d ? d : "");
        va_end(ap);
    }
}

/* An nsort_compare_t on the records' keys (bytes, as -key=position:1,size:8 orders them). */
static int compare_keys(void *p1, void *p2, int len1, int len2, void *compare_arg) {
    (void)compare_arg;
    int n = len1 < len2 ? len1 : len2;
    int c = memcmp(p1, p2, (size_t)n);
    return c != 0 ? c : len1 - len2;
}

/* An nsort_merge_input_t, used here as the records' source: fills buf with whole records of
 * stream merge_index, returns the bytes written (0 at the end). */
struct source {
    unsigned next;
    unsigned long long state;
};
static int make_records(int merge_index, char *buf, int size, void *input_arg) {
    struct source *src = input_arg;
    int n = 0;
    while (n + RECORD <= size && src->next < COUNT) {
        src->state = src->state * 6364136223846793005ULL + 1442695040888963407ULL + (unsigned)merge_index;
        for (int i = 0; i < KEY; i++) buf[n + i] = (char)('a' + (src->state >> (8 + 3 * i)) % 26);
        snprintf(buf + n + KEY, RECORD - KEY, "%07u", src->next);
        buf[n + RECORD - 1] = '\n';
        n += RECORD;
        src->next++;
    }
    return n;
}

int main(void) {
    struct seen seen = {0, NSORT_SUCCESS, "", NULL, 0};
    nsort_error_t handler = on_error;
    nsort_callback_t old_name = {handler, &seen};           /* Nsort's first name for the struct */
    nsort_error_callback_t *callbacks = &old_name;
    nsort_compare_t compare = compare_keys;
    struct source src = {0, 42};
    nsort_merge_callback_t input = {make_records, &src};
    nsort_t ctx;

    /* A statement that does not exist: an error, reported to the handler too. */
    nsort_msg_t status = nsort_define("-format=size:16 -frobnicate=3", 0, callbacks, &ctx);
    CHECK(status == NSORT_UNKNOWN_KEYWORD && NSORT_MSG_IS_ERROR(status));
    CHECK(seen.calls == 1 && seen.last == NSORT_UNKNOWN_KEYWORD && strstr(seen.detail, "frobnicate") != NULL);
    CHECK(strcmp(nsort_message(&ctx), seen.detail) == 0);
    /* The handler is told which statement: the definition, and the statement's offset in it. */
    CHECK(seen.definition != NULL && strncmp(seen.definition + seen.offset, "-frobnicate=3", 13) == 0);
    CHECK(nsort_end(&ctx) == NSORT_SUCCESS);

    /* A sort of COUNT records, released 100 and one at a time. */
    seen.calls = 0;
    status = nsort_define("-format=size:16 -key=position:1,size:8", NSORT_NO_DEFAULTS, callbacks, &ctx);
    CHECK(status == NSORT_SUCCESS && seen.calls == 0);
    char *data = malloc((size_t)COUNT * RECORD);
    CHECK(data != NULL);
    size_t len = 0;
    for (int got; (got = input.input(0, data + len, 100 * RECORD, input.arg)) > 0; len += (size_t)got) {
        if (got == 100 * RECORD) {
            CHECK(nsort_release_recs(data + len, (size_t)got, &ctx) == NSORT_SUCCESS);
        } else {
            for (int off = 0; off < got; off += RECORD)
                CHECK(nsort_release_record(data + len + off, RECORD, &ctx) == NSORT_SUCCESS);
        }
    }
    CHECK(len == (size_t)COUNT * RECORD);
    CHECK(nsort_release_end(&ctx) == NSORT_SUCCESS);

    /* A buffer smaller than a record: a warning, and the sort goes on. */
    char out[64 * RECORD], prev[RECORD];
    size_t size = RECORD - 1;
    status = nsort_return_recs(out, &size, &ctx);
    CHECK(status == NSORT_RETURN_BUF_SMALL && NSORT_MSG_IS_WARNING(status) && !NSORT_MSG_IS_ERROR(status));

    size_t returned = 0;
    for (;;) {
        size = returned % 3 == 0 ? RECORD : sizeof out;
        status = returned % 2 ? nsort_return_record(out, &size, &ctx) : nsort_return_recs(out, &size, &ctx);
        if (status == NSORT_END_OF_OUTPUT) break;
        CHECK(status == NSORT_SUCCESS && size > 0 && size % RECORD == 0);
        for (size_t off = 0; off < size; off += RECORD) {
            if (returned > 0) CHECK(compare(prev, out + off, KEY, KEY, NULL) <= 0);
            memcpy(prev, out + off, RECORD);
            returned++;
        }
    }
    CHECK(size == 0 && NSORT_MSG_IS_WARNING(status) && returned == COUNT);
    CHECK(nsort_get_stats(&ctx) != NULL && nsort_version() != NULL);
    CHECK(nsort_end(&ctx) == NSORT_SUCCESS && ctx == 0);

    /* An ended context is gone: an error, which NSORT_MSG_IS_ERROR recognises. */
    status = nsort_release_end(&ctx);
    CHECK(status == NSORT_INVALID_CONTEXT && NSORT_MSG_IS_ERROR(status) && !NSORT_MSG_IS_WARNING(status));

    /* The same records through the sync_* names Nsort's header maps onto its calls. */
    CHECK(sync_setup("-format=size:16 -key=position:1,size:8", 0, 0, 0, 0, 0, 0, 0, 0, &ctx) == SYNC_SUCCESS);
    for (size_t off = 0; off < len; off += 100 * RECORD) {
        size_t n = len - off < 100 * RECORD ? len - off : 100 * RECORD;
        CHECK(sync_release_record(data + off, &n, &ctx) == SYNC_SUCCESS);
    }
    CHECK(sync_release_end(&ctx) == SYNC_SUCCESS);
    returned = 0;
    for (;;) {
        size = sizeof out;
        status = sync_return_record(out, &size, &ctx);
        if (status == SYNC_END_OF_OUTPUT) break;
        CHECK(status == SYNC_SUCCESS && size % RECORD == 0);
        for (size_t off = 0; off < size; off += RECORD) {
            if (returned > 0) CHECK(compare(prev, out + off, KEY, KEY, NULL) <= 0);
            memcpy(prev, out + off, RECORD);
            returned++;
        }
    }
    CHECK(returned == COUNT && sync_end(&ctx) == SYNC_SUCCESS && SYNC_ERROR < 0);

    free(data);
    printf("nsort names passed\n");
    return 0;
}
