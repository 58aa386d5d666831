//pass
//--blockDim=64 --gridDim=2
// The twin of x_atomic_plain_read.cu: a plain initialisation, a barrier, the atomic updates
// (returning the old value, per thread), a barrier, then plain reads of the total.
__global__ void count(int *c, int *out) {
    __shared__ int total;
    if (threadIdx.x == 0) {
        total = 0;
    }
    __syncthreads();
    int before = atomicAdd(&total, 1);
    atomicMax(&c[blockIdx.x], before);
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = total + c[blockIdx.x] * 0;
}
