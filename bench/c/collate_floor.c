/* What the C library's collation costs a sort that summarizes each line once and confirms the
 * order, measured beside bench/locale.sh's sorts: every line transformed once by strxfrm (one
 * order-preserving summary a line, as xsort's prefixes are) and, over the sorted output, each line
 * compared once with the next by strcoll (the fewest comparisons that confirm an order; a sort
 * that compares only with strcoll, as GNU's does, makes about log2(lines) times more). Both passes run on THREADS threads, each over its share of the lines, in the
 * locale the environment names (LC_ALL).
 *
 *   collate_floor THREADS INPUT SORTED
 *
 * Prints one line of JSON: {"strxfrm_s": ..., "strcoll_s": ..., "lines": ...}. */
#define _GNU_SOURCE
#include <locale.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* The file's lines, each NUL-terminated in place. */
static char **load_lines(const char *path, size_t *count) {
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(2); }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *data = malloc(len + 1);
    if (!data || fread(data, 1, len, f) != (size_t) len) { perror(path); exit(2); }
    fclose(f);
    size_t n = 0, cap = 1 << 20;
    char **lines = malloc(cap * sizeof *lines);
    for (char *p = data, *end = data + len; p < end;) {
        char *nl = memchr(p, '\n', end - p);
        if (!nl) nl = end;
        *nl = '\0';
        if (n == cap) lines = realloc(lines, (cap *= 2) * sizeof *lines);
        lines[n++] = p;
        p = nl + 1;
    }
    *count = n;
    return lines;
}

struct share { char **lines; size_t from, to; long sink; };

static void *transform(void *arg) {
    struct share *s = arg;
    char buf[4096];
    for (size_t i = s->from; i < s->to; i++)
        s->sink += (long) strxfrm(buf, s->lines[i], sizeof buf) + buf[0];
    return NULL;
}

static void *confirm(void *arg) {
    struct share *s = arg;
    for (size_t i = s->from; i + 1 < s->to; i++)
        s->sink += strcoll(s->lines[i], s->lines[i + 1]) > 0;
    return NULL;
}

/* Runs WORK over LINES split among THREADS threads; returns the seconds it took. */
static double run(void *(*work)(void *), char **lines, size_t n, int threads, long *sink) {
    pthread_t t[256];
    struct share s[256];
    double t0 = now();
    for (int i = 0; i < threads; i++) {
        s[i] = (struct share){ lines, n * i / threads, n * (i + 1) / threads + (work == confirm), 0 };
        if (s[i].to > n) s[i].to = n;
        pthread_create(&t[i], NULL, work, &s[i]);
    }
    for (int i = 0; i < threads; i++) {
        pthread_join(t[i], NULL);
        *sink += s[i].sink;
    }
    return now() - t0;
}

int main(int argc, char **argv) {
    if (argc != 4 || atoi(argv[1]) < 1 || atoi(argv[1]) > 256) {
        fprintf(stderr, "usage: collate_floor THREADS INPUT SORTED\n");
        return 2;
    }
    if (!setlocale(LC_ALL, "")) { fprintf(stderr, "collate_floor: the locale is not installed\n"); return 2; }
    int threads = atoi(argv[1]);
    size_t n, m;
    char **input = load_lines(argv[2], &n), **sorted = load_lines(argv[3], &m);
    long sink = 0, disorder = 0;
    double xfrm = run(transform, input, n, threads, &sink);
    double coll = run(confirm, sorted, m, threads, &disorder);
    if (disorder) { fprintf(stderr, "collate_floor: %s is not in strcoll's order\n", argv[3]); return 1; }
    printf("{\"strxfrm_s\": %.3f, \"strcoll_s\": %.3f, \"lines\": %zu, \"sink\": %ld}\n", xfrm, coll, n, sink & 1);
    return 0;
}
