// expect: clean
#include <stdio.h>

// Device printf: each thread prints its own line (the order follows the schedule, so only one
// thread prints here).
__global__ void hello(int *a) {
    a[threadIdx.x] = threadIdx.x;
    if (threadIdx.x == 3) {
        printf("thread %u of block %u says hi\n", threadIdx.x, blockIdx.x);
    }
}

int main(void) {
    int *d;
    cudaMalloc(&d, 8 * sizeof(int));
    hello<<<1, 8>>>(d);
    cudaDeviceSynchronize();
    printf("done\n");
    cudaFree(d);
    return 0;
}
