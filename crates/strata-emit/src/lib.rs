//! IR to the C family. One emitter ([`emit`]) serves two dialects: C for the `cpu` device (blocks
//! as OpenMP loop iterations, threads as loops) and CUDA C++ for NVIDIA GPUs (kernels as
//! `__global__` functions). The host code is the same in both. Building and running are elsewhere:
//! `strata-cpu` compiles and runs the C, `strata-cuda` drives nvcc.

mod emit;
mod names;
mod range;

use strata_diag::Diagnostic;
use strata_ir::ir::Program;

/// The C translation unit for `program` (what `strata emit --target c` prints).
pub fn emit_c(program: &Program) -> Result<String, Box<Diagnostic>> {
    // The CPU has no warp lanes: shuffles and ballots exchange through shared memory.
    let mut expanded = program.clone();
    strata_ir::expand_warp_collectives(&mut expanded)?;
    emit::Emitter::new(&expanded).narrow_indices(narrow_c()).emit()
}

/// `STRATA_NARROW_C=1` makes the C of the cpu device use the 32-bit index arithmetic of the CUDA
/// target (off by default: slower on CPUs), so that the corpus runs the narrowed code.
fn narrow_c() -> bool {
    std::env::var_os("STRATA_NARROW_C").is_some_and(|v| v == "1")
}

/// The CUDA C++ translation unit for `program` (what `strata emit --target cuda` prints): the same
/// host code, with kernels as `__global__` functions and GPU memory through the CUDA runtime.
pub fn emit_cuda(program: &Program) -> Result<String, Box<Diagnostic>> {
    emit::Emitter::new_cuda(program).emit()
}
