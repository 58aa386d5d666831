// expect: E0908
// The self-check idiom with a launch one block short: the check fails and `exit(EXIT_FAILURE)`
// makes the status 1, which `strata check` reports (E0908) at the `exit`.
#include <stdio.h>
#include <stdlib.h>

__global__ void saxpy(int n, float a, const float *x, float *y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

void verify(const float *got, const float *x, int n) {
    for (int i = 0; i < n; i++) {
        float want = 2.0f * x[i] + 1.0f;
        if (got[i] != want) {
            fprintf(stderr, "mismatch at %d: %f != %f\n", i, got[i], want);
            exit(EXIT_FAILURE);
        }
    }
}

int main(void) {
    const int n = 300;
    float *x = new float[n];
    float *y = new float[n];
    for (int i = 0; i < n; i++) {
        x[i] = (float)i;
        y[i] = 1.0f;
    }
    float *dx, *dy;
    cudaMalloc(&dx, n * sizeof(float));
    cudaMalloc(&dy, n * sizeof(float));
    cudaMemcpy(dx, x, n * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(dy, y, n * sizeof(float), cudaMemcpyHostToDevice);
    saxpy<<<n / 128, 128>>>(n, 2.0f, dx, dy);
    cudaMemcpy(y, dy, n * sizeof(float), cudaMemcpyDeviceToHost);
    verify(y, x, n);
    printf("Test PASSED\n");
    cudaFree(dx);
    cudaFree(dy);
    delete[] x;
    delete[] y;
    return EXIT_SUCCESS;
}
