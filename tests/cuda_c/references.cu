// expect: clean
// C++ reference parameters of scalars (`float &a`, `const int &by`) on the host and the GPU, bound
// to elements, locals and temporaries; chained assignment (`lo = hi = a[0]`).
#include <stdio.h>
__device__ void swap(float &a, float &b) { float t = a; a = b; b = t; }
__device__ void bump(int &c, const int &by) { c += by; atomicAdd(&c, 0); }
__global__ void sort_pairs(float *v, int *count) {
    int i = 2 * threadIdx.x;
    if (v[i] > v[i + 1]) { swap(v[i], v[i + 1]); bump(count[threadIdx.x], 2 * 3); }
    float lo = v[i], hi = v[i + 1];
    swap(lo, hi);
    v[i] = hi; v[i + 1] = lo;
}
void minmax(const int *a, int n, int &lo, int &hi) {
    lo = hi = a[0];
    for (int i = 1; i < n; i++) { if (a[i] < lo) lo = a[i]; if (a[i] > hi) hi = a[i]; }
}
void twice(int &x) { x *= 2; }
int main() {
    float h[8] = {5, 1, 2, 9, 7, 3, 4, 4};
    float *d; int *c;
    cudaMalloc(&d, sizeof(h)); cudaMalloc(&c, 4 * sizeof(int));
    cudaMemset(c, 0, 4 * sizeof(int));
    cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice);
    sort_pairs<<<1, 4>>>(d, c);
    int hc[4];
    cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
    cudaMemcpy(hc, c, sizeof(hc), cudaMemcpyDeviceToHost);
    for (int i = 0; i < 8; i++) printf("%g ", h[i]);
    printf("| %d %d %d %d\n", hc[0], hc[1], hc[2], hc[3]);
    int lo, hi;
    int a[5] = {4, -2, 9, 0, 3};
    minmax(a, 5, lo, hi);
    twice(hi);
    twice(a[1]);
    printf("%d %d %d\n", lo, hi, a[1]);
    return 0;
}
