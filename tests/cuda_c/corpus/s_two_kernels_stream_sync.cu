// expect: clean
#include <stdio.h>
#define N 64

// The race of s_two_kernels_race.cu, fixed: the host waits for stream `a` before it issues the
// second kernel, which therefore runs after the first.
__global__ void put(int *a, int v) {
    a[threadIdx.x] = a[threadIdx.x] * 10 + v;
}

int main(void) {
    int h[N];
    int *d;
    cudaMalloc(&d, N * sizeof(int));
    cudaMemset(d, 0, N * sizeof(int));
    cudaStream_t a, b;
    cudaStreamCreate(&a);
    cudaStreamCreate(&b);
    put<<<1, N, 0, a>>>(d, 1);
    cudaError_t e = cudaStreamSynchronize(a);
    put<<<1, N, 0, b>>>(d, 2);
    cudaStreamSynchronize(b);
    cudaMemcpy(h, d, N * sizeof(int), cudaMemcpyDeviceToHost);
    printf("%d %d %d\n", e, h[0], h[N - 1]);
    cudaStreamDestroy(a);
    cudaStreamDestroy(b);
    cudaFree(d);
    return 0;
}
