// expect: clean
#include <stdio.h>
#define N 2048
// The twin of x_block_too_large.cu within the limits: blocks of exactly 1024 threads (1-D, and
// 32 x 32), and a block of (1, 1, 64), the most along Z.
__global__ void square(int *a) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    a[i] = i * i;
}
__global__ void square2d(int *a) {
    int i = blockIdx.x * 1024 + threadIdx.y * 32 + threadIdx.x;
    a[i] += 1;
}
__global__ void along_z(int *a) { a[threadIdx.z] += 2; }
int main(void) {
    int *d, h[N];
    cudaMalloc(&d, N * sizeof(int));
    square<<<N / 1024, 1024>>>(d);
    square2d<<<N / 1024, dim3(32, 32)>>>(d);
    along_z<<<1, dim3(1, 1, 64)>>>(d);
    cudaMemcpy(h, d, N * sizeof(int), cudaMemcpyDeviceToHost);
    printf("%d %d %d\n", h[3], h[100], h[N - 1]);
    cudaFree(d);
    return 0;
}
