// expect: clean
// `NULL` and pointer comparisons: an optional output (`if (out != NULL)`), a walk `p < end`,
// distances `end - p`, and `if (p)` / `!p`.
#include <stdio.h>
#include <stdlib.h>
#define N 64

__global__ void square(const float *in, float *out, float *maybe_copy, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = in[i] * in[i];
        if (maybe_copy != NULL) maybe_copy[i] = in[i];
    }
}

int count_above(const float *begin, const float *end, float limit) {
    int c = 0;
    for (const float *p = begin; p < end; p++) {
        if (*p > limit) c++;
    }
    return c;
}

int main(void) {
    float *h = (float *)malloc(N * sizeof(float));
    for (int i = 0; i < N; i++) h[i] = (float)i / 8.0f;
    float *d_in, *d_out;
    float *d_copy = NULL;
    cudaMalloc(&d_in, N * sizeof(float));
    cudaMalloc(&d_out, N * sizeof(float));
    cudaMemcpy(d_in, h, N * sizeof(float), cudaMemcpyHostToDevice);
    square<<<2, 32>>>(d_in, d_out, d_copy, N);
    if (!d_copy) cudaMalloc(&d_copy, N * sizeof(float));
    square<<<2, 32>>>(d_in, d_out, d_copy, N);
    cudaMemcpy(h, d_out, N * sizeof(float), cudaMemcpyDeviceToHost);
    float *end = h + N;
    float *mid = &h[N / 2];
    printf("%d %d %d\n", count_above(h, end, 10.0f), (int)(end - mid), mid > h && d_copy != NULL);
    cudaFree(d_in);
    cudaFree(d_out);
    cudaFree(d_copy);
    free(h);
    return 0;
}
