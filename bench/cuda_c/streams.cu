// Benchmark (docs/architecture.md, sim streams): copy in, scale and copy out 2^20 floats in two
// halves on two streams.
#include <stdio.h>
#define N (1 << 20)
#define HALF (N / 2)
__global__ void scale(float *a, int n, float k) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = a[i] * k + 1.0f;
}
int main(void) {
    float *h, *d;
    cudaMallocHost(&h, N * sizeof(float));
    cudaMalloc(&d, N * sizeof(float));
    for (int i = 0; i < N; i++) h[i] = (float)(i % 100);
    cudaStream_t s0, s1;
    cudaStreamCreate(&s0);
    cudaStreamCreate(&s1);
    cudaMemcpyAsync(d, h, HALF * sizeof(float), cudaMemcpyHostToDevice, s0);
    cudaMemcpyAsync(d + HALF, h + HALF, HALF * sizeof(float), cudaMemcpyHostToDevice, s1);
    scale<<<HALF / 256, 256, 0, s0>>>(d, HALF, 2.0f);
    scale<<<HALF / 256, 256, 0, s1>>>(d + HALF, HALF, 3.0f);
    cudaMemcpyAsync(h, d, HALF * sizeof(float), cudaMemcpyDeviceToHost, s0);
    cudaMemcpyAsync(h + HALF, d + HALF, HALF * sizeof(float), cudaMemcpyDeviceToHost, s1);
    cudaDeviceSynchronize();
    printf("%.1f %.1f\n", h[1], h[N - 1]);
    return 0;
}
