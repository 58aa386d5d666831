// expect: E0901
#include <stdio.h>
// Block 0 resets a flag with a plain store while the other blocks update it atomically: no
// barrier orders blocks, so the plain store races with the atomics.
__global__ void k(int *flag) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        *flag = 0;
    } else if (threadIdx.x == 0) {
        atomicOr(flag, 1 << blockIdx.x);
    }
}
int main(void) {
    int *d, h;
    cudaMalloc(&d, sizeof(int));
    cudaMemset(d, 0, sizeof(int));
    k<<<4, 32>>>(d);
    cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost);
    printf("%d\n", h);
    cudaFree(d);
    return 0;
}
