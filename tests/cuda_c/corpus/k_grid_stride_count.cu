//pass
//--blockDim=32 --gridDim=2
// A grid-stride loop (the buffers hold one element per thread, so one iteration each) counting
// large values into one atomic counter; the count is stored per block by its thread 0.
__global__ void count_large(const int *in, unsigned int *counts) {
    __shared__ unsigned int c;
    if (threadIdx.x == 0) c = 0;
    __syncthreads();
    int n = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += n)
        if (in[i] >= 50) atomicAdd(&c, 1u);
    __syncthreads();
    if (threadIdx.x == 0) counts[blockIdx.x] = c;
}
