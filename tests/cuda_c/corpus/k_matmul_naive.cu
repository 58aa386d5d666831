//pass
//--blockDim=[4,4] --gridDim=[2,2]
// C = A * B for 8 x 8 matrices, one element per thread.
#define W 8
__global__ void matmul(float *A, float *B, float *C) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    for (int k = 0; k < W; k++) {
        sum += A[row * W + k] * B[k * W + col];
    }
    C[row * W + col] = sum;
}
