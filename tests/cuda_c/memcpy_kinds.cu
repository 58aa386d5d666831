#include <stdio.h>

// cudaMemset, cudaMemcpy of all four kinds (with offset pointers), cudaGetLastError.
__global__ void inc(int *p, int n) {
    int i = threadIdx.x;
    if (i < n) {
        p[i] += 1;
    }
}

int main(void) {
    int n = 6;
    int *a;
    int *b;
    cudaMalloc(&a, n * sizeof(int));
    cudaMalloc(&b, n * sizeof(int));
    cudaMemset(a, 0, n * sizeof(int));
    cudaMemset(b, -1, n * sizeof(int));
    inc<<<1, 8>>>(a, n);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) {
        printf("launch failed\n");
        return 0;
    }
    cudaMemcpy(b + 2, a, 3 * sizeof(int), cudaMemcpyDeviceToDevice);
    int h[6];
    int g[6];
    cudaMemcpy(h, b, n * sizeof(int), cudaMemcpyDeviceToHost);
    cudaMemcpy(g, h, n * sizeof(int), cudaMemcpyHostToHost);
    cudaMemcpy(&g[3], &h[0], 2 * sizeof(int), cudaMemcpyHostToHost);
    for (int i = 0; i < n; i++) {
        printf("%d ", g[i]);
    }
    printf("err %d\n", (int)cudaGetLastError());
    float *f;
    float hf[2];
    cudaMalloc(&f, 2 * sizeof(float));
    cudaMemset(f, 0, 2 * sizeof(float));
    cudaMemcpy(hf, f, 2 * sizeof(float), cudaMemcpyDeviceToHost);
    printf("%d\n", (int)(hf[0] + hf[1]));
    cudaMemcpy(b + 4, a, 3 * sizeof(int), cudaMemcpyDeviceToDevice);
    return 0;
}
