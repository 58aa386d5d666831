//pass
//--blockDim=32 --gridDim=4
// Copies every element of a block-strided layout: distinct per thread.
__global__ void strided(double *in, double *out) {
    unsigned i = threadIdx.x * gridDim.x + blockIdx.x;
    out[i] = in[i] * 2.0;
}
