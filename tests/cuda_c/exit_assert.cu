#include <stdio.h>
#include <stdlib.h>
#include <assert.h>

// `assert` in a kernel holds for every thread here; `exit(2)` ends the program with status 2.
__global__ void k(int *p) {
    assert(threadIdx.x < 32);
    p[threadIdx.x] = 1;
}

int main(void) {
    int *d;
    cudaMalloc(&d, 32 * sizeof(int));
    k<<<1, 32>>>(d);
    cudaDeviceSynchronize();
    printf("kernel done\n");
    exit(2);
    printf("not reached\n");
    return 0;
}
