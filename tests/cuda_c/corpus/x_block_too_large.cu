// expect: E0703
#include <stdio.h>
#define N 2048
// One block for the whole array: 2048 threads, more than the 1024 a block may have. A GPU
// refuses the launch (cudaErrorInvalidConfiguration, unchecked here), the kernel never runs and
// the program prints what cudaMemset left.
__global__ void square(int *a) {
    int i = threadIdx.x;
    a[i] = i * i;
}
int main(void) {
    int *d, h[N];
    cudaMalloc(&d, N * sizeof(int));
    cudaMemset(d, 0, N * sizeof(int));
    square<<<1, N>>>(d);
    cudaMemcpy(h, d, N * sizeof(int), cudaMemcpyDeviceToHost);
    printf("%d %d\n", h[3], h[N - 1]);
    cudaFree(d);
    return 0;
}
