// expect: clean
// `#define`s inside function bodies, defined from there on.
#include <stdio.h>
__global__ void k(int *a) {
#define IDX (blockIdx.x * blockDim.x + threadIdx.x)
#define SQ(x) ((x) * (x))
    a[IDX] = SQ(IDX);
}
int main() {
    int *d, h[8];
    cudaMalloc(&d, sizeof(h));
    k<<<2, 4>>>(d);
    cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
#define N 8
    for (int i = 0; i < N; i++) printf("%d ", h[i]);
    printf("\n");
    return 0;
}
