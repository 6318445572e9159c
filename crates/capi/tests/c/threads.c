/* threads.c - two threads sort at once, each with its own context: the threads meet at a barrier
 * after defining their sorts and again after ending their input, so that both sorts are alive
 * together, then each checks its output is its input's records in order (count, byte sum, keys).
 *
 *   threads STATEMENTS RECORDS_PER_THREAD
 */
#include <pthread.h>
#include <stdint.h>

#include "check.h"

static pthread_barrier_t barrier;
static const char *statements;
static size_t records;

struct job {
    uint64_t seed;
    int ok;
};

static void *sort_one(void *arg) {
    struct job *job = arg;
    size_t len = records * 100;
    unsigned char *data = xmalloc(len), *out = xmalloc(len + 100);
    uint64_t x = job->seed, in_sum = 0, out_sum = 0;
    for (size_t i = 0; i < len; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        data[i] = (unsigned char)(x >> 56);
        in_sum += data[i];
    }
    ctx_t ctx;
    EXPECT(DEFINE(statements, &ctx), CODE(SUCCESS), &ctx);
    pthread_barrier_wait(&barrier);
    for (size_t off = 0; off < len; off += 100 * 777) {
        size_t n = len - off < 100 * 777 ? len - off : 100 * 777;
        EXPECT(API(release_recs)(data + off, n, &ctx), CODE(SUCCESS), &ctx);
    }
    EXPECT(API(release_end)(&ctx), CODE(SUCCESS), &ctx);
    pthread_barrier_wait(&barrier);
    size_t got = 0;
    for (;;) {
        size_t size = 100 * 1234;
        if (got + size > len + 100) size = len + 100 - got;
        int status = API(return_recs)(out + got, &size, &ctx);
        if (status == CODE(END_OF_OUTPUT)) break;
        EXPECT(status, CODE(SUCCESS), &ctx);
        got += size;
    }
    EXPECT(API(end)(&ctx), CODE(SUCCESS), &ctx);
    REQUIRE(got == len, "thread %llu: %zu bytes back of %zu", (unsigned long long)job->seed, got, len);
    for (size_t i = 0; i < len; i++) out_sum += out[i];
    REQUIRE(out_sum == in_sum, "thread %llu: the records changed", (unsigned long long)job->seed);
    for (size_t r = 1; r < records; r++) {
        REQUIRE(memcmp(out + (r - 1) * 100, out + r * 100, 10) <= 0, "thread %llu: record %zu out of order", (unsigned long long)job->seed, r);
    }
    free(data);
    free(out);
    job->ok = 1;
    return NULL;
}

int main(int argc, char **argv) {
    REQUIRE(argc == 3, "usage: threads STATEMENTS RECORDS_PER_THREAD");
    statements = argv[1];
    records = (size_t)atol(argv[2]);
    pthread_barrier_init(&barrier, NULL, 2);
    struct job jobs[2] = {{1, 0}, {2, 0}};
    pthread_t threads[2];
    for (int i = 0; i < 2; i++) REQUIRE(pthread_create(&threads[i], NULL, sort_one, &jobs[i]) == 0, "pthread_create");
    for (int i = 0; i < 2; i++) pthread_join(threads[i], NULL);
    REQUIRE(jobs[0].ok && jobs[1].ok, "a thread failed");
    puts("threads: both sorts passed");
    return 0;
}
