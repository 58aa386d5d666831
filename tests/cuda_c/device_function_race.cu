#include <stdio.h>

// Every thread adds into out[0] through a helper: a data race.
__device__ void add_to(int *p, int v) {
    p[0] += v;
}

__global__ void sum(int *out) {
    add_to(out, threadIdx.x);
}

int main(void) {
    int *d;
    cudaMalloc(&d, sizeof(int));
    sum<<<1, 32>>>(d);
    cudaDeviceSynchronize();
    return 0;
}
