// expect: E0901
#include <stdio.h>
#define N 64

// The event is recorded before the producer kernel is issued, so waiting for it orders nothing:
// the consumer on the other stream races with the producer.
__global__ void produce(int *a) {
    a[threadIdx.x] = threadIdx.x + 1;
}

__global__ void consume(int *a, int *b) {
    b[threadIdx.x] = a[threadIdx.x] * 2;
}

int main(void) {
    int h[N];
    int *a, *b;
    cudaMalloc(&a, N * sizeof(int));
    cudaMalloc(&b, N * sizeof(int));
    cudaStream_t s1, s2;
    cudaEvent_t ready;
    cudaStreamCreate(&s1);
    cudaStreamCreate(&s2);
    cudaEventCreate(&ready);
    cudaEventRecord(ready, s1);
    produce<<<1, N, 0, s1>>>(a);
    cudaStreamWaitEvent(s2, ready, 0);
    consume<<<1, N, 0, s2>>>(a, b);
    cudaDeviceSynchronize();
    cudaMemcpy(h, b, N * sizeof(int), cudaMemcpyDeviceToHost);
    printf("%d\n", h[1]);
    return 0;
}
