// expect: clean
#include <stdio.h>
#define N 64

// cudaMemset, a device-to-device copy of half the buffer at an offset, and a kernel on it.
__global__ void add_index(int *a) {
    a[threadIdx.x] += threadIdx.x;
}

int main(void) {
    int *src;
    int *dst;
    int h[N];
    cudaMalloc(&src, N * sizeof(int));
    cudaMalloc(&dst, N * sizeof(int));
    cudaMemset(src, 0, N * sizeof(int));
    cudaMemset(dst, 0, N * sizeof(int));
    add_index<<<1, N>>>(src);
    cudaMemcpy(dst + N / 2, src, N / 2 * sizeof(int), cudaMemcpyDeviceToDevice);
    cudaMemcpy(h, dst, N * sizeof(int), cudaMemcpyDeviceToHost);
    printf("%d %d %d\n", h[0], h[N / 2 + 3], h[N - 1]);
    cudaFree(src);
    cudaFree(dst);
    return 0;
}
