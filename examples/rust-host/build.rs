// Checks the Strata library `examples/lib/saxpy.strata` (the one `main.c` and `main.cu` beside it
// use), compiles its kernels with the system C compiler, and writes `$OUT_DIR/strata/saxpy.rs`:
// a safe Rust function per kernel. A checker error fails this build with Strata's diagnostics.
fn main() {
    strata_build::Build::new().file("../lib/saxpy.strata").compile();
}
