// expect: clean
// A program with headers of its own (`#include "include/vec_util.h"`, which includes
// `limits_util.h` next to it): macros, a typedef, prototypes and a device function from them.
#include <stdio.h>
#include <stdlib.h>
#include "include/vec_util.h"
#include "include/vec_util.h"

__global__ void scale_kernel(const float *in, float *out, Params p) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.n) out[i] = saturate(in[i] * p.scale);
}

void print_vec(const char *label, const float *v, int n) {
    printf("%s:", label);
    for (int i = 0; i < n; i++) printf(" %.1f", v[i]);
    printf("\n");
}

int main(void) {
    const int n = 8;
    float h[n], r[n];
    for (int i = 0; i < n; i++) h[i] = (float)i - 2.0f;
    float *d_in, *d_out;
    CHECK_CUDA(cudaMalloc(&d_in, n * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&d_out, n * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d_in, h, n * sizeof(float), cudaMemcpyHostToDevice));
    Params p = {n, 2.5f};
    scale_kernel<<<2, 4>>>(d_in, d_out, p);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaMemcpy(r, d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
    printf("%s in %s\n", __func__, __FILE__);
    print_vec("in", h, n);
    print_vec("out", r, n);
    CHECK_CUDA(cudaFree(d_in));
    CHECK_CUDA(cudaFree(d_out));
    return 0;
}
