#include <stdio.h>

// Every atomic on global and shared memory: counts, extremes, bit sets, a lock-free claim by
// atomicCAS, and the old values they return.
__global__ void stats(const int *in, int n, int *out, unsigned *bits, float *fsum) {
    __shared__ int local_max;
    __shared__ unsigned count;
    if (threadIdx.x == 0) {
        local_max = -1000000;
        count = 0u;
    }
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int v = in[i];
        atomicAdd(&out[0], v);
        atomicSub(&out[1], v);
        atomicMin(&out[2], v);
        atomicMax(&local_max, v);
        atomicAdd(&count, 1u);
        atomicOr(&bits[0], 1u << (v % 32));
        atomicAnd(&bits[1], ~(1u << (v % 32)));
        atomicXor(&bits[2], (unsigned)v);
        atomicAdd(fsum, 0.5f);
        if (atomicCAS(&out[3], -1, i) == -1) {
            // Exactly one thread claims slot 3; it records that it did.
            atomicExch(&out[4], 1);
        }
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        atomicMax(&out[5], local_max);
        atomicAdd(&out[6], (int)count);
    }
}

int main(void) {
    int n = 100;
    int *h = (int *)malloc(n * sizeof(int));
    for (int i = 0; i < n; i++) {
        h[i] = (i * 37) % 101;
    }
    int init[7];
    init[0] = 0;
    init[1] = 0;
    init[2] = 1000;
    init[3] = -1;
    init[4] = 0;
    init[5] = -1;
    init[6] = 0;
    unsigned binit[3];
    binit[0] = 0u;
    binit[1] = 4294967295u;
    binit[2] = 0u;
    int *din;
    int *dout;
    unsigned *dbits;
    float *dsum;
    cudaMalloc(&din, n * sizeof(int));
    cudaMalloc(&dout, 7 * sizeof(int));
    cudaMalloc(&dbits, 3 * sizeof(unsigned));
    cudaMalloc(&dsum, sizeof(float));
    cudaMemcpy(din, h, n * sizeof(int), cudaMemcpyHostToDevice);
    cudaMemcpy(dout, init, 7 * sizeof(int), cudaMemcpyHostToDevice);
    cudaMemcpy(dbits, binit, 3 * sizeof(unsigned), cudaMemcpyHostToDevice);
    cudaMemset(dsum, 0, sizeof(float));
    stats<<<4, 32>>>(din, n, dout, dbits, dsum);
    int out[7];
    unsigned bits[3];
    float sum[1];
    cudaMemcpy(out, dout, 7 * sizeof(int), cudaMemcpyDeviceToHost);
    cudaMemcpy(bits, dbits, 3 * sizeof(unsigned), cudaMemcpyDeviceToHost);
    cudaMemcpy(sum, dsum, sizeof(float), cudaMemcpyDeviceToHost);
    printf("sum %d neg %d min %d claimed %d max %d count %d\n", out[0], out[1], out[2], out[4], out[5], out[6]);
    printf("or %u and %u xor %u fsum %d\n", bits[0], bits[1], bits[2], (int)sum[0]);
    return 0;
}
