//pass
//--blockDim=[8,8] --gridDim=[2,2]
// The shared-memory transpose of 8 x 8 tiles with a padded tile (`[8][9]`, against bank
// conflicts), one element per thread (the loop is the general form): 16 x 16 floats.
#define TILE 8
#define ROWS 8
#define W 16
__global__ void transpose_tile(float *in, float *out) {
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS) {
        tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * W + x];
    }
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS) {
        out[(y + j) * W + x] = tile[threadIdx.x][threadIdx.y + j];
    }
}
