//! The `cuda` target: the CUDA C++ of [`strata_emit::emit_cuda`], compiled by NVIDIA's `nvcc`
//! (found by [`find_nvcc`]) into an executable for a real GPU. No GPU is needed to build.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub use strata_emit::emit_cuda;

/// Why a build failed.
#[derive(Debug)]
pub enum BuildError {
    /// No working `nvcc` was found; the places looked at, in order.
    NvccMissing(Vec<String>),
    /// A file could not be written or nvcc could not be started.
    Io(String),
    /// nvcc refused the generated program (a bug in the emitter unless the arch is wrong).
    Rejected(String),
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BuildError::NvccMissing(searched) => {
                writeln!(f, "`nvcc` not found; looked at:")?;
                for place in searched {
                    writeln!(f, "    {place}")?;
                }
                write!(
                    f,
                    "  = help: `scripts/setup-nvcc.sh` installs NVIDIA's compiler from PyPI into .venv (no GPU needed), \
                     or set NVCC=/path/to/nvcc, or STRATA_HOME to the Strata checkout whose .venv has it"
                )
            }
            BuildError::Io(m) | BuildError::Rejected(m) => f.write_str(m),
        }
    }
}

/// The places [`find_nvcc`] looks at after `$NVCC` and the PATH, in order: `$STRATA_HOME/.venv/bin/nvcc`
/// and `$STRATA_HOME/bin/nvcc`; `.venv/bin/nvcc` in the current directory and every directory
/// above it; the same from the `strata` executable's directory (symbolic links resolved); and the
/// `.venv/bin/nvcc` of the checkout this `strata` was built from (`scripts/setup-nvcc.sh` puts it
/// there), so that an installed or copied `strata` still finds it.
pub fn nvcc_candidates() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    if let Some(home) = std::env::var_os("STRATA_HOME").filter(|h| !h.is_empty()) {
        let home = PathBuf::from(home);
        out.push(home.join(".venv/bin/nvcc"));
        out.push(home.join("bin/nvcc"));
    }
    let exe = std::env::current_exe().ok();
    let exe_dir = |e: PathBuf| e.parent().map(Path::to_path_buf);
    let starts = [
        std::env::current_dir().ok(),
        exe.clone().and_then(exe_dir),
        exe.and_then(|e| e.canonicalize().ok()).and_then(exe_dir),
    ];
    for start in starts.into_iter().flatten() {
        out.extend(start.ancestors().map(|a| a.join(".venv/bin/nvcc")));
    }
    // crates/strata-cuda → the workspace root.
    if let Some(root) = Path::new(env!("CARGO_MANIFEST_DIR")).parent().and_then(Path::parent) {
        out.push(root.join(".venv/bin/nvcc"));
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|p| seen.insert(p.clone()));
    out
}

/// Where `nvcc` is: `$NVCC`, `nvcc` on the PATH, or the first working one of [`nvcc_candidates`].
/// `Err` lists every place looked at.
pub fn find_nvcc() -> Result<PathBuf, Vec<String>> {
    if let Some(p) = std::env::var_os("NVCC").filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(p));
    }
    let works = |p: &Path| {
        Command::new(p).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
    };
    if works(Path::new("nvcc")) {
        return Ok(PathBuf::from("nvcc"));
    }
    let candidates = nvcc_candidates();
    if let Some(found) = candidates.iter().find(|p| p.is_file() && works(p)) {
        return Ok(found.clone());
    }
    let mut searched = vec!["$NVCC (not set)".to_string(), "`nvcc` on the PATH".to_string()];
    if std::env::var_os("STRATA_HOME").is_none_or(|h| h.is_empty()) {
        searched.push("$STRATA_HOME/.venv/bin/nvcc and $STRATA_HOME/bin/nvcc ($STRATA_HOME not set)".to_string());
    }
    searched.extend(candidates.iter().map(|p| p.display().to_string()));
    Err(searched)
}

/// The temporary directory of one build: removed when dropped unless [`TempDir::keep`] was called.
struct TempDir {
    path: PathBuf,
    keep: bool,
}

impl TempDir {
    /// Keeps the directory (for the bug report of a rejected program); returns its path.
    fn keep(&mut self) -> &Path {
        self.keep = true;
        &self.path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// Compiles the CUDA C++ translation unit `cuda` for `arch` (nvcc's `-arch`, e.g. `sm_80`) into
/// the executable `output`, with every nvcc warning an error. The temporary directory holding the
/// source is removed, except when nvcc rejects the program: then the error says where it is kept.
pub fn build(cuda: &str, arch: &str, output: &Path) -> Result<(), BuildError> {
    let nvcc = find_nvcc().map_err(BuildError::NvccMissing)?;
    let mut dir =
        TempDir { path: std::env::temp_dir().join(format!("strata-build-{}", std::process::id())), keep: false };
    let src = dir.path.join("program.cu");
    std::fs::create_dir_all(&dir.path)
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
        let kept = dir.keep().display().to_string();
        return Err(BuildError::Rejected(format!(
            "`{} {} {} {}` failed (this is a bug in Strata's CUDA emission unless the arch is wrong):\n{}\n  \
             = note: the generated source is kept in `{kept}` for the bug report",
            nvcc.display(),
            args.join(" "),
            output.display(),
            src.display(),
            String::from_utf8_lossy(&out.stderr).trim_end()
        )));
    }
    Ok(())
}
