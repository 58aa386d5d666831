// expect: clean
#include <stdio.h>
#define N 128

// Events recorded around work on a stream; the host waits for the second with
// cudaEventSynchronize before it reads the result, and asks for the elapsed time (0 on sim).
__global__ void square(int *a) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    a[i] = i * i;
}

int main(void) {
    int *h, *d;
    cudaMallocHost(&h, N * sizeof(int));
    cudaMalloc(&d, N * sizeof(int));
    cudaStream_t s;
    cudaEvent_t start, stop;
    cudaStreamCreate(&s);
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    cudaEventRecord(start, s);
    square<<<N / 32, 32, 0, s>>>(d);
    cudaMemcpyAsync(h, d, N * sizeof(int), cudaMemcpyDeviceToHost, s);
    cudaEventRecord(stop, s);
    cudaEventSynchronize(stop);
    float ms = -1.0f;
    cudaEventElapsedTime(&ms, start, stop);
    printf("%d %d %d\n", h[2], h[N - 1], ms >= 0.0f);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    cudaStreamDestroy(s);
    cudaFree(d);
    cudaFreeHost(h);
    return 0;
}
