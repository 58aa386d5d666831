// expect: E0901
#include <stdio.h>
#define N 64

// Two kernels on different streams write the same buffer.
__global__ void put(int *a, int v) {
    a[threadIdx.x] = v;
}

int main(void) {
    int h[N];
    int *d;
    cudaMalloc(&d, N * sizeof(int));
    cudaStream_t a, b;
    cudaStreamCreate(&a);
    cudaStreamCreate(&b);
    put<<<1, N, 0, a>>>(d, 1);
    put<<<1, N, 0, b>>>(d, 2);
    cudaDeviceSynchronize();
    cudaMemcpy(h, d, N * sizeof(int), cudaMemcpyDeviceToHost);
    printf("%d\n", h[0]);
    cudaFree(d);
    return 0;
}
