// The program's own check decides its exit status: `return errors ? 1 : 0;` from `main` is the
// process status on sim and on the cpu device, as it is for nvcc's build. `strata run
// exit_status.cu -- N` checks a sum over N elements against N * (N - 1) / 2 computed wrongly
// for N > 64 (the kernel's grid covers 64 threads only): status 1 there, 0 up to 64.
#include <stdio.h>
#include <stdlib.h>

__global__ void iota(int *a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = i;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 16;
    int *h = (int *)malloc(n * sizeof(int));
    int *d;
    cudaMalloc(&d, n * sizeof(int));
    cudaMemset(d, 0, n * sizeof(int));
    iota<<<2, 32>>>(d, n);
    cudaMemcpy(h, d, n * sizeof(int), cudaMemcpyDeviceToHost);
    long sum = 0;
    for (int i = 0; i < n; i++) sum += h[i];
    int errors = sum != (long)n * (n - 1) / 2;
    printf("%s: sum %ld\n", errors ? "FAILED" : "PASSED", sum);
    cudaFree(d);
    free(h);
    if (argc > 2) return -1;
    return errors ? 1 : 0;
}
