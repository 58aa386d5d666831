// expect: E0901
#include <stdio.h>
#define N 64

// cudaMemsetAsync on one stream and a kernel on another write the same buffer.
__global__ void add_index(int *a) {
    a[threadIdx.x] += threadIdx.x;
}

int main(void) {
    int h[N];
    int *d;
    cudaMalloc(&d, N * sizeof(int));
    cudaStream_t s1, s2;
    cudaStreamCreate(&s1);
    cudaStreamCreate(&s2);
    cudaMemsetAsync(d, 0, N * sizeof(int), s1);
    add_index<<<1, N, 0, s2>>>(d);
    cudaDeviceSynchronize();
    cudaMemcpy(h, d, N * sizeof(int), cudaMemcpyDeviceToHost);
    printf("%d\n", h[1]);
    cudaFree(d);
    return 0;
}
