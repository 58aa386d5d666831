// expect: clean
// `<string.h>` on the host: `memset`, `memcpy`, `strlen`, `strcmp`, with option parsing.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__global__ void add(int *a, const int *b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] += b[i];
}

int main(int argc, char **argv) {
    int n = 8;
    bool verbose = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-v") == 0) verbose = true;
        else if (strcmp(argv[i], "-n") == 0 && i + 1 < argc) n = atoi(argv[++i]);
        else printf("unknown option %s (%zu characters)\n", argv[i], strlen(argv[i]));
    }
    int *a = (int *)malloc(n * sizeof(int));
    int *b = (int *)malloc(n * sizeof(int));
    memset(a, 0, n * sizeof(int));
    for (int i = 0; i < n; i++) b[i] = i * i;
    int *c = (int *)malloc(n * sizeof(int));
    memcpy(c, b, n * sizeof(int));
    int *da, *db;
    cudaMalloc(&da, n * sizeof(int));
    cudaMalloc(&db, n * sizeof(int));
    cudaMemcpy(da, a, n * sizeof(int), cudaMemcpyHostToDevice);
    cudaMemcpy(db, c, n * sizeof(int), cudaMemcpyHostToDevice);
    add<<<(n + 31) / 32, 32>>>(da, db, n);
    cudaMemcpy(a, da, n * sizeof(int), cudaMemcpyDeviceToHost);
    int sum = 0;
    for (int i = 0; i < n; i++) sum += a[i];
    if (verbose)
        for (int i = 0; i < n; i++) printf("%d%s", a[i], i + 1 < n ? " " : "\n");
    printf("n %d sum %d, strcmp %d %d %d\n", n, sum, strcmp("abc", "abd") < 0, strcmp("b", "a") > 0, strcmp("same", "same"));
    char name[16];
    memset(name, 'x', 3);
    name[3] = 0;
    printf("%s %zu\n", name, strlen(name));
    cudaFree(da);
    cudaFree(db);
    free(a);
    free(b);
    free(c);
    return 0;
}
