/* Shared helpers of the hand-written C baselines of bench/*.strata (issue 5). Each baseline runs
   its kernel REPS times, prints `C-TIME <kernel> <seconds>` on stderr per repetition (the same
   format and method as STRATA_TIME=1: wall time of the kernel only), checks the result and prints
   one line on stdout. Sizes are macros, overridable with -D like the Strata consts. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <omp.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void report(const char *kernel, double t0) {
    fprintf(stderr, "C-TIME %s %.9f\n", kernel, now() - t0);
}

/* splitmix64, the generator of Strata's fill_random. */
static uint64_t splitmix(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double rand_unit(uint64_t *s) { return (double)(splitmix(s) >> 11) / (double)(1ULL << 53); }

static void *xmalloc(size_t bytes) {
    void *p = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!p) { fprintf(stderr, "out of memory\n"); exit(1); }
    return p;
}

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "check failed: %s (%s:%d)\n", #c, __FILE__, __LINE__); exit(1); } } while (0)
