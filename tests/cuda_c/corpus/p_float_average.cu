// expect: clean
#include <stdio.h>
#define N 100

__global__ void scale(double *a, double f, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        a[i] = a[i] * f;
    }
}

int main(void) {
    double *h = (double *) malloc(N * sizeof(double));
    for (int i = 0; i < N; i++) {
        h[i] = i;
    }
    double *d;
    cudaMalloc(&d, N * sizeof(double));
    cudaMemcpy(d, h, N * sizeof(double), cudaMemcpyHostToDevice);
    scale<<<(N + 31) / 32, 32>>>(d, 0.5, N);
    cudaMemcpy(h, d, N * sizeof(double), cudaMemcpyDeviceToHost);
    double sum = 0.0;
    for (int i = 0; i < N; i++) {
        sum += h[i];
    }
    printf("sum*100: %d\n", (int) (sum * 100.0));
    free(h);
    cudaFree(d);
    return 0;
}
