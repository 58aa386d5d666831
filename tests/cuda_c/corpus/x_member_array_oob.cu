// expect: E0903
// A kernel clears the three coordinates of each particle's position with `k <= 3`: the write
// `ps[i].pos[3]` is past the member `float pos[3]`, although the struct goes on with `vel`
// (the index is checked against the member's own length, as C defines it).
#include <stdio.h>
#define N 8

typedef struct {
    float pos[3];
    float vel[3];
} Particle;

__global__ void clear(Particle *ps, int n) {
    int i = threadIdx.x;
    if (i < n) {
        for (int k = 0; k <= 3; k++) ps[i].pos[k] = 0.0f;
    }
}

int main(void) {
    Particle *d;
    cudaMalloc((void **)&d, N * sizeof(Particle));
    clear<<<1, N>>>(d, N);
    cudaDeviceSynchronize();
    cudaFree(d);
    printf("done\n");
    return 0;
}
