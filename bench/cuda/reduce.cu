// Hand-written reference for bench/reduce.strata: each block of NT threads sums its NT u32
// values in shared memory (tree reduction, sequential addressing); thread 0 writes the sum.
#include "common.h"
#include <cstdint>
#ifndef LOG_N
#define LOG_N 26
#endif
#ifndef REPS
#define REPS 10
#endif
#define LOG_NT 8
#define NT (1 << LOG_NT)
#define NB (1 << (LOG_N - LOG_NT))

__global__ void reduce(const uint32_t *__restrict__ in, uint32_t *__restrict__ out) {
    __shared__ uint32_t tmp[NT];
    const unsigned t = threadIdx.x;
    tmp[t] = in[blockIdx.x * NT + t];
#pragma unroll
    for (unsigned s = NT / 2; s > 0; s >>= 1) {
        __syncthreads();
        if (t < s) tmp[t] += tmp[t + s];
    }
    __syncthreads();
    if (t == 0) out[blockIdx.x] = tmp[0];
}

int main() {
    uint32_t *h = (uint32_t *)std::malloc((size_t)NB * NT * 4), *sums = (uint32_t *)std::malloc((size_t)NB * 4);
    for (size_t i = 0; i < (size_t)NB * NT; i++) h[i] = (uint32_t)(i * 2654435761u) % 100;
    uint32_t *d_in, *d_out;
    CHECK(cudaMalloc(&d_in, (size_t)NB * NT * 4));
    CHECK(cudaMalloc(&d_out, (size_t)NB * 4));
    CHECK(cudaMemcpy(d_in, h, (size_t)NB * NT * 4, cudaMemcpyHostToDevice));
    for (int r = 0; r < REPS; r++) TIMED("reduce", reduce<<<NB, NT>>>(d_in, d_out));
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(sums, d_out, (size_t)NB * 4, cudaMemcpyDeviceToHost));
    for (size_t b = 0; b < NB; b++) {
        uint32_t e = 0;
        for (size_t i = 0; i < NT; i++) e += h[b * NT + i];
        if (sums[b] != e) fail("reduce");
    }
    std::puts("reduce ok");
    return 0;
}
