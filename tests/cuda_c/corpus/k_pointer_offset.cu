//pass
//--blockDim=32 --gridDim=2
// Each block works on its own part through an offset pointer.
__global__ void offsets(float *a) {
    float *mine = a + blockIdx.x * blockDim.x;
    mine[threadIdx.x] = mine[threadIdx.x] * 2.0f;
}
