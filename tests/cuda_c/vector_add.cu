// Element-wise sum of two vectors: malloc, a bounds guard on the global index, float math.
#include <stdio.h>
#include <stdlib.h>
#define N 1000
#define BLOCK 128

__global__ void add(float *a, float *b, float *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}

int main(void) {
    float *a = (float *)malloc(N * sizeof(float));
    float *b = (float *)malloc(N * sizeof(float));
    float *c = (float *)malloc(N * sizeof(float));
    float *da, *db, *dc;
    for (int i = 0; i < N; i++) {
        a[i] = i;
        b[i] = 2 * i;
    }
    cudaMalloc(&da, N * sizeof(float));
    cudaMalloc(&db, N * sizeof(float));
    cudaMalloc(&dc, N * sizeof(float));
    cudaMemcpy(da, a, N * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(db, b, N * sizeof(float), cudaMemcpyHostToDevice);
    add<<<(N + BLOCK - 1) / BLOCK, BLOCK>>>(da, db, dc, N);
    cudaMemcpy(c, dc, N * sizeof(float), cudaMemcpyDeviceToHost);
    int errors = 0;
    for (int i = 0; i < N; i++) {
        if (c[i] != 3 * i) {
            errors += 1;
        }
    }
    printf("errors: %d, c[999] = %d\n", errors, (int)c[N - 1]);
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    free(a);
    free(b);
    free(c);
    return 0;
}
