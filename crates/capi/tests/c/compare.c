/* compare.c - nsort_declare_function and compare=NAME: records sorted by a declared comparison
 * function (a little-endian 8-byte number, whose order is not its bytes'), alone and after a
 * character field, ascending and descending, in memory and spilled, released and returned in odd
 * chunks; ties in input order; an undeclared name (NSORT_COMPARE_UNDECLARED); a function that
 * raises an error with nsort_raise_error (NSORT_USER_RAISED_ERROR, no records returned after it).
 * Nsort's names only.
 *
 *   compare COUNT
 */
#include <stdint.h>

#include "check.h"

#define RECORD 24 /* group (1 byte), value (8, little-endian), input number (8), padding */

static uint64_t le64(const unsigned char *p) {
    uint64_t v = 0;
    for (int b = 7; b >= 0; b--) v = (v << 8) | p[b];
    return v;
}

struct counts {
    uint64_t raise_on; /* raise an error when a value equals this (0: never) */
    int on_sort_threads; /* a call came from one of the sort's threads (index 1 to N) */
};

/* The declared function: the 8-byte values as little-endian unsigned numbers. */
static int by_number(void *a, void *b, int len_a, int len_b, void *arg) {
    struct counts *c = arg;
    if (len_a != 8 || len_b != 8) nsort_raise_error("a value is not 8 bytes");
    if (nsort_get_thread_index() > 0) c->on_sort_threads = 1;
    uint64_t x = le64(a), y = le64(b);
    if (c->raise_on != 0 && (x == c->raise_on || y == c->raise_on)) nsort_raise_error("value 7 is not comparable");
    return x < y ? -1 : x > y;
}

/* Record i: a group byte, a value with many ties (few distinct ones), its input number. */
static void make(unsigned char *rec, long i) {
    uint64_t h = (uint64_t)i * 0x9E3779B97F4A7C15ull;
    rec[0] = (unsigned char)('a' + (h >> 60) % 3);
    uint64_t v = (h >> 20) % 5000 + 1;
    for (int b = 0; b < 8; b++) rec[1 + b] = (unsigned char)(v >> (8 * b));
    for (int b = 0; b < 8; b++) rec[9 + b] = (unsigned char)((uint64_t)i >> (8 * b));
    memset(rec + 17, '.', RECORD - 17);
}

/* A function that is no order: every value sorts before every other. */
static int liar(void *a, void *b, int len_a, int len_b, void *arg) {
    (void)a, (void)b, (void)len_a, (void)len_b, (void)arg;
    return -1;
}

/* Whether record b may follow record a: by group when grouped, then by value (descending when
 * asked), then by input number; anything goes when grouped is negative (no order to check). */
static int in_order(const unsigned char *a, const unsigned char *b, int grouped, int descending) {
    if (grouped < 0) return 1;
    if (grouped && a[0] != b[0]) return a[0] < b[0];
    uint64_t x = le64(a + 1), y = le64(b + 1);
    if (x != y) return descending ? x > y : x < y;
    return le64(a + 9) < le64(b + 9);
}

/* Sorts COUNT records with the definition; returns the final status, checking the order and
 * that every record came back once (the input numbers' sum). */
static int sort(const char *def, long count, int grouped, int descending) {
    nsort_t ctx;
    int status = nsort_define(def, 0, NULL, &ctx);
    if (status != NSORT_SUCCESS) {
        fprintf(stderr, "define failed with %d: %s\n", status, nsort_message(&ctx));
        nsort_end(&ctx);
        return status;
    }
    unsigned char chunk[RECORD * 97];
    for (long i = 0; i < count;) {
        long n = 1 + i % 97; /* odd chunks */
        if (n > count - i) n = count - i;
        for (long j = 0; j < n; j++) make(chunk + j * RECORD, i + j);
        status = nsort_release_recs(chunk, (size_t)(n * RECORD), &ctx);
        if (status != NSORT_SUCCESS) break;
        i += n;
    }
    if (status == NSORT_SUCCESS) status = nsort_release_end(&ctx);
    unsigned char out[RECORD * 61], last[RECORD];
    long seen = 0;
    uint64_t sum = 0;
    while (status == NSORT_SUCCESS) {
        size_t size = sizeof out - RECORD * (size_t)(seen % 5);
        status = nsort_return_recs(out, &size, &ctx);
        if (status != NSORT_SUCCESS) break;
        for (size_t off = 0; off < size; off += RECORD) {
            REQUIRE(seen == 0 || in_order(last, out + off, grouped, descending), "record %ld is out of order", seen);
            memcpy(last, out + off, RECORD);
            sum += le64(out + off + 9);
            seen++;
        }
    }
    if (status == NSORT_END_OF_OUTPUT) {
        REQUIRE(seen == count, "returned %ld records of %ld", seen, count);
        REQUIRE(sum == (uint64_t)count * (uint64_t)(count - 1) / 2, "the records returned are not the records released");
    } else {
        REQUIRE(strlen(nsort_message(&ctx)) > 0, "an error without a message");
        fprintf(stderr, "sort ended with %d: %s\n", status, nsort_message(&ctx));
    }
    nsort_end(&ctx);
    return status;
}

int main(int argc, char **argv) {
    REQUIRE(argc == 2, "usage: compare COUNT");
    long count = atol(argv[1]);
    struct counts c = {0, 0};
    EXPECT(nsort_declare_function("le_number", by_number, &c), NSORT_SUCCESS, NULL);
    EXPECT(nsort_declare_function(NULL, by_number, &c), NSORT_INVALID_ARGUMENT, NULL);
    EXPECT(nsort_declare_function("le_number", NULL, &c), NSORT_INVALID_ARGUMENT, NULL);
    EXPECT(nsort_declare_function("9lives", by_number, &c), NSORT_INVALID_ARGUMENT, NULL);

    /* Nsort's own example form: a field compared by the function, a key on it. */
    const char *alone = "-format=size:24 -field:name=v,size=8,off=1,compare=le_number -key:v";
    EXPECT(sort(alone, count, 0, 0), NSORT_END_OF_OUTPUT, NULL);
    const char *spilled = "-format=size:24 -memory=2m -key=position:2,size:8,compare:le_number,descending";
    EXPECT(sort(spilled, count, 0, 1), NSORT_END_OF_OUTPUT, NULL);
    const char *grouped = "-format=size:24 -field=name:g,size:1 -field=name:v,size:8,compare:le_number -key=g -key=v";
    EXPECT(sort(grouped, count, 1, 0), NSORT_END_OF_OUTPUT, NULL);
    EXPECT(sort("-format=size:24 -memory=2m -field=name:g,size:1 -field=name:v,size:8,compare:le_number -key=g -key=v", count, 1, 0),
           NSORT_END_OF_OUTPUT, NULL);
    REQUIRE(c.on_sort_threads, "the function was never called on the sort's threads");

    /* No order at all: the records all come back, in some order, with no crash. */
    EXPECT(nsort_declare_function("liar", liar, NULL), NSORT_SUCCESS, NULL);
    EXPECT(sort("-format=size:24 -key=position:2,size:8,compare:liar", count, -1, 0), NSORT_END_OF_OUTPUT, NULL);
    EXPECT(sort("-format=size:24 -memory=2m -key=position:2,size:8,compare:liar", count, -1, 0), NSORT_END_OF_OUTPUT, NULL);

    EXPECT(sort("-format=size:24 -key=position:2,size:8,compare:nobody", count, 0, 0), NSORT_COMPARE_UNDECLARED, NULL);

    c.raise_on = 7;
    EXPECT(sort(alone, count, 0, 0), NSORT_USER_RAISED_ERROR, NULL);
    EXPECT(sort(spilled, count, 0, 1), NSORT_USER_RAISED_ERROR, NULL);
    return 0;
}
