//pass
//--blockDim=64 --gridDim=4
// Three-point stencil from one array into another.
__global__ void stencil(float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0) {
        if (i < n - 1) {
            out[i] = (in[i - 1] + in[i] + in[i + 1]) / 3.0f;
        }
    }
}
