// expect: clean
// Global variables: filter taps in `__constant__` memory set with `cudaMemcpyToSymbol`, a
// `__device__` counter bumped atomically and read back with `cudaMemcpyFromSymbol`, an
// initialised `__device__` table, and host globals.
#include <stdio.h>
#define TAPS 4
#define N 64

__constant__ float coef[TAPS];
__device__ int processed;
__device__ int bonus[4] = {10, 20, 30, 40};
int launches = 0;
float scale[2] = {0.5f, 2.0f};

__device__ float filter_at(const float *x, int i) {
    float s = 0.0f;
    for (int k = 0; k < TAPS; k++) s += coef[k] * x[i + k];
    return s;
}

__global__ void fir(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = filter_at(x, i) + bonus[i % 4];
        atomicAdd(&processed, 1);
    }
}

void launch(const float *dx, float *dy) {
    fir<<<N / 32, 32>>>(dx, dy, N);
    launches++;
}

int main(void) {
    float h_coef[TAPS];
    for (int k = 0; k < TAPS; k++) h_coef[k] = 0.25f * scale[0] * scale[1];
    cudaMemcpyToSymbol(coef, h_coef, TAPS * sizeof(float));
    float x[N + TAPS];
    for (int i = 0; i < N + TAPS; i++) x[i] = (float)i;
    float *dx, *dy;
    cudaMalloc(&dx, (N + TAPS) * sizeof(float));
    cudaMalloc(&dy, N * sizeof(float));
    cudaMemcpy(dx, x, (N + TAPS) * sizeof(float), cudaMemcpyHostToDevice);
    launch(dx, dy);
    launch(dx, dy);
    int count = 0;
    cudaMemcpyFromSymbol(&count, processed, sizeof(int));
    cudaMemcpy(x, dy, N * sizeof(float), cudaMemcpyDeviceToHost);
    printf("%d launches, %d elements, y[0] = %.2f, y[63] = %.2f\n", launches, count, x[0], x[N - 1]);
    cudaFree(dx);
    cudaFree(dy);
    return 0;
}
