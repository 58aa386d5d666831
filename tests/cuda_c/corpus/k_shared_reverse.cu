//pass
//--blockDim=64 --gridDim=2
// Reverses each block's part through shared memory; the barrier orders the writes and reads.
__global__ void reverse(int *a) {
    __shared__ int s[64];
    int base = blockIdx.x * blockDim.x;
    s[threadIdx.x] = a[base + threadIdx.x];
    __syncthreads();
    a[base + threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];
}
