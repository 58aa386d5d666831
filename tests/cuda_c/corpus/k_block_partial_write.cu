//pass
//--blockDim=64 --gridDim=4
// Thread 0 of each block writes the block's own slot after a barrier.
__global__ void per_block(int *a, int *out) {
    __shared__ int s[64];
    s[threadIdx.x] = a[blockIdx.x * 64 + threadIdx.x] & 7;
    __syncthreads();
    if (threadIdx.x == 0) {
        int sum = 0;
        for (int k = 0; k < 64; k++) {
            sum += s[k];
        }
        out[blockIdx.x] = sum;
    }
}
