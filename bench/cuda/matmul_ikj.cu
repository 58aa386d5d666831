// Hand-written reference for bench/matmul_ikj.strata: the row-per-thread matmul in i-k-j order
// (each thread streams row k of B into its row of C, accumulating in global memory as the
// Strata program does).
#include "common.h"
#include <cmath>
#ifndef N
#define N 1024
#endif
#ifndef NB
#define NB 16
#endif
#ifndef REPS
#define REPS 3
#endif

__global__ void matmul_ikj(const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ c) {
    const int row = blockIdx.x * (N / NB) + threadIdx.x;
    const float *arow = a + row * N;
    float *crow = c + row * N;
    for (int j = 0; j < N; j++) crow[j] = 0.0f;
    for (int k = 0; k < N; k++) {
        const float x = arow[k];
        const float *brow = b + k * N;
        for (int j = 0; j < N; j++) crow[j] += x * brow[j];
    }
}

int main() {
    const size_t bytes = (size_t)N * N * sizeof(float);
    float *ha = (float *)std::malloc(bytes), *hb = (float *)std::malloc(bytes), *hc = (float *)std::malloc(bytes);
    for (size_t i = 0; i < (size_t)N * N; i++) { ha[i] = (float)(i % 7) * 0.125f; hb[i] = (float)(i % 5) * 0.25f; }
    float *da, *db, *dc;
    CHECK(cudaMalloc(&da, bytes));
    CHECK(cudaMalloc(&db, bytes));
    CHECK(cudaMalloc(&dc, bytes));
    CHECK(cudaMemcpy(da, ha, bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(db, hb, bytes, cudaMemcpyHostToDevice));
    for (int r = 0; r < REPS; r++) TIMED("matmul_ikj", matmul_ikj<<<NB, N / NB>>>(da, db, dc));
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(hc, dc, bytes, cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; i += 37)
        for (int j = 0; j < N; j++) {
            float s = 0.0f;
            for (int k = 0; k < N; k++) s += ha[i * N + k] * hb[k * N + j];
            if (std::fabs(hc[i * N + j] - s) > 0.01f * std::fabs(s) + 0.01f) fail("matmul_ikj");
        }
    std::puts("matmul_ikj ok");
    return 0;
}
