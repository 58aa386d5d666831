// Host code dereferences a device pointer (a classic CUDA mistake).
#include <stdio.h>
int main(void) {
    int *d;
    cudaMalloc(&d, 4 * sizeof(int));
    printf("%d\n", d[0]);
    return 0;
}
