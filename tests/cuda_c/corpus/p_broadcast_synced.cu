// expect: clean
#include <stdio.h>

// Thread 0 writes a shared value; the barrier makes it visible to every thread.
__global__ void broadcast(int *a) {
    __shared__ int v[1];
    if (threadIdx.x == 0) {
        v[0] = 42;
    }
    __syncthreads();
    a[threadIdx.x] = v[0] + threadIdx.x;
}

int main(void) {
    int h[32];
    int *d;
    cudaMalloc(&d, 32 * sizeof(int));
    broadcast<<<1, 32>>>(d);
    cudaMemcpy(h, d, 32 * sizeof(int), cudaMemcpyDeviceToHost);
    printf("%d %d\n", h[0], h[31]);
    cudaFree(d);
    return 0;
}
