// expect: E0906
#include <stdio.h>

// The buffer is freed before the kernel that uses it is launched.
__global__ void set(int *a) {
    a[threadIdx.x] = 7;
}

int main(void) {
    int *d;
    cudaMalloc(&d, 32 * sizeof(int));
    cudaFree(d);
    set<<<1, 32>>>(d);
    return 0;
}
