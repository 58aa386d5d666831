// expect: E0901
// The templated reduction without the barrier in its loop: a race between the steps.
#include <stdio.h>

template <unsigned int blockSize, typename T>
__global__ void reduce(const T *g_in, T *g_out, unsigned int n) {
    __shared__ T sdata[blockSize];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockSize * 2 + threadIdx.x;
    T sum = 0;
    if (i < n) sum = g_in[i];
    if (i + blockSize < n) sum += g_in[i + blockSize];
    sdata[tid] = sum;
    __syncthreads();
    for (unsigned int s = blockSize / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
    }
    if (tid == 0) g_out[blockIdx.x] = sdata[0];
}

template <typename T>
T total(const T *a, int n) {
    T s = 0;
    for (int i = 0; i < n; i++) s += a[i];
    return s;
}

int main(void) {
    const unsigned int n = 200, threads = 32, blocks = (n + threads * 2 - 1) / (threads * 2);
    int *hi = (int *)malloc(n * sizeof(int));
    double *hd = (double *)malloc(n * sizeof(double));
    for (unsigned int i = 0; i < n; i++) {
        hi[i] = (int)(i % 7);
        hd[i] = i * 0.25;
    }
    int *di, *oi;
    double *dd, *od;
    cudaMalloc(&di, n * sizeof(int));
    cudaMalloc(&dd, n * sizeof(double));
    cudaMalloc(&oi, blocks * sizeof(int));
    cudaMalloc(&od, blocks * sizeof(double));
    cudaMemcpy(di, hi, n * sizeof(int), cudaMemcpyHostToDevice);
    cudaMemcpy(dd, hd, n * sizeof(double), cudaMemcpyHostToDevice);
    reduce<threads><<<blocks, threads>>>(di, oi, n);
    reduce<threads, double><<<blocks, threads>>>(dd, od, n);
    int pi[4];
    double pd[4];
    cudaMemcpy(pi, oi, blocks * sizeof(int), cudaMemcpyDeviceToHost);
    cudaMemcpy(pd, od, blocks * sizeof(double), cudaMemcpyDeviceToHost);
    int gi = total(pi, blocks);
    double gd = total(pd, blocks);
    printf("int %d (host %d), double %.2f (host %.2f)\n", gi, total(hi, (int)n), gd, total(hd, (int)n));
    int ok = gi == total(hi, (int)n) && gd == total(hd, (int)n);
    printf("%s\n", ok ? "PASSED" : "FAILED");
    cudaFree(di);
    cudaFree(dd);
    cudaFree(oi);
    cudaFree(od);
    free(hi);
    free(hd);
    return ok ? 0 : 1;
}
