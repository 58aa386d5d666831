// expect: E0901
#include <stdio.h>
#define N 32

// The host reads the buffer an asynchronous device-to-host copy writes before it waits for the
// copy's stream.
__global__ void fill(int *a) {
    a[threadIdx.x] = 7 * threadIdx.x;
}

int main(void) {
    int *h, *d;
    cudaMallocHost(&h, N * sizeof(int));
    cudaMalloc(&d, N * sizeof(int));
    cudaStream_t s;
    cudaStreamCreate(&s);
    fill<<<1, N, 0, s>>>(d);
    cudaMemcpyAsync(h, d, N * sizeof(int), cudaMemcpyDeviceToHost, s);
    printf("%d\n", h[3]);
    cudaStreamSynchronize(s);
    cudaStreamDestroy(s);
    cudaFree(d);
    cudaFreeHost(h);
    return 0;
}
