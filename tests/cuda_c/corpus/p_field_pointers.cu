// expect: clean
// Pointers to struct fields: `&p->f`, `&a[i].f`, `&(*p).f` and `&s[i].f` of a `__shared__` array
// given to functions that use them at offset 0 (`*x`, `x[0]`, atomics, passed on), a pointer
// variable initialised by `&a[i].f`, `&v.f` of a struct variable (any use) and a
// `__host__ __device__` swap of two fields on both sides.
#include <stdio.h>

struct Acc {
    float sum;
    int n;
    float lo;
    unsigned hits;
};

__device__ void add(float *x, float v) { *x += v; }
__device__ void bump(int *c) { c[0]++; }
__device__ void lower(float *x, float v) {
    if (v < *x) *x = v;
}
__device__ void both(float *x, int *c, float v) {
    add(x, v);
    bump(c);
}
__host__ __device__ void swap(float *a, float *b) {
    float t = *a;
    *a = *b;
    *b = t;
}

__global__ void gather(struct Acc *acc, const float *in, int n) {
    __shared__ struct Acc sh[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    sh[threadIdx.x].n = 0;
    if (i < n) {
        struct Acc *mine = &acc[i];
        both(&mine->sum, &acc[i].n, in[i]);
        lower(&(*mine).lo, in[i]);
        float *lo = &acc[i].lo;
        *lo = *lo - 1.0f;
        struct Acc local = {1.0f, 2, 3.0f};
        float *p = &local.sum;
        swap(p, &local.lo);
        acc[i].sum += local.sum + local.lo;
        bump(&sh[threadIdx.x].n);
        atomicAdd(&acc[0].hits, (unsigned) sh[threadIdx.x].n);
    }
}

int main(void) {
    const int n = 8;
    struct Acc h[n];
    float x[n];
    for (int i = 0; i < n; i++) {
        h[i].sum = 0;
        h[i].n = 0;
        h[i].lo = 100;
        h[i].hits = 0;
        x[i] = i * 1.5f;
    }
    swap(&h[0].lo, &h[1].sum);
    struct Acc *d;
    float *dx;
    cudaMalloc(&d, sizeof h);
    cudaMalloc(&dx, sizeof x);
    cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
    cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice);
    gather<<<1, 32>>>(d, dx, n);
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    for (int i = 0; i < n; i++) printf("%g %d %g\n", h[i].sum, h[i].n, h[i].lo);
    printf("hits %u\n", h[0].hits);
    cudaFree(d);
    cudaFree(dx);
    return 0;
}
