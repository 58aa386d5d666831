/* STREAM copy b = a of N f64 values (static OpenMP loop): the reference memory bandwidth. */
#include "common.h"
#ifndef LOG_N
#define LOG_N 25
#endif
#ifndef REPS
#define REPS 10
#endif
#define N ((size_t)1 << LOG_N)

static void copy(const double *restrict a, double *restrict b) {
    #pragma omp parallel for schedule(static)
    for (size_t i = 0; i < N; i++) b[i] = a[i];
}

int main(void) {
    double *a = xmalloc(8 * N), *b = xmalloc(8 * N);
    uint64_t s = 6;
    #pragma omp parallel for schedule(static)
    for (size_t i = 0; i < N; i++) b[i] = 0;
    for (size_t i = 0; i < N; i++) a[i] = rand_unit(&s);
    for (int r = 0; r < REPS; r++) { double t0 = now(); copy(a, b); report("copy", t0); }
    for (size_t i = 0; i < N; i++) CHECK(b[i] == a[i]);
    printf("stream copy ok\n");
    return 0;
}
