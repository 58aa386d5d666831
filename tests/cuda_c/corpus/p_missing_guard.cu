// expect: E0903
#include <stdio.h>
#define N 1000

// 4 blocks of 256 threads for 1000 elements, and no `if (i < n)`.
__global__ void init(float *a) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    a[i] = 1.0f;
}

int main(void) {
    float *d;
    cudaMalloc(&d, N * sizeof(float));
    init<<<(N + 255) / 256, 256>>>(d);
    cudaFree(d);
    return 0;
}
