// expect: clean
#include <stdio.h>

// A recursive host function and a __device__ function used by a kernel.
int fib(int n) {
    if (n < 2) {
        return n;
    }
    return fib(n - 1) + fib(n - 2);
}

__device__ int twice(int x) {
    return 2 * x;
}

__global__ void k(int *a, int f) {
    a[threadIdx.x] = twice(f) + threadIdx.x;
}

int main(void) {
    int h[4];
    int *d;
    cudaMalloc(&d, 4 * sizeof(int));
    k<<<1, 4>>>(d, fib(15));
    cudaMemcpy(h, d, 4 * sizeof(int), cudaMemcpyDeviceToHost);
    printf("%d %d\n", h[0], h[3]);
    cudaFree(d);
    return 0;
}
