/* The least an in-memory library sort must do that xsort's file-to-file sort of a cached file does
 * not: copy the released records into memory of its own, which on a virtual machine is fresh
 * memory whose first touch the host pays for. Reads INPUT into memory (touched, and a second
 * buffer like release_return's output, so that the process holds what release_return's does),
 * then times copying it in CHUNK-byte pieces into a fresh anonymous mapping. bench/library.sh
 * runs it beside release_return.
 *
 *   fresh_copy CHUNK INPUT
 *
 * Prints one line of JSON: {"copy_s": ...}. */
#include <sys/mman.h>
#include "common.h"

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: fresh_copy CHUNK INPUT\n");
        return 2;
    }
    size_t chunk = strtoull(argv[1], NULL, 10), len;
    char *data, *out;
    load_input(argv[2], chunk, &data, &out, &len);
    char *fresh = mmap(NULL, len + 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (fresh == MAP_FAILED) { perror("mmap"); return 2; }
    double t0 = now();
    for (size_t at = 0; at < len; at += chunk) {
        size_t n = len - at < chunk ? len - at : chunk;
        memcpy(fresh + at, data + at, n);
    }
    double t1 = now();
    /* Use the copy, so that it cannot be optimized away. */
    unsigned long sum = 0;
    for (size_t at = 0; at < len; at += 4096) sum += (unsigned char)fresh[at];
    printf("{\"copy_s\": %.3f, \"sampled\": %lu}\n", t1 - t0, sum);
    return 0;
}
