//xfail:BOOGIE_ERROR
//--blockDim=[4,4] --gridDim=1
// expect: E0903
// A 3-point stencil along the rows of a two-dimensional `__shared__` tile whose guard lets the
// last column read `tile[y][x + 1]` one past its row: element (y + 1, 0) of the allocation, but
// out of bounds in C (the row has 4 elements), and so an error here as well.
#define T 4
__global__ void row_stencil(float *in, float *out) {
    __shared__ float tile[T][T];
    int x = threadIdx.x, y = threadIdx.y;
    tile[y][x] = in[y * T + x];
    __syncthreads();
    if (x > 0) {
        out[y * T + x] = tile[y][x - 1] + tile[y][x] + tile[y][x + 1];
    }
}
