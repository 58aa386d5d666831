// expect: clean
// Functions that return pointers (inlined at each call): a `void *` block cast back to its own
// type, a typed `int *` allocator, a pointer into the middle of a buffer, and a `__device__`
// function returning a row of a matrix. The program checks its own results.
#include <stdio.h>
#include <stdlib.h>

#define N 64
#define W 8

void *random_block(int size) {
    unsigned char *data = (unsigned char *)malloc(size);
    for (int i = 0; i < size; i++)
        data[i] = rand();
    return data;
}

int *counting_ints(int n, int start) {
    int *p = (int *)malloc(n * sizeof(int));
    for (int i = 0; i < n; i++) p[i] = start + i;
    return p;
}

static int *middle(int *p, int n) { return p + n / 2; }

__device__ float *row(float *m, int i) { return m + i * W; }

__global__ void row_sums(float *m, float *sums) {
    float *r = row(m, threadIdx.x);
    float s = 0.0f;
    for (int j = 0; j < W; j++) s += r[j];
    sums[threadIdx.x] = s;
}

int main(void) {
    unsigned char *buffer = (unsigned char *)random_block(N);
    unsigned int histo[256];
    for (int i = 0; i < 256; i++) histo[i] = 0;
    for (int i = 0; i < N; i++) histo[buffer[i]]++;
    long total = 0;
    for (int i = 0; i < 256; i++) total += histo[i];

    int *ints = counting_ints(N, 10);
    int *mid = middle(ints, N);
    int ok = total == N && mid[0] == 10 + N / 2 && mid[-1] == 9 + N / 2 && ints[N - 1] == 9 + N;

    float h[W * W];
    for (int i = 0; i < W * W; i++) h[i] = (float)(i % W);
    float *dm, *ds;
    cudaMalloc((void **)&dm, W * W * sizeof(float));
    cudaMalloc((void **)&ds, W * sizeof(float));
    cudaMemcpy(dm, h, W * W * sizeof(float), cudaMemcpyHostToDevice);
    row_sums<<<1, W>>>(dm, ds);
    float sums[W];
    cudaMemcpy(sums, ds, W * sizeof(float), cudaMemcpyDeviceToHost);
    for (int i = 0; i < W; i++) ok = ok && sums[i] == 28.0f;

    printf("histogram sum %ld, middle %d, row sum %.1f\n", total, mid[0], sums[0]);
    cudaFree(dm);
    cudaFree(ds);
    free(ints);
    free(buffer);
    if (!ok) {
        printf("FAILED\n");
        return 1;
    }
    printf("pointer functions: all correct\n");
    return 0;
}
