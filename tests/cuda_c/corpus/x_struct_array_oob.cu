// expect: E0903
// The device array holds N structs but the launch covers N + 32 threads and the kernel has no
// guard: the thread at index N reads `pts[N].y`, past the end of the allocation.
#include <stdio.h>
#define N 64

struct Point {
    int x;
    int y;
};

__global__ void swap_xy(struct Point *pts) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int t = pts[i].y;
    pts[i].y = pts[i].x;
    pts[i].x = t;
}

int main(void) {
    struct Point *d;
    cudaMalloc(&d, N * sizeof(struct Point));
    cudaMemset(d, 0, N * sizeof(struct Point));
    swap_xy<<<3, 32>>>(d);
    cudaDeviceSynchronize();
    cudaFree(d);
    printf("done\n");
    return 0;
}
