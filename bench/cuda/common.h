// Shared helpers for the hand-written reference kernels (bench/cuda/*.cu). Only the kernels are
// compared by scripts/cuda-quality.sh; the mains exist so each file is a complete program.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                                   \
    do {                                                                              \
        cudaError_t e_ = (call);                                                      \
        if (e_ != cudaSuccess) {                                                      \
            std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
            std::exit(1);                                                             \
        }                                                                             \
    } while (0)

static inline void fail(const char *what) {
    std::fprintf(stderr, "check failed: %s\n", what);
    std::exit(1);
}
