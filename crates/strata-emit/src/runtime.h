/* The runtime of Strata's generated programs (cpu device and cuda target): included at the top of
   every translation unit. With STRATA_CUDA defined, helpers used by kernels are host+device. */
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>

#ifdef STRATA_CUDA
#define STRATA_HD __host__ __device__
#define STRATA_INLINE inline
#else
#define STRATA_HD
#define STRATA_INLINE static inline
#endif

STRATA_INLINE double strata_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* With STRATA_TIME set in the environment, each kernel launch reports its duration on stderr. */
STRATA_INLINE void strata_report_time(const char *kernel, double t0) {
    static int enabled = -1;
    if (enabled < 0) enabled = getenv("STRATA_TIME") != NULL;
    if (enabled) fprintf(stderr, "STRATA-TIME %s %.9f\n", kernel, strata_now() - t0);
}

/* A run-time error: reported on stderr in a form the `strata` command turns into a diagnostic. */
STRATA_INLINE void strata_fail(int code, unsigned lo, unsigned hi, const char *message) {
    fflush(stdout);
    fprintf(stderr, "STRATA-ERROR E%04d %u %u %s\n", code, lo, hi, message);
    exit(1);
}

STRATA_INLINE void *strata_alloc(uint64_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) strata_fail(903, 0, 0, "out of memory");
    return p;
}

/* A run-time error in code that may run on either device (on a GPU: reported, then the kernel traps). */
STRATA_INLINE STRATA_HD void strata_fail_any(int code, unsigned lo, unsigned hi, const char *message) {
#if defined(__CUDA_ARCH__)
    printf("STRATA-ERROR E%04d %u %u %s\n", code, lo, hi, message);
    __trap();
#else
    strata_fail(code, lo, hi, message);
#endif
}

STRATA_INLINE STRATA_HD uint64_t strata_chk(uint64_t off, uint64_t i, uint64_t bound, unsigned lo, unsigned hi) {
    if (i >= bound) strata_fail_any(903, lo, hi, "index out of bounds");
    return off;
}

STRATA_INLINE STRATA_HD uint64_t strata_idx(int64_t i, unsigned lo, unsigned hi) {
    if (i < 0) strata_fail_any(903, lo, hi, "a negative index");
    return (uint64_t)i;
}

STRATA_INLINE STRATA_HD uint64_t strata_ipow(uint64_t b, uint64_t e) {
    uint64_t r = 1;
    while (e--) r *= b;
    return r;
}

STRATA_INLINE STRATA_HD uint64_t strata_max_u64(uint64_t a, uint64_t b) { return a > b ? a : b; }
STRATA_INLINE STRATA_HD uint64_t strata_min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

STRATA_INLINE uint64_t strata_splitmix(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

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
STRATA_INLINE void strata_print_i32(int32_t v) { printf("%d", v); }
STRATA_INLINE void strata_print_i64(int64_t v) { printf("%lld", (long long)v); }
STRATA_INLINE void strata_print_u32(uint32_t v) { printf("%u", v); }
STRATA_INLINE void strata_print_u64(uint64_t v) { printf("%llu", (unsigned long long)v); }
STRATA_INLINE void strata_print_bool(bool v) { fputs(v ? "true" : "false", stdout); }
STRATA_INLINE int strata_put(const char *s) { return fputs(s, stdout); }

#ifdef STRATA_CUDA
/* Every CUDA API call is checked; a failure names the Strata source span that caused it. */
STRATA_INLINE void strata_cuda_check(cudaError_t e, unsigned lo, unsigned hi) {
    if (e != cudaSuccess) strata_fail(801, lo, hi, cudaGetErrorString(e));
}
#endif
