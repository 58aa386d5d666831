// expect: E0801
// Every construct outside the subset is listed, each once, not only the first; uses of a
// variable whose declaration was refused are not reported again.
#include <stdio.h>

struct Bins {
    int **counts;
};

__device__ int sum_block(int x) {
    return atomicAdd_block(&x, 1);
}

int main(void) {
    int **rows = 0;
    rows[0] = 0;
    printf("%d\n", rows == 0);
    int m = 3;
    goto done;
    float vla[m];
    { done: ; }
    printf("%p\n", &m);
    return 0;
}
