// expect: E0801
// `memset` of a struct variable is supported to 0 and over its whole size only: a byte pattern
// other than 0 and a part of the struct are refused (E0801).
#include <stdio.h>
#include <string.h>

struct P {
    int a;
    float b;
};

int main(void) {
    P p, q;
    memset(&p, 1, sizeof(P));
    memset(&q, 0, sizeof(int));
    printf("%d %d\n", p.a, q.a);
    return 0;
}
