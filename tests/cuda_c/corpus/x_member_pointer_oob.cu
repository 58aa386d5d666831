// expect: E0903
// A kernel given a struct of device pointers (`Params` by value) writes one element past the
// end of its output through the member `p.y`: the guard is `<=` instead of `<`.
#include <stdio.h>
#define N 64

struct Params {
    const float *x;
    float *y;
    int n;
};

__global__ void scale(Params p) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= p.n) {
        p.y[i] = 2.0f * p.x[i % p.n];
    }
}

int main(void) {
    Params p;
    p.n = N;
    float *x;
    cudaMalloc((void **)&x, N * sizeof(float));
    cudaMalloc((void **)&p.y, N * sizeof(float));
    cudaMemset(x, 0, N * sizeof(float));
    p.x = x;
    scale<<<3, 32>>>(p);
    cudaDeviceSynchronize();
    cudaFree(x);
    cudaFree(p.y);
    printf("done\n");
    return 0;
}
