//xfail:BOOGIE_ERROR
//--blockDim=32 --gridDim=1
// expect: E0902
// A barrier only half of the block reaches.
__global__ void half_sync(int *a) {
    __shared__ int s[32];
    s[threadIdx.x] = a[threadIdx.x];
    if (threadIdx.x < 16) {
        __syncthreads();
    }
    a[threadIdx.x] = s[threadIdx.x] + 1;
}
