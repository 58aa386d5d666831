// expect: E0801
// `srand(time(NULL))` is refused: the run would not be repeatable (give a constant seed).
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main() {
    srand(time(NULL));
    printf("%d\n", rand() % 6 + 1);
    return 0;
}
