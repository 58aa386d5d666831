//xfail:BOOGIE_ERROR
//--blockDim=64 --gridDim=1
// expect: E0903
// Reads one element past the end of the shared array.
__global__ void next(int *a) {
    __shared__ int s[64];
    s[threadIdx.x] = a[threadIdx.x];
    __syncthreads();
    a[threadIdx.x] = s[threadIdx.x + 1];
}
