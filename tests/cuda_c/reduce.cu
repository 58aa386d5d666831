// Tree reduction in static shared memory, one partial sum per block, finished on the host.
#include <stdio.h>
#define BLOCK 64
#define BLOCKS 4

__global__ void reduce(unsigned *in, unsigned *out) {
    __shared__ unsigned s[BLOCK];
    unsigned tid = threadIdx.x;
    s[tid] = in[blockIdx.x * blockDim.x + tid];
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride = stride / 2) {
        if (tid < stride) {
            s[tid] += s[tid + stride];
        }
        __syncthreads();
    }
    if (tid == 0) {
        out[blockIdx.x] = s[0];
    }
}

int main() {
    unsigned host[BLOCK * BLOCKS], partial[BLOCKS];
    unsigned *din, *dout;
    for (int i = 0; i < BLOCK * BLOCKS; ++i) {
        host[i] = i;
    }
    cudaMalloc(&din, BLOCK * BLOCKS * sizeof(unsigned));
    cudaMalloc(&dout, BLOCKS * sizeof(unsigned));
    cudaMemcpy(din, host, BLOCK * BLOCKS * sizeof(unsigned), cudaMemcpyHostToDevice);
    reduce<<<BLOCKS, BLOCK>>>(din, dout);
    cudaMemcpy(partial, dout, BLOCKS * sizeof(unsigned), cudaMemcpyDeviceToHost);
    unsigned total = 0;
    int b = 0;
    while (b < BLOCKS) {
        printf("block %d: %u\n", b, partial[b]);
        total += partial[b];
        b++;
    }
    printf("total %u\n", total);
    cudaFree(din);
    cudaFree(dout);
    return 0;
}
