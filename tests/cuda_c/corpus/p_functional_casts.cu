// expect: clean
// C++'s functional casts (`double(x)`, `int(x)`, `unsigned(x)`, `size_t(n)`) as the OLCF
// training series writes them (`double( rand() ) / ( double(RAND_MAX) + 1.0 )`), in host and
// GPU code, and `cudaDeviceReset()` before `main` returns. The program checks its own results.
#include <stdio.h>
#include <stdlib.h>

__global__ void halve(const float *in, int *out) {
    out[threadIdx.x] = int(in[threadIdx.x] / 2.0f);
}

int main(void) {
    int ok = 1;
    for (int i = 0; i < 100; i++) {
        double r = double(rand()) / (double(RAND_MAX) + 1.0);
        ok = ok && r >= 0.0 && r < 1.0;
    }
    int n = 8;
    size_t bytes = size_t(n) * sizeof(float);
    float h[8];
    for (int i = 0; i < n; i++) h[i] = float(i) + 0.5f;
    float *din;
    int *dout, out[8];
    cudaMalloc((void **)&din, bytes);
    cudaMalloc((void **)&dout, n * sizeof(int));
    cudaMemcpy(din, h, bytes, cudaMemcpyHostToDevice);
    halve<<<1, 8>>>(din, dout);
    cudaMemcpy(out, dout, n * sizeof(int), cudaMemcpyDeviceToHost);
    for (int i = 0; i < n; i++) ok = ok && out[i] == i / 2;
    unsigned u = unsigned(-1);
    ok = ok && u == 4294967295u && int(2.7f) == 2 && bytes == 32;
    printf("out[7] = %d, bytes = %zu, u = %u\n", out[7], bytes, u);
    cudaFree(din);
    cudaFree(dout);
    cudaDeviceReset();
    if (!ok) {
        printf("FAILED\n");
        return 1;
    }
    printf("functional casts: all correct\n");
    return 0;
}
