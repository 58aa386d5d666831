//pass
//--blockDim=128 --gridDim=4
// Tree reduction in shared memory, one partial sum per block.
__global__ void reduce(int *in, int *out) {
    __shared__ int s[128];
    unsigned t = threadIdx.x;
    s[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride = stride / 2) {
        if (t < stride) {
            s[t] += s[t + stride];
        }
        __syncthreads();
    }
    if (t == 0) {
        out[blockIdx.x] = s[0];
    }
}
