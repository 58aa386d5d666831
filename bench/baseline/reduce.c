/* Baseline of bench/reduce.strata: per-block partial sums of NT consecutive u32 values (the
   result of the block tree reduction), one block per iteration of a static OpenMP loop; the
   inner sum is a plain loop that the compiler vectorizes. */
#include "common.h"
#ifndef LOG_N
#define LOG_N 26
#endif
#ifndef REPS
#define REPS 10
#endif
#define NT 256
#define N ((size_t)1 << LOG_N)
#define NB (N / NT)

static void reduce(const uint32_t *restrict in, uint32_t *restrict out) {
    #pragma omp parallel for schedule(static)
    for (size_t b = 0; b < NB; b++) {
        uint32_t s = 0;
        for (size_t i = 0; i < NT; i++) s += in[b * NT + i];
        out[b] = s;
    }
}

int main(void) {
    uint32_t *in = xmalloc(4 * N), *out = xmalloc(4 * NB);
    uint64_t s = 2;
    for (size_t i = 0; i < N; i++) in[i] = (uint32_t)(splitmix(&s) % 100);
    memset(out, 0, 4 * NB);
    for (int r = 0; r < REPS; r++) { double t0 = now(); reduce(in, out); report("reduce", t0); }
    for (size_t b = 0; b < NB; b++) {
        uint32_t e = 0;
        for (size_t i = 0; i < NT; i++) e += in[b * NT + i];
        CHECK(out[b] == e);
    }
    printf("reduce ok\n");
    return 0;
}
