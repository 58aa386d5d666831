//pass
//--blockDim=[4,4] --gridDim=[2,2]
// Tiled matrix multiplication: tiles in shared memory, a barrier after loading and after using.
#define T 4
#define W 8
__global__ void matmul_tiled(float *A, float *B, float *C) {
    __shared__ float As[16];
    __shared__ float Bs[16];
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int row = blockIdx.y * T + ty;
    int col = blockIdx.x * T + tx;
    float sum = 0.0f;
    for (int m = 0; m < W / T; m++) {
        As[ty * T + tx] = A[row * W + m * T + tx];
        Bs[ty * T + tx] = B[(m * T + ty) * W + col];
        __syncthreads();
        for (int k = 0; k < T; k++) {
            sum += As[ty * T + k] * Bs[k * T + tx];
        }
        __syncthreads();
    }
    C[row * W + col] = sum;
}
