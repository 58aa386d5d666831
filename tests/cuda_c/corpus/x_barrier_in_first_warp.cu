//xfail:BOOGIE_ERROR
//--blockDim=64 --gridDim=1
// expect: E0902
// A barrier that only the first warp reaches: the second warp never arrives.
__global__ void half_sync(int *a) {
    a[threadIdx.x] = threadIdx.x;
    if (threadIdx.x < 32) {
        __syncthreads();
        a[threadIdx.x] += a[threadIdx.x + 32];
    }
}
