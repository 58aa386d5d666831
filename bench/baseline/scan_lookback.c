/* Baseline of bench/scan_lookback.strata: the full exclusive scan of N u32 values as a C
   programmer writes it with OpenMP: each thread sums its contiguous chunk, one thread scans the
   chunk sums, each thread scans its chunk from its offset (the input is read twice). */
#include "common.h"
#ifndef LOG_N
#define LOG_N 24
#endif
#ifndef REPS
#define REPS 10
#endif
#define N ((size_t)1 << LOG_N)

static void scan(const uint32_t *restrict in, uint32_t *restrict out, uint32_t *sums) {
    #pragma omp parallel
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        size_t lo = N * (size_t)t / (size_t)nt, hi = N * (size_t)(t + 1) / (size_t)nt;
        uint32_t s = 0;
        for (size_t i = lo; i < hi; i++) s += in[i];
        sums[t + 1] = s;
        #pragma omp barrier
        #pragma omp single
        {
            sums[0] = 0;
            for (int k = 1; k <= nt; k++) sums[k] += sums[k - 1];
        }
        uint32_t acc = sums[t];
        for (size_t i = lo; i < hi; i++) { out[i] = acc; acc += in[i]; }
    }
}

int main(void) {
    uint32_t *in = xmalloc(4 * N), *out = xmalloc(4 * N);
    uint32_t *sums = xmalloc(4 * (size_t)(omp_get_max_threads() + 1));
    for (size_t i = 0; i < N; i++) { in[i] = (uint32_t)(i % 97); out[i] = 0; }
    for (int r = 0; r < REPS; r++) { double t0 = now(); scan(in, out, sums); report("scan", t0); }
    uint32_t acc = 0;
    for (size_t i = 0; i < N; i++) { CHECK(out[i] == acc); acc += in[i]; }
    printf("scan ok\n");
    return 0;
}
