// expect: clean
// C++ operators of a small struct (`Cplx`, as CUDA by Example's `cuComplex`): a constructor with
// a member initialiser list, `operator*` and `operator+` taking `const Cplx &` and returning a
// temporary `Cplx(…)`, used on the host and in a kernel (`z = z * z + c`, which reads every
// member of `z` before it assigns any), and `Cplx w(x, y);` whose arguments are variables (the
// form the grammar reads as a function declaration). The program checks its own results.
#include <stdio.h>

struct Cplx {
    float r;
    float i;
    __host__ __device__ Cplx(float a, float b) : i(b), r(a) {}
    __host__ __device__ float norm2(void) { return r * r + i * i; }
    __host__ __device__ Cplx operator*(const Cplx &a) { return Cplx(r * a.r - i * a.i, i * a.r + r * a.i); }
    __host__ __device__ Cplx operator+(const Cplx &a) { return Cplx(r + a.r, i + a.i); }
    __host__ __device__ Cplx operator-(Cplx a) { return Cplx(r - a.r, i - a.i); }
};

__device__ int escapes(float x, float y) {
    Cplx z(x, y);
    Cplx c(-0.5f, 0.25f);
    for (int k = 0; k < 20; k++) {
        z = z * z + c;
        if (z.norm2() > 4.0f) return k;
    }
    return 20;
}

__global__ void iterate(int *out) {
    float x = -1.0f + 0.25f * threadIdx.x;
    out[threadIdx.x] = escapes(x, 0.5f);
}

int host_escapes(float x, float y) {
    Cplx z(x, y);
    Cplx c(-0.5f, 0.25f);
    for (int k = 0; k < 20; k++) {
        z = z * z + c;
        if (z.norm2() > 4.0f) return k;
    }
    return 20;
}

int main(void) {
    float x = 1.0f, y = 2.0f;
    Cplx a(x, y);
    Cplx b(3.0f, -1.0f);
    Cplx p = a * b;      // (1 + 2i)(3 - i) = 5 + 5i
    Cplx q = a * a + b;  // (-3 + 4i) + (3 - i) = 0 + 3i
    Cplx d = (a + b) - a * b;
    int ok = p.r == 5.0f && p.i == 5.0f && q.r == 0.0f && q.i == 3.0f && d.r == -1.0f && d.i == -4.0f;

    int *dev, out[8];
    cudaMalloc((void **)&dev, 8 * sizeof(int));
    iterate<<<1, 8>>>(dev);
    cudaMemcpy(out, dev, 8 * sizeof(int), cudaMemcpyDeviceToHost);
    cudaFree(dev);
    for (int t = 0; t < 8; t++) {
        printf("%d ", out[t]);
        ok = ok && out[t] == host_escapes(-1.0f + 0.25f * t, 0.5f);
    }
    printf("\np = %.1f%+.1fi, q = %.1f%+.1fi\n", p.r, p.i, q.r, q.i);
    if (!ok) {
        printf("FAILED\n");
        return 1;
    }
    printf("operators: all correct\n");
    return 0;
}
