// expect: E0801
// Neighbours of the supported functions returning pointers, each refused (E0801): a `void *`
// result cast to another type than the pointer it holds, and a `return` before the end.
#include <stdio.h>
#include <stdlib.h>

void *block(int n) {
    unsigned char *d = (unsigned char *)malloc(n);
    return d;
}

int *pick(int *a, int *b, int first) {
    if (first) return a;
    return b;
}

int main(void) {
    int *p = (int *)block(16);
    int x[4], y[4];
    int *q = pick(x, y, 1);
    printf("%d %d\n", p[0], q[0]);
    return 0;
}
