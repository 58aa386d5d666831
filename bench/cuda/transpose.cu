// Hand-written reference for bench/transpose.strata: 32 x 8 threads move one 32 x 32 f64 tile
// through (unpadded, as in the Strata program) shared memory, four elements per thread.
// Block (bx, by) reads tile (row bx, col by) of `in` and writes it transposed to tile
// (row by, col bx) of `out`.
#include "common.h"
#ifndef N
#define N 2048
#endif
#ifndef REPS
#define REPS 10
#endif
#define TILE 32
#define ROWS 8

__global__ void transpose(const double *__restrict__ in, double *__restrict__ out) {
    __shared__ double tile[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int in_row = blockIdx.x * TILE, in_col = blockIdx.y * TILE;
#pragma unroll
    for (int i = 0; i < TILE; i += ROWS)
        tile[ty + i][tx] = in[(in_row + ty + i) * N + in_col + tx];
    __syncthreads();
#pragma unroll
    for (int i = 0; i < TILE; i += ROWS)
        out[(in_col + ty + i) * N + in_row + tx] = tile[tx][ty + i];
}

int main() {
    const size_t bytes = (size_t)N * N * sizeof(double);
    double *h_in = (double *)std::malloc(bytes), *h_out = (double *)std::malloc(bytes);
    for (size_t i = 0; i < (size_t)N * N; i++) h_in[i] = (double)(i % 1000) * 0.5;
    double *d_in, *d_out;
    CHECK(cudaMalloc(&d_in, bytes));
    CHECK(cudaMalloc(&d_out, bytes));
    CHECK(cudaMemcpy(d_in, h_in, bytes, cudaMemcpyHostToDevice));
    for (int r = 0; r < REPS; r++) TIMED("transpose", transpose<<<dim3(N / TILE, N / TILE), dim3(TILE, ROWS)>>>(d_in, d_out));
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(h_out, d_out, bytes, cudaMemcpyDeviceToHost));
    for (int r = 0; r < N; r++)
        for (int c = 0; c < N; c++)
            if (h_out[r * N + c] != h_in[c * N + r]) fail("transpose");
    std::puts("transpose ok");
    return 0;
}
