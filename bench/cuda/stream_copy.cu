// Hand-written reference for bench/stream_copy.strata: b = a over N f64 values, one element
// per thread of NB blocks of NT threads.
#include "common.h"
#ifndef LOG_N
#define LOG_N 25
#endif
#ifndef REPS
#define REPS 10
#endif
#define NT 256
#define N (1 << LOG_N)

__global__ void copy(const double *__restrict__ a, double *__restrict__ b) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    b[i] = a[i];
}

int main() {
    const size_t bytes = (size_t)N * sizeof(double);
    double *ha = (double *)std::malloc(bytes), *hb = (double *)std::malloc(bytes);
    for (size_t i = 0; i < (size_t)N; i++) ha[i] = (double)i * 0.25;
    double *da, *db;
    CHECK(cudaMalloc(&da, bytes));
    CHECK(cudaMalloc(&db, bytes));
    CHECK(cudaMemcpy(da, ha, bytes, cudaMemcpyHostToDevice));
    for (int r = 0; r < REPS; r++) TIMED("copy", copy<<<N / NT, NT>>>(da, db));
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(hb, db, bytes, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < (size_t)N; i++)
        if (hb[i] != ha[i]) fail("copy");
    std::puts("stream copy ok");
    return 0;
}
