// expect: E0903
#include <stdio.h>
#define N 16
// The twin of p_pointer_walk_back.cu with the loop test off by one: `q >= a` steps `q` to one
// before the start of the buffer, which C leaves undefined.
__global__ void k(int *a, int n) {
    if (threadIdx.x == 0) {
        int *q = a + n - 1;
        while (q >= a) {
            *q = 1;
            q--;
        }
    }
}
int main(void) {
    int *d, h[N];
    cudaMalloc(&d, N * sizeof(int));
    k<<<1, 32>>>(d, N);
    cudaMemcpy(h, d, N * sizeof(int), cudaMemcpyDeviceToHost);
    printf("%d\n", h[0]);
    cudaFree(d);
    return 0;
}
