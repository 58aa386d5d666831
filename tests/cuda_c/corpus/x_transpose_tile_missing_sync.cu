//xfail:BOOGIE_ERROR
//--blockDim=[8,8] --gridDim=[2,2]
// expect: E0901
// k_transpose_tile_padded.cu without its barrier: a thread reads a tile element (a column of the
// two-dimensional `__shared__` array) that another thread writes.
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
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS) {
        out[(y + j) * W + x] = tile[threadIdx.x][threadIdx.y + j];
    }
}
