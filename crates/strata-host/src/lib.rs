//! The run-time side of Strata kernels called from Rust.
//!
//! `strata-build` (a build dependency, used in `build.rs`) checks a crate's `.strata` files,
//! compiles their kernels into a C library and writes one Rust module per file; this crate (a
//! normal dependency) is what those modules use: the [`Error`] every generated launch function
//! returns and the [`include_kernels!`] macro that brings a module in. It has no dependencies, so
//! the application does not link the Strata compiler.
//!
//! ```ignore
//! mod kernels {
//!     strata_host::include_kernels!("saxpy");
//! }
//! kernels::saxpy(2.0, &x, &mut y)?;
//! ```
//!
//! See docs/libraries.md, "From Rust".

use std::fmt;

/// Why a generated launch function ran nothing. Every argument the kernel's signature constrains
/// is checked before the kernel runs; none of these is undefined behaviour, and the kernel's
/// outputs are untouched when one is returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// A slice argument has the wrong number of elements for the kernel's sizes.
    Length {
        /// The kernel (its Strata name).
        kernel: &'static str,
        /// The parameter.
        param: &'static str,
        /// The number of elements the signature asks for, as Strata writes it (`n * n`).
        expected: &'static str,
        /// That number for the sizes of this call, or `None` where it does not fit 64 bits.
        expected_len: Option<u64>,
        /// The slice's length.
        actual: usize,
    },
    /// A size parameter cannot be derived from the length of the slice that determines it: `n` of
    /// a slice of `n * n` elements whose length is no square, of `n * 4` elements whose length is
    /// no multiple of 4, or of `nb * nt` elements with `nb = 0` (any `nt` would do).
    Size {
        kernel: &'static str,
        /// The size parameter.
        size: &'static str,
        /// The parameter whose length determines it.
        param: &'static str,
        /// That parameter's length as Strata writes it.
        expected: &'static str,
        /// The slice's length.
        actual: usize,
    },
    /// A `where` clause of the kernel does not hold for the sizes of this call.
    Requirement {
        kernel: &'static str,
        /// The clause, as Strata writes it (`n % 256 == 0`).
        clause: &'static str,
        /// The size parameters of the call, `name = value`, comma separated.
        sizes: String,
    },
    /// A size the launch computes (a length in bytes, a grid extent) does not fit 64 bits, or
    /// the C launch function refused the launch for another reason (its status, `EINVAL`).
    Launch {
        kernel: &'static str,
        /// The status the C launch function returned (0 where Rust refused it first).
        status: i32,
        /// The size parameters of the call, `name = value`, comma separated.
        sizes: String,
    },
}

impl Error {
    /// The kernel whose launch failed.
    pub fn kernel(&self) -> &'static str {
        match self {
            Error::Length { kernel, .. }
            | Error::Size { kernel, .. }
            | Error::Requirement { kernel, .. }
            | Error::Launch { kernel, .. } => kernel,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Length { kernel, param, expected, expected_len: Some(len), actual } => write!(
                f,
                "kernel `{kernel}`: `{param}` has {actual} elements, but the kernel's signature needs \
                 {expected} = {len}"
            ),
            Error::Length { kernel, param, expected, expected_len: None, actual } => write!(
                f,
                "kernel `{kernel}`: `{param}` has {actual} elements, but the kernel's signature needs \
                 {expected}, which does not fit 64 bits"
            ),
            Error::Size { kernel, size, param, expected, actual } => write!(
                f,
                "kernel `{kernel}`: its size `{size}` cannot be determined from `{param}`, which has {actual} \
                 elements (the signature needs {expected})"
            ),
            Error::Requirement { kernel, clause, sizes } => {
                write!(f, "kernel `{kernel}`: its requirement `where {clause}` does not hold for {sizes}")
            }
            Error::Launch { kernel, status, sizes } if *status == 0 => {
                write!(f, "kernel `{kernel}`: a size computed from {sizes} does not fit 64 bits")
            }
            Error::Launch { kernel, status, sizes } => {
                write!(f, "kernel `{kernel}`: the launch was refused (status {status}) for {sizes}")
            }
        }
    }
}

impl std::error::Error for Error {}

/// Includes the Rust module `strata-build` generated for the Strata file `NAME.strata`
/// (`include!` of `$OUT_DIR/strata/NAME.rs`): one function per kernel of the file.
#[macro_export]
macro_rules! include_kernels {
    ($name:literal) => {
        include!(concat!(env!("OUT_DIR"), "/strata/", $name, ".rs"));
    };
}

/// Checked size arithmetic of the generated launch functions: `None` where a result does not
/// fit 64 bits, goes below zero or divides by zero. Not part of the stable API.
#[doc(hidden)]
pub mod size {
    pub fn add(a: Option<u64>, b: Option<u64>) -> Option<u64> {
        a?.checked_add(b?)
    }
    pub fn sub(a: Option<u64>, b: Option<u64>) -> Option<u64> {
        a?.checked_sub(b?)
    }
    pub fn mul(a: Option<u64>, b: Option<u64>) -> Option<u64> {
        a?.checked_mul(b?)
    }
    pub fn div(a: Option<u64>, b: Option<u64>) -> Option<u64> {
        a?.checked_div(b?)
    }
    pub fn rem(a: Option<u64>, b: Option<u64>) -> Option<u64> {
        a?.checked_rem(b?)
    }
    pub fn pow(a: Option<u64>, b: Option<u64>) -> Option<u64> {
        a?.checked_pow(u32::try_from(b?).ok()?)
    }
    /// The `n` with `n * n == len`, if there is one.
    pub fn exact_sqrt(len: u64) -> Option<u64> {
        let mut r = (len as f64).sqrt() as u64;
        // Correct the float estimate to the exact integer square root.
        while r.checked_mul(r).is_none_or(|sq| sq > len) {
            r -= 1;
        }
        while (r + 1).checked_mul(r + 1).is_some_and(|sq| sq <= len) {
            r += 1;
        }
        (r * r == len).then_some(r)
    }
    /// The `n` with `n * factor == len`, if there is exactly one.
    pub fn exact_div(len: u64, factor: Option<u64>) -> Option<u64> {
        let factor = factor?;
        (len.checked_rem(factor)? == 0).then(|| len / factor)
    }
    /// A slice's length as a size.
    pub fn len(len: usize) -> u64 {
        len as u64
    }
}

#[cfg(test)]
mod tests {
    use super::size::*;

    #[test]
    fn square_roots_are_exact() {
        for n in [0u64, 1, 2, 3, 31, 32, 1000, 4_294_967_295] {
            assert_eq!(exact_sqrt(n * n), Some(n));
            if n > 1 {
                assert_eq!(exact_sqrt(n * n + 1), None);
                assert_eq!(exact_sqrt(n * n - 1), None);
            }
        }
        assert_eq!(exact_sqrt(u64::MAX), None);
    }

    #[test]
    fn division_needs_a_multiple() {
        assert_eq!(exact_div(512, Some(256)), Some(2));
        assert_eq!(exact_div(513, Some(256)), None);
        assert_eq!(exact_div(0, Some(0)), None);
        assert_eq!(exact_div(5, None), None);
        assert_eq!(pow(Some(2), Some(64)), None);
        assert_eq!(sub(Some(1), Some(2)), None);
    }
}
