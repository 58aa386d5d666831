// expect: E0901
#include <stdio.h>
#define N 64

// The host overwrites the source of an asynchronous host-to-device copy that may still be
// reading it.
__global__ void twice(int *a) {
    a[threadIdx.x] *= 2;
}

int main(void) {
    int *h, *d;
    cudaMallocHost(&h, N * sizeof(int));
    cudaMalloc(&d, N * sizeof(int));
    for (int i = 0; i < N; i++) h[i] = i;
    cudaStream_t s;
    cudaStreamCreate(&s);
    cudaMemcpyAsync(d, h, N * sizeof(int), cudaMemcpyHostToDevice, s);
    h[5] = -1;
    twice<<<1, N, 0, s>>>(d);
    cudaMemcpyAsync(h, d, N * sizeof(int), cudaMemcpyDeviceToHost, s);
    cudaStreamSynchronize(s);
    printf("%d\n", h[5]);
    cudaFree(d);
    cudaFreeHost(h);
    return 0;
}
