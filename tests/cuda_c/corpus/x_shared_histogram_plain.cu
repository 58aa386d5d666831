//xfail:BOOGIE_ERROR
//--blockDim=64 --gridDim=1
// expect: E0901
// A block histogram in shared memory whose bins are incremented with plain `++`: threads that
// hit the same bin race (the atomic version is k_atomic_histogram.cu).
__global__ void hist(const int *in, int *bins) {
    __shared__ int s[8];
    if (threadIdx.x < 8) s[threadIdx.x] = 0;
    __syncthreads();
    s[in[threadIdx.x] % 8]++;
    __syncthreads();
    if (threadIdx.x < 8) bins[threadIdx.x] = s[threadIdx.x];
}
