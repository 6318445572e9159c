/* merge.c - nsort_merge_define: three sorted streams fed by a callback in odd-sized pieces merged
 * into one order; a callback that raises an error with nsort_raise_error; a stream out of order
 * (NSORT_MERGE_MISORDERED); a width that does not count the inputs (NSORT_BAD_MERGE_WIDTH); and
 * nsort_get_thread_index, 0 on the program's thread. Nsort's names only.
 *
 *   merge COUNT      (records per stream)
 */
#include "check.h"

#define RECORD 16

struct streams {
    long count;      /* records per stream */
    long sent[3];    /* records of each stream sent so far */
    long raise_at;   /* stream 1 raises an error after this many records (-1: never) */
    long swap_at;    /* stream 2 sends this record before the one ahead of it (-1: never) */
    int thread_index;
};

/* Record i of stream k holds the key 3*i + k, big-endian in its first 8 bytes, then the stream. */
static void make(char *rec, long key, int k) {
    for (int b = 0; b < 8; b++) rec[b] = (char)((unsigned long)key >> (56 - 8 * b));
    memset(rec + 8, 'a' + k, RECORD - 8);
}

static int input(int merge_index, char *buf, int size, void *arg) {
    struct streams *s = arg;
    s->thread_index = nsort_get_thread_index();
    /* Odd pieces: up to 7 records, and never more than the buffer holds. */
    long n = size / RECORD < 7 ? size / RECORD : 7;
    long left = s->count - s->sent[merge_index];
    if (n > left) n = left;
    for (long j = 0; j < n; j++) {
        long i = s->sent[merge_index]++;
        if (merge_index == 1 && i == s->raise_at) nsort_raise_error("stream 1 lost its connection");
        long key = 3 * i + merge_index;
        if (merge_index == 2 && i == s->swap_at) key += 6; /* ahead of the next record */
        make(buf + j * RECORD, key, merge_index);
    }
    return (int)(n * RECORD);
}

/* Runs a merge of the three streams; returns the status that ended it and checks the order. */
static int merge(struct streams *s, int width, long *records) {
    nsort_merge_callback_t inputs[3] = {{input, s}, {input, s}, {input, s}};
    nsort_t ctx;
    int status = nsort_merge_define("-format=size:16 -key=position:1,size:8 -memory=64m", 0, NULL, width, inputs, &ctx);
    if (status != NSORT_SUCCESS) {
        nsort_end(&ctx);
        return status;
    }
    char buf[RECORD * 50];
    long seen = 0, last = -1;
    for (;;) {
        size_t size = sizeof buf - RECORD * (seen % 3); /* odd buffer sizes */
        status = nsort_return_recs(buf, &size, &ctx);
        if (status != NSORT_SUCCESS) break;
        REQUIRE(size % RECORD == 0, "returned %zu bytes, not whole records", size);
        for (size_t off = 0; off < size; off += RECORD) {
            long key = 0;
            for (int b = 0; b < 8; b++) key = (key << 8) | (unsigned char)buf[off + b];
            REQUIRE(key > last, "record %ld has key %ld after %ld", seen, key, last);
            last = key;
            seen++;
        }
    }
    if (status != NSORT_END_OF_OUTPUT) {
        REQUIRE(strlen(nsort_message(&ctx)) > 0, "an error without a message");
        fprintf(stderr, "merge ended with %d: %s\n", status, nsort_message(&ctx));
    }
    nsort_end(&ctx);
    *records = seen;
    return status;
}

int main(int argc, char **argv) {
    REQUIRE(argc == 2, "usage: merge COUNT");
    long count = atol(argv[1]), records = 0;
    REQUIRE(nsort_get_thread_index() == 0, "the program's thread is not 0");

    struct streams s = {count, {0, 0, 0}, -1, -1, -1};
    EXPECT(merge(&s, 3, &records), NSORT_END_OF_OUTPUT, NULL);
    REQUIRE(records == 3 * count, "merged %ld records of %ld", records, 3 * count);
    REQUIRE(s.thread_index >= 0, "a merge input was called on a thread of no index (%d)", s.thread_index);

    struct streams raising = {count, {0, 0, 0}, count / 2, -1, -1};
    int status = merge(&raising, 3, &records);
    REQUIRE(NSORT_MSG_IS_ERROR(status), "a raised error ended the merge with %d", status);

    struct streams misordered = {count, {0, 0, 0}, -1, count / 3, -1};
    EXPECT(merge(&misordered, 3, &records), NSORT_MERGE_MISORDERED, NULL);

    struct streams unused = {count, {0, 0, 0}, -1, -1, -1};
    EXPECT(merge(&unused, 0, &records), NSORT_BAD_MERGE_WIDTH, NULL);

    REQUIRE(strstr(nsort_raise_error("outside"), "a merge input callback") != NULL, "raise_error outside a callback returned");
    return 0;
}
