// expect: E0903
#include <stdio.h>

// An off-by-one loop on the host.
int main(void) {
    int a[8];
    for (int i = 0; i <= 8; i++) {
        a[i] = i;
    }
    printf("%d\n", a[0]);
    return 0;
}
