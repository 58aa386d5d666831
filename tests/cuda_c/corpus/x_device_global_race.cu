//xfail:data-race
//--blockDim=32 --gridDim=2
// expect: E0901
// A `__device__` total summed with a plain `+=`: every thread reads and writes the same global.
__device__ unsigned int total;
__constant__ int weights[4] = {1, 2, 3, 4};

__global__ void weighted_sum(const int *a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) total += a[i] * weights[i % 4];
}
