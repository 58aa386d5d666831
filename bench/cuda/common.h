// Shared helpers for the hand-written reference kernels (bench/cuda/*.cu). Only the kernels are
// compared statically by scripts/cuda-quality.sh; on a machine with a GPU it also runs the mains.
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

#include <ctime>

// With STRATA_TIME set, a launch reports its duration on stderr exactly as Strata's emitted
// programs do (wall clock from the launch to the end of `cudaDeviceSynchronize`, in seconds), so
// scripts/cuda-quality.sh times both versions with one method.
static inline double now_s() {
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}
#define TIMED(name, ...)                                                                  \
    do {                                                                                  \
        double t0_ = now_s();                                                             \
        __VA_ARGS__;                                                                      \
        CHECK(cudaGetLastError());                                                        \
        CHECK(cudaDeviceSynchronize());                                                   \
        if (std::getenv("STRATA_TIME")) std::fprintf(stderr, "STRATA-TIME %s %.9f\n", name, now_s() - t0_); \
    } while (0)
