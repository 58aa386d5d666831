// expect: clean
#include <stdio.h>
#define N 1024

// Sums N numbers by halving the array with one launch per step.
__global__ void halve(int *a, int half) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < half) {
        a[i] = a[i] + a[i + half];
    }
}

int main(void) {
    int *h = (int *) malloc(N * sizeof(int));
    for (int i = 0; i < N; i++) {
        h[i] = i % 10;
    }
    int *d;
    cudaMalloc(&d, N * sizeof(int));
    cudaMemcpy(d, h, N * sizeof(int), cudaMemcpyHostToDevice);
    for (int half = N / 2; half > 0; half = half / 2) {
        halve<<<(half + 127) / 128, 128>>>(d, half);
    }
    cudaMemcpy(h, d, sizeof(int), cudaMemcpyDeviceToHost);
    printf("total %d\n", h[0]);
    free(h);
    cudaFree(d);
    return 0;
}
