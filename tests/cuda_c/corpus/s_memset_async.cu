// expect: clean
#include <stdio.h>
#define N 64

// cudaMemsetAsync on a stream, ordered before the kernel and the copy back by the stream.
__global__ void add_index(int *a) {
    a[threadIdx.x] += threadIdx.x;
}

int main(void) {
    int *h, *d;
    cudaMallocHost(&h, N * sizeof(int));
    cudaMalloc(&d, N * sizeof(int));
    cudaStream_t s;
    cudaStreamCreate(&s);
    cudaMemsetAsync(d, 1, N * sizeof(int), s);
    add_index<<<1, N, 0, s>>>(d);
    cudaMemcpyAsync(h, d, N * sizeof(int), cudaMemcpyDeviceToHost, s);
    cudaStreamSynchronize(s);
    printf("%d %d\n", h[0], h[N - 1]);
    cudaStreamDestroy(s);
    cudaFree(d);
    cudaFreeHost(h);
    return 0;
}
