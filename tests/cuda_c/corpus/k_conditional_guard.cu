//pass
//--blockDim=64 --gridDim=4
// The stencil with a short-circuit guard and ?: for the boundary.
__global__ void stencil(float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && in[i] >= 0.0f) {
        float left = i > 0 ? in[i - 1] : in[i];
        float right = i < n - 1 ? in[i + 1] : in[i];
        out[i] = (left + in[i] + right) / 3.0f;
    }
}
