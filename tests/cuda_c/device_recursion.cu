#include <stdio.h>

// Recursion 9000 calls deep is fine; a recursion that never ends is stopped (E0907).
__device__ int depth(int n) {
    if (n == 0) {
        return 0;
    }
    return 1 + depth(n - 1);
}

__global__ void k(int *out, int n) { out[threadIdx.x] = depth(n); }

int main(void) {
    int *d;
    int h[1];
    cudaMalloc(&d, sizeof(int));
    k<<<1, 1>>>(d, 9000);
    cudaMemcpy(h, d, sizeof(int), cudaMemcpyDeviceToHost);
    printf("%d\n", h[0]);
    k<<<1, 1>>>(d, -1);
    return 0;
}
