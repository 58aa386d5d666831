// expect: E0903
// A stencil over `__constant__` weights reads one weight too many (`k <= RADIUS * 2 + 1`).
#include <stdio.h>
#define RADIUS 2
#define N 64

__constant__ float weights[2 * RADIUS + 1];

__global__ void stencil(const float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x + RADIUS;
    if (i < n - RADIUS) {
        float s = 0.0f;
        for (int k = 0; k <= RADIUS * 2 + 1; k++) s += weights[k] * in[i - RADIUS + k];
        out[i] = s;
    }
}

int main(void) {
    float w[2 * RADIUS + 1];
    for (int k = 0; k < 2 * RADIUS + 1; k++) w[k] = 0.2f;
    cudaMemcpyToSymbol(weights, w, (2 * RADIUS + 1) * sizeof(float));
    float *d_in, *d_out;
    cudaMalloc(&d_in, (N + 1) * sizeof(float));
    cudaMalloc(&d_out, N * sizeof(float));
    cudaMemset(d_in, 0, (N + 1) * sizeof(float));
    stencil<<<2, 32>>>(d_in, d_out, N);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
