// expect: E0903
// A per-thread histogram in a local array of 8 bins indexed by a value that can be 8.
#include <stdio.h>
#define BINS 8

__global__ void local_hist(const int *in, int *out, int n) {
    int bins[BINS] = {0};
    for (int k = 0; k < n; k++) bins[in[k] % (BINS + 1)]++;
    out[threadIdx.x] = bins[threadIdx.x % BINS];
}

int main(void) {
    int h[16];
    for (int i = 0; i < 16; i++) h[i] = i;
    int *d, *o;
    cudaMalloc(&d, 16 * sizeof(int));
    cudaMalloc(&o, 32 * sizeof(int));
    cudaMemcpy(d, h, 16 * sizeof(int), cudaMemcpyHostToDevice);
    local_hist<<<1, 32>>>(d, o, 16);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
