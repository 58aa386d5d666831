// Hand-written reference for bench/scan.strata: block-local work-efficient exclusive scan
// (Blelloch) of SEG = 2 * NT i32 values per block of NT threads, in shared memory, two values
// per thread; reads `in`, writes `out`.
#include "common.h"
#include <cstdint>
#ifndef LOG_N
#define LOG_N 24
#endif
#ifndef REPS
#define REPS 10
#endif
#define LOG_NT 8
#define NT (1 << LOG_NT)
#define SEG (2 * NT)
#define NB (1 << (LOG_N - LOG_NT - 1))

__global__ void scan(const int32_t *__restrict__ in, int32_t *__restrict__ out) {
    __shared__ int32_t tmp[SEG];
    const int t = threadIdx.x;
    const int base = blockIdx.x * SEG;
    tmp[2 * t] = in[base + 2 * t];
    tmp[2 * t + 1] = in[base + 2 * t + 1];
    // Up-sweep: at distance d, thread t < NT / d adds tmp[d*(2t+1)-1] into tmp[d*(2t+2)-1].
#pragma unroll
    for (int d = 1; d <= NT; d <<= 1) {
        __syncthreads();
        if (t < NT / d) {
            const int i = d * (2 * t + 1) - 1;
            tmp[i + d] += tmp[i];
        }
    }
    __syncthreads();
    if (t == 0) tmp[SEG - 1] = 0;
    // Down-sweep.
#pragma unroll
    for (int d = NT; d >= 1; d >>= 1) {
        __syncthreads();
        if (t < NT / d) {
            const int i = d * (2 * t + 1) - 1;
            const int32_t left = tmp[i];
            tmp[i] = tmp[i + d];
            tmp[i + d] += left;
        }
    }
    __syncthreads();
    out[base + 2 * t] = tmp[2 * t];
    out[base + 2 * t + 1] = tmp[2 * t + 1];
}

int main() {
    const size_t n = (size_t)NB * SEG;
    int32_t *h = (int32_t *)std::malloc(n * 4), *r = (int32_t *)std::malloc(n * 4);
    for (size_t i = 0; i < n; i++) h[i] = (int32_t)(i % 97);
    int32_t *d_in, *d_out;
    CHECK(cudaMalloc(&d_in, n * 4));
    CHECK(cudaMalloc(&d_out, n * 4));
    CHECK(cudaMemcpy(d_in, h, n * 4, cudaMemcpyHostToDevice));
    for (int k = 0; k < REPS; k++) TIMED("scan", scan<<<NB, NT>>>(d_in, d_out));
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(r, d_out, n * 4, cudaMemcpyDeviceToHost));
    for (size_t b = 0; b < NB; b++) {
        int32_t acc = 0;
        for (size_t i = 0; i < SEG; i++) {
            if (r[b * SEG + i] != acc) fail("scan");
            acc += h[b * SEG + i];
        }
    }
    std::puts("scan ok");
    return 0;
}
