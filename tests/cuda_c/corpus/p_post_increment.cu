// expect: clean
// `x++` used as a value: stream compaction with an atomic counter (`out[n++]` on the host,
// `atomicAdd` on the device), `*p++` walks, and pre- and post-increments in initialisers.
#include <stdio.h>
#define N 128

__global__ void keep_even(const int *in, int *out, int *count, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && in[i] % 2 == 0) {
        int slot = atomicAdd(count, 1);
        out[slot] = in[i];
    }
}

__global__ void prefix_walk(int *a, int n) {
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        int *p = a;
        int run = 0;
        int k = 0;
        while (k++ < n) {
            run += *p;
            *p++ = run;
        }
    }
}

int main(void) {
    int h[N];
    int m = 0;
    for (int i = 0; i < N; i++) {
        if (i % 3 != 0) h[m++] = i;
    }
    int first = m--;
    int again = ++m;
    int *d_in, *d_out, *d_count;
    cudaMalloc(&d_in, N * sizeof(int));
    cudaMalloc(&d_out, N * sizeof(int));
    cudaMalloc(&d_count, sizeof(int));
    cudaMemset(d_count, 0, sizeof(int));
    cudaMemcpy(d_in, h, m * sizeof(int), cudaMemcpyHostToDevice);
    keep_even<<<(m + 63) / 64, 64>>>(d_in, d_out, d_count, m);
    int evens = 0;
    cudaMemcpy(&evens, d_count, sizeof(int), cudaMemcpyDeviceToHost);
    prefix_walk<<<1, 32>>>(d_in, m);
    cudaMemcpy(h, d_in, m * sizeof(int), cudaMemcpyDeviceToHost);
    printf("%d %d %d %d\n", first, again, evens, h[m - 1]);
    cudaFree(d_in);
    cudaFree(d_out);
    cudaFree(d_count);
    return 0;
}
