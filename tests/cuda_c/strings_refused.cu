// expect: E0801
// `%s` of a number is refused at the argument (and a padded non-literal string at the format).
#include <stdio.h>

int main(int argc, char **argv) {
    int n = argc;
    printf("%d %s\n", n, n);
    return 0;
}
