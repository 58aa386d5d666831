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
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef STRATA_CUDA
#define STRATA_HD __host__ __device__
#define STRATA_INLINE inline
#else
#define STRATA_HD
#define STRATA_INLINE static inline
#endif

/* Stream and event handles: CUDA's on `cuda`; on `cpu`, where stream work runs synchronously in
   issue order, an id nobody reads. */
#ifdef STRATA_CUDA
typedef cudaStream_t strata_stream;
typedef cudaEvent_t strata_event;
#else
typedef int strata_stream;
typedef int strata_event;
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
STRATA_INLINE void strata_fail_status(int code, strata_pos at, const char *message, int status);
STRATA_INLINE void strata_fail(int code, strata_pos at, const char *message) { strata_fail_status(code, at, message, 1); }

/* `strata_fail` with the exit status `status`: 2 for a problem of the machine, not of the program
   (E1003, no usable GPU or driver), as the strata command's own exit status for E10xx. */
STRATA_INLINE void strata_fail_status(int code, strata_pos at, const char *message, int status) {
    const char *form = getenv("STRATA_ERRORS");
    fflush(stdout);
    if (form != NULL && strcmp(form, "spans") == 0)
        fprintf(stderr, "STRATA-ERROR E%04d %u %u %s\n", code, (unsigned)at.lo, (unsigned)at.hi, message);
    else if (at.line > 0)
        fprintf(stderr, "%s:%u:%u: error[E%04d]: %s\n", STRATA_SOURCE, (unsigned)at.line, (unsigned)at.col, code,
                message);
    else
        fprintf(stderr, "%s: error[E%04d]: %s\n", STRATA_SOURCE, code, message);
    exit(status);
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

/* Allocations whose length only the run time knows (programs whose pointers carry no length:
   CUDA-C's). Each is registered with its byte length, so that a copy between two pointers copies
   as much as both allocations hold from where the pointers point (as `sim` does), an interior
   pointer finds its allocation, and `free` of anything but the start of a live allocation is an
   error instead of a corrupted heap. Host code only; the list is searched from the newest entry
   (programs hold few allocations at a time). */
typedef struct {
    uintptr_t base;
    uint64_t bytes;
} strata_rt_block;
static strata_rt_block *strata_rt_blocks = NULL;
static uint64_t strata_rt_count = 0, strata_rt_cap = 0;

STRATA_INLINE void *strata_rt_alloc(uint64_t count, size_t size, strata_pos at) {
    void *p = strata_alloc(count, size, at);
    if (strata_rt_count == strata_rt_cap) {
        uint64_t cap = strata_rt_cap != 0 ? 2 * strata_rt_cap : 64;
        strata_rt_block *b = (strata_rt_block *)realloc(strata_rt_blocks, (size_t)cap * sizeof(strata_rt_block));
        if (b == NULL) strata_fail(903, at, "out of memory");
        strata_rt_blocks = b;
        strata_rt_cap = cap;
    }
    strata_rt_blocks[strata_rt_count].base = (uintptr_t)p;
    strata_rt_blocks[strata_rt_count].bytes = count * (uint64_t)size;
    strata_rt_count++;
    return p;
}

/* The elements of `size` bytes from `p` to the end of the allocation it points into (0 at its
   end); a pointer into no live allocation is error E0903 at `at`. */
STRATA_INLINE uint64_t strata_rt_left(const void *p, size_t size, strata_pos at) {
    uintptr_t c = (uintptr_t)p;
    int64_t end = -1;
    for (uint64_t i = strata_rt_count; i-- > 0;) {
        strata_rt_block b = strata_rt_blocks[i];
        if (c >= b.base && c - b.base < b.bytes) return (b.bytes - (c - b.base)) / size;
        if (c == b.base + b.bytes) end = (int64_t)i;
    }
    if (end < 0) strata_fail(903, at, "out of bounds: the pointer is past the end of its buffer (or freed)");
    return 0;
}

/* Copies as many elements as both sides hold from where they point. */
STRATA_INLINE void strata_rt_copy(void *dst, const void *src, size_t size, strata_pos at) {
    uint64_t n = strata_rt_left(src, size, at), m = strata_rt_left(dst, size, at);
    memmove(dst, src, (size_t)((n < m ? n : m) * size));
}

/* The elements of `size` bytes from `p` to the end of its registered allocation, or `n` when `p`
   points into none (the address of a local variable, whose extent only `sim` knows). */
STRATA_INLINE uint64_t strata_rt_left_or(const void *p, size_t size, uint64_t n) {
    uintptr_t c = (uintptr_t)p;
    for (uint64_t i = strata_rt_count; i-- > 0;) {
        strata_rt_block b = strata_rt_blocks[i];
        if (c >= b.base && c - b.base <= b.bytes) return (b.bytes - (c - b.base)) / size;
    }
    return n;
}

/* Copies exactly `n` elements (`cudaMemcpy`): both sides must hold them (E0903 otherwise). */
STRATA_INLINE void strata_rt_copy_n(void *dst, const void *src, uint64_t n, size_t size, strata_pos at) {
    if (n == 0) return;
    if (strata_rt_left_or(src, size, n) < n)
        strata_fail(903, at, "out of bounds: the copy reads past the end of its source buffer");
    if (strata_rt_left_or(dst, size, n) < n)
        strata_fail(903, at, "out of bounds: the copy writes past the end of its destination buffer");
    memmove(dst, src, (size_t)(n * size));
}

/* A new registered allocation holding the elements from `src` to the end of its allocation. */
STRATA_INLINE void *strata_rt_alloc_copy(const void *src, size_t size, strata_pos at) {
    uint64_t n = strata_rt_left(src, size, at);
    void *p = strata_rt_alloc(n, size, at);
    memcpy(p, src, (size_t)(n * size));
    return p;
}

/* Frees a registered allocation; anything else (an interior pointer, a second free) is E0906. */
STRATA_INLINE void strata_rt_free(void *p, strata_pos at) {
    for (uint64_t i = strata_rt_count; i-- > 0;) {
        if (strata_rt_blocks[i].base == (uintptr_t)p) {
            strata_rt_blocks[i] = strata_rt_blocks[--strata_rt_count];
            free(p);
            return;
        }
    }
    strata_fail(906, at, "free of a pointer that is not the start of a live allocation");
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
STRATA_INLINE STRATA_HD int8_t strata_f2i8(double x) {
    return x != x ? 0 : x <= -128.0 ? INT8_MIN : x >= 127.0 ? INT8_MAX : (int8_t)x;
}
STRATA_INLINE STRATA_HD uint8_t strata_f2u8(double x) {
    return x != x || x <= 0.0 ? 0 : x >= 255.0 ? UINT8_MAX : (uint8_t)x;
}
STRATA_INLINE STRATA_HD int16_t strata_f2i16(double x) {
    return x != x ? 0 : x <= -32768.0 ? INT16_MIN : x >= 32767.0 ? INT16_MAX : (int16_t)x;
}
STRATA_INLINE STRATA_HD uint16_t strata_f2u16(double x) {
    return x != x || x <= 0.0 ? 0 : x >= 65535.0 ? UINT16_MAX : (uint16_t)x;
}

/* A run-time value used as an index. */
STRATA_INLINE STRATA_HD uint64_t strata_idx(int64_t i, strata_pos at) {
    if (i < 0) strata_fail_any(903, at, "a negative index");
    return (uint64_t)i;
}

/* An index counted from where a pointer `p` points (C's `p[-1]` with `p` inside its buffer, as
   `sim` allows): a negative one must stay inside the registered allocation `p` points into (or
   one past); anything else, and any negative index in CUDA device code, is error E0903. */
STRATA_INLINE STRATA_HD int64_t strata_sidx(int64_t i, const void *p, size_t size, strata_pos at) {
    if (i >= 0) return i;
#if !defined(__CUDA_ARCH__)
    uintptr_t c = (uintptr_t)p;
    for (uint64_t k = strata_rt_count; k-- > 0;) {
        strata_rt_block b = strata_rt_blocks[k];
        if (c >= b.base && c - b.base <= b.bytes) {
            if (size != 0 && (uint64_t)(-(i + 1)) < (uint64_t)(c - b.base) / size) return i;
            break;
        }
    }
#endif
    strata_fail_any(903, at, "a negative index");
    return 0;
}

/* Integer division and remainder: a zero divisor is error E0909; the one quotient of signed
   integers that does not fit (the minimum divided by -1) is E0913, as every overflow of Strata's
   integer arithmetic (docs/language.md, "Literals and operators"). */
#define STRATA_DIVISION(T, name, OVERFLOWS)                                      \
    STRATA_INLINE STRATA_HD T strata_div_##name(T a, T b, strata_pos at) {       \
        if (b == 0) strata_fail_any(909, at, "division by zero");               \
        if (OVERFLOWS) strata_fail_any(913, at, "attempt to divide with overflow"); \
        return a / b;                                                            \
    }                                                                            \
    STRATA_INLINE STRATA_HD T strata_rem_##name(T a, T b, strata_pos at) {       \
        if (b == 0) strata_fail_any(909, at, "division by zero");               \
        if (OVERFLOWS) strata_fail_any(913, at, "attempt to calculate the remainder with overflow"); \
        return a % b;                                                            \
    }
STRATA_DIVISION(int32_t, i32, a == INT32_MIN && b == -1)
STRATA_DIVISION(int64_t, i64, a == INT64_MIN && b == -1)
STRATA_DIVISION(uint32_t, u32, false)
STRATA_DIVISION(uint64_t, u64, false)
/* 8- and 16-bit integers: C computes them in `int`, and the result converts back. */
STRATA_DIVISION(int8_t, i8, a == INT8_MIN && b == -1)
STRATA_DIVISION(int16_t, i16, a == INT16_MIN && b == -1)
STRATA_DIVISION(uint8_t, u8, false)
STRATA_DIVISION(uint16_t, u16, false)

/* Strata's checked integer arithmetic (`+ - *`, unary `-`, shifts; E0913 where the exact result
   does not fit, at the operator). The test is one compare or the processor's overflow flag
   (`__builtin_*_overflow` in C; on the GPU the same tests written out, CUDA having no such
   builtins in device code), and the report is out of line (`strata_overflow`, cold), so the
   common path is the operation and one branch that is never taken. */
#if defined(__GNUC__) && !defined(STRATA_CUDA)
#define STRATA_COLD_FN static __attribute__((cold, noinline, unused))
#define STRATA_UNLIKELY(c) __builtin_expect(!!(c), 0)
#else
#define STRATA_COLD_FN STRATA_INLINE
#define STRATA_UNLIKELY(c) (c)
#endif
STRATA_COLD_FN STRATA_HD void strata_overflow(strata_pos at, const char *message) {
    strata_fail_any(913, at, message);
}
#define STRATA_ADD_MSG "attempt to add with overflow"
#define STRATA_SUB_MSG "attempt to subtract with overflow"
#define STRATA_MUL_MSG "attempt to multiply with overflow"
#if !defined(__CUDA_ARCH__)
#define STRATA_CHECKED_ARITH(T, name)                                                              \
    STRATA_INLINE STRATA_HD T strata_add_##name(T a, T b, strata_pos at) {                         \
        T r;                                                                                       \
        if (STRATA_UNLIKELY(__builtin_add_overflow(a, b, &r))) strata_overflow(at, STRATA_ADD_MSG); \
        return r;                                                                                  \
    }                                                                                              \
    STRATA_INLINE STRATA_HD T strata_sub_##name(T a, T b, strata_pos at) {                         \
        T r;                                                                                       \
        if (STRATA_UNLIKELY(__builtin_sub_overflow(a, b, &r))) strata_overflow(at, STRATA_SUB_MSG); \
        return r;                                                                                  \
    }                                                                                              \
    STRATA_INLINE STRATA_HD T strata_mul_##name(T a, T b, strata_pos at) {                         \
        T r;                                                                                       \
        if (STRATA_UNLIKELY(__builtin_mul_overflow(a, b, &r))) strata_overflow(at, STRATA_MUL_MSG); \
        return r;                                                                                  \
    }
STRATA_CHECKED_ARITH(int32_t, i32)
STRATA_CHECKED_ARITH(int64_t, i64)
STRATA_CHECKED_ARITH(uint32_t, u32)
STRATA_CHECKED_ARITH(uint64_t, u64)
/* The builtins test whether the exact result fits the type of the result variable. */
STRATA_CHECKED_ARITH(int8_t, i8)
STRATA_CHECKED_ARITH(int16_t, i16)
STRATA_CHECKED_ARITH(uint8_t, u8)
STRATA_CHECKED_ARITH(uint16_t, u16)
#else
/* Device code: 32-bit operations computed exactly in 64 bits, 64-bit ones by their sign bits and
   the high half of the product. */
#define STRATA_CHECKED_ARITH32(T, name, LO, HI)                                                    \
    STRATA_INLINE STRATA_HD T strata_add_##name(T a, T b, strata_pos at) {                         \
        int64_t r = (int64_t)a + (int64_t)b;                                                       \
        if (r < (LO) || r > (HI)) strata_overflow(at, STRATA_ADD_MSG);                            \
        return (T)r;                                                                               \
    }                                                                                              \
    STRATA_INLINE STRATA_HD T strata_sub_##name(T a, T b, strata_pos at) {                         \
        int64_t r = (int64_t)a - (int64_t)b;                                                       \
        if (r < (LO) || r > (HI)) strata_overflow(at, STRATA_SUB_MSG);                            \
        return (T)r;                                                                               \
    }                                                                                              \
    STRATA_INLINE STRATA_HD T strata_mul_##name(T a, T b, strata_pos at) {                         \
        int64_t r = (int64_t)a * (int64_t)b;                                                       \
        if (r < (LO) || r > (HI)) strata_overflow(at, STRATA_MUL_MSG);                            \
        return (T)r;                                                                               \
    }
STRATA_CHECKED_ARITH32(int32_t, i32, INT64_C(-2147483648), INT64_C(2147483647))
STRATA_CHECKED_ARITH32(uint32_t, u32, INT64_C(0), INT64_C(4294967295))
STRATA_CHECKED_ARITH32(int8_t, i8, INT64_C(-128), INT64_C(127))
STRATA_CHECKED_ARITH32(int16_t, i16, INT64_C(-32768), INT64_C(32767))
STRATA_CHECKED_ARITH32(uint8_t, u8, INT64_C(0), INT64_C(255))
STRATA_CHECKED_ARITH32(uint16_t, u16, INT64_C(0), INT64_C(65535))
STRATA_INLINE STRATA_HD int64_t strata_add_i64(int64_t a, int64_t b, strata_pos at) {
    int64_t r = (int64_t)((uint64_t)a + (uint64_t)b);
    if (((a ^ r) & (b ^ r)) < 0) strata_overflow(at, STRATA_ADD_MSG);
    return r;
}
STRATA_INLINE STRATA_HD int64_t strata_sub_i64(int64_t a, int64_t b, strata_pos at) {
    int64_t r = (int64_t)((uint64_t)a - (uint64_t)b);
    if (((a ^ b) & (a ^ r)) < 0) strata_overflow(at, STRATA_SUB_MSG);
    return r;
}
STRATA_INLINE STRATA_HD int64_t strata_mul_i64(int64_t a, int64_t b, strata_pos at) {
    int64_t r = (int64_t)((uint64_t)a * (uint64_t)b);
    if (__mul64hi(a, b) != (r >> 63)) strata_overflow(at, STRATA_MUL_MSG);
    return r;
}
STRATA_INLINE STRATA_HD uint64_t strata_add_u64(uint64_t a, uint64_t b, strata_pos at) {
    uint64_t r = a + b;
    if (r < a) strata_overflow(at, STRATA_ADD_MSG);
    return r;
}
STRATA_INLINE STRATA_HD uint64_t strata_sub_u64(uint64_t a, uint64_t b, strata_pos at) {
    if (b > a) strata_overflow(at, STRATA_SUB_MSG);
    return a - b;
}
STRATA_INLINE STRATA_HD uint64_t strata_mul_u64(uint64_t a, uint64_t b, strata_pos at) {
    if (__umul64hi(a, b) != 0) strata_overflow(at, STRATA_MUL_MSG);
    return a * b;
}
#endif
/* Unary minus: of the signed minimum, and of any unsigned value but 0. */
STRATA_INLINE STRATA_HD int32_t strata_neg_i32(int32_t a, strata_pos at) {
    if (STRATA_UNLIKELY(a == INT32_MIN)) strata_overflow(at, "attempt to negate with overflow");
    return -a;
}
STRATA_INLINE STRATA_HD int64_t strata_neg_i64(int64_t a, strata_pos at) {
    if (STRATA_UNLIKELY(a == INT64_MIN)) strata_overflow(at, "attempt to negate with overflow");
    return -a;
}
STRATA_INLINE STRATA_HD uint32_t strata_neg_u32(uint32_t a, strata_pos at) {
    if (STRATA_UNLIKELY(a != 0)) strata_overflow(at, "attempt to negate with overflow");
    return 0;
}
STRATA_INLINE STRATA_HD uint64_t strata_neg_u64(uint64_t a, strata_pos at) {
    if (STRATA_UNLIKELY(a != 0)) strata_overflow(at, "attempt to negate with overflow");
    return 0;
}
#define STRATA_NEG_SIGNED(T, name, MIN)                                                            \
    STRATA_INLINE STRATA_HD T strata_neg_##name(T a, strata_pos at) {                              \
        if (STRATA_UNLIKELY(a == (MIN))) strata_overflow(at, "attempt to negate with overflow");   \
        return (T)(-a);                                                                            \
    }
#define STRATA_NEG_UNSIGNED(T, name)                                                               \
    STRATA_INLINE STRATA_HD T strata_neg_##name(T a, strata_pos at) {                              \
        if (STRATA_UNLIKELY(a != 0)) strata_overflow(at, "attempt to negate with overflow");       \
        return 0;                                                                                  \
    }
STRATA_NEG_SIGNED(int8_t, i8, INT8_MIN)
STRATA_NEG_SIGNED(int16_t, i16, INT16_MIN)
STRATA_NEG_UNSIGNED(uint8_t, u8)
STRATA_NEG_UNSIGNED(uint16_t, u16)
/* Shifts by an amount `n` (a negative one converted to a number above every width): by the width
   or more is E0913. The left shift is computed unsigned (C leaves shifting a negative value
   undefined); bits shifted out are dropped, as in Rust. */
#define STRATA_SHIFTS(T, U, name, W)                                                               \
    STRATA_INLINE STRATA_HD T strata_shl_##name(T a, uint64_t n, strata_pos at) {                  \
        if (STRATA_UNLIKELY(n >= (W))) strata_overflow(at, "attempt to shift left with overflow"); \
        return (T)((U)a << n);                                                                     \
    }                                                                                              \
    STRATA_INLINE STRATA_HD T strata_shr_##name(T a, uint64_t n, strata_pos at) {                  \
        if (STRATA_UNLIKELY(n >= (W))) strata_overflow(at, "attempt to shift right with overflow"); \
        return (T)(a >> n);                                                                        \
    }
STRATA_SHIFTS(int32_t, uint32_t, i32, 32)
STRATA_SHIFTS(int64_t, uint64_t, i64, 64)
STRATA_SHIFTS(uint32_t, uint32_t, u32, 32)
STRATA_SHIFTS(uint64_t, uint64_t, u64, 64)
STRATA_SHIFTS(int8_t, uint8_t, i8, 8)
STRATA_SHIFTS(int16_t, uint16_t, i16, 16)
STRATA_SHIFTS(uint8_t, uint8_t, u8, 8)
STRATA_SHIFTS(uint16_t, uint16_t, u16, 16)
/* A `nat` value in arithmetic with a fixed-width integer: converted to that type, where it
   fits (E0913 at the operator otherwise). */
STRATA_INLINE STRATA_HD int32_t strata_n2i32(uint64_t x, strata_pos at, const char *message) {
    if (STRATA_UNLIKELY(x > (uint64_t)INT32_MAX)) strata_overflow(at, message);
    return (int32_t)x;
}
STRATA_INLINE STRATA_HD int64_t strata_n2i64(uint64_t x, strata_pos at, const char *message) {
    if (STRATA_UNLIKELY(x > (uint64_t)INT64_MAX)) strata_overflow(at, message);
    return (int64_t)x;
}
STRATA_INLINE STRATA_HD uint32_t strata_n2u32(uint64_t x, strata_pos at, const char *message) {
    if (STRATA_UNLIKELY(x > (uint64_t)UINT32_MAX)) strata_overflow(at, message);
    return (uint32_t)x;
}
#define STRATA_N2_SMALL(T, name, MAX)                                                              \
    STRATA_INLINE STRATA_HD T strata_n2##name(uint64_t x, strata_pos at, const char *message) {    \
        if (STRATA_UNLIKELY(x > (uint64_t)(MAX))) strata_overflow(at, message);                    \
        return (T)x;                                                                               \
    }
STRATA_N2_SMALL(int8_t, i8, INT8_MAX)
STRATA_N2_SMALL(int16_t, i16, INT16_MAX)
STRATA_N2_SMALL(uint8_t, u8, UINT8_MAX)
STRATA_N2_SMALL(uint16_t, u16, UINT16_MAX)

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
/* A host size expression with a subtraction, whose steps may leave 64 bits where the result
   does not (`n*m - n*k`): checked 128-bit steps, then the result must be a 64-bit size. */
#ifdef __SIZEOF_INT128__
__extension__ typedef __int128 strata_wide; /* `__extension__`: accepted under -Wpedantic */
#else
typedef int64_t strata_wide; /* no 128-bit type: 64-bit steps, each checked, as before */
#endif
STRATA_INLINE strata_wide strata_wadd(strata_wide a, strata_wide b, strata_pos at) {
    strata_wide r;
    if (__builtin_add_overflow(a, b, &r)) strata_fail(903, at, "size arithmetic overflowed or went below zero");
    return r;
}
STRATA_INLINE strata_wide strata_wsub(strata_wide a, strata_wide b, strata_pos at) {
    strata_wide r;
    if (__builtin_sub_overflow(a, b, &r)) strata_fail(903, at, "size arithmetic overflowed or went below zero");
    return r;
}
STRATA_INLINE strata_wide strata_wmul(strata_wide a, strata_wide b, strata_pos at) {
    strata_wide r;
    if (__builtin_mul_overflow(a, b, &r)) strata_fail(903, at, "size arithmetic overflowed or went below zero");
    return r;
}
STRATA_INLINE uint64_t strata_nfit(strata_wide v, strata_pos at) {
#ifdef __SIZEOF_INT128__
    if (v < 0 || v > (strata_wide)UINT64_MAX) strata_fail(903, at, "size arithmetic overflowed or went below zero");
#else
    if (v < 0) strata_fail(903, at, "size arithmetic overflowed or went below zero");
#endif
    return (uint64_t)v;
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

/* The integer functions of the math library (`min_i32`, `abs_i64`, …); `abs` of the minimum is
   the minimum (computed unsigned, so it wraps as on `sim`). `strata_min_u64`/`strata_max_u64`
   are above. */
#define STRATA_INT_MATH(name, T)                                                        \
    STRATA_INLINE STRATA_HD T strata_min_##name(T a, T b) { return a < b ? a : b; }     \
    STRATA_INLINE STRATA_HD T strata_max_##name(T a, T b) { return a > b ? a : b; }
STRATA_INT_MATH(i32, int32_t)
STRATA_INT_MATH(i64, int64_t)
STRATA_INT_MATH(u32, uint32_t)
STRATA_INT_MATH(i8, int8_t)
STRATA_INT_MATH(u8, uint8_t)
STRATA_INT_MATH(i16, int16_t)
STRATA_INT_MATH(u16, uint16_t)
STRATA_INLINE STRATA_HD int8_t strata_abs_i8(int8_t a) { return a < 0 ? (int8_t)(0u - (uint32_t)a) : a; }
STRATA_INLINE STRATA_HD int16_t strata_abs_i16(int16_t a) { return a < 0 ? (int16_t)(0u - (uint32_t)a) : a; }
STRATA_INLINE STRATA_HD int32_t strata_abs_i32(int32_t a) { return a < 0 ? (int32_t)(0u - (uint32_t)a) : a; }
STRATA_INLINE STRATA_HD int64_t strata_abs_i64(int64_t a) { return a < 0 ? (int64_t)(UINT64_C(0) - (uint64_t)a) : a; }
/* Wrapping and saturating arithmetic, `clz`, `popcount` and `mul_hi` of the math library: the
   same bits on every device. Wrapping is computed unsigned (C's signed overflow is undefined);
   on the GPU `clz`, `popcount` and `mul_hi` are CUDA's intrinsics (`__clz`, `__popc`,
   `__umulhi`, …), in C the compiler's builtins. */
#define STRATA_WRAPPING(T, U, name)                                                               \
    STRATA_INLINE STRATA_HD T strata_wrapping_add_##name(T a, T b) { return (T)((U)a + (U)b); }  \
    STRATA_INLINE STRATA_HD T strata_wrapping_sub_##name(T a, T b) { return (T)((U)a - (U)b); }  \
    STRATA_INLINE STRATA_HD T strata_wrapping_mul_##name(T a, T b) { return (T)((U)a * (U)b); }  \
    STRATA_INLINE STRATA_HD T strata_wrapping_neg_##name(T a) { return (T)((U)0 - (U)a); }
STRATA_WRAPPING(int32_t, uint32_t, i32)
STRATA_WRAPPING(int64_t, uint64_t, i64)
STRATA_WRAPPING(uint32_t, uint32_t, u32)
STRATA_WRAPPING(uint64_t, uint64_t, u64)
/* 8- and 16-bit: computed in `uint32_t` (in `uint16_t` the product would be promoted to a signed
   `int` and could overflow it). */
STRATA_WRAPPING(int8_t, uint32_t, i8)
STRATA_WRAPPING(int16_t, uint32_t, i16)
STRATA_WRAPPING(uint8_t, uint32_t, u8)
STRATA_WRAPPING(uint16_t, uint32_t, u16)
#define STRATA_SATURATING_SIGNED(T, U, name, MIN, MAX)                                            \
    STRATA_INLINE STRATA_HD T strata_saturating_add_##name(T a, T b) {                            \
        T r = (T)((U)a + (U)b);                                                                   \
        if (((a ^ r) & (b ^ r)) < 0) return a < 0 ? (MIN) : (MAX);                               \
        return r;                                                                                 \
    }                                                                                             \
    STRATA_INLINE STRATA_HD T strata_saturating_sub_##name(T a, T b) {                            \
        T r = (T)((U)a - (U)b);                                                                   \
        if (((a ^ b) & (a ^ r)) < 0) return a < 0 ? (MIN) : (MAX);                                \
        return r;                                                                                 \
    }
STRATA_SATURATING_SIGNED(int32_t, uint32_t, i32, INT32_MIN, INT32_MAX)
STRATA_SATURATING_SIGNED(int64_t, uint64_t, i64, INT64_MIN, INT64_MAX)
STRATA_SATURATING_SIGNED(int8_t, uint32_t, i8, INT8_MIN, INT8_MAX)
STRATA_SATURATING_SIGNED(int16_t, uint32_t, i16, INT16_MIN, INT16_MAX)
#define STRATA_SATURATING_UNSIGNED(T, name, MAX)                                                  \
    STRATA_INLINE STRATA_HD T strata_saturating_add_##name(T a, T b) {                            \
        T r = a + b;                                                                              \
        return r < a ? (MAX) : r;                                                                 \
    }                                                                                             \
    STRATA_INLINE STRATA_HD T strata_saturating_sub_##name(T a, T b) { return b > a ? 0 : a - b; }
STRATA_SATURATING_UNSIGNED(uint32_t, u32, UINT32_MAX)
STRATA_SATURATING_UNSIGNED(uint64_t, u64, UINT64_MAX)
STRATA_SATURATING_UNSIGNED(uint8_t, u8, UINT8_MAX)
STRATA_SATURATING_UNSIGNED(uint16_t, u16, UINT16_MAX)
STRATA_INLINE STRATA_HD uint32_t strata_clz32(uint32_t a) {
#if defined(__CUDA_ARCH__)
    return (uint32_t)__clz((int)a);
#else
    return a == 0 ? 32u : (uint32_t)__builtin_clz(a);
#endif
}
STRATA_INLINE STRATA_HD uint64_t strata_clz64(uint64_t a) {
#if defined(__CUDA_ARCH__)
    return (uint64_t)__clzll((long long)a);
#else
    return a == 0 ? 64u : (uint64_t)__builtin_clzll(a);
#endif
}
STRATA_INLINE STRATA_HD uint32_t strata_popc32(uint32_t a) {
#if defined(__CUDA_ARCH__)
    return (uint32_t)__popc(a);
#else
    return (uint32_t)__builtin_popcount(a);
#endif
}
STRATA_INLINE STRATA_HD uint64_t strata_popc64(uint64_t a) {
#if defined(__CUDA_ARCH__)
    return (uint64_t)__popcll(a);
#else
    return (uint64_t)__builtin_popcountll(a);
#endif
}
STRATA_INLINE STRATA_HD int32_t strata_clz_i32(int32_t a) { return (int32_t)strata_clz32((uint32_t)a); }
STRATA_INLINE STRATA_HD uint32_t strata_clz_u32(uint32_t a) { return strata_clz32(a); }
STRATA_INLINE STRATA_HD int64_t strata_clz_i64(int64_t a) { return (int64_t)strata_clz64((uint64_t)a); }
STRATA_INLINE STRATA_HD uint64_t strata_clz_u64(uint64_t a) { return strata_clz64(a); }
STRATA_INLINE STRATA_HD int32_t strata_popcount_i32(int32_t a) { return (int32_t)strata_popc32((uint32_t)a); }
STRATA_INLINE STRATA_HD uint32_t strata_popcount_u32(uint32_t a) { return strata_popc32(a); }
STRATA_INLINE STRATA_HD int64_t strata_popcount_i64(int64_t a) { return (int64_t)strata_popc64((uint64_t)a); }
STRATA_INLINE STRATA_HD uint64_t strata_popcount_u64(uint64_t a) { return strata_popc64(a); }
/* 8- and 16-bit: the bit pattern zero-extended to 32 bits. */
STRATA_INLINE STRATA_HD int8_t strata_clz_i8(int8_t a) { return (int8_t)(strata_clz32((uint32_t)(uint8_t)a) - 24u); }
STRATA_INLINE STRATA_HD uint8_t strata_clz_u8(uint8_t a) { return (uint8_t)(strata_clz32((uint32_t)a) - 24u); }
STRATA_INLINE STRATA_HD int16_t strata_clz_i16(int16_t a) { return (int16_t)(strata_clz32((uint32_t)(uint16_t)a) - 16u); }
STRATA_INLINE STRATA_HD uint16_t strata_clz_u16(uint16_t a) { return (uint16_t)(strata_clz32((uint32_t)a) - 16u); }
STRATA_INLINE STRATA_HD int8_t strata_popcount_i8(int8_t a) { return (int8_t)strata_popc32((uint32_t)(uint8_t)a); }
STRATA_INLINE STRATA_HD uint8_t strata_popcount_u8(uint8_t a) { return (uint8_t)strata_popc32((uint32_t)a); }
STRATA_INLINE STRATA_HD int16_t strata_popcount_i16(int16_t a) { return (int16_t)strata_popc32((uint32_t)(uint16_t)a); }
STRATA_INLINE STRATA_HD uint16_t strata_popcount_u16(uint16_t a) { return (uint16_t)strata_popc32((uint32_t)a); }
/* The product fits 32 bits; `>>` of a negative `int32_t` is arithmetic on every compiler used. */
STRATA_INLINE STRATA_HD int8_t strata_mul_hi_i8(int8_t a, int8_t b) { return (int8_t)(((int32_t)a * (int32_t)b) >> 8); }
STRATA_INLINE STRATA_HD uint8_t strata_mul_hi_u8(uint8_t a, uint8_t b) { return (uint8_t)(((uint32_t)a * (uint32_t)b) >> 8); }
STRATA_INLINE STRATA_HD int16_t strata_mul_hi_i16(int16_t a, int16_t b) { return (int16_t)(((int32_t)a * (int32_t)b) >> 16); }
STRATA_INLINE STRATA_HD uint16_t strata_mul_hi_u16(uint16_t a, uint16_t b) { return (uint16_t)(((uint32_t)a * (uint32_t)b) >> 16); }
STRATA_INLINE STRATA_HD int32_t strata_mul_hi_i32(int32_t a, int32_t b) {
#if defined(__CUDA_ARCH__)
    return __mulhi(a, b);
#else
    return (int32_t)(((int64_t)a * (int64_t)b) >> 32);
#endif
}
STRATA_INLINE STRATA_HD uint32_t strata_mul_hi_u32(uint32_t a, uint32_t b) {
#if defined(__CUDA_ARCH__)
    return __umulhi(a, b);
#else
    return (uint32_t)(((uint64_t)a * (uint64_t)b) >> 32);
#endif
}
STRATA_INLINE STRATA_HD uint64_t strata_mul_hi_u64(uint64_t a, uint64_t b) {
#if defined(__CUDA_ARCH__)
    return __umul64hi(a, b);
#elif defined(__SIZEOF_INT128__)
    __extension__ typedef unsigned __int128 strata_u128;
    return (uint64_t)(((strata_u128)a * (strata_u128)b) >> 64);
#else
    uint64_t al = a & 0xffffffffu, ah = a >> 32, bl = b & 0xffffffffu, bh = b >> 32;
    uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
    uint64_t mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);
    return hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
#endif
}
STRATA_INLINE STRATA_HD int64_t strata_mul_hi_i64(int64_t a, int64_t b) {
#if defined(__CUDA_ARCH__)
    return __mul64hi(a, b);
#else
    /* The unsigned high half, corrected for the signs (two's complement). */
    uint64_t h = strata_mul_hi_u64((uint64_t)a, (uint64_t)b);
    if (a < 0) h -= (uint64_t)b;
    if (b < 0) h -= (uint64_t)a;
    return (int64_t)h;
#endif
}

/* `powi_f32(x, n)`: squaring in a fixed order, one IEEE operation per step (as on `sim`). */
#define STRATA_POWI(T, name)                                                      \
    STRATA_INLINE STRATA_HD T strata_powi_##name(T x, int32_t n) {              \
        T r = (T)1, b = x;                                                        \
        uint32_t e = n < 0 ? (uint32_t)0 - (uint32_t)n : (uint32_t)n;             \
        while (e != 0) {                                                          \
            if (e & 1u) r = r * b;                                                \
            e >>= 1;                                                              \
            if (e != 0) b = b * b;                                                \
        }                                                                         \
        return n < 0 ? (T)1 / r : r;                                              \
    }
STRATA_POWI(float, f32)
STRATA_POWI(double, f64)

/* `is_nan_f32`, `is_finite_f64`, …: C's classification macros (CUDA's functions on the GPU). */
STRATA_INLINE STRATA_HD bool strata_is_nan_f32(float x) { return isnan(x); }
STRATA_INLINE STRATA_HD bool strata_is_nan_f64(double x) { return isnan(x); }
STRATA_INLINE STRATA_HD bool strata_is_finite_f32(float x) { return isfinite(x); }
STRATA_INLINE STRATA_HD bool strata_is_finite_f64(double x) { return isfinite(x); }

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
STRATA_FILL_RANDOM(int8_t, i8, (int8_t)(x % 100))
STRATA_FILL_RANDOM(uint8_t, u8, (uint8_t)(x % 100))
STRATA_FILL_RANDOM(int16_t, i16, (int16_t)(x % 100))
STRATA_FILL_RANDOM(uint16_t, u16, (uint16_t)(x % 100))

/* Printing from GPU code on the cpu device (docs/language.md, "Printing from GPU code"): every
   print of a GPU thread goes to a buffer of its own (strata_kout, per OS thread) kept with the
   thread's coordinates, and when the launch ends strata_kprint_flush writes the buffers by block,
   then thread, then in the order each thread printed, as `sim` does: the same output under every
   schedule and however OpenMP runs the blocks. Host code prints to stdout directly. */
#ifdef STRATA_CUDA
#define STRATA_OUT stdout
#else
static _Thread_local FILE *strata_kout;
static _Thread_local char *strata_kbuf;
static _Thread_local size_t strata_klen;
static _Thread_local uint64_t strata_kkey[6];
#define STRATA_OUT (strata_kout != NULL ? strata_kout : stdout)
typedef struct {
    uint64_t key[6], seq;
    char *text;
    size_t len;
} strata_kprint_rec;
static strata_kprint_rec *strata_krecs;
static size_t strata_knum, strata_kcap;

/* Before a print of the GPU thread (tx, ty, tz) of block (bx, by, bz). Where no buffer can be
   made, the print goes to stdout unordered. */
STRATA_INLINE void strata_kprint_begin(uint64_t bx, uint64_t by, uint64_t bz, uint64_t tx, uint64_t ty, uint64_t tz) {
    uint64_t key[6] = {bz, by, bx, tz, ty, tx};
    memcpy(strata_kkey, key, sizeof key);
    strata_kbuf = NULL;
    strata_klen = 0;
    strata_kout = open_memstream(&strata_kbuf, &strata_klen);
}

/* After it: the text joins the launch's records. Returns 0 (used inside expressions). */
STRATA_INLINE int strata_kprint_end(void) {
    if (strata_kout == NULL) return 0;
    fclose(strata_kout);
    strata_kout = NULL;
    int ok = 0;
#pragma omp critical(strata_kprint)
    {
        if (strata_knum == strata_kcap) {
            size_t cap = strata_kcap ? 2 * strata_kcap : 64;
            strata_kprint_rec *r = (strata_kprint_rec *)realloc(strata_krecs, cap * sizeof *r);
            if (r != NULL) {
                strata_krecs = r;
                strata_kcap = cap;
            }
        }
        if (strata_knum < strata_kcap) {
            strata_kprint_rec *r = &strata_krecs[strata_knum];
            memcpy(r->key, strata_kkey, sizeof r->key);
            r->seq = strata_knum++;
            r->text = strata_kbuf;
            r->len = strata_klen;
            ok = 1;
        }
    }
    if (!ok) {
        fwrite(strata_kbuf, 1, strata_klen, stdout);
        free(strata_kbuf);
    }
    return 0;
}

STRATA_INLINE int strata_kprint_cmp(const void *a, const void *b) {
    const strata_kprint_rec *x = (const strata_kprint_rec *)a, *y = (const strata_kprint_rec *)b;
    for (int k = 0; k < 6; k++)
        if (x->key[k] != y->key[k]) return x->key[k] < y->key[k] ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* After a launch: what its threads printed, in order. */
STRATA_INLINE void strata_kprint_flush(void) {
    if (strata_knum == 0) return;
    qsort(strata_krecs, strata_knum, sizeof *strata_krecs, strata_kprint_cmp);
    for (size_t k = 0; k < strata_knum; k++) {
        fwrite(strata_krecs[k].text, 1, strata_krecs[k].len, stdout);
        free(strata_krecs[k].text);
    }
    strata_knum = 0;
}
#endif
#define strata_putc(c) fputc((c), STRATA_OUT)
STRATA_INLINE int strata_puts(const char *s) {
    fputs(s, STRATA_OUT);
    return strata_putc('\n');
}

STRATA_INLINE void strata_print_digits(const char *digits, int exp10, int negative) {
    /* value = 0.d1d2d3... * 10^(exp10) */
    int n = (int)strlen(digits);
    if (negative) strata_putc('-');
    if (exp10 <= 0) {
        fputs("0.", STRATA_OUT);
        for (int i = 0; i < -exp10; i++) strata_putc('0');
        fputs(digits, STRATA_OUT);
    } else if (exp10 >= n) {
        fputs(digits, STRATA_OUT);
        for (int i = n; i < exp10; i++) strata_putc('0');
    } else {
        fwrite(digits, 1, (size_t)exp10, STRATA_OUT);
        strata_putc('.');
        fputs(digits + exp10, STRATA_OUT);
    }
}

/* Floats print like Rust's `{}` (what `sim` prints): the shortest digits that read back to the
   same value, written without an exponent. Among the shortest digit strings that read back, the
   one nearest to the value; where the value lies exactly halfway between two, the larger in
   magnitude (Rust's rule, where C's correctly rounded `%.*e` would round to even: `6226.28125f32`
   is `6226.2813`, not `6226.2812`). The exact decimal digits come from `%.*e` (glibc prints them
   exactly); a length of k digits is tried with the k-digit truncation and the one above it, read
   back with `strtof`/`strtod` (correctly rounded, ties to even: the same interval as Rust's). */
STRATA_INLINE int strata_float_reads_back(const char *digits, int exp10, double v, int is_f32) {
    char buf[48];
    snprintf(buf, sizeof buf, "0.%se%d", digits, exp10);
    return is_f32 ? (strtof(buf, NULL) == (float)v) : (strtod(buf, NULL) == v);
}

STRATA_INLINE void strata_print_float(double v, int is_f32) {
    if (isnan(v)) { fputs("NaN", STRATA_OUT); return; }
    if (isinf(v)) { fputs(v < 0 ? "-inf" : "inf", STRATA_OUT); return; }
    if (v == 0) { fputs(signbit(v) ? "-0" : "0", STRATA_OUT); return; }
    int negative = v < 0;
    double a = fabs(v);
    /* The exact digits up to the 18th: 41 rounded digits are exact there unless a carry ran
       through digits 19 to 41 (they are then all zeros); else every digit (at most 767). */
    char exact[800];
    snprintf(exact, sizeof exact, "%.40e", a);
    int carry = 1;
    for (int i = 19; i < 42; i++) if (exact[i] != '0') carry = 0;
    if (carry) snprintf(exact, sizeof exact, "%.780e", a);
    char all[24];
    for (int i = 0; i < 19; i++) all[i] = exact[i < 1 ? 0 : i + 1];
    int exp10 = atoi(strchr(exact, 'e') + 1) + 1; /* a = 0.all * 10^exp10 */
    int max = is_f32 ? 9 : 17;
    char down[24], up[24];
    int k = 1;
    for (;; k++) {
        memcpy(down, all, (size_t)k);
        down[k] = 0;
        memcpy(up, all, (size_t)k);
        up[k] = 0;
        int up_exp = exp10, i = k - 1;
        while (i >= 0 && up[i] == '9') up[i--] = '0';
        if (i >= 0) up[i]++;
        else { memmove(up + 1, up, (size_t)k); up[0] = '1'; up[k] = 0; up_exp++; }
        int d = strata_float_reads_back(down, exp10, a, is_f32);
        int u = strata_float_reads_back(up, up_exp, a, is_f32);
        if (u && (!d || all[k] >= '5')) { memcpy(down, up, sizeof up); exp10 = up_exp; break; }
        if (d || k == max) break;
    }
    k = (int)strlen(down);
    while (k > 1 && down[k - 1] == '0') down[--k] = 0;
    strata_print_digits(down, exp10, negative);
}

STRATA_INLINE void strata_print_f64(double v) { strata_print_float(v, 0); }
STRATA_INLINE void strata_print_f32(float v) { strata_print_float((double)v, 1); }
STRATA_INLINE void strata_print_i32(int32_t v) { fprintf(STRATA_OUT, "%d", (int)v); }
STRATA_INLINE void strata_print_i64(int64_t v) { fprintf(STRATA_OUT, "%lld", (long long)v); }
STRATA_INLINE void strata_print_u32(uint32_t v) { fprintf(STRATA_OUT, "%u", (unsigned)v); }
STRATA_INLINE void strata_print_u64(uint64_t v) { fprintf(STRATA_OUT, "%llu", (unsigned long long)v); }
STRATA_INLINE void strata_print_bool(bool v) { fputs(v ? "true" : "false", STRATA_OUT); }
STRATA_INLINE void strata_print_i8(int8_t v) { fprintf(STRATA_OUT, "%d", (int)v); }
STRATA_INLINE void strata_print_u8(uint8_t v) { fprintf(STRATA_OUT, "%u", (unsigned)v); }
STRATA_INLINE void strata_print_i16(int16_t v) { fprintf(STRATA_OUT, "%d", (int)v); }
STRATA_INLINE void strata_print_u16(uint16_t v) { fprintf(STRATA_OUT, "%u", (unsigned)v); }
STRATA_INLINE int strata_put(const char *s) { return fputs(s, STRATA_OUT); }

/* The element types strata_print_nested prints. */
enum { STRATA_F32, STRATA_F64, STRATA_I32, STRATA_I64, STRATA_U32, STRATA_U64, STRATA_BOOL, STRATA_I8, STRATA_U8,
       STRATA_I16, STRATA_U16 };

/* Element k of type `kind` at `v`. */
STRATA_INLINE void strata_print_elem(int kind, const void *v, uint64_t k) {
    switch (kind) {
    case STRATA_F32: strata_print_f32(((const float *)v)[k]); break;
    case STRATA_F64: strata_print_f64(((const double *)v)[k]); break;
    case STRATA_I32: strata_print_i32(((const int32_t *)v)[k]); break;
    case STRATA_I64: strata_print_i64(((const int64_t *)v)[k]); break;
    case STRATA_U32: strata_print_u32(((const uint32_t *)v)[k]); break;
    case STRATA_U64: strata_print_u64(((const uint64_t *)v)[k]); break;
    case STRATA_I8: strata_print_i8(((const int8_t *)v)[k]); break;
    case STRATA_U8: strata_print_u8(((const uint8_t *)v)[k]); break;
    case STRATA_I16: strata_print_i16(((const int16_t *)v)[k]); break;
    case STRATA_U16: strata_print_u16(((const uint16_t *)v)[k]); break;
    default: strata_print_bool(((const bool *)v)[k]); break;
    }
}

/* Level `level` of a nested list, starting at element `at`: dims[level] parts, each holding
   inner[level] elements (so empty inner lists still print, `[[], [], []]`). */
static void strata_print_level(int kind, const void *v, const uint64_t *dims, const uint64_t *inner, int rank,
                               int level, uint64_t at) {
    strata_putc('[');
    for (uint64_t k = 0; k < dims[level]; k++) {
        if (k) fputs(", ", STRATA_OUT);
        if (level == rank - 1) strata_print_elem(kind, v, at + k);
        else strata_print_level(kind, v, dims, inner, rank, level + 1, at + k * inner[level]);
    }
    strata_putc(']');
}

/* Prints the scalars of type `kind` at `v` as nested lists of `rank` dimensions, given after it
   as uint64_t (outermost first). */
STRATA_INLINE void strata_print_nested(int kind, const void *v, int newline, int rank, ...) {
    size_t n = (size_t)(rank > 0 ? rank : 1);
    uint64_t *dims = (uint64_t *)malloc(sizeof(uint64_t) * 2 * n);
    if (dims == NULL) strata_fail(903, STRATA_AT(0, 0, 0, 0), "out of memory");
    uint64_t *inner = dims + n;
    va_list ap;
    va_start(ap, rank);
    for (int i = 0; i < rank; i++) dims[i] = va_arg(ap, uint64_t);
    va_end(ap);
    /* inner[i]: the number of elements in one part of level i (the product of the dimensions
       after i). */
    uint64_t total = 1;
    for (int i = rank - 1; i >= 0; i--) {
        inner[i] = total;
        total *= dims[i];
    }
    if (rank <= 0) fputs("[]", STRATA_OUT);
    else strata_print_level(kind, v, dims, inner, rank, 0, 0);
    if (newline) strata_putc('\n');
    free(dims);
}

/* ---- Program arguments and .npy files (host code): run-time error E0912, with the words of the
   sim device (crates/strata-sim/src/npy.rs), which accepts exactly the same arguments and files. */

/* The program's arguments, set by `main`: argument 0 is the first after the executable's name. */
static int strata_argc = 0;
static char **strata_argv = NULL;

/* A run-time error whose message is formatted like printf's. */
STRATA_INLINE void strata_failf(int code, strata_pos at, const char *format, ...) {
    va_list ap;
    va_start(ap, format);
    int n = vsnprintf(NULL, 0, format, ap);
    va_end(ap);
    char *message = (char *)malloc(n > 0 ? (size_t)n + 1 : 1);
    if (message == NULL || n < 0) strata_fail(code, at, format);
    va_start(ap, format);
    vsnprintf(message, (size_t)n + 1, format, ap);
    va_end(ap);
    strata_fail(code, at, message);
}

/* Text from the arguments as messages show it: printable ASCII as it is, every other byte as
   \xNN. (A new string; the program ends soon after, so it is not freed.) */
STRATA_INLINE const char *strata_shown(const char *s) {
    size_t n = strlen(s);
    char *out = (char *)malloc(4 * n + 1);
    if (out == NULL) return s;
    char *o = out;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p >= 0x20 && *p < 0x7f) *o++ = (char)*p;
        else o += sprintf(o, "\\x%02x", (unsigned)*p);
    }
    *o = 0;
    return out;
}

/* Argument `i`. */
STRATA_INLINE const char *strata_arg(uint64_t i, strata_pos at) {
    if (i >= (uint64_t)strata_argc)
        strata_failf(912, at, "the program has %d argument%s; argument %llu is missing", strata_argc,
                     strata_argc == 1 ? "" : "s", (unsigned long long)i);
    return strata_argv[i];
}

STRATA_INLINE uint64_t strata_arg_count(void) { return (uint64_t)strata_argc; }

/* C's rand() as glibc computes it (random(), additive feedback of degree 31), the same sequence
   as sim's (crates/strata-sim/src/crand.rs): the last 34 values in a ring, oldest at the head. */
static uint32_t strata_rand_q[34];
static unsigned strata_rand_head;
static int strata_rand_ready;
STRATA_INLINE void strata_srand(uint32_t seed) {
    int32_t r[344];
    r[0] = seed == 0 ? 1 : (int32_t)seed;
    for (int i = 1; i < 31; i++) {
        int64_t w = r[i - 1], hi = w / 127773, lo = w % 127773;
        w = 16807 * lo - 2836 * hi;
        if (w < 0) w += 2147483647;
        r[i] = (int32_t)w;
    }
    for (int i = 31; i < 34; i++) r[i] = r[i - 31];
    for (int i = 34; i < 344; i++) r[i] = (int32_t)((uint32_t)r[i - 31] + (uint32_t)r[i - 3]);
    for (int i = 0; i < 34; i++) strata_rand_q[i] = (uint32_t)r[310 + i];
    strata_rand_head = 0;
    strata_rand_ready = 1;
}
STRATA_INLINE int32_t strata_rand(void) {
    if (!strata_rand_ready) strata_srand(1);
    uint32_t v = strata_rand_q[(strata_rand_head + 3) % 34] + strata_rand_q[(strata_rand_head + 31) % 34];
    strata_rand_q[strata_rand_head] = v;
    strata_rand_head = (strata_rand_head + 1) % 34;
    return (int32_t)(v >> 1);
}

/* `output_to_stderr(on)`: the prints after it go to the standard error (CUDA-C's
   `fprintf(stderr, ...)`), by pointing descriptor 1 at descriptor 2 until it is turned off. */
STRATA_INLINE void strata_output_to_stderr(int on) {
    static int saved = -1;
    fflush(stdout);
    if (on) {
        if (saved < 0) saved = dup(1);
        dup2(2, 1);
    } else if (saved >= 0) {
        dup2(saved, 1);
    }
}

/* C's `exit(status)` (CUDA-C's `exit(n)`, `return n;` in `main`): the program ends with that
   status. Run by `strata run` (STRATA_ERRORS=spans), it says so on stderr first, so that the
   strata command can tell the program's own status from a crash. */
STRATA_INLINE void strata_exit(int32_t status) {
    const char *form = getenv("STRATA_ERRORS");
    strata_output_to_stderr(0);
    fflush(stdout);
    if (form != NULL && strcmp(form, "spans") == 0) {
        fprintf(stderr, "STRATA-EXIT %d\n", (int)(status & 0xff));
        fflush(stderr);
    }
    exit(status & 0xff);
}

/* Byte k of C's argv[i] (argv[1] is argument 0) as a C `char`, 0 at and past its end. */
STRATA_INLINE int32_t strata_arg_byte(uint64_t i, uint64_t k, strata_pos at) {
    if (i == 0)
        strata_failf(912, at, "`argv[0]`, the program's name, is known only at a constant index");
    if (i > (uint64_t)strata_argc)
        strata_failf(912, at, "`argv[%lld]` is past the program's arguments (`argc` is %d)", (long long)i,
                     strata_argc + 1);
    const char *a = strata_arg(i - 1, at);
    return k < (uint64_t)strlen(a) ? (int32_t)(signed char)a[k] : 0;
}

/* `arg_u64(i)`: decimal digits only, at most UINT64_MAX. */
STRATA_INLINE uint64_t strata_arg_u64(uint64_t i, strata_pos at) {
    const char *a = strata_arg(i, at);
    uint64_t v = 0;
    int ok = a[0] != 0;
    for (const char *p = a; ok && *p; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (*p < '0' || *p > '9' || v > (UINT64_MAX - d) / 10) ok = 0;
        else v = v * 10 + d;
    }
    if (!ok)
        strata_failf(912, at,
                     "argument %llu is `%s`, which is not a u64 (decimal digits, at most 18446744073709551615)",
                     (unsigned long long)i, strata_shown(a));
    return v;
}

STRATA_INLINE int strata_lower_is(const char *s, const char *word) {
    for (; *s && *word; s++, word++)
        if ((*s >= 'A' && *s <= 'Z' ? *s - 'A' + 'a' : *s) != *word) return 0;
    return *s == 0 && *word == 0;
}

/* The numbers `arg_f64` takes: [+-] then inf, infinity or nan (any case), or digits with an
   optional fraction and exponent. strtod itself also takes hexadecimal and leading spaces. */
STRATA_INLINE int strata_float_syntax(const char *s) {
    if (*s == '+' || *s == '-') s++;
    if (strata_lower_is(s, "inf") || strata_lower_is(s, "infinity") || strata_lower_is(s, "nan")) return 1;
    size_t digits = 0;
    while (*s >= '0' && *s <= '9') s++, digits++;
    if (*s == '.') {
        s++;
        while (*s >= '0' && *s <= '9') s++, digits++;
    }
    if (digits == 0) return 0;
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-') s++;
        size_t exp = 0;
        while (*s >= '0' && *s <= '9') s++, exp++;
        if (exp == 0) return 0;
    }
    return *s == 0;
}

/* `arg_f64(i)`: correctly rounded (glibc's strtod, like Rust's parse). */
STRATA_INLINE double strata_arg_f64(uint64_t i, strata_pos at) {
    const char *a = strata_arg(i, at);
    if (!strata_float_syntax(a))
        strata_failf(912, at, "argument %llu is `%s`, which is not a number (an f64 such as 2.5, -1e-3, inf or nan)",
                     (unsigned long long)i, strata_shown(a));
    return strtod(a, NULL);
}

/* numpy's type string, Strata's name and the size of each element kind of strata_print_nested. */
STRATA_INLINE const char *strata_npy_descr(int kind) {
    switch (kind) {
    case STRATA_F32: return "<f4";
    case STRATA_F64: return "<f8";
    case STRATA_I32: return "<i4";
    case STRATA_I64: return "<i8";
    case STRATA_U32: return "<u4";
    case STRATA_U64: return "<u8";
    case STRATA_I8: return "|i1";
    case STRATA_U8: return "|u1";
    case STRATA_I16: return "<i2";
    case STRATA_U16: return "<u2";
    default: return "|b1";
    }
}
STRATA_INLINE const char *strata_npy_type_name(const char *descr) {
    static const char *const names[][2] = {{"|b1", "bool"}, {"<i4", "i32"}, {"<i8", "i64"}, {"<u4", "u32"},
                                           {"<u8", "u64"},  {"<f4", "f32"}, {"<f8", "f64"}, {"|i1", "i8"},
                                           {"|u1", "u8"},   {"<i2", "i16"}, {"<u2", "u16"}};
    for (int k = 0; k < 11; k++)
        if (strcmp(descr, names[k][0]) == 0) return names[k][1];
    return NULL;
}
STRATA_INLINE uint64_t strata_npy_size(int kind) {
    return kind == STRATA_BOOL || kind == STRATA_I8 || kind == STRATA_U8 ? 1
           : kind == STRATA_I16 || kind == STRATA_U16                  ? 2
           : kind == STRATA_F32 || kind == STRATA_I32 || kind == STRATA_U32 ? 4
                                                                         : 8;
}

/* An open .npy file and what its header says. */
typedef struct {
    FILE *f;
    const char *name; /* as messages show it (strata_shown), freed by strata_npy_close */
    char descr[64];
    int fortran, rank;
    uint64_t shape[64];
    uint64_t data_offset, len;
} strata_npy;

/* A shape as Python writes a tuple: (), (5,), (3, 4). Into a new string. */
STRATA_INLINE const char *strata_npy_shape_text(const uint64_t *shape, int rank) {
    char *out = (char *)malloc(24 * (size_t)(rank + 1) + 4);
    if (out == NULL) return "(…)";
    char *o = out;
    *o++ = '(';
    for (int k = 0; k < rank; k++) o += sprintf(o, k ? ", %llu" : "%llu", (unsigned long long)shape[k]);
    if (rank == 1) *o++ = ',';
    *o++ = ')';
    *o = 0;
    return out;
}

/* The header dictionary's grammar (the sim device's `Dict`): `{`, entries `'key': value`
   separated by commas (one after the last allowed), `}`, spaces and tabs around every token; the
   keys exactly descr (printable ASCII without quotes or backslashes, at most 63 characters),
   fortran_order (True or False) and shape (a tuple of decimal integers up to UINT64_MAX), each
   once, in any order, in single or double quotes; the number of elements fits in 64 bits. */
typedef struct {
    const char *s, *end;
} strata_npy_text;

STRATA_INLINE void strata_npy_ws(strata_npy_text *t) {
    while (t->s < t->end && (*t->s == ' ' || *t->s == '\t')) t->s++;
}
STRATA_INLINE int strata_npy_eat(strata_npy_text *t, char c) {
    strata_npy_ws(t);
    if (t->s < t->end && *t->s == c) {
        t->s++;
        return 1;
    }
    return 0;
}
STRATA_INLINE int strata_npy_word(strata_npy_text *t, const char *w) {
    strata_npy_ws(t);
    size_t n = strlen(w);
    if ((size_t)(t->end - t->s) >= n && memcmp(t->s, w, n) == 0) {
        t->s += n;
        return 1;
    }
    return 0;
}
/* A string into `out` (64 bytes). */
STRATA_INLINE int strata_npy_string(strata_npy_text *t, char *out) {
    strata_npy_ws(t);
    if (t->s >= t->end || (*t->s != '\'' && *t->s != '"')) return 0;
    char quote = *t->s++;
    size_t n = 0;
    for (; t->s < t->end; t->s++) {
        unsigned char c = (unsigned char)*t->s;
        if (c == (unsigned char)quote) {
            t->s++;
            out[n] = 0;
            return 1;
        }
        if (c < 0x20 || c >= 0x7f || c == '\\' || c == '\'' || c == '"' || n >= 63) return 0;
        out[n++] = (char)c;
    }
    return 0;
}
STRATA_INLINE int strata_npy_int(strata_npy_text *t, uint64_t *v) {
    strata_npy_ws(t);
    const char *start = t->s;
    *v = 0;
    for (; t->s < t->end && *t->s >= '0' && *t->s <= '9'; t->s++) {
        unsigned d = (unsigned)(*t->s - '0');
        if (*v > (UINT64_MAX - d) / 10) return 0;
        *v = *v * 10 + d;
    }
    return t->s > start && !(t->s - start > 1 && *start == '0');
}
STRATA_INLINE int strata_npy_shape(strata_npy_text *t, strata_npy *h) {
    h->rank = 0;
    if (!strata_npy_eat(t, '(')) return 0;
    if (strata_npy_eat(t, ')')) return 1;
    for (;;) {
        if (h->rank >= 64 || !strata_npy_int(t, &h->shape[h->rank])) return 0;
        h->rank++;
        int comma = strata_npy_eat(t, ',');
        if (strata_npy_eat(t, ')')) return comma || h->rank > 1; /* (5) is a number, not a tuple */
        if (!comma) return 0;
    }
}
STRATA_INLINE int strata_npy_dict(strata_npy_text *t, strata_npy *h) {
    int descr = 0, fortran = 0, shape = 0;
    char key[64];
    if (!strata_npy_eat(t, '{')) return 0;
    for (;;) {
        if (strata_npy_eat(t, '}')) break;
        if (!strata_npy_string(t, key) || !strata_npy_eat(t, ':')) return 0;
        if (strcmp(key, "descr") == 0 && !descr) {
            if (!strata_npy_string(t, h->descr)) return 0;
            descr = 1;
        } else if (strcmp(key, "fortran_order") == 0 && !fortran) {
            if (strata_npy_word(t, "True")) h->fortran = 1;
            else if (strata_npy_word(t, "False")) h->fortran = 0;
            else return 0;
            fortran = 1;
        } else if (strcmp(key, "shape") == 0 && !shape) {
            if (!strata_npy_shape(t, h)) return 0;
            shape = 1;
        } else {
            return 0;
        }
        if (!strata_npy_eat(t, ',')) {
            if (!strata_npy_eat(t, '}')) return 0;
            break;
        }
    }
    strata_npy_ws(t);
    if (t->s != t->end || !descr || !fortran || !shape) return 0;
    uint64_t count = 1;
    for (int k = 0; k < h->rank; k++) {
        if (h->shape[k] != 0 && count > UINT64_MAX / h->shape[k]) return 0;
        count *= h->shape[k];
    }
    return 1;
}

STRATA_INLINE void strata_npy_cannot(const strata_npy *h, strata_pos at) {
    strata_failf(912, at, "cannot read `%s`: %s", h->name, strerror(errno));
}

/* Opens the .npy file named by argument `i` and reads its header. */
STRATA_INLINE void strata_npy_open(strata_npy *h, uint64_t i, strata_pos at) {
    const char *path = strata_arg(i, at);
    h->name = strata_shown(path);
    errno = 0;
    h->f = fopen(path, "rb");
    if (h->f == NULL) strata_npy_cannot(h, at);
    struct stat st;
    if (fstat(fileno(h->f), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
        strata_failf(912, at, "cannot read `%s`: not a regular file (an .npy input is read more than once: give a file, not a pipe or a device)", h->name);
    unsigned char pre[12];
    size_t got = fread(pre, 1, 12, h->f);
    if (got < 12 && ferror(h->f)) strata_npy_cannot(h, at);
    long len;
    if (fseek(h->f, 0, SEEK_END) != 0 || (len = ftell(h->f)) < 0) strata_npy_cannot(h, at);
    h->len = (uint64_t)len;
    if (got < 6 || memcmp(pre, "\x93NUMPY", 6) != 0)
        strata_failf(912, at, "`%s` is not an .npy file: it does not start with the .npy magic string", h->name);
    if (got < 8) strata_failf(912, at, "`%s` is not an .npy file: its header is cut short", h->name);
    uint64_t start, hlen;
    if (pre[6] == 1 && pre[7] == 0 && got >= 10) {
        start = 10;
        hlen = (uint64_t)pre[8] | (uint64_t)pre[9] << 8;
    } else if ((pre[6] == 2 || pre[6] == 3) && pre[7] == 0 && got >= 12) {
        start = 12;
        hlen = (uint64_t)pre[8] | (uint64_t)pre[9] << 8 | (uint64_t)pre[10] << 16 | (uint64_t)pre[11] << 24;
    } else if (pre[6] >= 1 && pre[6] <= 3 && pre[7] == 0) {
        strata_failf(912, at, "`%s` is not an .npy file: its header is cut short", h->name);
    } else {
        strata_failf(912, at,
                     "`%s` is an .npy file of format version %u.%u, which cannot be read (versions 1.0, 2.0 and 3.0 can)",
                     h->name, (unsigned)pre[6], (unsigned)pre[7]);
    }
    if (start + hlen > h->len) strata_failf(912, at, "`%s` is not an .npy file: its header is cut short", h->name);
    char *text = (char *)strata_alloc(hlen, 1, at);
    if (fseek(h->f, (long)start, SEEK_SET) != 0) strata_npy_cannot(h, at);
    if (fread(text, 1, (size_t)hlen, h->f) < hlen) {
        if (ferror(h->f)) strata_npy_cannot(h, at);
        strata_failf(912, at, "`%s` is not an .npy file: its header is cut short", h->name);
    }
    strata_npy_text t = {text, text + hlen};
    if (hlen > 0 && text[hlen - 1] == '\n') t.end--;
    if (!strata_npy_dict(&t, h))
        strata_failf(912, at,
                     "`%s` is not an .npy file: its header is not a dictionary of `descr`, `fortran_order` and `shape`",
                     h->name);
    free(text);
    h->data_offset = start + hlen;
}

STRATA_INLINE void strata_npy_close(strata_npy *h) {
    fclose(h->f);
    free((void *)h->name);
}

/* `npy_len(i)` (axis 0) and `npy_dim(i, axis)`. */
STRATA_INLINE uint64_t strata_npy_dim(uint64_t i, uint64_t axis, strata_pos at) {
    strata_npy h;
    strata_npy_open(&h, i, at);
    if (axis >= (uint64_t)h.rank)
        strata_failf(912, at, "`%s` has %d dimension%s (shape %s); axis %llu does not exist", h.name, h.rank,
                     h.rank == 1 ? "" : "s", strata_npy_shape_text(h.shape, h.rank), (unsigned long long)axis);
    strata_npy_close(&h);
    return h.shape[axis];
}

/* `load_npy(i)`: a new host array of `rank` (1 or 2) dimensions d0 (, d1) of element `kind`. */
STRATA_INLINE void *strata_load_npy(uint64_t i, int kind, int rank, uint64_t d0, uint64_t d1, strata_pos at) {
    strata_npy h;
    strata_npy_open(&h, i, at);
    uint64_t dims[2] = {d0, d1};
    const char *want = strata_npy_descr(kind);
    if (h.descr[0] == '>')
        strata_failf(912, at, "`%s` holds big-endian data (%s); only little-endian .npy files can be read", h.name,
                     h.descr);
    if (strcmp(h.descr, want) != 0) {
        const char *t = strata_npy_type_name(h.descr);
        strata_failf(912, at, "`%s` holds %s%s%s%s but the program reads %s", h.name, h.descr, t ? " (" : "",
                     t ? t : "", t ? ")" : "", strata_npy_type_name(want));
    }
    if (h.fortran)
        strata_failf(912, at,
                     "`%s` is stored in Fortran order; only C order can be read (save `np.ascontiguousarray(a)`)",
                     h.name);
    int same = h.rank == rank;
    for (int k = 0; same && k < rank; k++) same = h.shape[k] == dims[k];
    if (!same)
        strata_failf(912, at, "`%s` holds an array of shape %s but the program reads one of shape %s", h.name,
                     strata_npy_shape_text(h.shape, h.rank), strata_npy_shape_text(dims, rank));
    uint64_t count = rank == 2 ? d0 * d1 : d0, size = strata_npy_size(kind), has = h.len - h.data_offset;
    if (size != 0 && count > UINT64_MAX / size)
        strata_failf(912, at, "`%s` is cut short: shape %s of %s needs more than 2^64 bytes of data, it has %llu",
                     h.name, strata_npy_shape_text(dims, rank), h.descr, (unsigned long long)has);
    if (count * size > has)
        strata_failf(912, at, "`%s` is cut short: shape %s of %s needs %llu bytes of data, it has %llu", h.name,
                     strata_npy_shape_text(dims, rank), h.descr, (unsigned long long)(count * size),
                     (unsigned long long)has);
    if (count * size < has)
        strata_failf(912, at, "`%s` is longer than its header says: shape %s of %s is %llu bytes of data, it has %llu",
                     h.name, strata_npy_shape_text(dims, rank), h.descr, (unsigned long long)(count * size),
                     (unsigned long long)has);
    void *data = strata_alloc(count, (size_t)size, at);
    if (fseek(h.f, (long)h.data_offset, SEEK_SET) != 0) strata_npy_cannot(&h, at);
    if (fread(data, (size_t)size, (size_t)count, h.f) < count) {
        if (ferror(h.f)) strata_npy_cannot(&h, at);
        strata_failf(912, at, "`%s` is cut short", h.name);
    }
    if (kind == STRATA_BOOL) {
        const unsigned char *b = (const unsigned char *)data;
        for (uint64_t k = 0; k < count; k++)
            if (b[k] > 1)
                strata_failf(912, at, "`%s` holds a bool that is neither 0 nor 1 (element %llu)", h.name,
                             (unsigned long long)k);
    }
    strata_npy_close(&h);
    return data;
}

/* `save_npy(i, value)`: a version 1.0 .npy file, with the header numpy's np.save writes. */
STRATA_INLINE void strata_save_npy(uint64_t i, int kind, const void *data, int rank, uint64_t d0, uint64_t d1,
                                   strata_pos at) {
    const char *path = strata_arg(i, at);
    uint64_t count = rank == 2 ? d0 * d1 : d0;
    char shape[48], header[256];
    if (rank == 2) snprintf(shape, sizeof shape, "(%llu, %llu)", (unsigned long long)d0, (unsigned long long)d1);
    else snprintf(shape, sizeof shape, "(%llu,)", (unsigned long long)d0);
    int n = snprintf(header + 10, sizeof header - 10, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                     strata_npy_descr(kind), shape);
    size_t total = ((size_t)(10 + n + 1) + 63) / 64 * 64;
    memcpy(header, "\x93NUMPY\x01\x00", 8);
    header[8] = (char)((total - 10) & 0xff);
    header[9] = (char)((total - 10) >> 8);
    memset(header + 10 + n, ' ', total - 11 - (size_t)n);
    header[total - 1] = '\n';
    errno = 0;
    FILE *f = fopen(path, "wb");
    if (f == NULL) strata_failf(912, at, "cannot write `%s`: %s", strata_shown(path), strerror(errno));
    size_t size = (size_t)strata_npy_size(kind);
    if (fwrite(header, 1, total, f) < total || (count > 0 && fwrite(data, size, (size_t)count, f) < count) ||
        fflush(f) != 0)
        strata_failf(912, at, "cannot write `%s`: %s", strata_shown(path), strerror(errno));
    if (fclose(f) != 0) strata_failf(912, at, "cannot write `%s`: %s", strata_shown(path), strerror(errno));
}

#ifdef STRATA_CUDA
/* Every CUDA API call is checked; a failure names the Strata source position that caused it (for
   a kernel that failed, the first call that waited for it). Out of GPU memory is E0903, like out
   of memory on the host. */
STRATA_INLINE void strata_cuda_check(cudaError_t e, strata_pos at) {
    if (e == cudaErrorMemoryAllocation) strata_fail(903, at, "out of GPU memory");
    /* No GPU, no driver, or a driver too old for this program: the machine's problem (E1003,
       exit status 2), with what to install. */
    if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver || e == cudaErrorStubLibrary ||
        e == cudaErrorDevicesUnavailable || e == cudaErrorSystemDriverMismatch ||
        e == cudaErrorCompatNotSupportedOnDevice || e == cudaErrorSystemNotReady ||
        e == cudaErrorUnsupportedPtxVersion) {
        const char *what = cudaGetErrorString(e);
        const char *help = "; install the NVIDIA driver for this machine's GPU, as new as the CUDA toolkit "
                           "(`nvidia-smi` must list the GPU), or run the program on the cpu with `strata run` "
                           "(strata explain E1003)";
        size_t n = strlen(what) + strlen(help) + 32;
        char *message = (char *)malloc(n);
        if (message == NULL) strata_fail_status(1003, at, what, 2);
        snprintf(message, n, "no usable GPU: %s%s", what, help);
        strata_fail_status(1003, at, message, 2);
    }
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

/* A new stream or event (`cudaStreamCreate`, `cudaEventCreate`), checked. */
STRATA_INLINE cudaStream_t strata_cuda_stream_new(strata_pos at) {
    cudaStream_t s = NULL;
    strata_cuda_check(cudaStreamCreate(&s), at);
    return s;
}
STRATA_INLINE cudaEvent_t strata_cuda_event_new(strata_pos at) {
    cudaEvent_t e = NULL;
    strata_cuda_check(cudaEventCreate(&e), at);
    return e;
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
