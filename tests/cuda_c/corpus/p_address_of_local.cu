// expect: clean
// `&x` of local variables: a `__device__` function returns two results through pointers to the
// calling thread's locals, and a host function swaps two locals.
#include <stdio.h>
#include <stdlib.h>
#define N 64

__device__ void min_max(const int *a, int n, int *lo, int *hi) {
    *lo = a[0];
    *hi = a[0];
    for (int i = 1; i < n; i++) {
        if (a[i] < *lo) *lo = a[i];
        if (a[i] > *hi) *hi = a[i];
    }
}

__global__ void ranges(const int *a, int *out) {
    int lo, hi;
    int t = threadIdx.x;
    min_max(a + 4 * t, 4, &lo, &hi);
    out[2 * t] = lo;
    out[2 * t + 1] = hi;
}

void swap(int *x, int *y) {
    int t = *x;
    *x = *y;
    *y = t;
}

int main(void) {
    int a = 1, b = 2;
    swap(&a, &b);
    int *h = (int *)malloc(N * sizeof(int));
    for (int i = 0; i < N; i++) h[i] = (i * 7) % 13;
    int *d, *o;
    cudaMalloc(&d, N * sizeof(int));
    cudaMalloc(&o, (N / 2) * sizeof(int));
    cudaMemcpy(d, h, N * sizeof(int), cudaMemcpyHostToDevice);
    ranges<<<1, N / 4>>>(d, o);
    cudaMemcpy(h, o, (N / 2) * sizeof(int), cudaMemcpyDeviceToHost);
    printf("%d %d | %d %d %d %d\n", a, b, h[0], h[1], h[6], h[7]);
    cudaFree(d);
    cudaFree(o);
    free(h);
    return 0;
}
