// expect: clean
#include <stdio.h>
#define B 4
#define T 32
// The "last block" reduction (CUDA's threadFenceReduction sample): each block writes its
// partial sum, `__threadfence()`s, and counts itself in with an atomic; the block whose atomic
// comes last sees every other block's partial sum (the fence and the atomic publish it, the
// last block's atomic on the same counter acquires it, its barrier passes that on) and adds
// them up. Correct under CUDA's memory model in any order of the blocks.
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
        __threadfence();
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
