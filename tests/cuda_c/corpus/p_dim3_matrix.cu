// expect: clean
#include <stdio.h>
#define W 32
#define H 16

// A 2-D launch with dim3: every thread sets its element of a W x H matrix.
__global__ void fill(int *m) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    m[y * W + x] = x - y;
}

int main(void) {
    int h[W * H];
    int *d;
    cudaMalloc(&d, W * H * sizeof(int));
    dim3 block(8, 4);
    dim3 grid(W / 8, H / 4);
    fill<<<grid, block>>>(d);
    cudaMemcpy(h, d, W * H * sizeof(int), cudaMemcpyDeviceToHost);
    int sum = 0;
    for (int i = 0; i < W * H; i++) {
        sum += h[i];
    }
    printf("sum %d, m[5][7] = %d\n", sum, h[5 * W + 7]);
    cudaFree(d);
    return 0;
}
