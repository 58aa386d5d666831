// expect: clean
// `main(argc, argv)` with `strata run prog.cu -- ARGS`, `atoi`/`strtol`, `printf("%s")` of any
// string, a conditional format string, `cudaGetErrorString`, `exit(EXIT_SUCCESS)`.
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                              \
    do {                                                                         \
        cudaError_t err = (call);                                                \
        if (err != cudaSuccess) {                                                \
            printf("CUDA error at line %d: %s\n", __LINE__, cudaGetErrorString(err)); \
            exit(EXIT_FAILURE);                                                  \
        }                                                                        \
    } while (0)

__global__ void scale(int *a, int k, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = a[i] * k;
}

int count_char(const char *s, char c) {
    int n = 0;
    for (int i = 0; s[i] != 0; i++)
        if (s[i] == c) n++;
    return n;
}

int main(int argc, char *argv[]) {
    int n = 6, k = 3;
    if (argc > 1) n = atoi(argv[1]);
    if (argc > 2) k = (int)strtol(argv[2], NULL, 10);
    printf("%s: n=%d k=%d (%d arguments)\n", argv[0], n, k, argc);
    for (int i = 1; i < argc; i++)
        printf("argv[%d] = '%s', first %c, %d dashes\n", i, argv[i], argv[i][0], count_char(argv[i], '-'));
    const char *mode = argc > 3 ? argv[3] : "default";
    printf("mode [%s] [%-8s] [%5s]\n", mode, "left", "right");
    int *h = (int *)malloc(n * sizeof(int));
    for (int i = 0; i < n; i++) h[i] = i + 1;
    int *d;
    CHECK(cudaMalloc(&d, n * sizeof(int)));
    CHECK(cudaMemcpy(d, h, n * sizeof(int), cudaMemcpyHostToDevice));
    scale<<<(n + 127) / 128, 128>>>(d, k, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(h, d, n * sizeof(int), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) printf(i ? " %d" : "%d", h[i]);
    printf("\n");
    cudaError_t err = cudaDeviceSynchronize();
    printf("status: %s (%s)\n", cudaGetErrorString(err), cudaGetErrorName(err));
    printf("%s\n", n > 4 ? "large" : "small");
    cudaFree(d);
    free(h);
    exit(EXIT_SUCCESS);
}
