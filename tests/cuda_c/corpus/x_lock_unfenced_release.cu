// expect: E0901
#include <stdio.h>
// The twin of p_lock_fenced.cu without the fence before the release: the lock's atomics alone
// order nothing, so the counter's update races with the next holder's read.
__global__ void count(int *lock, int *counter) {
    for (int done = 0; !done;) {
        if (atomicCAS(lock, 0, 1) == 0) {
            __threadfence();
            *counter = *counter + 1;
            atomicExch(lock, 0);
            done = 1;
        }
    }
}
int main(void) {
    int *l, *c, h;
    cudaMalloc(&l, sizeof(int));
    cudaMalloc(&c, sizeof(int));
    cudaMemset(l, 0, sizeof(int));
    cudaMemset(c, 0, sizeof(int));
    count<<<2, 32>>>(l, c);
    cudaMemcpy(&h, c, sizeof(int), cudaMemcpyDeviceToHost);
    printf("%d\n", h);
    cudaFree(l);
    cudaFree(c);
    return 0;
}
