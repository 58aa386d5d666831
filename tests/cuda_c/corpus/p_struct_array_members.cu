// expect: clean
// Struct members that are arrays: a particle with a position and velocity of three floats, a
// 3x3 matrix member, and a cell holding an array of structs; in device memory (an array of
// particles moved by a kernel), as kernel arguments by value (a matrix applied to vectors), and
// as host variables copied whole (the array goes with its struct, as C copies it).
#include <stdio.h>
#include <stdlib.h>
#define N 40

typedef struct {
    float pos[3];
    float vel[3];
    int id;
} Particle;

struct Mat3 {
    float m[3][3];
};

struct Pair {
    int a;
    float b;
};

struct Cell {
    int count;
    Pair items[4];
};

__global__ void step(Particle *ps, int n, float dt) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        for (int k = 0; k < 3; k++) ps[i].pos[k] += ps[i].vel[k] * dt;
        Particle *p = ps + i;
        p->id += 1000;
    }
}

__global__ void apply(Mat3 t, float *v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float x[3];
        for (int r = 0; r < 3; r++) {
            x[r] = 0.0f;
            for (int c = 0; c < 3; c++) x[r] += t.m[r][c] * v[3 * i + c];
        }
        for (int r = 0; r < 3; r++) v[3 * i + r] = x[r];
    }
}

__global__ void fill(Cell *cells) {
    int c = blockIdx.x;
    int k = threadIdx.x;
    cells[c].items[k].a = c * 10 + k;
    cells[c].items[k].b = 0.5f * k;
    if (k == 0) cells[c].count = blockDim.x;
}

float norm1(Particle p) {
    return p.pos[0] + p.pos[1] + p.pos[2];
}

int main(void) {
    Particle *h = (Particle *)malloc(N * sizeof(Particle));
    for (int i = 0; i < N; i++) {
        for (int k = 0; k < 3; k++) {
            h[i].pos[k] = (float)(i + k);
            h[i].vel[k] = 1.0f;
        }
        h[i].id = i;
    }
    Particle *d;
    cudaMalloc((void **)&d, N * sizeof(Particle));
    cudaMemcpy(d, h, N * sizeof(Particle), cudaMemcpyHostToDevice);
    step<<<(N + 15) / 16, 16>>>(d, N, 0.5f);
    cudaMemcpy(h, d, N * sizeof(Particle), cudaMemcpyDeviceToHost);
    Particle last = h[N - 1];
    h[N - 1].pos[0] = -1.0f;
    printf("sizeof(Particle) = %d, last: (%.1f, %.1f, %.1f) id %d, sum %.1f\n", (int)sizeof(Particle),
           last.pos[0], last.pos[1], last.pos[2], last.id, norm1(last));

    Mat3 t = {{{0, 1, 0}, {1, 0, 0}, {0, 0, 2}}};
    Mat3 u = t;
    u.m[2][2] = 3.0f;
    float hv[6] = {1, 2, 3, 4, 5, 6};
    float *dv;
    cudaMalloc((void **)&dv, 6 * sizeof(float));
    cudaMemcpy(dv, hv, sizeof hv, cudaMemcpyHostToDevice);
    apply<<<1, 2>>>(t, dv, 2);
    cudaMemcpy(hv, dv, sizeof hv, cudaMemcpyDeviceToHost);
    printf("swapped: %.0f %.0f %.0f %.0f %.0f %.0f (t[2][2] = %.0f, u[2][2] = %.0f, sizeof(Mat3) = %d)\n",
           hv[0], hv[1], hv[2], hv[3], hv[4], hv[5], t.m[2][2], u.m[2][2], (int)sizeof(struct Mat3));

    Cell *dc;
    cudaMalloc((void **)&dc, 2 * sizeof(Cell));
    fill<<<2, 4>>>(dc);
    Cell hc[2];
    cudaMemcpy(hc, dc, 2 * sizeof(Cell), cudaMemcpyDeviceToHost);
    float *b = &hc[1].items[3].b;
    printf("cell 1: count %d, items[3] = (%d, %.1f), sizeof(Cell) = %d\n", hc[1].count, hc[1].items[3].a, *b,
           (int)sizeof(Cell));
    cudaFree(d);
    cudaFree(dv);
    cudaFree(dc);
    free(h);
    return 0;
}
