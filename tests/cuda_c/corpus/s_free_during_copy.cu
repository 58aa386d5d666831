// expect: E0901
#include <stdio.h>
#include <stdlib.h>
#define N 64

// The host frees the source of an asynchronous copy that may still be reading it.
int main(void) {
    int *h = (int *)malloc(N * sizeof(int));
    int *d;
    cudaMalloc(&d, N * sizeof(int));
    for (int i = 0; i < N; i++) h[i] = i;
    cudaStream_t s;
    cudaStreamCreate(&s);
    cudaMemcpyAsync(d, h, N * sizeof(int), cudaMemcpyHostToDevice, s);
    free(h);
    cudaStreamSynchronize(s);
    cudaFree(d);
    return 0;
}
