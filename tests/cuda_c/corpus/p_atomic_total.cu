// expect: clean
#include <stdio.h>
#define BLOCKS 8
#define T 128

// Every thread adds its value to one global total with atomicAdd.
__global__ void total(int *in, int *sum) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    atomicAdd(sum, in[i]);
}

int main(void) {
    int h[BLOCKS * T];
    for (int i = 0; i < BLOCKS * T; i++) {
        h[i] = i % 13;
    }
    int *din;
    int *dsum;
    int result[1];
    cudaMalloc(&din, BLOCKS * T * sizeof(int));
    cudaMalloc(&dsum, sizeof(int));
    cudaMemcpy(din, h, BLOCKS * T * sizeof(int), cudaMemcpyHostToDevice);
    cudaMemset(dsum, 0, sizeof(int));
    total<<<BLOCKS, T>>>(din, dsum);
    cudaMemcpy(result, dsum, sizeof(int), cudaMemcpyDeviceToHost);
    printf("total %d\n", result[0]);
    cudaFree(din);
    cudaFree(dsum);
    return 0;
}
