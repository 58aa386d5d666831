// expect: clean
#include <stdio.h>
#define N 1024
#define CHUNK 256

// The classic copy/compute overlap: chunks alternate between two streams in a loop; each chunk's
// copy in, kernel and copy out are ordered by its stream, and chunks are disjoint.
__global__ void inc(int *a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = a[i] + i;
}

int main(void) {
    int *h, *d;
    cudaMallocHost(&h, N * sizeof(int));
    cudaMalloc(&d, N * sizeof(int));
    for (int i = 0; i < N; i++) h[i] = 1;
    cudaStream_t s0, s1;
    cudaStreamCreate(&s0);
    cudaStreamCreate(&s1);
    for (int c = 0; c < N / CHUNK; c++) {
        int off = c * CHUNK;
        if (c % 2 == 0) {
            cudaMemcpyAsync(d + off, h + off, CHUNK * sizeof(int), cudaMemcpyHostToDevice, s0);
            inc<<<CHUNK / 128, 128, 0, s0>>>(d + off, CHUNK);
            cudaMemcpyAsync(h + off, d + off, CHUNK * sizeof(int), cudaMemcpyDeviceToHost, s0);
        } else {
            cudaMemcpyAsync(d + off, h + off, CHUNK * sizeof(int), cudaMemcpyHostToDevice, s1);
            inc<<<CHUNK / 128, 128, 0, s1>>>(d + off, CHUNK);
            cudaMemcpyAsync(h + off, d + off, CHUNK * sizeof(int), cudaMemcpyDeviceToHost, s1);
        }
    }
    cudaDeviceSynchronize();
    long long sum = 0;
    for (int i = 0; i < N; i++) sum += h[i];
    printf("%lld\n", sum);
    cudaStreamDestroy(s0);
    cudaStreamDestroy(s1);
    cudaFree(d);
    cudaFreeHost(h);
    return 0;
}
