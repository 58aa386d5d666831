/* Baseline of bench/scan.strata: exclusive scan of every segment of SEG = 512 i32 values
   (block-local scans), one segment per iteration of a static OpenMP loop, sequential inside. */
#include "common.h"
#ifndef LOG_N
#define LOG_N 24
#endif
#ifndef REPS
#define REPS 10
#endif
#define SEG 512
#define N ((size_t)1 << LOG_N)
#define NB (N / SEG)

static void scan(const int32_t *restrict in, int32_t *restrict out) {
    #pragma omp parallel for schedule(static)
    for (size_t b = 0; b < NB; b++) {
        int32_t acc = 0;
        for (size_t i = 0; i < SEG; i++) { out[b * SEG + i] = acc; acc += in[b * SEG + i]; }
    }
}

int main(void) {
    int32_t *in = xmalloc(4 * N), *out = xmalloc(4 * N);
    uint64_t s = 3;
    for (size_t i = 0; i < N; i++) { in[i] = (int32_t)(splitmix(&s) % 100); out[i] = 0; }
    for (int r = 0; r < REPS; r++) { double t0 = now(); scan(in, out); report("scan", t0); }
    for (size_t b = 0; b < NB; b++) {
        int32_t acc = 0;
        for (size_t i = 0; i < SEG; i++) { CHECK(out[b * SEG + i] == acc); acc += in[b * SEG + i]; }
    }
    printf("scan ok\n");
    return 0;
}
