// `exit(n)` anywhere in host code ends the program with status n, as C's does: from a helper
// two calls deep, `exit(EXIT_SUCCESS)` (0) after the usage text, `exit(EXIT_FAILURE)` (1) on a
// bad argument; `strata run exit_outside_main.cu -- 3 bad` exits with 1 after its message.
#include <stdio.h>
#include <stdlib.h>

__global__ void scale(int *a, int k) { a[threadIdx.x] *= k; }

void check_arg(const char *s) {
    int v = atoi(s);
    if (v <= 0) {
        fprintf(stderr, "not a positive number: %s\n", s);
        exit(EXIT_FAILURE);
    }
}

void usage(void) {
    printf("usage: prog K [K...]\n");
    exit(EXIT_SUCCESS);
}

void parse(int argc, const char *last) {
    if (argc < 2) usage();
    check_arg(last);
}

int main(int argc, char **argv) {
    parse(argc, argc > 1 ? argv[argc - 1] : "");
    int h[4] = {1, 2, 3, 4};
    int *d;
    cudaMalloc(&d, sizeof h);
    cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
    scale<<<1, 4>>>(d, atoi(argv[1]));
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    cudaFree(d);
    printf("%d %d %d %d\n", h[0], h[1], h[2], h[3]);
    return 0;
}
