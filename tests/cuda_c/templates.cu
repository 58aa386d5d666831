// Function templates as CUDA code writes them: a kernel template instantiated for `int` and
// `float` with the type written at the launch and deduced from the arguments, a value parameter
// for the block size (a `__shared__` array's length and a loop bound), a `__device__` template
// called from a kernel, a host template, and a template over a struct.
#include <stdio.h>

struct Pair {
    int a;
    float b;
};

template <typename T>
__device__ T twice(T x) {
    return x + x;
}

template <typename T>
__global__ void scale(T *v, T k, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] = twice(v[i]) * k;
}

template <unsigned int BLOCK, typename T>
__global__ void block_sum(const T *in, T *out) {
    __shared__ T s[BLOCK];
    unsigned int t = threadIdx.x;
    s[t] = in[blockIdx.x * BLOCK + t];
    __syncthreads();
    for (unsigned int half = BLOCK / 2; half > 0; half >>= 1) {
        if (t < half) s[t] += s[t + half];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}

template <class T>
T host_max(const T *a, int n) {
    T m = a[0];
    for (int i = 1; i < n; i++)
        if (a[i] > m) m = a[i];
    return m;
}

template <typename P>
__global__ void swap_fields(P *p) {
    int i = threadIdx.x;
    float t = p[i].b;
    p[i].b = (float)p[i].a;
    p[i].a = (int)t;
}

int main(void) {
    const int n = 8;
    int hi[n];
    float hf[n];
    for (int i = 0; i < n; i++) {
        hi[i] = i;
        hf[i] = i * 0.5f;
    }
    int *di;
    float *df;
    cudaMalloc(&di, sizeof hi);
    cudaMalloc(&df, sizeof hf);
    cudaMemcpy(di, hi, sizeof hi, cudaMemcpyHostToDevice);
    cudaMemcpy(df, hf, sizeof hf, cudaMemcpyHostToDevice);
    scale<int><<<1, n>>>(di, 3, n);
    scale<<<1, n>>>(df, 2.0f, n);
    cudaMemcpy(hi, di, sizeof hi, cudaMemcpyDeviceToHost);
    cudaMemcpy(hf, df, sizeof hf, cudaMemcpyDeviceToHost);
    for (int i = 0; i < n; i++) printf("%d %.1f\n", hi[i], hf[i]);
    printf("max %d %.1f\n", host_max(hi, n), host_max<float>(hf, n));

    int *dsum;
    cudaMalloc(&dsum, 2 * sizeof(int));
    int big[64];
    for (int i = 0; i < 64; i++) big[i] = i;
    int *dbig;
    cudaMalloc(&dbig, sizeof big);
    cudaMemcpy(dbig, big, sizeof big, cudaMemcpyHostToDevice);
    block_sum<32, int><<<2, 32>>>(dbig, dsum);
    int sums[2];
    cudaMemcpy(sums, dsum, sizeof sums, cudaMemcpyDeviceToHost);
    printf("sums %d %d\n", sums[0], sums[1]);

    Pair hp[2];
    hp[0].a = 1;
    hp[0].b = 2.5f;
    hp[1].a = 7;
    hp[1].b = 9.0f;
    Pair *dp;
    cudaMalloc(&dp, sizeof hp);
    cudaMemcpy(dp, hp, sizeof hp, cudaMemcpyHostToDevice);
    swap_fields<<<1, 2>>>(dp);
    cudaMemcpy(hp, dp, sizeof hp, cudaMemcpyDeviceToHost);
    printf("pairs %d %.1f %d %.1f\n", hp[0].a, hp[0].b, hp[1].a, hp[1].b);
    cudaFree(di);
    cudaFree(df);
    cudaFree(dsum);
    cudaFree(dbig);
    cudaFree(dp);
    return 0;
}
