// expect: clean
#include <stdio.h>
#define N 64

__global__ void rotate(unsigned *a) {
    extern __shared__ unsigned s[];
    unsigned t = threadIdx.x;
    s[t] = a[t];
    __syncthreads();
    a[t] = s[(t + 1) % blockDim.x];
}

int main(void) {
    unsigned *h = (unsigned *) malloc(N * sizeof(unsigned));
    for (int i = 0; i < N; i++) {
        h[i] = 100 + i;
    }
    unsigned *d;
    cudaMalloc(&d, N * sizeof(unsigned));
    cudaMemcpy(d, h, N * sizeof(unsigned), cudaMemcpyHostToDevice);
    rotate<<<1, N, N * sizeof(unsigned)>>>(d);
    cudaMemcpy(h, d, N * sizeof(unsigned), cudaMemcpyDeviceToHost);
    printf("%u %u\n", h[0], h[N - 1]);
    free(h);
    cudaFree(d);
    return 0;
}
