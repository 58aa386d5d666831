// expect: E0901
#include <stdio.h>

// Both blocks accumulate into the same counters without atomics.
__global__ void accumulate(int *counts) {
    counts[threadIdx.x] += 1;
}

int main(void) {
    int *d;
    cudaMalloc(&d, 32 * sizeof(int));
    accumulate<<<2, 32>>>(d);
    cudaFree(d);
    return 0;
}
