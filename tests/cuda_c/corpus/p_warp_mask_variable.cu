// expect: clean
// A warp mask in a variable (`unsigned mask = 0xFFFFFFFFU;`, as the OLCF training series'
// `reduce_ws` writes it), never assigned again: the whole warp, as the constant is. A warp-shuffle
// sum of 64 ones per block. The program checks its own result.
#include <stdio.h>

__global__ void warp_sums(const float *in, float *out) {
    unsigned mask = 0xFFFFFFFFU;
    float val = in[blockIdx.x * blockDim.x + threadIdx.x];
    for (int offset = warpSize / 2; offset > 0; offset >>= 1) val += __shfl_down_sync(mask, val, offset);
    if (threadIdx.x % warpSize == 0) atomicAdd(out, val);
}

int main(void) {
    float h[128], *din, *dout, sum = 0.0f;
    for (int i = 0; i < 128; i++) h[i] = 1.0f;
    cudaMalloc((void **)&din, 128 * sizeof(float));
    cudaMalloc((void **)&dout, sizeof(float));
    cudaMemcpy(din, h, 128 * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemset(dout, 0, sizeof(float));
    warp_sums<<<2, 64>>>(din, dout);
    cudaMemcpy(&sum, dout, sizeof(float), cudaMemcpyDeviceToHost);
    cudaFree(din);
    cudaFree(dout);
    printf("sum %.1f\n", sum);
    if (sum != 128.0f) {
        printf("FAILED\n");
        return 1;
    }
    printf("warp mask variable: correct\n");
    return 0;
}
