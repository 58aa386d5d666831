/* Baseline of bench/matmul_element.strata: the cache-aware C matmul (i-k-j), the same program
   as the baseline of bench/matmul_ikj.strata. */
#include "matmul_ikj.c"
