// expect: E0901
// A kernel template that accumulates into one element without an atomic: every thread's
// read-modify-write of `total[0]` races with the others'.
#include <stdio.h>

template <typename T>
__global__ void accumulate(const T *in, T *total) {
    total[0] += in[blockIdx.x * blockDim.x + threadIdx.x];
}

int main(void) {
    double h[64];
    for (int i = 0; i < 64; i++) h[i] = i;
    double *d, *t;
    cudaMalloc(&d, sizeof h);
    cudaMalloc(&t, sizeof(double));
    cudaMemset(t, 0, sizeof(double));
    cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
    accumulate<<<2, 32>>>(d, t);
    double s;
    cudaMemcpy(&s, t, sizeof(double), cudaMemcpyDeviceToHost);
    printf("%.0f\n", s);
    cudaFree(d);
    cudaFree(t);
    return 0;
}
