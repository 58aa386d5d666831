// expect: clean
#include <stdio.h>
// A spin lock taken with atomicCAS and released with atomicExch, fenced on both sides, around a
// plain read-modify-write of a counter, by every thread of two blocks: the fence before the
// release publishes the update to the thread whose atomicCAS takes the lock next (CUDA's memory
// model; on sim each thread takes it in turn).
__global__ void count(int *lock, int *counter) {
    for (int done = 0; !done;) {
        if (atomicCAS(lock, 0, 1) == 0) {
            __threadfence();
            *counter = *counter + 1;
            __threadfence();
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
