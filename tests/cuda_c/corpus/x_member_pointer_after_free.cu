// expect: E0906
// A host struct's buffer is freed through its member and then read through a copy of the
// struct: the copy's member points at the freed buffer.
#include <stdio.h>
#include <stdlib.h>

typedef struct {
    float *data;
    int len;
} Buf;

float total(Buf b) {
    float s = 0.0f;
    for (int i = 0; i < b.len; i++) s += b.data[i];
    return s;
}

int main(void) {
    Buf a;
    a.len = 8;
    a.data = (float *)malloc(a.len * sizeof(float));
    for (int i = 0; i < a.len; i++) a.data[i] = 1.0f;
    Buf b = a;
    printf("%.1f\n", total(b));
    free(a.data);
    printf("%.1f\n", total(b));
    return 0;
}
