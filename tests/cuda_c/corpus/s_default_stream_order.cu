// expect: clean
#include <stdio.h>
#define N 64

// The legacy default stream: a launch without a stream waits for the work of every stream, and
// later work on any stream waits for it, so these kernels run one after another.
__global__ void add(int *a, int v) {
    a[threadIdx.x] += v;
}

int main(void) {
    int h[N];
    int *d;
    cudaMalloc(&d, N * sizeof(int));
    cudaMemset(d, 0, N * sizeof(int));
    cudaStream_t s1, s2;
    cudaStreamCreate(&s1);
    cudaStreamCreate(&s2);
    add<<<1, N, 0, s1>>>(d, 1);
    add<<<1, N>>>(d, 10);
    add<<<1, N, 0, s2>>>(d, 100);
    add<<<1, N, 0, 0>>>(d, 1000);
    add<<<1, N, 0, s1>>>(d, 10000);
    cudaMemcpy(h, d, N * sizeof(int), cudaMemcpyDeviceToHost);
    printf("%d %d\n", h[0], h[N - 1]);
    cudaStreamDestroy(s1);
    cudaStreamDestroy(s2);
    cudaFree(d);
    return 0;
}
