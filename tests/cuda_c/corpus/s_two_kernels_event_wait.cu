// expect: clean
#include <stdio.h>
#define N 64

// The race of s_two_kernels_race.cu, fixed without blocking the host: stream `b` waits for an
// event recorded on stream `a` after the first kernel.
__global__ void put(int *a, int v) {
    a[threadIdx.x] = a[threadIdx.x] * 10 + v;
}

int main(void) {
    int *h, *d;
    cudaMallocHost(&h, N * sizeof(int));
    cudaMalloc(&d, N * sizeof(int));
    cudaMemset(d, 0, N * sizeof(int));
    cudaStream_t a, b;
    cudaEvent_t done;
    cudaStreamCreate(&a);
    cudaStreamCreate(&b);
    cudaEventCreate(&done);
    put<<<1, N, 0, a>>>(d, 1);
    cudaEventRecord(done, a);
    cudaStreamWaitEvent(b, done, 0);
    put<<<1, N, 0, b>>>(d, 2);
    cudaMemcpyAsync(h, d, N * sizeof(int), cudaMemcpyDeviceToHost, b);
    cudaStreamSynchronize(b);
    printf("%d %d\n", h[0], h[N - 1]);
    cudaEventDestroy(done);
    cudaStreamDestroy(a);
    cudaStreamDestroy(b);
    cudaFree(d);
    cudaFreeHost(h);
    return 0;
}
