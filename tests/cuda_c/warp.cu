#include <stdio.h>

#define FULL 0xffffffff

// Warp-level reduction with shuffles, a ballot, and the block-wide __syncthreads_count/_and/_or.
__global__ void warp_ops(const int *in, int *out) {
    int lane = threadIdx.x % warpSize;
    int warp = threadIdx.x / warpSize;
    int v = in[blockIdx.x * blockDim.x + threadIdx.x];
    int sum = v;
    for (int offset = 16; offset > 0; offset /= 2) {
        sum += __shfl_down_sync(FULL, sum, offset);
    }
    int total = __shfl_sync(FULL, sum, 0);
    int up = __shfl_up_sync(FULL, v, 1);
    int mirror = __shfl_xor_sync(FULL, v, 31);
    unsigned odd = __ballot_sync(FULL, v % 2 == 1);
    __syncwarp();
    int evens = __syncthreads_count(v % 2 == 0);
    int all_small = __syncthreads_and(v < 64);
    int any_big;
    any_big = __syncthreads_or(v > 100);
    __threadfence();
    int base = (blockIdx.x * 2 + warp) * 8;
    if (lane == 0) {
        out[base] = total;
        out[base + 1] = (int)odd;
        out[base + 2] = evens;
        out[base + 3] = all_small;
        out[base + 4] = any_big;
    }
    if (lane == 5) {
        out[base + 5] = up;
        out[base + 6] = mirror;
    }
}

int main(void) {
    int n = 128;
    int *h = (int *)malloc(n * sizeof(int));
    for (int i = 0; i < n; i++) {
        h[i] = i;
    }
    int *din;
    int *dout;
    cudaMalloc(&din, n * sizeof(int));
    cudaMalloc(&dout, 32 * sizeof(int));
    cudaMemset(dout, 0, 32 * sizeof(int));
    cudaMemcpy(din, h, n * sizeof(int), cudaMemcpyHostToDevice);
    warp_ops<<<2, 64>>>(din, dout);
    int out[32];
    cudaMemcpy(out, dout, 32 * sizeof(int), cudaMemcpyDeviceToHost);
    for (int w = 0; w < 4; w++) {
        printf("warp %d: sum %d odd %u evens %d and %d or %d up %d xor %d\n", w, out[w * 8], (unsigned)out[w * 8 + 1],
               out[w * 8 + 2], out[w * 8 + 3], out[w * 8 + 4], out[w * 8 + 5], out[w * 8 + 6]);
    }
    return 0;
}
