// expect: E0903
// One thread fills the buffer with `buf[i++]` in a loop that runs once too often (`<=` for
// `<`): the last write is past the end.
#include <stdio.h>
#define N 32

__global__ void fill(int *buf, int n) {
    if (threadIdx.x == 0) {
        int i = 0;
        while (i <= n) buf[i++] = 7;
    }
}

int main(void) {
    int *d;
    cudaMalloc(&d, N * sizeof(int));
    fill<<<1, 32>>>(d, N);
    cudaDeviceSynchronize();
    cudaFree(d);
    return 0;
}
