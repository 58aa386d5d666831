// expect: clean
// `#include "cuda.h"` (a standard header written with quotes), the one-device API, and calls as
// statements in parentheses or cast to `void` (`#define CHECK(e) (check(e, __LINE__))`).
#include "cuda.h"
#include <stdio.h>

static void check(cudaError_t err, int line) {
    if (err != cudaSuccess) {
        printf("%s at line %d\n", cudaGetErrorString(err), line);
        exit(EXIT_FAILURE);
    }
}
#define CHECK(e) (check(e, __LINE__))

__global__ void fill(int *a) { a[threadIdx.x] = threadIdx.x * 2; }

int main(void) {
    int count = -1, dev = -1;
    CHECK(cudaGetDeviceCount(&count));
    CHECK(cudaSetDevice(0));
    CHECK(cudaGetDevice(&dev));
    printf("%d device(s), using %d\n", count, dev);
    int *d, h[4];
    CHECK(cudaMalloc((void **)&d, sizeof(h)));
    int *pinned;
    CHECK(cudaHostAlloc((void **)&pinned, sizeof(h), cudaHostAllocDefault | cudaHostAllocPortable));
    fill<<<1, 4>>>(d);
    (void)cudaGetLastError();
    CHECK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(pinned, d, sizeof(h), cudaMemcpyDeviceToHost));
    printf("%d %d %d %d %d\n", h[0], h[1], h[2], h[3], pinned[3]);
    CHECK(cudaFreeHost(pinned));
    (void)cudaFree(d);
    return 0;
}
