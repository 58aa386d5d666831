// expect: E0903
// A template's value parameter sizes the `__shared__` tile, and the launch uses more threads
// than the instantiation was made for: `tile[32]` is written past its end.
#include <stdio.h>

template <int TILE, typename T>
__global__ void stage(const T *in, T *out) {
    __shared__ T tile[TILE];
    tile[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = tile[blockDim.x - 1 - threadIdx.x];
}

int main(void) {
    float h[64];
    for (int i = 0; i < 64; i++) h[i] = i;
    float *d, *o;
    cudaMalloc(&d, sizeof h);
    cudaMalloc(&o, sizeof h);
    cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
    stage<32><<<1, 64>>>(d, o);
    cudaMemcpy(h, o, sizeof h, cudaMemcpyDeviceToHost);
    printf("%.0f\n", h[0]);
    cudaFree(d);
    cudaFree(o);
    return 0;
}
