// expect: E0903
// Run with `-I tests/cuda_c/include`: the out-of-bounds write is in the header's function, and
// is reported there.
#include <stdio.h>
#include "fill_util.h"

__global__ void pairs(int *a) { fill_pair(a, threadIdx.x); }

int main() {
    int *d;
    cudaMalloc(&d, 8 * sizeof(int));
    pairs<<<1, 5>>>(d);
    cudaFree(d);
    return 0;
}
