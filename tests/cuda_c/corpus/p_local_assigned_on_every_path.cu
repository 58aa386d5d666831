// expect: clean
#include <stdio.h>
// The twin of x_uninit_local.cu: `best` starts at -1, and `sign` is declared without a value
// but assigned on every path before it is read.
__global__ void pick(const int *a, int *out, int limit) {
    int best = -1;
    int sign;
    for (int k = 0; k < 4; k++) {
        if (a[threadIdx.x * 4 + k] > limit) {
            best = k;
        }
    }
    if (best >= 0) {
        sign = 1;
    } else {
        sign = -1;
    }
    out[threadIdx.x] = (best + 1) * sign;
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
    printf("%d %d %d\n", r[0], r[1], r[31]);
    cudaFree(a);
    cudaFree(o);
    return 0;
}
