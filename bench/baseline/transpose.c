/* Baseline of bench/transpose.strata: N x N f64 transpose through a 32 x 32 tile buffer, one
   tile per OpenMP iteration. */
#include "common.h"
#ifndef N
#define N 2048
#endif
#ifndef REPS
#define REPS 10
#endif
#define T 32

static void transpose(const double *restrict in, double *restrict out) {
    #pragma omp parallel for collapse(2) schedule(static)
    for (int bi = 0; bi < N / T; bi++)
        for (int bj = 0; bj < N / T; bj++) {
            double tile[T][T];
            for (int i = 0; i < T; i++)
                for (int j = 0; j < T; j++)
                    tile[j][i] = in[(size_t)(bi * T + i) * N + bj * T + j];
            for (int j = 0; j < T; j++)
                for (int i = 0; i < T; i++)
                    out[(size_t)(bj * T + j) * N + bi * T + i] = tile[j][i];
        }
}

int main(void) {
    double *in = xmalloc(sizeof(double) * N * N), *out = xmalloc(sizeof(double) * N * N);
    uint64_t s = 1;
    for (size_t i = 0; i < (size_t)N * N; i++) { in[i] = rand_unit(&s); out[i] = 0; }
    for (int r = 0; r < REPS; r++) { double t0 = now(); transpose(in, out); report("transpose", t0); }
    for (size_t r = 0; r < N; r++)
        for (size_t c = 0; c < N; c++) CHECK(out[r * N + c] == in[c * N + r]);
    printf("transpose ok\n");
    return 0;
}
