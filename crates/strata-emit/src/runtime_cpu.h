/* Overflow checks deferred to the end of a thread loop (cpu device only, `emit/deferred.rs`):
   the operation's wrapped result, and whether it overflowed OR-ed into a flag that the code
   after the thread loop tests once (E0913 at the same operator, as `strata_add_*` reports it).
   Written as compares GCC vectorises (not `__builtin_*_overflow`, except for 64-bit products). */
STRATA_INLINE uint32_t strata_dadd_u32(uint32_t a, uint32_t b, unsigned *o) {
    uint32_t r = a + b;
    *o |= r < a;
    return r;
}
STRATA_INLINE uint32_t strata_dsub_u32(uint32_t a, uint32_t b, unsigned *o) {
    *o |= b > a;
    return a - b;
}
STRATA_INLINE uint32_t strata_dmul_u32(uint32_t a, uint32_t b, unsigned *o) {
    uint64_t r = (uint64_t)a * b;
    *o |= r > UINT32_MAX;
    return (uint32_t)r;
}
STRATA_INLINE int32_t strata_dadd_i32(int32_t a, int32_t b, unsigned *o) {
    int64_t r = (int64_t)a + b;
    *o |= r < INT32_MIN || r > INT32_MAX;
    return (int32_t)r;
}
STRATA_INLINE int32_t strata_dsub_i32(int32_t a, int32_t b, unsigned *o) {
    int64_t r = (int64_t)a - b;
    *o |= r < INT32_MIN || r > INT32_MAX;
    return (int32_t)r;
}
STRATA_INLINE int32_t strata_dmul_i32(int32_t a, int32_t b, unsigned *o) {
    int64_t r = (int64_t)a * b;
    *o |= r < INT32_MIN || r > INT32_MAX;
    return (int32_t)r;
}
STRATA_INLINE uint64_t strata_dadd_u64(uint64_t a, uint64_t b, unsigned *o) {
    uint64_t r = a + b;
    *o |= r < a;
    return r;
}
STRATA_INLINE uint64_t strata_dsub_u64(uint64_t a, uint64_t b, unsigned *o) {
    *o |= b > a;
    return a - b;
}
STRATA_INLINE uint64_t strata_dmul_u64(uint64_t a, uint64_t b, unsigned *o) {
    uint64_t r;
    *o |= __builtin_mul_overflow(a, b, &r);
    return r;
}
STRATA_INLINE int64_t strata_dadd_i64(int64_t a, int64_t b, unsigned *o) {
    int64_t r = (int64_t)((uint64_t)a + (uint64_t)b);
    *o |= ((a ^ r) & (b ^ r)) < 0;
    return r;
}
STRATA_INLINE int64_t strata_dsub_i64(int64_t a, int64_t b, unsigned *o) {
    int64_t r = (int64_t)((uint64_t)a - (uint64_t)b);
    *o |= ((a ^ b) & (a ^ r)) < 0;
    return r;
}
STRATA_INLINE int64_t strata_dmul_i64(int64_t a, int64_t b, unsigned *o) {
    int64_t r;
    *o |= __builtin_mul_overflow(a, b, &r);
    return r;
}
