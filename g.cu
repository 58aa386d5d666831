#include <stdio.h>
struct P { float a; float b; };
__device__ void set(float *x) { *x = 1; x[0] += 1; if (x != NULL) atomicAdd(x, 2.0f); }
__device__ void walk(float *x) { set(x); set(x + 1); }
__global__ void k(struct P *p) {
    float *q = &p->a; q++;
}
int main(void) { return 0; }
