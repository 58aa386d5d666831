// expect: E0906
// A pointer returned from a function is the buffer it points into: freed through it, the buffer
// is gone for the caller's own pointer too (use after free, E0906).
#include <stdio.h>
#include <stdlib.h>

float *first(float *p) { return p; }

int main(void) {
    float *a = (float *)malloc(8 * sizeof(float));
    a[0] = 1.0f;
    float *f = first(a);
    free(f);
    printf("%f\n", a[0]);
    return 0;
}
