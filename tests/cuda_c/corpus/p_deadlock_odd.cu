// expect: E0902
#include <stdio.h>

// Odd threads skip the barrier.
__global__ void odd(int *a) {
    if (threadIdx.x % 2 == 0) {
        __syncthreads();
    }
    a[threadIdx.x] = 1;
}

int main(void) {
    int *d;
    cudaMalloc(&d, 64 * sizeof(int));
    odd<<<1, 64>>>(d);
    cudaFree(d);
    return 0;
}
