// expect: clean
// `clock()` timing: `sim` has no clock, so `clock()` is 0 on both devices (as `cudaEventElapsedTime`).
#include <stdio.h>
#include <time.h>
int main() {
    clock_t start = clock();
    long s = 0;
    for (int i = 0; i < 1000; i++) s += i;
    clock_t end = clock();
    double ms = 1000.0 * (double)(end - start) / CLOCKS_PER_SEC;
    printf("sum %ld in %.3f ms\n", s, ms);
    return 0;
}
