// expect: clean
// Barriers under control flow on per-thread variables that hold the same value in every thread
// of a block: an `if` on a round count, a loop on it, a stride halved (and clamped) each round.
#include <stdio.h>
#define N 128
#define THREADS 64

__global__ void rounds(int *a, int n) {
    __shared__ int s[THREADS];
    int t = threadIdx.x;
    int count = n / 32;
    int half = blockDim.x / 2;
    s[t] = a[blockIdx.x * blockDim.x + t];
    __syncthreads();
    if (count > 1) {
        for (int r = 0; r < count; r++) {
            if (t < half) {
                s[t] += s[t + half];
            }
            __syncthreads();
            half = half / 2;
            if (half == 0) {
                half = 1;
            }
        }
    }
    if (t == 0) {
        a[blockIdx.x * blockDim.x] = s[0];
    }
}

int main(void) {
    int h[N];
    for (int i = 0; i < N; i++) {
        h[i] = i % 7;
    }
    int *d;
    cudaMalloc(&d, N * sizeof(int));
    cudaMemcpy(d, h, N * sizeof(int), cudaMemcpyHostToDevice);
    rounds<<<N / THREADS, THREADS>>>(d, N);
    cudaMemcpy(h, d, N * sizeof(int), cudaMemcpyDeviceToHost);
    printf("block sums: %d %d\n", h[0], h[THREADS]);
    cudaFree(d);
    return 0;
}
