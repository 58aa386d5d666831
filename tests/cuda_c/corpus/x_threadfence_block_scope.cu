// expect: E0901
#include <stdio.h>
#define B 4
#define T 32
// The twin of p_threadfence_last_block.cu with `__threadfence_block()`: a fence for the
// threads of its own block publishes nothing to the last block, whose reads race.
__device__ unsigned int count = 0;
__global__ void sum(const int *in, volatile int *part, int *out) {
    __shared__ int s[T];
    __shared__ int last;
    int t = threadIdx.x;
    s[t] = in[blockIdx.x * T + t];
    __syncthreads();
    if (t == 0) {
        int acc = 0;
        for (int i = 0; i < T; i++) acc += s[i];
        part[blockIdx.x] = acc;
        __threadfence_block();
        unsigned int prev = atomicAdd(&count, 1);
        last = (prev == gridDim.x - 1);
    }
    __syncthreads();
    if (last && t < gridDim.x) {
        atomicAdd(out, part[t]);
    }
}
int main(void) {
    int h[B * T];
    for (int i = 0; i < B * T; i++) h[i] = i;
    int *din, *dpart, *dout, r;
    cudaMalloc(&din, sizeof h);
    cudaMalloc(&dpart, B * sizeof(int));
    cudaMalloc(&dout, sizeof(int));
    cudaMemset(dout, 0, sizeof(int));
    cudaMemcpy(din, h, sizeof h, cudaMemcpyHostToDevice);
    sum<<<B, T>>>(din, dpart, dout);
    cudaMemcpy(&r, dout, sizeof(int), cudaMemcpyDeviceToHost);
    printf("%d\n", r);
    cudaFree(din);
    cudaFree(dpart);
    cudaFree(dout);
    return 0;
}
