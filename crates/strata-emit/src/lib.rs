//! IR to the C family. One emitter ([`emit`]) serves two dialects: C for the `cpu` device (blocks
//! as OpenMP loop iterations, threads as loops) and CUDA C++ for NVIDIA GPUs (kernels as
//! `__global__` functions). The host code is the same in both. Building and running are elsewhere:
//! `strata-cpu` compiles and runs the C, `strata-cuda` drives nvcc.

mod emit;
mod library;
mod names;
mod range;

pub use library::LibraryOutput;
use strata_diag::{codes, Diagnostic, Span};
use strata_ir::ir::Program;
use strata_ir::library::Library;

/// A program to run needs `main` (the same report as `sim`'s: nothing is wrong with the program,
/// there is just nothing to run). A file without one is a kernel library ([`emit_c_library`]).
fn require_main(program: &Program) -> Result<(), Box<Diagnostic>> {
    if program.entry.is_some() {
        return Ok(());
    }
    Err(Box::new(Diagnostic::error(
        codes::NO_MAIN,
        "the program has no `main` function",
        Span::DUMMY,
        "nothing to run",
    )))
}

/// The C translation unit for `program` (what `strata emit --target c` prints).
pub fn emit_c(program: &Program) -> Result<String, Box<Diagnostic>> {
    require_main(program)?;
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
    require_main(program)?;
    if program.runtime_lengths {
        return Err(Box::new(Diagnostic::error(
            codes::UNSUPPORTED,
            "not supported by the cuda target yet: pointers whose lengths are known only at run time (CUDA-C)",
            Span::DUMMY,
            "run it with `--device sim` or `--device cpu`",
        )));
    }
    emit::Emitter::new_cuda(program).emit()
}

/// The C kernel library of `lib` for the cpu device (what `strata emit --target c` writes for a
/// file without `main`): the kernels as functions over host pointers, each with a launch function
/// `int NAME_launch(…)`, and the header declaring those. `name` names the include guard.
pub fn emit_c_library(lib: &Library, name: &str) -> Result<LibraryOutput, Box<Diagnostic>> {
    let mut expanded = lib.program.clone();
    strata_ir::expand_warp_collectives(&mut expanded)?;
    library::emit_library(lib, &expanded, name, false)
}

/// The CUDA C++ kernel library of `lib`: `__global__` kernels, each with a launch function
/// `cudaError_t NAME_launch(…, cudaStream_t stream)`, and the header declaring those.
pub fn emit_cuda_library(lib: &Library, name: &str) -> Result<LibraryOutput, Box<Diagnostic>> {
    library::emit_library(lib, &lib.program, name, true)
}
