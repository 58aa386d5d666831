// expect: E0903
// The optional output is written without checking it: the launch passes `NULL`.
#include <stdio.h>

__global__ void copy(const int *in, int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i];
}

int main(void) {
    int *d_in;
    int *d_out = NULL;
    cudaMalloc(&d_in, 64 * sizeof(int));
    cudaMemset(d_in, 0, 64 * sizeof(int));
    copy<<<2, 32>>>(d_in, d_out, 64);
    cudaDeviceSynchronize();
    cudaFree(d_in);
    return 0;
}
