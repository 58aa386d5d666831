// A CUDA C++ program using the Strata kernel library saxpy.strata on an NVIDIA GPU
// (docs/libraries.md):
//
//     strata emit --target cuda --header saxpy_cuda.h -o saxpy.cu saxpy.strata
//     nvcc -O2 -o main main.cu saxpy.cu
//     ./main
//
// It copies its arrays to the GPU, calls each launch function on a stream of its own, copies the
// results back and compares them with plain C++ loops; the exit status is 0 when all agree. The
// launch functions only enqueue: the program synchronises the stream before reading results.
#include "saxpy_cuda.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

static int failures = 0;

static void expect(bool ok, const char *what) {
    if (!ok) {
        std::fprintf(stderr, "FAILED: %s\n", what);
        failures++;
    }
}

static void check(cudaError_t e, const char *what) {
    if (e != cudaSuccess) {
        std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
        std::exit(2);
    }
}

template <typename T> static T *to_device(const std::vector<T> &host) {
    T *d = nullptr;
    check(cudaMalloc(&d, host.size() * sizeof(T)), "cudaMalloc");
    check(cudaMemcpy(d, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
    return d;
}

template <typename T> static std::vector<T> to_host(const T *d, size_t n) {
    std::vector<T> host(n);
    check(cudaMemcpy(host.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
    return host;
}

int main() {
    cudaStream_t stream;
    check(cudaStreamCreate(&stream), "cudaStreamCreate");

    const uint64_t n = 256 * 37;
    std::vector<float> x(n), y(n), want(n);
    for (uint64_t i = 0; i < n; i++) {
        x[i] = (float)i * 0.5f;
        y[i] = (float)(i % 7) - 3.0f;
        want[i] = 2.5f * x[i] + y[i];
    }
    float *dx = to_device(x), *dy = to_device(y);
    expect(saxpy_launch(n, 2.5f, dx, dy, stream) == cudaSuccess, "saxpy_launch succeeds");
    // The kernel's `where n % 256 == 0` is checked before anything is launched.
    expect(saxpy_launch(1000, 2.5f, dx, dy, stream) == cudaErrorInvalidValue, "saxpy_launch refuses n = 1000");
    // An empty grid runs nothing and succeeds.
    expect(saxpy_launch(0, 2.5f, nullptr, nullptr, stream) == cudaSuccess, "saxpy_launch of 0 elements");

    const uint64_t nb = 100;
    std::vector<int32_t> in(nb * 256), sums(nb, 0);
    for (uint64_t i = 0; i < nb * 256; i++) in[i] = (int32_t)(i % 1000) - 500;
    int32_t *din = to_device(in), *dsums = to_device(sums);
    expect(block_sums_launch(nb, din, dsums, stream) == cudaSuccess, "block_sums_launch succeeds");

    const uint64_t m = 96;
    std::vector<double> a(m * m), t(m * m, 0.0);
    for (uint64_t i = 0; i < m * m; i++) a[i] = (double)i;
    double *da = to_device(a), *dt = to_device(t);
    expect(transpose_launch(m, da, dt, stream) == cudaSuccess, "transpose_launch succeeds");

    check(cudaStreamSynchronize(stream), "the kernels");
    std::vector<float> y2 = to_host(dy, n);
    for (uint64_t i = 0; i < n; i++) expect(y2[i] == want[i], "saxpy computes a * x + y");
    std::vector<int32_t> sums2 = to_host(dsums, nb);
    for (uint64_t b = 0; b < nb; b++) {
        int32_t s = 0;
        for (uint64_t i = 0; i < 256; i++) s += in[b * 256 + i];
        expect(sums2[b] == s, "block_sums sums each block");
    }
    std::vector<double> t2 = to_host(dt, m * m);
    for (uint64_t r = 0; r < m; r++)
        for (uint64_t c = 0; c < m; c++) expect(t2[r * m + c] == a[c * m + r], "transpose transposes");

    for (void *p : {(void *)dx, (void *)dy, (void *)din, (void *)dsums, (void *)da, (void *)dt}) cudaFree(p);
    cudaStreamDestroy(stream);
    if (failures) {
        std::fprintf(stderr, "%d checks failed\n", failures);
        return 1;
    }
    std::printf("all results agree with the CPU\n");
    return 0;
}
