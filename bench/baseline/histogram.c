/* Baseline of bench/histogram.strata: 256-bin histogram, one block of NT * PER values per
   iteration of a static OpenMP loop; the block counts into a local array (one OS thread per
   block, so plain increments) and writes its row of per-block counts, which the host adds. */
#include "common.h"
#ifndef NB
#define NB 4096
#endif
#ifndef REPS
#define REPS 10
#endif
#define NT 256
#define PER 64
#define BINS 256
#define N ((size_t)NB * NT * PER)

static void histogram(const uint32_t *restrict v, uint32_t *restrict counts) {
    #pragma omp parallel for schedule(static)
    for (size_t b = 0; b < NB; b++) {
        uint32_t bins[BINS] = {0};
        const uint32_t *mine = v + b * NT * PER;
        for (size_t i = 0; i < NT * PER; i++) bins[mine[i] % BINS]++;
        memcpy(counts + b * BINS, bins, sizeof bins);
    }
}

int main(void) {
    uint32_t *v = xmalloc(4 * N), *c = xmalloc(4 * (size_t)NB * BINS);
    for (size_t i = 0; i < N; i++) v[i] = (uint32_t)(((i % 65521) * 7919 + (i / 4099) % 8191 * 13) % 65521);
    memset(c, 0, 4 * (size_t)NB * BINS);
    for (int r = 0; r < REPS; r++) { double t0 = now(); histogram(v, c); report("histogram", t0); }
    uint32_t total[BINS] = {0}, expected[BINS] = {0};
    for (size_t b = 0; b < NB; b++)
        for (size_t k = 0; k < BINS; k++) total[k] += c[b * BINS + k];
    for (size_t i = 0; i < N; i++) expected[v[i] % BINS]++;
    for (size_t k = 0; k < BINS; k++) CHECK(total[k] == expected[k]);
    printf("histogram ok\n");
    return 0;
}
