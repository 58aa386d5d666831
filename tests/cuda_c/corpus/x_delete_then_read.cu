// expect: E0906
// A teaching-program slip: the host result array is `delete[]`d before the last loop reads it.
#include <stdio.h>

__global__ void square(int *a) { a[threadIdx.x] = threadIdx.x * threadIdx.x; }

int main(void) {
    const int n = 32;
    int *h = new int[n];
    int *d;
    cudaMalloc(&d, n * sizeof(int));
    square<<<1, n>>>(d);
    cudaMemcpy(h, d, n * sizeof(int), cudaMemcpyDeviceToHost);
    cudaFree(d);
    delete[] h;
    int s = 0;
    for (int i = 0; i < n; i++) s += h[i];
    printf("%d\n", s);
    return 0;
}
