//! An application's use of Strata kernels from Rust (docs/libraries.md, "From Rust").
//!
//! `build.rs` turns `examples/lib/saxpy.strata` into a C library and the module below: the
//! kernels `saxpy`, `block_sums` and `transpose` as safe functions over slices. Rust's borrow
//! checker proves the host side (a written `&mut [T]` aliases nothing and lives through the
//! launch), Strata's checker proved the kernels, and each call checks the slices' lengths and the
//! kernels' `where` clauses, returning `Err(strata_host::Error)` rather than running on bad sizes.

/// The kernels of `saxpy.strata`.
pub mod saxpy {
    strata_host::include_kernels!("saxpy");
}

/// The kernel `sum` of `examples/array_sum.strata` (Figure 1 of the CUDA-C semantics paper):
/// its sizes `nb` and `nt` both come from the slices' lengths.
pub mod array_sum {
    strata_host::include_kernels!("array_sum");
}

/// The kernel `red` of `examples/obsidian_red_large.strata`: its size `lnt` (threads per block
/// `2^lnt`) is no slice's length, so it is an explicit argument; `nb` and `seq` are derived.
pub mod obsidian_red_large {
    strata_host::include_kernels!("obsidian_red_large");
}

/// The kernel `offset` of `kernels/offset.strata`, which takes a reference to one scalar.
pub mod offset {
    strata_host::include_kernels!("offset");
}

/// The sum of `input`, on the cpu device: block sums by the `block_sums` kernel (256 elements
/// per block), then their sum on the host. `input.len()` must be a multiple of 256.
pub fn sum(input: &[i32]) -> Result<i32, strata_host::Error> {
    let mut sums = vec![0; input.len() / 256];
    saxpy::block_sums(input, &mut sums)?;
    Ok(sums.iter().fold(0i32, |a, &b| a.wrapping_add(b)))
}
