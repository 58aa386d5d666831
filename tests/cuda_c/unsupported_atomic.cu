// atomicAdd is not in the CUDA-C slice yet: refused with E0801 at the call.
#include <stdio.h>
__global__ void count(int *c) {
    atomicAdd(c, 1);
}

int main(void) {
    int *d;
    cudaMalloc(&d, sizeof(int));
    count<<<1, 32>>>(d);
    return 0;
}
