/* Baseline of bench/matmul.strata: naive C = A * B for N x N f32, one row of C per iteration of
   a static OpenMP loop, i-j-k order with the sum in a register (the same algorithm as the
   Strata kernel: a row per thread, B read column-wise). */
#include "common.h"
#include <math.h>
#ifndef N
#define N 1024
#endif
#ifndef REPS
#define REPS 3
#endif

static void matmul(const float *restrict a, const float *restrict b, float *restrict c) {
    #pragma omp parallel for schedule(static)
    for (size_t i = 0; i < N; i++)
        for (size_t j = 0; j < N; j++) {
            float sum = 0.0f;
            for (size_t k = 0; k < N; k++) sum += a[i * N + k] * b[k * N + j];
            c[i * N + j] = sum;
        }
}

int main(void) {
    float *a = xmalloc(4 * N * N), *b = xmalloc(4 * N * N), *c = xmalloc(4 * N * N);
    float *row = xmalloc(4 * N);
    uint64_t s = 4;
    for (size_t i = 0; i < (size_t)N * N; i++) a[i] = (float)rand_unit(&s);
    s = 5;
    for (size_t i = 0; i < (size_t)N * N; i++) { b[i] = (float)rand_unit(&s); c[i] = 0; }
    for (int r = 0; r < REPS; r++) { double t0 = now(); matmul(a, b, c); report("matmul", t0); }
    for (size_t i = 0; i < N; i++) {
        for (size_t j = 0; j < N; j++) row[j] = 0;
        for (size_t k = 0; k < N; k++)
            for (size_t j = 0; j < N; j++) row[j] += a[i * N + k] * b[k * N + j];
        for (size_t j = 0; j < N; j++) CHECK(fabsf(c[i * N + j] - row[j]) < 0.01f);
    }
    printf("matmul ok\n");
    return 0;
}
