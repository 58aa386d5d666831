// expect: E0901
// A file-level `__shared__` array is each block's own, with every check: here read before the
// barrier that would order it after the other threads' writes.
#include <stdio.h>

__shared__ int tile[32];

__global__ void shift(int *out) {
    tile[threadIdx.x] = threadIdx.x;
    out[threadIdx.x] = tile[(threadIdx.x + 1) % 32];
}

int main() {
    int *d;
    cudaMalloc(&d, 32 * sizeof(int));
    shift<<<2, 32>>>(d);
    cudaFree(d);
    return 0;
}
