// Benchmark (docs/cuda-c.md): the tree reduction of bench/cuda_c/reduce.strata in CUDA-C. N = 2^20
// values; each block of 256 threads sums its 256 values in shared memory (sequential
// addressing); the host checks every partial sum.
#include <stdio.h>
#include <stdlib.h>
#define LOG_NT 8
#define NT 256
#define NB 4096
#define N (NB * NT)

__global__ void reduce(unsigned *input, unsigned *output) {
    __shared__ unsigned tmp[NT];
    unsigned t = threadIdx.x;
    tmp[t] = input[blockIdx.x * NT + t];
    for (unsigned k = 0; k < LOG_NT; k++) {
        __syncthreads();
        unsigned half = NT >> (k + 1);
        if (t < half) {
            tmp[t] = tmp[t] + tmp[t + half];
        }
    }
    __syncthreads();
    if (t == 0) {
        output[blockIdx.x] = tmp[0];
    }
}

int main(void) {
    unsigned *h = (unsigned *) malloc(N * sizeof(unsigned));
    for (unsigned i = 0; i < N; i++) {
        h[i] = (i * 7u + 3u) % 100u;
    }
    unsigned *sums = (unsigned *) malloc(NB * sizeof(unsigned));
    unsigned *d;
    unsigned *dsums;
    cudaMalloc(&d, N * sizeof(unsigned));
    cudaMalloc(&dsums, NB * sizeof(unsigned));
    cudaMemcpy(d, h, N * sizeof(unsigned), cudaMemcpyHostToDevice);
    reduce<<<NB, NT>>>(d, dsums);
    cudaMemcpy(sums, dsums, NB * sizeof(unsigned), cudaMemcpyDeviceToHost);
    unsigned bad = 0;
    for (unsigned b = 0; b < NB; b++) {
        unsigned expected = 0;
        for (unsigned i = 0; i < NT; i++) {
            expected = expected + h[b * NT + i];
        }
        if (sums[b] != expected) {
            bad++;
        }
    }
    printf("reduce: %u wrong\n", bad);
    return 0;
}
