//xfail:BOOGIE_ERROR
//--blockDim=64 --gridDim=2
// expect: E0901
// The reverse without the barrier: reads of s race with other threads' writes.
__global__ void reverse(int *a) {
    __shared__ int s[64];
    int base = blockIdx.x * blockDim.x;
    s[threadIdx.x] = a[base + threadIdx.x];
    a[base + threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];
}
