// expect: clean
// Structs through streams: an array of structs in pinned memory copied to the GPU, updated and
// copied back with cudaMemcpyAsync on one stream (n elements are n structs, every field).
#include <stdio.h>
#include <stdlib.h>
typedef struct { float x; int k; } P;
__global__ void inc(P *p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { p[i].x += 1.0f; p[i].k += 2; }
}
int main(void) {
    const int n = 64;
    P *h;
    cudaMallocHost((void **)&h, n * sizeof(P));
    for (int i = 0; i < n; i++) { h[i].x = (float)i; h[i].k = i; }
    P *d;
    cudaMalloc((void **)&d, n * sizeof(P));
    cudaStream_t s;
    cudaStreamCreate(&s);
    cudaMemcpyAsync(d, h, n * sizeof(P), cudaMemcpyHostToDevice, s);
    inc<<<2, 32, 0, s>>>(d, n);
    cudaMemcpyAsync(h, d, n * sizeof(P), cudaMemcpyDeviceToHost, s);
    cudaStreamSynchronize(s);
    float sx = 0; int sk = 0;
    for (int i = 0; i < n; i++) { sx += h[i].x; sk += h[i].k; }
    printf("%.1f %d\n", sx, sk);
    cudaStreamDestroy(s);
    cudaFree(d);
    cudaFreeHost(h);
    return 0;
}
