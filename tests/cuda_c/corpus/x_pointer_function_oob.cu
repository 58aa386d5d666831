// expect: E0903
// A pointer returned from a function still carries its buffer: `last_two` points two elements
// before the end of a 16-element buffer, so `t[2]` is one past the end (E0903).
#include <stdio.h>
#include <stdlib.h>

int *last_two(int *p, int n) { return p + n - 2; }

int main(void) {
    int *a = (int *)malloc(16 * sizeof(int));
    for (int i = 0; i < 16; i++) a[i] = i;
    int *t = last_two(a, 16);
    int s = 0;
    for (int i = 0; i <= 2; i++) s += t[i];
    printf("%d\n", s);
    free(a);
    return 0;
}
