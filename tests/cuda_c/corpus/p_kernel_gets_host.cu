// expect: E0905
#include <stdio.h>
#include <stdlib.h>

// The kernel is given host memory instead of a cudaMalloc buffer.
__global__ void set(int *a) {
    a[threadIdx.x] = 7;
}

int main(void) {
    int *h = (int *) malloc(32 * sizeof(int));
    set<<<1, 32>>>(h);
    free(h);
    return 0;
}
