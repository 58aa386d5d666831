// expect: clean
#include <stdio.h>
#define N 128

__global__ void fill(int *a) {
    a[threadIdx.x] = threadIdx.x;
}

__global__ void twice(int *a) {
    a[threadIdx.x] = 2 * a[threadIdx.x];
}

int main(void) {
    int h[N];
    int *d;
    cudaMalloc(&d, N * sizeof(int));
    fill<<<1, N>>>(d);
    twice<<<1, N>>>(d);
    cudaDeviceSynchronize();
    cudaMemcpy(h, d, N * sizeof(int), cudaMemcpyDeviceToHost);
    printf("%d %d %d\n", h[0], h[1], h[N - 1]);
    cudaFree(d);
    return 0;
}
