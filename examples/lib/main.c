/* A C program using the Strata kernel library saxpy.strata on the cpu device (docs/libraries.md):

       strata emit --target c --header saxpy.h -o saxpy.c saxpy.strata
       cc -O2 -fwrapv -ffp-contract=off -fopenmp main.c saxpy.c -lm -o main
       ./main

   It calls each launch function on its own arrays and compares every result with a plain C
   loop; the exit status is 0 when all agree. */
#include "saxpy.h"

#include <stdio.h>
#include <stdlib.h>

static int failures = 0;

static void expect(int ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "FAILED: %s\n", what);
        failures++;
    }
}

static void test_saxpy(uint64_t n) {
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *want = malloc(n * sizeof *want);
    for (uint64_t i = 0; i < n; i++) {
        x[i] = (float)i * 0.5f;
        y[i] = (float)(i % 7) - 3.0f;
        want[i] = 2.5f * x[i] + y[i];
    }
    expect(saxpy_launch(n, 2.5f, x, y) == 0, "saxpy_launch returns 0");
    int same = 1;
    for (uint64_t i = 0; i < n; i++) same &= y[i] == want[i];
    expect(same, "saxpy computes a * x + y");
    printf("saxpy n=%llu: y[1]=%g y[n-1]=%g\n", (unsigned long long)n, (double)y[1], (double)y[n - 1]);
    free(x);
    free(y);
    free(want);
}

static void test_block_sums(uint64_t nb) {
    int32_t *in = malloc(nb * 256 * sizeof *in), *sums = calloc(nb, sizeof *sums);
    for (uint64_t i = 0; i < nb * 256; i++) in[i] = (int32_t)(i % 1000) - 500;
    expect(block_sums_launch(nb, in, sums) == 0, "block_sums_launch returns 0");
    int64_t total = 0;
    int same = 1;
    for (uint64_t b = 0; b < nb; b++) {
        int32_t want = 0;
        for (uint64_t i = 0; i < 256; i++) want += in[b * 256 + i];
        same &= sums[b] == want;
        total += sums[b];
    }
    expect(same, "block_sums sums each block");
    printf("block_sums nb=%llu: total=%lld\n", (unsigned long long)nb, (long long)total);
    free(in);
    free(sums);
}

static void test_transpose(uint64_t n) {
    double *in = malloc(n * n * sizeof *in), *out = malloc(n * n * sizeof *out);
    for (uint64_t i = 0; i < n * n; i++) in[i] = (double)i;
    expect(transpose_launch(n, in, out) == 0, "transpose_launch returns 0");
    int same = 1;
    for (uint64_t r = 0; r < n; r++)
        for (uint64_t c = 0; c < n; c++) same &= out[r * n + c] == in[c * n + r];
    expect(same, "transpose transposes");
    printf("transpose n=%llu: out[1]=%g\n", (unsigned long long)n, out[1]);
    free(in);
    free(out);
}

int main(void) {
    test_saxpy(1024);
    test_saxpy(256 * 37);
    test_block_sums(1);
    test_block_sums(100);
    test_transpose(64);
    test_transpose(96);
    /* The kernels' `where` clauses are checked: 1000 is not a multiple of 256 and nothing runs. */
    float x[1000] = {0}, y[1000] = {0};
    expect(saxpy_launch(1000, 1.0f, x, y) == EINVAL, "saxpy_launch refuses n = 1000 with EINVAL");
    expect(transpose_launch(40, NULL, NULL) == EINVAL, "transpose_launch refuses n = 40 with EINVAL");
    /* So is every size the kernel computes: n * 4 bytes does not fit 64 bits. */
    expect(saxpy_launch(UINT64_MAX - 255, 1.0f, x, y) == EINVAL, "saxpy_launch refuses a size that overflows");
    /* An empty grid runs nothing and succeeds. */
    expect(saxpy_launch(0, 1.0f, NULL, NULL) == 0, "saxpy_launch of 0 elements does nothing");
    expect(block_sums_launch(0, NULL, NULL) == 0, "block_sums_launch of 0 blocks does nothing");
    printf("where clauses: checked\n");
    if (failures) {
        fprintf(stderr, "%d checks failed\n", failures);
        return 1;
    }
    printf("all results agree with plain C\n");
    return 0;
}
