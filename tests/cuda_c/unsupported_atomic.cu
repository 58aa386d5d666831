// atomicAdd_block (a block-scope atomic) is not in the CUDA-C subset yet: refused with E0801 at the call.
#include <stdio.h>
__global__ void count(unsigned *c) {
    atomicAdd_block(c, 1u);
}

int main(void) {
    unsigned *d;
    cudaMalloc(&d, sizeof(unsigned));
    count<<<1, 32>>>(d);
    return 0;
}
