//! The math library of `Builtin::Math` on `sim`: the host's C math library, the functions the
//! `cpu` device's emitted C calls (`expf`, `exp`, …), so that both give the same bits. The exact
//! functions (`fabs`, `fmin`, `floor`, `fmod`, `fma`, `copysign`, …: correctly rounded or no
//! rounding at all) are Rust's, which give the only possible result; the rest are the C library's
//! functions of the same names, looked up in `libm.so.6` (never an approximation of Rust's own). `rsqrt` is
//! `1 / sqrt(x)`, as the C emitter writes it.

use crate::ir::MathFn;
use std::sync::OnceLock;

// Found by name in the C library's `libm` when first called (`dlopen`/`dlsym`), not linked:
// Rust's own `compiler_builtins` defines some of these symbols (its port of musl's libm: `cbrt`
// is one), and the linker may bind a plain `extern "C"` declaration to it, which differs from
// glibc's in the last bit.
extern "C" {
    fn dlopen(filename: *const std::ffi::c_char, flags: std::ffi::c_int) -> *mut std::ffi::c_void;
    fn dlsym(handle: *mut std::ffi::c_void, symbol: *const std::ffi::c_char) -> *mut std::ffi::c_void;
}

/// The address of the C math function `name` (with its NUL): from `libm.so.6`, else from
/// whatever the process has loaded.
fn symbol(name: &'static str) -> usize {
    static LIBM: OnceLock<usize> = OnceLock::new();
    // SAFETY: `dlopen` and `dlsym` of NUL-terminated names.
    unsafe {
        let lib = *LIBM.get_or_init(|| dlopen(c"libm.so.6".as_ptr(), 2 /* RTLD_NOW */) as usize);
        let p = dlsym(lib as *mut std::ffi::c_void, name.as_ptr().cast());
        assert!(!p.is_null(), "the C math library has no `{}`", name.trim_end_matches('\0'));
        p as usize
    }
}

macro_rules! libm {
    ($($name:ident($($a:ident),+): $t:ty;)*) => {$(
        fn $name($($a: $t),+) -> $t {
            static P: OnceLock<usize> = OnceLock::new();
            let p = *P.get_or_init(|| symbol(concat!(stringify!($name), "\0")));
            // SAFETY: `p` is the C library's function of this name, whose C type this is.
            let f: extern "C" fn($($a: $t),+) -> $t = unsafe { std::mem::transmute::<usize, _>(p) };
            f($($a),+)
        }
    )*};
}

libm! {
    expf(x): f32;
    logf(x): f32;
    sinf(x): f32;
    cosf(x): f32;
    tanf(x): f32;
    tanhf(x): f32;
    exp2f(x): f32;
    expm1f(x): f32;
    log2f(x): f32;
    log10f(x): f32;
    log1pf(x): f32;
    asinf(x): f32;
    acosf(x): f32;
    atanf(x): f32;
    sinhf(x): f32;
    coshf(x): f32;
    cbrtf(x): f32;
    erff(x): f32;
    powf(x, y): f32;
    atan2f(x, y): f32;
    hypotf(x, y): f32;
    exp(x): f64;
    log(x): f64;
    sin(x): f64;
    cos(x): f64;
    tan(x): f64;
    tanh(x): f64;
    exp2(x): f64;
    expm1(x): f64;
    log2(x): f64;
    log10(x): f64;
    log1p(x): f64;
    asin(x): f64;
    acos(x): f64;
    atan(x): f64;
    sinh(x): f64;
    cosh(x): f64;
    cbrt(x): f64;
    erf(x): f64;
    pow(x, y): f64;
    atan2(x, y): f64;
    hypot(x, y): f64;
}

/// `m` of `f32` arguments (`y`, `z` unused where it takes fewer).
pub(crate) fn f32(m: MathFn, x: f32, y: f32, z: f32) -> f32 {
    use MathFn::*;
    match m {
        Fabs => x.abs(),
        Fmin => x.min(y),
        Fmax => x.max(y),
        Floor => x.floor(),
        Ceil => x.ceil(),
        Trunc => x.trunc(),
        Round => x.round(),
        Fmod => x % y,
        Fma => x.mul_add(y, z),
        Copysign => x.copysign(y),
        Rsqrt => 1.0 / x.sqrt(),
        Exp => expf(x),
        Log => logf(x),
        Sin => sinf(x),
        Cos => cosf(x),
        Tan => tanf(x),
        Tanh => tanhf(x),
        Exp2 => exp2f(x),
        Expm1 => expm1f(x),
        Log2 => log2f(x),
        Log10 => log10f(x),
        Log1p => log1pf(x),
        Asin => asinf(x),
        Acos => acosf(x),
        Atan => atanf(x),
        Sinh => sinhf(x),
        Cosh => coshf(x),
        Cbrt => cbrtf(x),
        Erf => erff(x),
        Pow => powf(x, y),
        Atan2 => atan2f(x, y),
        Hypot => hypotf(x, y),
    }
}

/// `m` of `f64` arguments (`y`, `z` unused where it takes fewer).
pub(crate) fn f64(m: MathFn, x: f64, y: f64, z: f64) -> f64 {
    use MathFn::*;
    match m {
        Fabs => x.abs(),
        Fmin => x.min(y),
        Fmax => x.max(y),
        Floor => x.floor(),
        Ceil => x.ceil(),
        Trunc => x.trunc(),
        Round => x.round(),
        Fmod => x % y,
        Fma => x.mul_add(y, z),
        Copysign => x.copysign(y),
        Rsqrt => 1.0 / x.sqrt(),
        Exp => exp(x),
        Log => log(x),
        Sin => sin(x),
        Cos => cos(x),
        Tan => tan(x),
        Tanh => tanh(x),
        Exp2 => exp2(x),
        Expm1 => expm1(x),
        Log2 => log2(x),
        Log10 => log10(x),
        Log1p => log1p(x),
        Asin => asin(x),
        Acos => acos(x),
        Atan => atan(x),
        Sinh => sinh(x),
        Cosh => cosh(x),
        Cbrt => cbrt(x),
        Erf => erf(x),
        Pow => pow(x, y),
        Atan2 => atan2(x, y),
        Hypot => hypot(x, y),
    }
}
