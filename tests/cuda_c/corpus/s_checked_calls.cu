// expect: clean
#include <stdio.h>
#include <stdlib.h>
#define N 96
#define CHECK(call) do { cudaError_t err = (call); if (err != cudaSuccess) { printf("error %d\n", err); exit(1); } } while (0)

// Every stream and event call checked through a macro, device-to-device copies on a stream, and
// a second stream that waits for the first through an event.
__global__ void iota(float *a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = 0.5f * i;
}

__global__ void add(float *a, const float *b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] += b[i];
}

int main(void) {
    float *h, *x, *y;
    CHECK(cudaMallocHost(&h, N * sizeof(float)));
    CHECK(cudaMalloc(&x, N * sizeof(float)));
    CHECK(cudaMalloc(&y, N * sizeof(float)));
    cudaStream_t s1, s2;
    cudaEvent_t copied;
    CHECK(cudaStreamCreate(&s1));
    CHECK(cudaStreamCreate(&s2));
    CHECK(cudaEventCreate(&copied));
    iota<<<(N + 31) / 32, 32, 0, s1>>>(x, N);
    CHECK(cudaMemcpyAsync(y, x, N * sizeof(float), cudaMemcpyDeviceToDevice, s1));
    CHECK(cudaEventRecord(copied, s1));
    CHECK(cudaStreamWaitEvent(s2, copied, 0));
    add<<<(N + 31) / 32, 32, 0, s2>>>(y, x, N);
    CHECK(cudaMemcpyAsync(h, y, N * sizeof(float), cudaMemcpyDeviceToHost, s2));
    CHECK(cudaStreamSynchronize(s2));
    printf("%.1f %.1f\n", h[1], h[N - 1]);
    CHECK(cudaEventDestroy(copied));
    CHECK(cudaStreamDestroy(s1));
    CHECK(cudaStreamDestroy(s2));
    CHECK(cudaFree(x));
    CHECK(cudaFree(y));
    CHECK(cudaFreeHost(h));
    return 0;
}
