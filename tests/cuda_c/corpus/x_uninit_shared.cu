//xfail:BOOGIE_ERROR
//--blockDim=32 --gridDim=1
// expect: E0904
// Half of the shared array is never written, then all of it is read.
__global__ void partial(int *a) {
    __shared__ int s[64];
    s[threadIdx.x] = a[threadIdx.x];
    __syncthreads();
    a[threadIdx.x] = s[2 * threadIdx.x] + s[2 * threadIdx.x + 1];
}
