// expect: clean
// Constructs of ordinary CUDA code: prototypes (with unnamed parameters) before definitions,
// `int p[]` parameters, attributes and `__align__` (ignored), `CUDART_VERSION`, the comma
// operator, `atomicInc`/`atomicDec`, file-level `__shared__` arrays.
#include <stdio.h>
#include <cuda_runtime.h>

#define N 64
#define THREADS 32

__device__ __forceinline__ int twice(int x);
__host__ __device__ int clamp_to(int, int);
__global__ void __launch_bounds__(THREADS) histogram(const unsigned char *, unsigned int *, int);
void check_host(int data[], int n);

struct __align__(8) Pair {
    int a;
    int b;
};

__shared__ unsigned int bins[4];

__device__ __forceinline__ int twice(int x) { return 2 * x; }

__host__ __device__ int clamp_to(int v, int hi) { return v > hi ? hi : v; }

__global__ void __launch_bounds__(THREADS) histogram(const unsigned char *in, unsigned int *out, int n) {
    if (threadIdx.x < 4) bins[threadIdx.x] = 0;
    __syncthreads();
    for (int i = threadIdx.x; i < n; i += blockDim.x) atomicAdd(&bins[in[i] % 4], 1u);
    __syncthreads();
    if (threadIdx.x < 4) out[threadIdx.x] = bins[threadIdx.x];
}

__global__ void wrap_counters(unsigned int *ring, unsigned int *down, int *slots) {
    unsigned int slot = atomicInc(ring, 9);   // 0..9, then back to 0
    unsigned int d = atomicDec(down, 5);      // 5..0, then back to 5
    slots[threadIdx.x] = (int)(slot * 10 + d);
}

__global__ void reverse_pairs(int p[], int n) {
    int i, j;
    if (threadIdx.x == 0)
        for (i = 0, j = n - 1; i < j; i++, j--) {
            int t = p[i];
            p[i] = p[j], p[j] = twice(t) / 2;
        }
}

void check_host(int data[], int n) {
    int sum = 0, k;
    for (k = 0; k < n; ++k) sum += clamp_to(data[k], 40);
    printf("clamped sum %d\n", sum);
}

int main() {
#if CUDART_VERSION >= 11000 && defined(__CUDACC__)
    printf("CUDA %d.%d\n", CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10);
#else
    printf("old CUDA\n");
#endif
    unsigned char h_in[N];
    for (int i = 0; i < N; i++) h_in[i] = (unsigned char)(i * 7);
    unsigned char *d_in;
    unsigned int *d_out, *ring, *down;
    int *slots, *pairs;
    cudaMalloc(&d_in, N);
    cudaMalloc(&d_out, 4 * sizeof(unsigned int));
    cudaMalloc(&ring, sizeof(unsigned int));
    cudaMalloc(&down, sizeof(unsigned int));
    cudaMalloc(&slots, 12 * sizeof(int));
    cudaMalloc(&pairs, 8 * sizeof(int));
    cudaMemcpy(d_in, h_in, N, cudaMemcpyHostToDevice);
    cudaMemset(ring, 0, sizeof(unsigned int));
    cudaMemset(down, 0, sizeof(unsigned int));
    histogram<<<1, THREADS>>>(d_in, d_out, N);
    wrap_counters<<<1, 12>>>(ring, down, slots);
    int h_pairs[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    cudaMemcpy(pairs, h_pairs, sizeof(h_pairs), cudaMemcpyHostToDevice);
    reverse_pairs<<<1, 1>>>(pairs, 8);
    unsigned int h_out[4], h_ring, h_down;
    cudaMemcpy(h_out, d_out, sizeof(h_out), cudaMemcpyDeviceToHost);
    cudaMemcpy(&h_ring, ring, sizeof(unsigned int), cudaMemcpyDeviceToHost);
    cudaMemcpy(&h_down, down, sizeof(unsigned int), cudaMemcpyDeviceToHost);
    cudaMemcpy(h_pairs, pairs, sizeof(h_pairs), cudaMemcpyDeviceToHost);
    printf("bins %u %u %u %u\n", h_out[0], h_out[1], h_out[2], h_out[3]);
    printf("ring %u down %u\n", h_ring, h_down);
    for (int i = 0; i < 8; i++) printf("%d%c", h_pairs[i], i == 7 ? '\n' : ' ');
    struct Pair pr = {3, 4};
    int c = (pr.a++, pr.a + pr.b);
    printf("comma %d, pair %d %d, sizeof %zu\n", c, pr.a, pr.b, sizeof(struct Pair));
    check_host(h_pairs, 8);
    return 0;
}
