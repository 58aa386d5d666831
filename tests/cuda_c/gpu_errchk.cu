// expect: clean
// The error-check idiom of many CUDA programs: a macro passing `__FILE__` and `__LINE__` to a
// function with a default argument that prints to stderr and exits with the error code.
#include <stdio.h>
#include <stdlib.h>

#define gpuErrchk(ans) { gpuAssert((ans), __FILE__, __LINE__); }
inline void gpuAssert(cudaError_t code, const char *file, int line, bool abort = true) {
    if (code != cudaSuccess) {
        fprintf(stderr, "GPUassert: %s %s %d\n", cudaGetErrorString(code), file, line);
        if (abort) exit(code);
    }
}

void report(const char *what, int value, const char *unit = "items", float scale = 1.5f) {
    printf("%s: %d %s (x%.1f) [%s]\n", what, value, unit, scale, __func__);
}

__global__ void square(int *a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = a[i] * a[i];
}

int main() {
    const int n = 10;
    int h[n];
    for (int i = 0; i < n; i++) h[i] = i;
    int *d;
    gpuErrchk(cudaMalloc(&d, n * sizeof(int)));
    gpuErrchk(cudaMemcpy(d, h, n * sizeof(int), cudaMemcpyHostToDevice));
    square<<<2, 8>>>(d, n);
    gpuErrchk(cudaPeekAtLastError());
    gpuErrchk(cudaDeviceSynchronize());
    gpuErrchk(cudaMemcpy(h, d, n * sizeof(int), cudaMemcpyDeviceToHost));
    int sum = 0;
    for (int i = 0; i < n; i++) sum += h[i];
    report("sum of squares", sum);
    report("last", h[n - 1], "units");
    report("first", h[0], "units", 2.0f);
    gpuErrchk(cudaFree(d));
    return 0;
}
