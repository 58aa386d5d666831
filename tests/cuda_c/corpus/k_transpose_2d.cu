//pass
//--blockDim=[8,8] --gridDim=[2,2]
// Out-of-place transpose of a 16 x 16 matrix with 2-D blocks and grid.
__global__ void transpose(float *in, float *out) {
    unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
    unsigned w = gridDim.x * blockDim.x;
    out[x * w + y] = in[y * w + x];
}
