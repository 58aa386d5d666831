// expect: E0903
// A pointer to one local is used as an array of two: `v[1]` is past the end of `x`.
#include <stdio.h>

__device__ void set_pair(int *v) {
    v[0] = 1;
    v[1] = 2;
}

__global__ void k(int *out) {
    int x;
    set_pair(&x);
    out[threadIdx.x] = x;
}

int main(void) {
    int *d;
    cudaMalloc(&d, 32 * sizeof(int));
    k<<<1, 32>>>(d);
    cudaDeviceSynchronize();
    cudaFree(d);
    return 0;
}
