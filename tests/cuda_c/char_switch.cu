// expect: clean
// `switch` on a `char` of a string (`argv[1]` or a literal); a `const unsigned char` constant wraps.
#include <stdio.h>
int kind(char c) {
    switch (c) {
    case 'a': case 'e': case 'i': case 'o': case 'u': return 1;
    case ' ': return 2;
    }
    return 0;
}
int main(int argc, char **argv) {
    const char *s = argc > 1 ? argv[1] : "hello world";
    int v = 0, sp = 0;
    for (int i = 0; s[i]; i++) { int k = kind(s[i]); if (k == 1) v++; if (k == 2) sp++; }
    const unsigned char big = 300;
    printf("%d vowels, %d spaces, %d\n", v, sp, big);
    return 0;
}
