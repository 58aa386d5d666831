// expect: E0901
#include <stdio.h>
#define N 128

// A kernel on stream 1 writes `d` while an asynchronous copy on stream 2 reads it: nothing
// orders the two.
__global__ void fill(int *a) {
    a[threadIdx.x] = threadIdx.x;
}

int main(void) {
    int *h, *d;
    cudaMallocHost(&h, N * sizeof(int));
    cudaMalloc(&d, N * sizeof(int));
    cudaStream_t s1, s2;
    cudaStreamCreate(&s1);
    cudaStreamCreate(&s2);
    fill<<<1, N, 0, s1>>>(d);
    cudaMemcpyAsync(h, d, N * sizeof(int), cudaMemcpyDeviceToHost, s2);
    cudaDeviceSynchronize();
    printf("%d\n", h[N - 1]);
    cudaFree(d);
    cudaFreeHost(h);
    return 0;
}
