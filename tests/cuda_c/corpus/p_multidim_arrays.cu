// expect: clean
// Multi-dimensional arrays everywhere C allows them: a `__constant__` filter and a `__device__`
// table (`[3][3]` and `[2][4]`), a host global filled by brace elision, a three-dimensional local
// array in a kernel, a row of it as a pointer, `sizeof` of arrays and rows, a two-dimensional
// array of structs and one copied from a symbol.
#include <stdio.h>
__constant__ float filt[3][3] = {{0, 1, 0}, {1, 4, 1}, {0, 1, 0}};
__device__ int counts[2][4];
float host_grid[2][3] = {1, 2, 3, 4, 5, 6};
struct P { int a; float b; };
__global__ void k(float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= 1 && i < n - 1) {
        float s = 0;
        for (int dy = 0; dy < 3; dy++)
            for (int dx = 0; dx < 3; dx++)
                s += filt[dy][dx] * in[i + dx - 1];
        out[i] = s;
        atomicAdd(&counts[i % 2][i % 4], 1);
    }
    float loc[2][2][2];
    for (int a = 0; a < 2; a++) for (int b = 0; b < 2; b++) for (int c = 0; c < 2; c++) loc[a][b][c] = a * 4 + b * 2 + c;
    if (i == 3) printf("loc %g %g\n", loc[1][0][1], loc[0][1][1]);
    float *row = loc[1][1];
    if (i == 3) printf("row %g %lu %lu\n", row[1], (unsigned long) sizeof(loc[1]), (unsigned long) sizeof loc[0][0]);
}
int main(void) {

    float h[16], r[16]; int n = 16;
    struct P ps[2][2];
    ps[1][0].a = 7; ps[1][1].b = 2.5f;
    for (int i = 0; i < n; i++) h[i] = (float) i;
    float *d, *o;
    cudaMalloc(&d, sizeof(h)); cudaMalloc(&o, sizeof(h));
    cudaMemset(o, 0, sizeof(h));
    cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice);
    k<<<2, 8>>>(d, o, n);
    cudaMemcpy(r, o, sizeof(r), cudaMemcpyDeviceToHost);
    int c[2][4];
    cudaMemcpyFromSymbol(c, counts, sizeof(c));
    for (int i = 0; i < n; i++) printf("%g ", r[i]);
    printf("\n%d %d %d %d | %g %g | %d %g\n", c[0][0], c[1][1], c[0][2], c[1][3], host_grid[1][0], host_grid[0][2], ps[1][0].a, ps[1][1].b);
    return 0;
}
