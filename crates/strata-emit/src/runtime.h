/* The runtime of Strata's generated programs (cpu device and cuda target): included at the top of
   every translation unit, after the definition of STRATA_SOURCE (the Strata source file's name).
   With STRATA_CUDA defined, helpers used by kernels are host+device. Standard C11 and C++ only: no
   compiler extensions besides CUDA's own. */
#if !defined(STRATA_CUDA) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#endif
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>
#include <stdarg.h>

#ifdef STRATA_CUDA
#define STRATA_HD __host__ __device__
#define STRATA_INLINE inline
#else
#define STRATA_HD
#define STRATA_INLINE static inline
#endif

#ifndef STRATA_SOURCE
#define STRATA_SOURCE "<unknown>"
#endif

/* Where a run-time error happens: line and column (from 1; line 0 where unknown) in
   STRATA_SOURCE, and the byte range lo..hi of the source text, from which the `strata` command
   renders a diagnostic with the source snippet. */
typedef struct {
    uint32_t line, col, lo, hi;
} strata_pos;
#ifdef __cplusplus
#define STRATA_AT(line, col, lo, hi) (strata_pos{(line), (col), (lo), (hi)})
#else
#define STRATA_AT(line, col, lo, hi) ((strata_pos){(line), (col), (lo), (hi)})
#endif

STRATA_INLINE double strata_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Kernel timing: only with STRATA_TIME=1 in the environment (`strata bench` sets it), each kernel
   launch reports its duration on stderr as `STRATA-TIME kernel seconds`. Otherwise a launch costs
   one test of a cached flag, no clock and no synchronisation. */
STRATA_INLINE int strata_timing(void) {
    static int on = -1;
    if (on < 0) {
        const char *v = getenv("STRATA_TIME");
        on = v != NULL && strcmp(v, "1") == 0;
    }
    return on;
}

/* Before a launch: the time now when timing, else -1. */
STRATA_INLINE double strata_time_begin(void) {
    return strata_timing() ? strata_now() : -1.0;
}

/* After a launch (on the cpu device, after its kernel ended): reports its time when timed. */
STRATA_INLINE void strata_time_end(const char *kernel, double t0) {
    if (t0 >= 0) fprintf(stderr, "STRATA-TIME %s %.9f\n", kernel, strata_now() - t0);
}

/* A run-time error: `file:line:col: error[E0903]: message` on stderr, then exit status 1. With
   STRATA_ERRORS=spans in the environment (set by `strata run`, which runs the programs of the cpu
   device) the form is `STRATA-ERROR E0903 lo hi message` instead, which the strata command turns
   into a rendered diagnostic. */
STRATA_INLINE void strata_fail(int code, strata_pos at, const char *message) {
    const char *form = getenv("STRATA_ERRORS");
    fflush(stdout);
    if (form != NULL && strcmp(form, "spans") == 0)
        fprintf(stderr, "STRATA-ERROR E%04d %u %u %s\n", code, (unsigned)at.lo, (unsigned)at.hi, message);
    else if (at.line > 0)
        fprintf(stderr, "%s:%u:%u: error[E%04d]: %s\n", STRATA_SOURCE, (unsigned)at.line, (unsigned)at.col, code,
                message);
    else
        fprintf(stderr, "%s: error[E%04d]: %s\n", STRATA_SOURCE, code, message);
    exit(1);
}

/* A run-time error in code that may run on either device. On a GPU the thread prints the error on
   the standard output (device printf) and traps, which ends the kernel; the next CUDA call that
   waits for the kernel then fails too. */
STRATA_INLINE STRATA_HD void strata_fail_any(int code, strata_pos at, const char *message) {
#if defined(__CUDA_ARCH__)
    printf("%s:%u:%u: error[E%04d]: %s\n", STRATA_SOURCE, (unsigned)at.line, (unsigned)at.col, code, message);
    __trap();
#else
    strata_fail(code, at, message);
#endif
}

/* `count` elements of `size` bytes; out of memory (or a size beyond the address space) is error
   E0903 at the allocation. */
STRATA_INLINE void *strata_alloc(uint64_t count, size_t size, strata_pos at) {
    if (size != 0 && count > (uint64_t)SIZE_MAX / size) strata_fail(903, at, "out of memory");
    void *p = malloc(count * size != 0 ? (size_t)(count * size) : 1);
    if (p == NULL) strata_fail(903, at, "out of memory");
    return p;
}

/* A new buffer holding a copy of `count` elements of `size` bytes at `src`. */
STRATA_INLINE void *strata_alloc_copy(const void *src, uint64_t count, size_t size, strata_pos at) {
    void *p = strata_alloc(count, size, at);
    memcpy(p, src, (size_t)(count * size));
    return p;
}

/* The offset `off` of an element whose index `i` was checked against `bound`. */
STRATA_INLINE STRATA_HD uint64_t strata_chk(uint64_t off, uint64_t i, uint64_t bound, strata_pos at) {
    if (i >= bound) strata_fail_any(903, at, "index out of bounds");
    return off;
}

/* Index `i`, checked against `bound`. */
STRATA_INLINE STRATA_HD uint64_t strata_index(uint64_t i, uint64_t bound, strata_pos at) {
    if (i >= bound) strata_fail_any(903, at, "index out of bounds");
    return i;
}

/* Float -> integer casts with one meaning on every device, that of Rust's `as` (and of `sim`):
   truncation toward zero, NaN gives 0, a value beyond the type's range its minimum or maximum.
   (A plain C cast of such a value is undefined behaviour.) An `f32` converts to `double`
   exactly. */
STRATA_INLINE STRATA_HD int32_t strata_f2i32(double x) {
    return x != x ? 0 : x <= -2147483648.0 ? INT32_MIN : x >= 2147483647.0 ? INT32_MAX : (int32_t)x;
}
STRATA_INLINE STRATA_HD int64_t strata_f2i64(double x) {
    return x != x ? 0 : x <= -9223372036854775808.0 ? INT64_MIN : x >= 9223372036854775808.0 ? INT64_MAX : (int64_t)x;
}
STRATA_INLINE STRATA_HD uint32_t strata_f2u32(double x) {
    return x != x || x <= 0.0 ? 0 : x >= 4294967295.0 ? UINT32_MAX : (uint32_t)x;
}
STRATA_INLINE STRATA_HD uint64_t strata_f2u64(double x) {
    return x != x || x <= 0.0 ? 0 : x >= 18446744073709551616.0 ? UINT64_MAX : (uint64_t)x;
}

/* A run-time value used as an index. */
STRATA_INLINE STRATA_HD uint64_t strata_idx(int64_t i, strata_pos at) {
    if (i < 0) strata_fail_any(903, at, "a negative index");
    return (uint64_t)i;
}

/* Integer division and remainder: a zero divisor is error E0909, as is the one quotient of
   signed integers that does not fit (the minimum divided by -1). */
#define STRATA_DIVISION(T, name, OVERFLOWS)                                      \
    STRATA_INLINE STRATA_HD T strata_div_##name(T a, T b, strata_pos at) {       \
        if (b == 0) strata_fail_any(909, at, "division by zero");               \
        if (OVERFLOWS) strata_fail_any(909, at, "arithmetic overflow");         \
        return a / b;                                                            \
    }                                                                            \
    STRATA_INLINE STRATA_HD T strata_rem_##name(T a, T b, strata_pos at) {       \
        if (b == 0) strata_fail_any(909, at, "division by zero");               \
        if (OVERFLOWS) strata_fail_any(909, at, "arithmetic overflow");         \
        return a % b;                                                            \
    }
STRATA_DIVISION(int32_t, i32, a == INT32_MIN && b == -1)
STRATA_DIVISION(int64_t, i64, a == INT64_MIN && b == -1)
STRATA_DIVISION(uint32_t, u32, false)
STRATA_DIVISION(uint64_t, u64, false)

/* b^e by squaring (at most 64 steps whatever e is). */
STRATA_INLINE STRATA_HD uint64_t strata_ipow(uint64_t b, uint64_t e) {
    uint64_t r = 1;
    while (e != 0) {
        if (e & 1) r *= b;
        b *= b;
        e >>= 1;
    }
    return r;
}

/* Size arithmetic in GPU code that the emitter cannot prove free of wrap-around (a size
   parameter without a `where` bound): error E0903, as on `sim`, instead of a wrapped offset. */
STRATA_INLINE STRATA_HD uint64_t strata_kadd(uint64_t a, uint64_t b, strata_pos at) {
    uint64_t r = a + b;
    if (r < a) strata_fail_any(903, at, "size arithmetic overflowed or went below zero");
    return r;
}
STRATA_INLINE STRATA_HD uint64_t strata_kmul(uint64_t a, uint64_t b, strata_pos at) {
#if defined(__CUDA_ARCH__)
    if (__umul64hi(a, b) != 0) strata_fail_any(903, at, "size arithmetic overflowed or went below zero");
#else
    if (a != 0 && b > UINT64_MAX / a) strata_fail_any(903, at, "size arithmetic overflowed or went below zero");
#endif
    return a * b;
}
STRATA_INLINE STRATA_HD uint64_t strata_kpow(uint64_t b, uint64_t e, strata_pos at) {
    if (b <= 1) return e == 0 ? 1 : b;
    uint64_t r = 1;
    while (e--) r = strata_kmul(r, b, at);
    return r;
}

/* Size arithmetic in host code, where sizes may come from data (`let n: nat = …`): a result
   beyond 64 bits is error E0903, as on `sim`, instead of a wrapped size that would allocate
   too little. (Kernels only compute offsets below sizes the host computed this way.) */
STRATA_INLINE uint64_t strata_nadd(uint64_t a, uint64_t b, strata_pos at) {
    uint64_t r;
    if (__builtin_add_overflow(a, b, &r)) strata_fail(903, at, "size arithmetic overflowed or went below zero");
    return r;
}
STRATA_INLINE uint64_t strata_nmul(uint64_t a, uint64_t b, strata_pos at) {
    uint64_t r;
    if (__builtin_mul_overflow(a, b, &r)) strata_fail(903, at, "size arithmetic overflowed or went below zero");
    return r;
}
STRATA_INLINE uint64_t strata_npow(uint64_t b, uint64_t e, strata_pos at) {
    /* 0 and 1 to any power never overflow; any other base overflows within 64 steps. */
    if (b <= 1) return e == 0 ? 1 : b;
    uint64_t r = 1;
    while (e--) r = strata_nmul(r, b, at);
    return r;
}

STRATA_INLINE STRATA_HD uint64_t strata_max_u64(uint64_t a, uint64_t b) { return a > b ? a : b; }
STRATA_INLINE STRATA_HD uint64_t strata_min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* `atomic_fetch_add` on memory only one OS thread touches (a block's shared memory on the cpu
   device, whose threads run one after another): a plain read-modify-write. */
STRATA_INLINE uint32_t strata_fetch_add_plain_u32(uint32_t *p, uint32_t v) {
    uint32_t old = *p;
    *p = old + v;
    return old;
}
STRATA_INLINE int32_t strata_fetch_add_plain_i32(int32_t *p, int32_t v) {
    int32_t old = *p;
    *p = (int32_t)((uint32_t)old + (uint32_t)v);
    return old;
}

STRATA_INLINE uint64_t strata_splitmix(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* `fill_random(a, seed)`: the same pseudo-random values as on `sim` (splitmix64). */
#define STRATA_FILL_RANDOM(T, name, VALUE)                                        \
    STRATA_INLINE void strata_fill_random_##name(T *v, uint64_t n, uint64_t seed) { \
        uint64_t s = seed;                                                        \
        for (uint64_t k = 0; k < n; k++) {                                        \
            uint64_t x = strata_splitmix(&s);                                     \
            v[k] = VALUE;                                                         \
        }                                                                         \
    }
STRATA_FILL_RANDOM(float, f32, (float)((double)(x >> 11) / 9007199254740992.0))
STRATA_FILL_RANDOM(double, f64, ((double)(x >> 11) / 9007199254740992.0))
STRATA_FILL_RANDOM(bool, bool, ((x & 1) == 1))
STRATA_FILL_RANDOM(int32_t, i32, (int32_t)(x % 100))
STRATA_FILL_RANDOM(int64_t, i64, (int64_t)(x % 100))
STRATA_FILL_RANDOM(uint32_t, u32, (uint32_t)(x % 100))
STRATA_FILL_RANDOM(uint64_t, u64, (uint64_t)(x % 100))

/* Floats print like Rust's `{}`: the shortest digits that read back to the same value, written
   without an exponent. */
STRATA_INLINE void strata_print_digits(const char *digits, int exp10, int negative) {
    /* value = 0.d1d2d3... * 10^(exp10) */
    int n = (int)strlen(digits);
    if (negative) putchar('-');
    if (exp10 <= 0) {
        fputs("0.", stdout);
        for (int i = 0; i < -exp10; i++) putchar('0');
        fputs(digits, stdout);
    } else if (exp10 >= n) {
        fputs(digits, stdout);
        for (int i = n; i < exp10; i++) putchar('0');
    } else {
        fwrite(digits, 1, (size_t)exp10, stdout);
        putchar('.');
        fputs(digits + exp10, stdout);
    }
}

STRATA_INLINE void strata_print_float(double v, int is_f32) {
    if (isnan(v)) { fputs("NaN", stdout); return; }
    if (isinf(v)) { fputs(v < 0 ? "-inf" : "inf", stdout); return; }
    if (v == 0) { fputs(signbit(v) ? "-0" : "0", stdout); return; }
    char buf[64];
    int max = is_f32 ? 9 : 17;
    for (int p = 1; p <= max; p++) {
        snprintf(buf, sizeof buf, "%.*e", p - 1, v);
        int same = is_f32 ? ((float)strtod(buf, NULL) == (float)v) : (strtod(buf, NULL) == v);
        if (same || p == max) break;
    }
    /* buf is [-]d.ddde[+-]xx */
    int negative = buf[0] == '-';
    char *s = buf + negative;
    char digits[32];
    int k = 0;
    char *e = strchr(s, 'e');
    for (char *c = s; c < e; c++) if (*c != '.') digits[k++] = *c;
    digits[k] = 0;
    while (k > 1 && digits[k - 1] == '0') digits[--k] = 0;
    int exp10 = atoi(e + 1) + 1;
    strata_print_digits(digits, exp10, negative);
}

STRATA_INLINE void strata_print_f64(double v) { strata_print_float(v, 0); }
STRATA_INLINE void strata_print_f32(float v) { strata_print_float((double)v, 1); }
STRATA_INLINE void strata_print_i32(int32_t v) { printf("%d", (int)v); }
STRATA_INLINE void strata_print_i64(int64_t v) { printf("%lld", (long long)v); }
STRATA_INLINE void strata_print_u32(uint32_t v) { printf("%u", (unsigned)v); }
STRATA_INLINE void strata_print_u64(uint64_t v) { printf("%llu", (unsigned long long)v); }
STRATA_INLINE void strata_print_bool(bool v) { fputs(v ? "true" : "false", stdout); }
STRATA_INLINE int strata_put(const char *s) { return fputs(s, stdout); }

/* The element types strata_print_nested prints. */
enum { STRATA_F32, STRATA_F64, STRATA_I32, STRATA_I64, STRATA_U32, STRATA_U64, STRATA_BOOL };

/* Prints the scalars of type `kind` at `v` as nested lists of `rank` dimensions, given after it
   as uint64_t (outermost first): before element k, one `[` per level whose block starts at k;
   after it, one `]` per level whose block ends there. */
STRATA_INLINE void strata_print_nested(int kind, const void *v, int newline, int rank, ...) {
    uint64_t *block = (uint64_t *)malloc(sizeof(uint64_t) * (size_t)(rank > 0 ? rank : 1));
    if (block == NULL) strata_fail(903, STRATA_AT(0, 0, 0, 0), "out of memory");
    va_list dims;
    va_start(dims, rank);
    for (int i = 0; i < rank; i++) block[i] = va_arg(dims, uint64_t);
    va_end(dims);
    /* In place, innermost first: block[i] becomes the number of elements in one block of level i
       (the product of the dimensions from i on). */
    uint64_t total = 1;
    for (int i = rank - 1; i >= 0; i--) {
        total *= block[i];
        block[i] = total;
    }
    if (total == 0) fputs("[]", stdout);
    for (uint64_t k = 0; k < total; k++) {
        if (k) fputs(", ", stdout);
        for (int i = 0; i < rank; i++)
            if (k % block[i] == 0) putchar('[');
        switch (kind) {
        case STRATA_F32: strata_print_f32(((const float *)v)[k]); break;
        case STRATA_F64: strata_print_f64(((const double *)v)[k]); break;
        case STRATA_I32: strata_print_i32(((const int32_t *)v)[k]); break;
        case STRATA_I64: strata_print_i64(((const int64_t *)v)[k]); break;
        case STRATA_U32: strata_print_u32(((const uint32_t *)v)[k]); break;
        case STRATA_U64: strata_print_u64(((const uint64_t *)v)[k]); break;
        default: strata_print_bool(((const bool *)v)[k]); break;
        }
        for (int i = 0; i < rank; i++)
            if ((k + 1) % block[i] == 0) putchar(']');
    }
    if (newline) putchar('\n');
    free(block);
}

#ifdef STRATA_CUDA
/* Every CUDA API call is checked; a failure names the Strata source position that caused it (for
   a kernel that failed, the first call that waited for it). Out of GPU memory is E0903, like out
   of memory on the host. */
STRATA_INLINE void strata_cuda_check(cudaError_t e, strata_pos at) {
    if (e == cudaErrorMemoryAllocation) strata_fail(903, at, "out of GPU memory");
    if (e != cudaSuccess) strata_fail(801, at, cudaGetErrorString(e));
}

/* `GpuGlobal::alloc_copy`: a new GPU buffer holding a copy of `count` elements at `src`. */
STRATA_INLINE void *strata_cuda_alloc_copy(const void *src, uint64_t count, size_t size, strata_pos at) {
    void *p = NULL;
    if (size != 0 && count > (uint64_t)SIZE_MAX / size) strata_fail(903, at, "out of GPU memory");
    strata_cuda_check(cudaMalloc(&p, (size_t)(count * size)), at);
    strata_cuda_check(cudaMemcpy(p, src, (size_t)(count * size), cudaMemcpyHostToDevice), at);
    return p;
}

/* A launch dimension computed at run time: it must fit CUDA's 32-bit dimensions. */
STRATA_INLINE unsigned strata_cuda_dim(uint64_t n, strata_pos at) {
    if (n > 0xffffffffu) strata_fail(801, at, "a launch dimension does not fit in 32 bits");
    return (unsigned)n;
}

/* The dynamic shared memory of a launch as cudaFuncSetAttribute takes it. */
STRATA_INLINE int strata_cuda_smem_bytes(size_t bytes) {
    return bytes > 0x7fffffff ? 0x7fffffff : (int)bytes;
}

/* After a kernel launch: the launch itself is checked (shape, resources); when timed
   (STRATA_TIME=1) the kernel is waited for and its time reported. Otherwise nothing waits: the
   host goes on while the kernel runs. */
STRATA_INLINE void strata_cuda_check_kernel(const char *kernel, double t0, strata_pos at) {
    strata_cuda_check(cudaGetLastError(), at);
    if (t0 >= 0) {
        strata_cuda_check(cudaDeviceSynchronize(), at);
        strata_time_end(kernel, t0);
    }
}

/* Relaxed atomic loads and stores of an aligned 32-bit word: PTX treats `volatile` accesses as
   relaxed, so no read-modify-write is needed. */
STRATA_INLINE __device__ uint32_t strata_atomic_load_u32(uint32_t *p) { return *(volatile uint32_t *)p; }
STRATA_INLINE __device__ int32_t strata_atomic_load_i32(int32_t *p) { return *(volatile int32_t *)p; }
STRATA_INLINE __device__ void strata_atomic_store_u32(uint32_t *p, uint32_t v) { *(volatile uint32_t *)p = v; }
STRATA_INLINE __device__ void strata_atomic_store_i32(int32_t *p, int32_t v) { *(volatile int32_t *)p = v; }
#endif
