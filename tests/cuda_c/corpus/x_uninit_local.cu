// expect: E0904
#include <stdio.h>
// `best` is assigned only when some element passes the test; for a thread whose four elements
// all fail it (thread 0: 0, 1, 2, 3), the kernel computes with an indeterminate value.
__global__ void pick(const int *a, int *out, int limit) {
    int best;
    for (int k = 0; k < 4; k++) {
        if (a[threadIdx.x * 4 + k] > limit) {
            best = k;
        }
    }
    out[threadIdx.x] = best + 1;
}
int main(void) {
    int h[128], r[32];
    for (int i = 0; i < 128; i++) h[i] = i % 7;
    int *a, *o;
    cudaMalloc(&a, sizeof h);
    cudaMalloc(&o, sizeof r);
    cudaMemcpy(a, h, sizeof h, cudaMemcpyHostToDevice);
    pick<<<1, 32>>>(a, o, 5);
    cudaMemcpy(r, o, sizeof r, cudaMemcpyDeviceToHost);
    printf("%d %d\n", r[0], r[31]);
    cudaFree(a);
    cudaFree(o);
    return 0;
}
