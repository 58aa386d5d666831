// expect: E0801
// A warp mask in a variable is the whole warp only where nothing assigns the variable: one that
// is changed (`mask >>= 16`, half the warp) is refused (E0801), as a partial mask is.
#include <stdio.h>

__global__ void k(float *a) {
    unsigned mask = 0xFFFFFFFFU;
    if (threadIdx.x < 16) mask >>= 16;
    a[threadIdx.x] = __shfl_down_sync(mask, a[threadIdx.x], 1);
}

int main(void) {
    float *d;
    cudaMalloc((void **)&d, 32 * sizeof(float));
    cudaMemset(d, 0, 32 * sizeof(float));
    k<<<1, 32>>>(d);
    cudaFree(d);
    printf("done\n");
    return 0;
}
