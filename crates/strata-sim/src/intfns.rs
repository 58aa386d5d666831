//! The integer functions of the math library beyond `min`, `max` and `abs`: wrapping and
//! saturating arithmetic, `clz`, `popcount` and `mul_hi` (docs/language.md, "Math library"),
//! as Rust's integer methods compute them, and `powi` of floats; the C runtime (`strata_wrapping_add_i32`, …) and
//! CUDA's intrinsics give the same bits.

use crate::Value;
use strata_ir::ir::IntFn;

/// `f` of `x` (and `y` for two arguments), both of one integer type; `None` for other operands.
pub(crate) fn int_fn(f: IntFn, x: &Value, y: &Value) -> Option<Value> {
    macro_rules! go {
        ($a:expr, $b:expr, $ctor:ident, $t:ty, $wide:ty, $bits:expr) => {{
            let (a, b): ($t, $t) = ($a, $b);
            $ctor(match f {
                IntFn::WrappingAdd => a.wrapping_add(b),
                IntFn::WrappingSub => a.wrapping_sub(b),
                IntFn::WrappingMul => a.wrapping_mul(b),
                IntFn::WrappingNeg => a.wrapping_neg(),
                IntFn::SaturatingAdd => a.saturating_add(b),
                IntFn::SaturatingSub => a.saturating_sub(b),
                IntFn::Clz => a.leading_zeros() as $t,
                IntFn::Popcount => a.count_ones() as $t,
                IntFn::MulHi => ((<$wide>::from(a) * <$wide>::from(b)) >> $bits) as $t,
                IntFn::Min => a.min(b),
                IntFn::Max => a.max(b),
                IntFn::Abs => a.wrapping_abs_or_self(),
            })
        }};
    }
    use Value::*;
    Some(match (x, y) {
        (I32(a), I32(b)) => go!(*a, *b, I32, i32, i64, 32),
        (I32(a), Unit) => go!(*a, 0, I32, i32, i64, 32),
        (I64(a), I64(b)) => go!(*a, *b, I64, i64, i128, 64),
        (I64(a), Unit) => go!(*a, 0, I64, i64, i128, 64),
        (U32(a), U32(b)) => go!(*a, *b, U32, u32, u64, 32),
        (U32(a), Unit) => go!(*a, 0, U32, u32, u64, 32),
        (U64(a), U64(b)) => go!(*a, *b, U64, u64, u128, 64),
        (U64(a), Unit) => go!(*a, 0, U64, u64, u128, 64),
        (I8(a), I8(b)) => go!(*a, *b, I8, i8, i16, 8),
        (I8(a), Unit) => go!(*a, 0, I8, i8, i16, 8),
        (U8(a), U8(b)) => go!(*a, *b, U8, u8, u16, 8),
        (U8(a), Unit) => go!(*a, 0, U8, u8, u16, 8),
        (I16(a), I16(b)) => go!(*a, *b, I16, i16, i32, 16),
        (I16(a), Unit) => go!(*a, 0, I16, i16, i32, 16),
        (U16(a), U16(b)) => go!(*a, *b, U16, u16, u32, 16),
        (U16(a), Unit) => go!(*a, 0, U16, u16, u32, 16),
        _ => return None,
    })
}

/// `powi_f32(x, n)`: squaring in the order the C runtime's `strata_powi_f32` uses, one `f32`
/// operation per step.
pub(crate) fn powi_f32(x: f32, n: i32) -> f32 {
    let (mut r, mut b, mut e) = (1.0f32, x, n.unsigned_abs());
    while e != 0 {
        if e & 1 != 0 {
            r *= b;
        }
        e >>= 1;
        if e != 0 {
            b *= b;
        }
    }
    if n < 0 {
        1.0 / r
    } else {
        r
    }
}

/// `powi_f64(x, n)`: as [`powi_f32`], in `f64`.
pub(crate) fn powi_f64(x: f64, n: i32) -> f64 {
    let (mut r, mut b, mut e) = (1.0f64, x, n.unsigned_abs());
    while e != 0 {
        if e & 1 != 0 {
            r *= b;
        }
        e >>= 1;
        if e != 0 {
            b *= b;
        }
    }
    if n < 0 {
        1.0 / r
    } else {
        r
    }
}

/// `abs` as the math library defines it: the minimum of a signed type is its own absolute value
/// (it wraps); an unsigned value is its own.
trait WrappingAbs {
    fn wrapping_abs_or_self(self) -> Self;
}

macro_rules! abs_impl {
    ($($t:ty: $e:expr),*) => {$(
        impl WrappingAbs for $t {
            fn wrapping_abs_or_self(self) -> Self {
                let f: fn($t) -> $t = $e;
                f(self)
            }
        }
    )*};
}
abs_impl!(
    i8: |x| x.wrapping_abs(),
    i16: |x| x.wrapping_abs(),
    i32: |x| x.wrapping_abs(),
    i64: |x| x.wrapping_abs(),
    u8: |x| x,
    u16: |x| x,
    u32: |x| x,
    u64: |x| x
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_the_c_runtime_on_edge_cases() {
        let i = |v| Value::I32(v);
        assert!(matches!(int_fn(IntFn::WrappingAdd, &i(i32::MAX), &i(1)), Some(Value::I32(i32::MIN))));
        assert!(matches!(int_fn(IntFn::SaturatingSub, &i(i32::MIN), &i(1)), Some(Value::I32(i32::MIN))));
        assert!(matches!(int_fn(IntFn::Clz, &i(0), &Value::Unit), Some(Value::I32(32))));
        assert!(matches!(int_fn(IntFn::Clz, &i(-1), &Value::Unit), Some(Value::I32(0))));
        assert!(matches!(int_fn(IntFn::Popcount, &i(-1), &Value::Unit), Some(Value::I32(32))));
        assert!(matches!(int_fn(IntFn::MulHi, &i(-2), &i(3)), Some(Value::I32(-1))));
        assert!(matches!(
            int_fn(IntFn::MulHi, &Value::U64(u64::MAX), &Value::U64(u64::MAX)),
            Some(Value::U64(x)) if x == u64::MAX - 1
        ));
        assert!(matches!(int_fn(IntFn::MulHi, &Value::I64(i64::MIN), &Value::I64(-1)), Some(Value::I64(0))));
    }
}
