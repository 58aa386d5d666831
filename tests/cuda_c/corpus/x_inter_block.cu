//xfail:BOOGIE_ERROR
//--blockDim=32 --gridDim=4
// expect: E0901
// Forgets blockIdx: the blocks write the same elements.
__global__ void copy(float *in, float *out) {
    out[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
}
