/* The first touch of fresh memory, as a sort's buffers pay it: `touch BYTES [THREADS]` maps BYTES
 * of anonymous memory, writes one byte in every 4 KiB page from THREADS threads (default 2), each
 * its own contiguous share, and prints the seconds that took. bench/bench.sh adds it to the
 * one-pass floor: a one-pass sort must fault in its whole buffer and entries at least once. */
#include <pthread.h>
#include <sys/mman.h>
#include "common.h"

struct share { char *base; size_t len; };

static void *touch(void *arg) {
    struct share *s = arg;
    for (size_t off = 0; off < s->len; off += 4096)
        s->base[off] = 1;
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: touch BYTES [THREADS]\n");
        return 2;
    }
    size_t bytes = strtoull(argv[1], NULL, 10);
    int threads = argc > 2 ? atoi(argv[2]) : 2;
    if (bytes == 0 || threads < 1 || threads > 64) {
        fprintf(stderr, "touch: BYTES must be positive and THREADS 1 to 64\n");
        return 2;
    }
    char *base = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) {
        perror("touch: mmap");
        return 1;
    }
    pthread_t tid[64];
    struct share shares[64];
    size_t per = (bytes / threads + 4095) / 4096 * 4096;
    double t0 = now();
    for (int i = 0; i < threads; i++) {
        size_t start = per * i < bytes ? per * i : bytes;
        size_t end = start + per < bytes ? start + per : bytes;
        shares[i] = (struct share){ base + start, end - start };
        if (pthread_create(&tid[i], NULL, touch, &shares[i]) != 0) {
            fprintf(stderr, "touch: cannot start a thread\n");
            return 1;
        }
    }
    for (int i = 0; i < threads; i++)
        pthread_join(tid[i], NULL);
    printf("%.3f\n", now() - t0);
    munmap(base, bytes);
    return 0;
}
