//xfail:BOOGIE_ERROR
//--blockDim=64 --gridDim=1
// expect: E0902
// Threads past n return before the barrier the others wait at.
__global__ void early_exit(int *a, int n) {
    __shared__ int s[64];
    if (threadIdx.x >= n / 2) {
        return;
    }
    s[threadIdx.x] = a[threadIdx.x];
    __syncthreads();
    a[threadIdx.x] = s[n / 2 - 1 - threadIdx.x];
}
