// expect: clean
#include <stdio.h>
#include <cuda_runtime.h>
#define N 256
#define HALF (N / 2)

// Each half of the data goes host-to-device, through a kernel and back on its own stream: the
// two streams overlap, and every buffer half is touched by one stream only.
__global__ void scale(float *a, int n, float k) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = a[i] * k + 1.0f;
}

int main(void) {
    float *h, *d;
    cudaMallocHost(&h, N * sizeof(float));
    cudaMalloc(&d, N * sizeof(float));
    for (int i = 0; i < N; i++) h[i] = (float)i;
    cudaStream_t s0, s1;
    cudaStreamCreate(&s0);
    cudaStreamCreate(&s1);
    cudaMemcpyAsync(d, h, HALF * sizeof(float), cudaMemcpyHostToDevice, s0);
    cudaMemcpyAsync(d + HALF, h + HALF, HALF * sizeof(float), cudaMemcpyHostToDevice, s1);
    scale<<<HALF / 64, 64, 0, s0>>>(d, HALF, 2.0f);
    scale<<<HALF / 64, 64, 0, s1>>>(d + HALF, HALF, 3.0f);
    cudaMemcpyAsync(h, d, HALF * sizeof(float), cudaMemcpyDeviceToHost, s0);
    cudaMemcpyAsync(h + HALF, d + HALF, HALF * sizeof(float), cudaMemcpyDeviceToHost, s1);
    cudaStreamSynchronize(s0);
    cudaStreamSynchronize(s1);
    printf("%.1f %.1f %.1f %.1f\n", h[0], h[HALF - 1], h[HALF], h[N - 1]);
    cudaStreamDestroy(s0);
    cudaStreamDestroy(s1);
    cudaFree(d);
    cudaFreeHost(h);
    return 0;
}
