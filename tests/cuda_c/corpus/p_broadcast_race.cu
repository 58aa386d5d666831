// expect: E0901
#include <stdio.h>

// Every thread reads the shared value thread 0 writes, with no barrier between: a race (the
// synced version is p_broadcast_synced.cu).
__global__ void broadcast(int *a) {
    __shared__ int v[1];
    if (threadIdx.x == 0) {
        v[0] = 42;
    }
    a[threadIdx.x] = v[0];
}

int main(void) {
    int *d;
    cudaMalloc(&d, 32 * sizeof(int));
    broadcast<<<1, 32>>>(d);
    cudaFree(d);
    return 0;
}
