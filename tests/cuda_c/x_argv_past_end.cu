// expect: E0903
// Reads past the 0 that ends `argv[1]`: every string is a checked buffer.
#include <stdio.h>

int main(int argc, char **argv) {
    const char *s = argc > 1 ? argv[1] : "ab";
    int n = 0;
    while (n < 4) {
        printf("%c", s[n]);
        n++;
    }
    printf("\n");
    return 0;
}
