// Templates outside the supported forms are refused, each where it is written: a class
// template, a default template argument, and a call whose type parameter has no argument to be
// deduced from.
#include <stdio.h>

template <typename T>
struct Box {
    T v;
};

template <typename T = float>
__global__ void fill(T *a) { a[threadIdx.x] = 1; }

template <typename T>
__device__ T zero() { return 0; }

__global__ void k(int *a) { a[threadIdx.x] = zero(); }

int main(void) {
    int *d;
    cudaMalloc(&d, 32 * sizeof(int));
    k<<<1, 32>>>(d);
    cudaFree(d);
    return 0;
}
