//pass
//--blockDim=[4,4] --gridDim=[2,2]
// Tiled matrix multiplication as it is usually written: the tiles are two-dimensional
// `__shared__` arrays (the flat version is k_matmul_tiled.cu).
#define T 4
#define W 8
__global__ void matmul_tiled_2d(float *A, float *B, float *C) {
    __shared__ float As[T][T];
    __shared__ float Bs[T][T];
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int row = blockIdx.y * T + ty;
    int col = blockIdx.x * T + tx;
    float sum = 0.0f;
    for (int m = 0; m < W / T; m++) {
        As[ty][tx] = A[row * W + m * T + tx];
        Bs[ty][tx] = B[(m * T + ty) * W + col];
        __syncthreads();
        for (int k = 0; k < T; k++) {
            sum += As[ty][k] * Bs[k][tx];
        }
        __syncthreads();
    }
    C[row * W + col] = sum;
}
