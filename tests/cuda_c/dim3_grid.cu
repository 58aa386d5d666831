#include <stdio.h>

#define W 8
#define H 6

// A 2-D grid of 2-D blocks: each thread writes its own element of a W x H matrix.
__global__ void fill(int *m, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) {
        m[y * w + x] = 100 * y + x;
    }
}

// A 3-D block: thread (x, y, z) counts itself in cell z.
__global__ void cube(int *c) {
    int lin = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    c[lin] = threadIdx.z * 100 + threadIdx.y * 10 + threadIdx.x;
}

int main(void) {
    int *m = (int *)malloc(W * H * sizeof(int));
    int *d;
    cudaMalloc(&d, W * H * sizeof(int));
    dim3 block(4, 4);
    dim3 grid;
    grid.x = (W + block.x - 1) / block.x;
    grid.y = (H + block.y - 1) / block.y;
    printf("grid %u x %u x %u, block %u x %u x %u\n", grid.x, grid.y, grid.z, block.x, block.y, block.z);
    fill<<<grid, block>>>(d, W, H);
    cudaMemcpy(m, d, W * H * sizeof(int), cudaMemcpyDeviceToHost);
    for (int y = 0; y < H; y++) {
        for (int x = 0; x < W; x++) {
            printf(" %d", m[y * W + x]);
        }
        printf("\n");
    }
    int *c;
    int hc[24];
    cudaMalloc(&c, 24 * sizeof(int));
    cube<<<1, dim3(2, 3, 4)>>>(c);
    cudaMemcpy(hc, c, 24 * sizeof(int), cudaMemcpyDeviceToHost);
    printf("%d %d %d\n", hc[1], hc[5], hc[23]);
    return 0;
}
