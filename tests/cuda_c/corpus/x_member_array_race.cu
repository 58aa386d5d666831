// expect: E0901
// Each thread of a block counts itself into the first slot of its cell's array member without
// an atomic: a race on `cells[b].hits[0]`.
#include <stdio.h>

struct Cell {
    int hits[4];
    float weight;
};

__global__ void count(Cell *cells) {
    cells[blockIdx.x].hits[0] += 1;
}

int main(void) {
    Cell *d;
    cudaMalloc((void **)&d, 2 * sizeof(Cell));
    cudaMemset(d, 0, 2 * sizeof(Cell));
    count<<<2, 32>>>(d);
    Cell h[2];
    cudaMemcpy(h, d, 2 * sizeof(Cell), cudaMemcpyDeviceToHost);
    printf("%d %d\n", h[0].hits[0], h[1].hits[0]);
    cudaFree(d);
    return 0;
}
