// Hand-written reference for bench/histogram.strata: NB blocks of NT threads, each thread adds
// PER consecutive values into its block's BINS shared-memory counters with atomicAdd; the first
// BINS threads then copy the block's counts to row blockIdx.x of `counts`.
#include "common.h"
#include <cstdint>
#ifndef NB
#define NB 4096
#endif
#ifndef REPS
#define REPS 10
#endif
#define NT 256
#define PER 64
#define BINS 256

__global__ void histogram(const uint32_t *__restrict__ values, uint32_t *__restrict__ counts) {
    __shared__ uint32_t bins[BINS];
    const int t = threadIdx.x;
    if (t < BINS) bins[t] = 0;
    __syncthreads();
    const uint32_t *mine = values + (blockIdx.x * NT + t) * PER;
    for (int i = 0; i < PER; i++) atomicAdd(&bins[mine[i] % BINS], 1u);
    __syncthreads();
    if (t < BINS) counts[blockIdx.x * BINS + t] = bins[t];
}

int main() {
    const size_t n = (size_t)NB * NT * PER;
    uint32_t *v = (uint32_t *)std::malloc(n * 4), *c = (uint32_t *)std::malloc((size_t)NB * BINS * 4);
    for (size_t i = 0; i < n; i++) v[i] = (uint32_t)(((i % 65521) * 7919 + (i / 4099) % 8191 * 13) % 65521);
    uint32_t *dv, *dc;
    CHECK(cudaMalloc(&dv, n * 4));
    CHECK(cudaMalloc(&dc, (size_t)NB * BINS * 4));
    CHECK(cudaMemcpy(dv, v, n * 4, cudaMemcpyHostToDevice));
    for (int r = 0; r < REPS; r++) TIMED("histogram", histogram<<<NB, NT>>>(dv, dc));
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(c, dc, (size_t)NB * BINS * 4, cudaMemcpyDeviceToHost));
    uint64_t expected[BINS] = {0}, total[BINS] = {0};
    for (size_t i = 0; i < n; i++) expected[v[i] % BINS]++;
    for (size_t b = 0; b < NB; b++)
        for (int k = 0; k < BINS; k++) total[k] += c[b * BINS + k];
    for (int k = 0; k < BINS; k++)
        if (total[k] != expected[k]) fail("histogram");
    std::puts("histogram ok");
    return 0;
}
