// expect: E0903
// The window sums of `p_local_consts.cu` with the halo left out of the `__shared__` array,
// whose length is a local `const`: the last threads of a block read `s[tile]` and past it.
#include <stdio.h>

__global__ void window_sums(const int *in, int *out) {
    const int width = 3;
    const int tile = 32;
    __shared__ int s[tile];
    int t = threadIdx.x;
    s[t] = in[blockIdx.x * tile + t];
    __syncthreads();
    int sum = 0;
    for (int k = 0; k < width; k++) sum += s[t + k];
    out[blockIdx.x * tile + t] = sum;
}

int main(void) {
    const int n = 64;
    int h[n + 2];
    for (int i = 0; i < n + 2; i++) h[i] = i;
    int *din, *dout;
    cudaMalloc(&din, sizeof(h));
    cudaMalloc(&dout, n * sizeof(int));
    cudaMemcpy(din, h, sizeof(h), cudaMemcpyHostToDevice);
    window_sums<<<n / 32, 32>>>(din, dout);
    cudaDeviceSynchronize();
    cudaFree(din);
    cudaFree(dout);
    return 0;
}
