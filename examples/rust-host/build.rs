// Checks the Strata library `examples/lib/saxpy.strata` (the one `main.c` and `main.cu` beside it
// use), two example programs whose kernels this crate calls too (their `main` is left out) and
// its own `kernels/offset.strata`; compiles the kernels with the system C compiler, and writes
// `$OUT_DIR/strata/NAME.rs` per file: a safe Rust function per kernel. A checker error fails this
// build with Strata's diagnostics.
fn main() {
    strata_build::Build::new()
        .file("../lib/saxpy.strata")
        .file("../array_sum.strata")
        .file("../obsidian_red_large.strata")
        .file("kernels/offset.strata")
        // Blocks on all cores, as `strata run` runs them (with GCC; else on the calling thread).
        .openmp(true)
        .compile();
}
