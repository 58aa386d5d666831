// expect: E0912
// Reads `argv[1]` without checking `argc`: run without arguments, the access is past them.
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    int n = atoi(argv[1]);
    printf("n = %d\n", n);
    return 0;
}
