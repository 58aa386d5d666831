// expect: clean
// Local `const` integers initialised by constants are constants, as C++ makes them: lengths of
// local arrays on the host and in a kernel and of `__shared__` arrays (also computed from one
// another, `constexpr` and `static const` among them), a launch's block size and `sizeof`.
#include <stdio.h>

__global__ void window_sums(const int *in, int *out) {
    const int width = 3;
    constexpr int tile = 32;
    __shared__ int s[tile + width - 1];
    int t = threadIdx.x;
    int base = blockIdx.x * tile;
    s[t] = in[base + t];
    if (t < width - 1) {
        s[tile + t] = in[base + tile + t];
    }
    __syncthreads();
    int w[width];
    for (int k = 0; k < width; k++) w[k] = s[t + k];
    int sum = 0;
    for (int k = 0; k < width; k++) sum += w[k];
    out[base + t] = sum;
}

int main(void) {
    const int blocks = 2;
    static const int threads = 32;
    const int n = blocks * threads;
    const int padded = n + 2;
    int h[padded];
    int r[n];
    for (int i = 0; i < padded; i++) h[i] = i * i % 7;
    int *din, *dout;
    cudaMalloc(&din, sizeof(h));
    cudaMalloc(&dout, sizeof(r));
    cudaMemcpy(din, h, sizeof(h), cudaMemcpyHostToDevice);
    window_sums<<<blocks, threads>>>(din, dout);
    cudaMemcpy(r, dout, sizeof(r), cudaMemcpyDeviceToHost);
    for (int i = 0; i < n; i++) printf("%d ", r[i]);
    printf("\n");
    printf("%zu %zu\n", sizeof(h) / sizeof(h[0]), sizeof r);
    cudaFree(din);
    cudaFree(dout);
    return 0;
}
