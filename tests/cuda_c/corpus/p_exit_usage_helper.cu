// expect: clean
// A program whose argument parsing ends it from a helper: without arguments it prints its usage
// and `exit(0)`s from two calls deep (a success, with nothing launched).
#include <stdio.h>
#include <stdlib.h>

__global__ void work(int *a, int k) { a[threadIdx.x] = k; }

void usage(const char *prog) {
    printf("usage: %s N\n", prog);
    exit(0);
}

int parse(int argc, const char *first) {
    if (argc < 2) usage("work");
    return atoi(first);
}

int main(int argc, char **argv) {
    int k = parse(argc, argc > 1 ? argv[1] : "");
    int *d;
    cudaMalloc(&d, 32 * sizeof(int));
    work<<<1, 32>>>(d, k);
    cudaFree(d);
    return 0;
}
