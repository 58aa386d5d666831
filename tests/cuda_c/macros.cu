#include <stdio.h>
#include <stdlib.h>

#define N 10
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define IDX(row, col) ((row) * N + (col))
#define SQUARE(x) ((x) * (x))
#define CHECK(call)                                                    \
    do {                                                               \
        cudaError_t err = call;                                        \
        if (err != cudaSuccess) {                                      \
            printf("CUDA error %d at line %d\n", (int)err, __LINE__);  \
            exit(1);                                                   \
        }                                                              \
    } while (0)
#define SWAP(a, b) { int tmp = a; a = b; b = tmp; }

// Function-like macros as values and as statements, nested, in host and device code.
__global__ void k(int *m) {
    int r = threadIdx.x;
    for (int c = 0; c < N; c++) {
        m[IDX(r, c)] = MAX(SQUARE(r - c), r + c);
    }
}

int main(void) {
    int *d;
    int *h = (int *)malloc(N * N * sizeof(int));
    CHECK(cudaMalloc(&d, N * N * sizeof(int)));
    k<<<1, N>>>(d);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(h, d, N * N * sizeof(int), cudaMemcpyDeviceToHost));
    int x = h[IDX(2, 9)];
    int y = h[IDX(9, 0)];
    SWAP(x, y);
    printf("%d %d %d\n", x, y, MAX(h[IDX(5, 5)], 3));
    return 0;
}
