// Hand-written reference for bench/matmul.strata: naive C = A * B of N x N f32 matrices, one
// row of C per thread (NB blocks of N / NB threads), j-k loop order as in the Strata program.
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

__global__ void matmul(const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ c) {
    const int row = blockIdx.x * (N / NB) + threadIdx.x;
    const float *arow = a + row * N;
    float *crow = c + row * N;
    for (int j = 0; j < N; j++) {
        float sum = 0.0f;
        for (int k = 0; k < N; k++) sum += arow[k] * b[k * N + j];
        crow[j] = sum;
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
    for (int r = 0; r < REPS; r++) TIMED("matmul", matmul<<<NB, N / NB>>>(da, db, dc));
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(hc, dc, bytes, cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; i += 37)
        for (int j = 0; j < N; j++) {
            float s = 0.0f;
            for (int k = 0; k < N; k++) s += ha[i * N + k] * hb[k * N + j];
            if (std::fabs(hc[i * N + j] - s) > 0.01f * std::fabs(s) + 0.01f) fail("matmul");
        }
    std::puts("matmul ok");
    return 0;
}
