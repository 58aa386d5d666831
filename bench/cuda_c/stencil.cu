// Benchmark (docs/cuda-c.md): a 3-point stencil over N = 2^20 floats in CUDA-C, as
// bench/cuda_c/stencil.strata: out[i + 1] = (x[i] + x[i + 1] + x[i + 2]) / 3 for the interior.
#include <stdio.h>
#include <stdlib.h>
#define N 1048576

__global__ void stencil3(float *x, float *out, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n - 2) {
        out[t + 1] = (x[t] + x[t + 1] + x[t + 2]) / 3.0f;
    }
}

int main(void) {
    float *x = (float *) malloc(N * sizeof(float));
    float *out = (float *) malloc(N * sizeof(float));
    for (int i = 0; i < N; i++) {
        x[i] = (float) (i % 10);
    }
    out[0] = x[0];
    out[N - 1] = x[N - 1];
    float *dx;
    float *dout;
    cudaMalloc(&dx, N * sizeof(float));
    cudaMalloc(&dout, N * sizeof(float));
    cudaMemcpy(dx, x, N * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(dout, out, N * sizeof(float), cudaMemcpyHostToDevice);
    stencil3<<<(N + 253) / 256, 256>>>(dx, dout, N);
    cudaMemcpy(out, dout, N * sizeof(float), cudaMemcpyDeviceToHost);
    printf("%d\n", (int) (out[1] * 3.0f));
    return 0;
}
