// C++ allocation as teaching programs write it: `new float[n]`, `new float[n]()` (zeros),
// `new int` for one value, `calloc`, `delete[]`/`delete`, and `dim3 block(size, size)` whose
// arguments are names (which C++'s grammar reads as a function declaration).
#include <stdio.h>
#include <stdlib.h>

const int size = 4;

__global__ void add(const float *a, float *b, int *count) {
    int i = threadIdx.y * blockDim.x + threadIdx.x;
    b[i] += a[i];
    atomicAdd(count, 1);
}

int main(void) {
    int n = size * size;
    float *ha = new float[n];
    float *hb = new float[n]();
    int *count = new int;
    float *zeros = (float *)calloc(n, sizeof(*ha));
    for (int i = 0; i < n; i++) ha[i] = i * 0.5f;
    float *da, *db;
    int *dc;
    cudaMalloc(&da, n * sizeof(float));
    cudaMalloc(&db, n * sizeof(float));
    cudaMalloc(&dc, sizeof(int));
    cudaMemcpy(da, ha, n * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(db, hb, n * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(dc, count, sizeof(int), cudaMemcpyHostToDevice);
    dim3 block(size, size);
    dim3 grid(1);
    add<<<grid, block>>>(da, db, dc);
    cudaMemcpy(hb, db, n * sizeof(float), cudaMemcpyDeviceToHost);
    cudaMemcpy(count, dc, sizeof(int), cudaMemcpyDeviceToHost);
    float s = 0;
    for (int i = 0; i < n; i++) s += hb[i] + zeros[i];
    printf("threads %d, sum %.1f, block %u x %u\n", *count, s, block.x, block.y);
    delete[] ha;
    delete[] hb;
    delete count;
    free(zeros);
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    return 0;
}
