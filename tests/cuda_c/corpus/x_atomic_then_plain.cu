//xfail:BOOGIE_ERROR
//--blockDim=64 --gridDim=1
// expect: E0901
// A shared counter updated atomically, then read by every thread without a barrier and reset
// by thread 0: the read and the reset race.
__global__ void counter(int *a) {
    __shared__ int c;
    if (threadIdx.x == 0) {
        c = 0;
    }
    __syncthreads();
    atomicAdd(&c, a[threadIdx.x]);
    __syncthreads();
    a[threadIdx.x] = c;
    if (threadIdx.x == 0) {
        c = 0;
    }
}
