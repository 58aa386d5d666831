// expect: clean
// A `__device__` function template used by two instantiations of a kernel template: the block
// maximum of ints and of floats, each thread folding a strided slice first.
#include <stdio.h>

template <typename T>
__device__ T larger(T a, T b) {
    return a > b ? a : b;
}

template <typename T>
__global__ void block_max(const T *in, T *out, int n) {
    __shared__ T s[64];
    int t = threadIdx.x;
    T m = in[t];
    for (int i = t + blockDim.x; i < n; i += blockDim.x) m = larger(m, in[i]);
    s[t] = m;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
        if (t < half) s[t] = larger(s[t], s[t + half]);
        __syncthreads();
    }
    if (t == 0) *out = s[0];
}

int main(void) {
    const int n = 500;
    int hi[n];
    float hf[n];
    for (int i = 0; i < n; i++) {
        hi[i] = (i * 37) % 491;
        hf[i] = ((i * 53) % 499) * 0.5f;
    }
    int *di, *oi;
    float *df, *of;
    cudaMalloc(&di, sizeof hi);
    cudaMalloc(&df, sizeof hf);
    cudaMalloc(&oi, sizeof(int));
    cudaMalloc(&of, sizeof(float));
    cudaMemcpy(di, hi, sizeof hi, cudaMemcpyHostToDevice);
    cudaMemcpy(df, hf, sizeof hf, cudaMemcpyHostToDevice);
    block_max<<<1, 64>>>(di, oi, n);
    block_max<float><<<1, 64>>>(df, of, n);
    int mi;
    float mf;
    cudaMemcpy(&mi, oi, sizeof(int), cudaMemcpyDeviceToHost);
    cudaMemcpy(&mf, of, sizeof(float), cudaMemcpyDeviceToHost);
    printf("max %d %.1f\n", mi, mf);
    cudaFree(di);
    cudaFree(df);
    cudaFree(oi);
    cudaFree(of);
    return (mi == 490 && mf == 249.0f) ? 0 : 1;
}
