//pass
//--blockDim=128 --gridDim=2
// __syncthreads_count: every thread learns how many of its block's inputs are large.
__global__ void count_large(int *a, int *out) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    int c = __syncthreads_count(a[i] > 50);
    out[i] = c;
}
