// expect: E0903
// The host buffer from `new` is one element shorter than the copy back writes into it.
#include <stdio.h>

__global__ void fill(int *a) { a[threadIdx.x] = 2 * threadIdx.x; }

int main() {
    const int n = 64;
    int *h = new int[n - 1];
    int *d;
    cudaMalloc(&d, n * sizeof(int));
    fill<<<1, n>>>(d);
    cudaMemcpy(h, d, n * sizeof(int), cudaMemcpyDeviceToHost);
    printf("%d\n", h[0]);
    delete[] h;
    cudaFree(d);
    return 0;
}
