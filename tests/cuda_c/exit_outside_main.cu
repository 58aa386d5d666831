// expect: E0801
// `exit(EXIT_FAILURE)` in a helper stops the program (E0908 where it runs); `exit(0)` there is
// refused: the IR cannot end the program successfully from a nested call.
#include <stdio.h>
#include <stdlib.h>

void fail_if(int bad) {
    if (bad) exit(EXIT_FAILURE);
}

void usage(void) {
    printf("usage: prog N\n");
    exit(EXIT_SUCCESS);
}

int main(int argc, char **argv) {
    fail_if(argc > 5);
    if (argc < 2) usage();
    return 0;
}
