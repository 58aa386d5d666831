#include <stdio.h>

__device__ int square(int x) { return x * x; }

__device__ int fib(int n) {
    if (n < 2) {
        return n;
    }
    return fib(n - 1) + fib(n - 2);
}

__device__ void store(int *out, int i, int v) { out[i] = v; }

__host__ __device__ unsigned mix(unsigned a, unsigned b) { return a * 31u + b; }

int host_sum(int *a, int n) {
    int s = 0;
    for (int i = 0; i < n; i++) {
        s += a[i];
    }
    return s;
}

__global__ void kernel(int *out, unsigned *h) {
    int i = threadIdx.x;
    store(out, i, square(i) + fib(i));
    h[i] = mix(i, 7u);
}

int main(void) {
    int n = 8;
    int *out = (int *)malloc(n * sizeof(int));
    unsigned *h = (unsigned *)malloc(n * sizeof(unsigned));
    int *d;
    unsigned *dh;
    cudaMalloc(&d, n * sizeof(int));
    cudaMalloc(&dh, n * sizeof(unsigned));
    kernel<<<1, n>>>(d, dh);
    cudaMemcpy(out, d, n * sizeof(int), cudaMemcpyDeviceToHost);
    cudaMemcpy(h, dh, n * sizeof(unsigned), cudaMemcpyDeviceToHost);
    for (int i = 0; i < n; i++) {
        printf("%d %u\n", out[i], h[i]);
    }
    printf("sum %d, mix on the host %u\n", host_sum(out, n), mix(1u, 2u));
    free(out);
    free(h);
    cudaFree(d);
    cudaFree(dh);
    return 0;
}
