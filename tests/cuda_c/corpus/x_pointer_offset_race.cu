//xfail:BOOGIE_ERROR
//--blockDim=32 --gridDim=2
// expect: E0901
// The offset forgets the block size: block 1's part overlaps block 0's.
__global__ void offsets(float *a) {
    float *mine = a + blockIdx.x;
    mine[threadIdx.x] = mine[threadIdx.x] * 2.0f;
}
