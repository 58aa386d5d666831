//pass
//--blockDim=128 --gridDim=4
// Each block's maximum by atomicMax on a shared scalar, then one write per block.
__global__ void block_max(const int *in, int *out) {
    __shared__ int m;
    if (threadIdx.x == 0) m = 0;
    __syncthreads();
    atomicMax(&m, in[blockIdx.x * blockDim.x + threadIdx.x]);
    __syncthreads();
    if (threadIdx.x == 0) out[blockIdx.x] = m;
}
