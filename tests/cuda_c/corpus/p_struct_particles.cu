// expect: clean
// Structs in device memory: an array of particles copied to the GPU, moved by a kernel through
// `p[i].f`, `p->f` and a whole-struct load and store, and copied back.
#include <stdio.h>
#include <stdlib.h>
#define N 96

typedef struct {
    float x;
    float v;
    int steps;
} Particle;

__device__ void advance(Particle *p, float dt) {
    p->x += p->v * dt;
    p->steps++;
}

__global__ void move(Particle *ps, int n, float dt) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        advance(&ps[i], dt);
        advance(ps + i, dt);
        Particle q = ps[i];
        q.v = -q.v;
        ps[i] = q;
    }
}

int main(void) {
    Particle *h = (Particle *)malloc(N * sizeof(Particle));
    for (int i = 0; i < N; i++) {
        h[i].x = (float)i;
        h[i].v = 0.5f;
        h[i].steps = 0;
    }
    Particle *d;
    cudaMalloc((void **)&d, N * sizeof(Particle));
    cudaMemcpy(d, h, N * sizeof(Particle), cudaMemcpyHostToDevice);
    move<<<(N + 31) / 32, 32>>>(d, N, 2.0f);
    cudaMemcpy(h, d, N * sizeof(Particle), cudaMemcpyDeviceToHost);
    float sum = 0.0f;
    int steps = 0;
    for (int i = 0; i < N; i++) {
        sum += h[i].x;
        steps += (h + i)->steps;
    }
    printf("%.1f %d %.1f %d\n", sum, steps, h[N - 1].v, (int)sizeof(Particle));
    cudaFree(d);
    free(h);
    return 0;
}
