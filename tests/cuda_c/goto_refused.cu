// expect: E0801
// Neighbours of the supported forward `goto` to a label of the function's outermost block, each
// refused (E0801): a `goto` backwards, and a label inside a loop.
#include <stdio.h>

int main(void) {
    int n = 0;
again:
    n++;
    if (n < 3) goto again;
    for (int i = 0; i < 2; i++) {
    inner:
        n++;
    }
    printf("%d\n", n);
    return 0;
}
