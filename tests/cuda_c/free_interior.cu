#include <stdlib.h>

// `free` of a pointer into the middle of an allocation is undefined in C: reported (E0906).
int main(void) {
    int *a = (int *)malloc(4 * sizeof(int));
    int *b = a;
    b++;
    free(b);
    return 0;
}
