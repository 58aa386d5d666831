#include <stdio.h>
#include <math.h>

// Math functions on the device and the host, and integer min/max/abs.
__global__ void k(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        y[i] = sqrtf(fabsf(v)) + fminf(v, 1.0f) + fmaxf(v, -1.0f) + floorf(v) + ceilf(v) + truncf(v) + roundf(v) +
               fmodf(v, 0.75f) + expf(v / 4.0f) + logf(fabsf(v) + 1.0f) + sinf(v) + cosf(v) + tanhf(v) +
               powf(fabsf(v), 1.5f);
    }
}

int main(void) {
    int n = 8;
    float h[8];
    for (int i = 0; i < n; i++) {
        h[i] = (i - 3.5f) * 0.9f;
    }
    float *dx;
    float *dy;
    cudaMalloc(&dx, n * sizeof(float));
    cudaMalloc(&dy, n * sizeof(float));
    cudaMemcpy(dx, h, n * sizeof(float), cudaMemcpyHostToDevice);
    k<<<2, 4>>>(dx, dy, n);
    float r[8];
    cudaMemcpy(r, dy, n * sizeof(float), cudaMemcpyDeviceToHost);
    for (int i = 0; i < n; i++) {
        printf("%.6f\n", r[i]);
    }
    double d = 2.0;
    printf("%.15g %.15g %.15g\n", sqrt(d), exp(d), pow(d, 0.5));
    printf("%d %d %d %u\n", min(3, -4), max(3, -4), abs(-7), max(2u, 5u));
    return 0;
}
