// expect: clean
#include <stdio.h>
#define BLOCKS 4
#define T 32

// Each block counts the even numbers of its part; the host adds the counts.
__global__ void count_even(int *in, int *counts) {
    __shared__ int flags[T];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    flags[threadIdx.x] = (in[i] % 2 == 0);
    __syncthreads();
    if (threadIdx.x == 0) {
        int c = 0;
        for (int k = 0; k < T; k++) {
            c += flags[k];
        }
        counts[blockIdx.x] = c;
    }
}

int main(void) {
    int h[BLOCKS * T];
    int counts[BLOCKS];
    for (int i = 0; i < BLOCKS * T; i++) {
        h[i] = i * 7 + 3;
    }
    int *din;
    int *dc;
    cudaMalloc(&din, BLOCKS * T * sizeof(int));
    cudaMalloc(&dc, BLOCKS * sizeof(int));
    cudaMemcpy(din, h, BLOCKS * T * sizeof(int), cudaMemcpyHostToDevice);
    count_even<<<BLOCKS, T>>>(din, dc);
    cudaMemcpy(counts, dc, BLOCKS * sizeof(int), cudaMemcpyDeviceToHost);
    int total = 0;
    for (int b = 0; b < BLOCKS; b++) {
        total += counts[b];
    }
    printf("even: %d of %d\n", total, BLOCKS * T);
    cudaFree(din);
    cudaFree(dc);
    return 0;
}
