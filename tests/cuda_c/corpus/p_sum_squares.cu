// expect: clean
#include <stdio.h>
#include <cuda.h>
#define N 256
#define THREADS 64

__global__ void squares(int *a) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    a[i] = i * i;
}

int main(void) {
    int *h = (int *) malloc(N * sizeof(int));
    int *d;
    cudaMalloc(&d, N * sizeof(int));
    squares<<<N / THREADS, THREADS>>>(d);
    cudaMemcpy(h, d, N * sizeof(int), cudaMemcpyDeviceToHost);
    long long total = 0;
    for (int i = 0; i < N; i++) {
        total += h[i];
    }
    printf("sum of squares below %d: %lld\n", N, total);
    cudaFree(d);
    free(h);
    return 0;
}
