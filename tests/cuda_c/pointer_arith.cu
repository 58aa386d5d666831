#include <stdio.h>

// Pointer arithmetic into allocations: offsets given by the caller, `&p[i]`, `*(p + i)`,
// `p++`, `p += k`, and kernel arguments offset by the host.
__device__ int sum3(const int *p) {
    return p[0] + *(p + 1) + (p + 1)[1];
}

__device__ void put(int *p, int v) { *p = v; }

__global__ void window(const int *in, int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        put(&out[i], sum3(in + i));
    }
}

__global__ void tail(int *p) {
    int *q = p;
    q += 2;
    q++;
    q[threadIdx.x] = -1;
}

int main(void) {
    int n = 8;
    int *h = (int *)malloc((n + 2) * sizeof(int));
    int *w = h;
    for (int i = 0; i < n + 2; i++) {
        *w = i * i;
        w++;
    }
    int *din;
    int *dout;
    cudaMalloc(&din, (n + 2) * sizeof(int));
    cudaMalloc(&dout, n * sizeof(int));
    cudaMemcpy(din, h, (n + 2) * sizeof(int), cudaMemcpyHostToDevice);
    window<<<2, 4>>>(din, dout, n);
    tail<<<1, 2>>>(dout + 1);
    int *r = (int *)malloc(n * sizeof(int));
    cudaMemcpy(r, dout, n * sizeof(int), cudaMemcpyDeviceToHost);
    for (int i = 0; i < n; i++) {
        printf("%d ", r[i]);
    }
    printf("\n");
    return 0;
}
