// The program's own header (tests/cuda_c/local_header.cu): prototypes, macros, a device helper
// and a header it includes in turn (found next to this one).
#ifndef VEC_UTIL_H
#define VEC_UTIL_H

#include "limits_util.h"

#define CHECK_CUDA(call)                                                           \
    do {                                                                           \
        cudaError_t e_ = (call);                                                   \
        if (e_ != cudaSuccess) {                                                   \
            printf("%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));     \
            exit(EXIT_FAILURE);                                                    \
        }                                                                          \
    } while (0)

typedef struct {
    int n;
    float scale;
} Params;

__device__ inline float saturate(float x) { return fminf(fmaxf(x, 0.0f), LIMIT); }

__global__ void scale_kernel(const float *in, float *out, Params p);
void print_vec(const char *label, const float *v, int n);

#endif
