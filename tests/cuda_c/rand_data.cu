// expect: clean
// `rand()`/`srand()` give glibc's sequence on both devices, so host data is what a real run on Linux
// gets; `RAND_MAX`.
#include <stdio.h>
#include <stdlib.h>
__global__ void scale(float *a, int n) { int i = threadIdx.x; if (i < n) a[i] *= 2.0f; }
int main() {
    int a = rand();
    int b = rand();
    printf("%d %d\n", a, b);
    srand(42);
    const int n = 6;
    float h[n];
    for (int i = 0; i < n; i++) h[i] = rand() / (float)RAND_MAX;
    float *d;
    cudaMalloc(&d, sizeof(h));
    cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice);
    scale<<<1, 8>>>(d, n);
    cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
    for (int i = 0; i < n; i++) printf("%.6f ", h[i]);
    printf("\n%d\n", rand() % 100);
    return 0;
}
