// expect: E0903
#include <stdio.h>
#define N 16

// Copies back more bytes than the device buffer holds.
__global__ void one(int *a) {
    a[threadIdx.x] = 1;
}

int main(void) {
    int h[2 * N];
    int *d;
    cudaMalloc(&d, N * sizeof(int));
    one<<<1, N>>>(d);
    cudaMemcpy(h, d, 2 * N * sizeof(int), cudaMemcpyDeviceToHost);
    printf("%d\n", h[0]);
    cudaFree(d);
    return 0;
}
