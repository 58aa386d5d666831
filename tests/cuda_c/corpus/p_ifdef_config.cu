// expect: clean
// Conditional compilation picks the block size, the element type and a debug path, as real
// CUDA code does; the groups not taken are never parsed.
#include <stdio.h>
#define BLOCK 64
#define USE_SHARED 1
#define VERSION 3

#ifndef BLOCK
#error "BLOCK must be defined"
#endif

#if VERSION >= 3 && defined(USE_SHARED)
#define TILE (BLOCK / 2)
#elif VERSION == 2
#define TILE BLOCK
#else
this is not C and is never parsed
#endif

// nvcc defines `__CUDACC__`; a file-level `const` is a named constant on both sides.
#ifdef __CUDACC__
const float FACTOR = 2;
#else
const float FACTOR = 3;
#endif

#ifdef USE_DOUBLE
typedef double real;
#else
typedef float real_unused;
#endif

__global__ void scale(float *a, int n) {
#if USE_SHARED
    __shared__ float tile[TILE];
    int t = threadIdx.x;
    int i = blockIdx.x * TILE + t;
    if (t < TILE && i < n) {
        tile[t] = a[i];
    }
    __syncthreads();
    if (t < TILE && i < n) {
        a[i] = tile[t] * FACTOR;
    }
#else
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] *= 2.0f;
#endif
}

int main(void) {
    int n = 4 * TILE;
    float h[128];
    for (int i = 0; i < n; i++) h[i] = (float)i;
    float *d;
    cudaMalloc(&d, n * sizeof(float));
    cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice);
    scale<<<n / TILE, BLOCK>>>(d, n);
    cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost);
#if defined(DEBUG) || VERSION < 2
    printf("debug build\n");
#endif
    printf("%d %.1f %.1f\n", TILE, h[1], h[n - 1]);
    cudaFree(d);
    return 0;
}
