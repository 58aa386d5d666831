//! The `cuda` target: the CUDA C++ of [`strata_emit::emit_cuda`], compiled by NVIDIA's `nvcc`
//! (found by [`find_nvcc`]) into an executable for a real GPU. No GPU is needed to build.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub use strata_emit::emit_cuda;

/// Why a build failed.
#[derive(Debug)]
pub enum BuildError {
    /// No working `nvcc` was found.
    NvccMissing,
    /// A file could not be written or nvcc could not be started.
    Io(String),
    /// nvcc refused the generated program (a bug in the emitter unless the arch is wrong).
    Rejected(String),
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BuildError::NvccMissing => write!(
                f,
                "`nvcc` not found (looked at $NVCC, the PATH and .venv/bin/nvcc)\n  = help: `scripts/setup-nvcc.sh` installs NVIDIA's compiler from PyPI into .venv (no GPU needed), or set NVCC=/path/to/nvcc"
            ),
            BuildError::Io(m) | BuildError::Rejected(m) => f.write_str(m),
        }
    }
}

/// Where `nvcc` is: `$NVCC`, `nvcc` on the PATH, or the project's `.venv/bin/nvcc` (looked for
/// from the current directory and from the `strata` executable's directory upwards).
pub fn find_nvcc() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("NVCC").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let works = |p: &Path| {
        Command::new(p).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
    };
    if works(Path::new("nvcc")) {
        return Some(PathBuf::from("nvcc"));
    }
    let starts = [std::env::current_dir().ok(), std::env::current_exe().ok()];
    starts
        .into_iter()
        .flatten()
        .flat_map(|d| d.ancestors().map(|a| a.join(".venv/bin/nvcc")).collect::<Vec<_>>())
        .find(|p| p.is_file() && works(p))
}

/// Compiles the CUDA C++ translation unit `cuda` for `arch` (nvcc's `-arch`, e.g. `sm_80`) into
/// the executable `output`, with every nvcc warning an error.
pub fn build(cuda: &str, arch: &str, output: &Path) -> Result<(), BuildError> {
    let nvcc = find_nvcc().ok_or(BuildError::NvccMissing)?;
    let dir = std::env::temp_dir().join(format!("strata-build-{}", std::process::id()));
    let src = dir.join("program.cu");
    std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::write(&src, cuda))
        .map_err(|e| BuildError::Io(format!("cannot write `{}`: {e}", src.display())))?;
    let args = ["-O3", "-Werror", "all-warnings", "-arch", arch, "-o"];
    let out = Command::new(&nvcc)
        .args(args)
        .arg(output)
        .arg(&src)
        .output()
        .map_err(|e| BuildError::Io(format!("cannot run `{}`: {e}", nvcc.display())))?;
    if !out.status.success() {
        // The source stays in `dir` for the bug report.
        return Err(BuildError::Rejected(format!(
            "`{} {} {} {}` failed (this is a bug in Strata's CUDA emission unless the arch is wrong):\n{}",
            nvcc.display(),
            args.join(" "),
            output.display(),
            src.display(),
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
