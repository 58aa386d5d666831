// expect: clean
// The training-series style: host matrices from `new float[]`, a `dim3 block(TILE, TILE)` of
// names, a shared-memory tiled transpose, a host check, `delete[]`.
#include <stdio.h>

const int TILE = 8;
const int DIM = 24;

__global__ void transpose(const float *in, float *out, int n) {
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = in[y * n + x];
    __syncthreads();
    int tx = blockIdx.y * TILE + threadIdx.x;
    int ty = blockIdx.x * TILE + threadIdx.y;
    out[ty * n + tx] = tile[threadIdx.x][threadIdx.y];
}

int main() {
    float *h_in = new float[DIM * DIM];
    float *h_out = new float[DIM * DIM];
    for (int i = 0; i < DIM * DIM; i++) h_in[i] = (float)i;
    float *d_in, *d_out;
    cudaMalloc(&d_in, DIM * DIM * sizeof(float));
    cudaMalloc(&d_out, DIM * DIM * sizeof(float));
    cudaMemcpy(d_in, h_in, DIM * DIM * sizeof(float), cudaMemcpyHostToDevice);
    dim3 block(TILE, TILE);
    dim3 grid(DIM / TILE, DIM / TILE);
    transpose<<<grid, block>>>(d_in, d_out, DIM);
    cudaMemcpy(h_out, d_out, DIM * DIM * sizeof(float), cudaMemcpyDeviceToHost);
    for (int r = 0; r < DIM; r++)
        for (int c = 0; c < DIM; c++)
            if (h_out[c * DIM + r] != h_in[r * DIM + c]) {
                printf("mismatch at %d,%d\n", r, c);
                return -1;
            }
    printf("Success!\n");
    delete[] h_in;
    delete[] h_out;
    cudaFree(d_in);
    cudaFree(d_out);
    return 0;
}
