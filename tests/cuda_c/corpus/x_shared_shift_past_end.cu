//xfail:BOOGIE_ERROR
//--blockDim=64 --gridDim=1
// expect: E0903
// A shift through shared memory that writes one element past the tile: the last thread's
// `s[threadIdx.x + 1]` is `s[64]` of a 64-element array.
__global__ void shift(const float *in, float *out) {
    __shared__ float s[64];
    s[threadIdx.x + 1] = in[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = s[threadIdx.x];
}
