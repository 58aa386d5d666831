// expect: clean
#include <stdio.h>
#include <stdlib.h>
#define N 16
// Pointers walk forward to one past the end and back again (`q--`, `q[-1]` from a pointer into
// the middle of the buffer): valid C, since every element reached lies inside the allocation.
__global__ void k(int *a, int n) {
    if (threadIdx.x == 0) {
        int *end = a + n;
        int i = 0;
        for (int *p = a; p != end; p++) *p = i++;
        int *q = end;
        while (q > a) {
            q--;
            *q += 1;
        }
        int *m = a + n / 2;
        m[-1] = m[0] + m[-2];
    }
}
int main(void) {
    int *h = (int *)malloc(N * sizeof(int));
    int *end = h + N;
    for (int *p = h; p < end; ++p) *p = 0;
    int *d;
    cudaMalloc(&d, N * sizeof(int));
    k<<<1, 32>>>(d, N);
    cudaMemcpy(h, d, N * sizeof(int), cudaMemcpyDeviceToHost);
    int *last = end - 1;
    printf("%d %d %d %ld\n", h[0], last[0], last[-8], (long)(end - h));
    cudaFree(d);
    free(h);
    return 0;
}
