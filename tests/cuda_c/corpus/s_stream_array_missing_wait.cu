// expect: E0901
#include <stdio.h>
#define NSTREAMS 4
#define N 512
#define CHUNK (N / NSTREAMS)

// s_stream_array.cu with the wait for the last stream's event left out: the sum races with its kernel.
__global__ void scale(int *a, int k) {
    a[threadIdx.x] *= k;
}

__global__ void total(int *a, int *out) {
    int s = 0;
    for (int i = 0; i < N; i++) s += a[i];
    *out = s;
}

int main(void) {
    int *h, *d, *dsum;
    int sum = 0;
    cudaMallocHost(&h, N * sizeof(int));
    cudaMalloc(&d, N * sizeof(int));
    cudaMalloc(&dsum, sizeof(int));
    for (int i = 0; i < N; i++) h[i] = 1;
    cudaStream_t st[NSTREAMS];
    cudaEvent_t done[NSTREAMS];
    for (int k = 0; k < NSTREAMS; k++) {
        cudaStreamCreate(&st[k]);
        cudaEventCreate(&done[k]);
    }
    for (int k = 0; k < NSTREAMS; k++) {
        cudaMemcpyAsync(d + k * CHUNK, h + k * CHUNK, CHUNK * sizeof(int), cudaMemcpyHostToDevice, st[k]);
        scale<<<1, CHUNK, 0, st[k]>>>(d + k * CHUNK, k + 1);
        cudaEventRecord(done[k], st[k]);
    }
    for (int k = 1; k < NSTREAMS - 1; k++) cudaStreamWaitEvent(st[0], done[k], 0);
    total<<<1, 1, 0, st[0]>>>(d, dsum);
    cudaMemcpyAsync(&h[0], dsum, sizeof(int), cudaMemcpyDeviceToHost, st[0]);
    cudaStreamSynchronize(st[0]);
    sum = h[0];
    printf("%d\n", sum);
    for (int k = 0; k < NSTREAMS; k++) {
        cudaStreamDestroy(st[k]);
        cudaEventDestroy(done[k]);
    }
    return 0;
}
