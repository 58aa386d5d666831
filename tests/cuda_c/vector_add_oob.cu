// The vector sum without its bounds guard: the last block's extra threads write past the end.
#include <stdio.h>
#define N 1000
#define BLOCK 128

__global__ void add(float *a, float *b, float *c) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    c[i] = a[i] + b[i];
}

int main(void) {
    float *da, *db, *dc;
    float host[N];
    for (int i = 0; i < N; i++) {
        host[i] = i;
    }
    cudaMalloc(&da, N * sizeof(float));
    cudaMalloc(&db, N * sizeof(float));
    cudaMalloc(&dc, N * sizeof(float));
    cudaMemcpy(da, host, N * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(db, host, N * sizeof(float), cudaMemcpyHostToDevice);
    add<<<(N + BLOCK - 1) / BLOCK, BLOCK>>>(da, db, dc);
    cudaMemcpy(host, dc, N * sizeof(float), cudaMemcpyDeviceToHost);
    printf("done\n");
    return 0;
}
