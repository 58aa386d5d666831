//! examples/python/saxpy_numpy.py: a kernel library (`strata emit --target c`) built into a shared
//! library with the system C compiler and called from Python with NumPy arrays through ctypes
//! (docs/libraries.md, "From Python"). The script checks every result against NumPy itself.
//!
//! The Python is `$STRATA_PYTHON`, else `.venv/bin/python3`, else `python3`, the first that imports
//! NumPy. scripts/test.sh (hence CI) installs NumPy with scripts/setup-python.sh and sets
//! `STRATA_REQUIRE_NUMPY=1`, which makes a missing NumPy a failure; elsewhere the test is skipped
//! with a message.

use std::path::PathBuf;
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn imports_numpy(python: &str) -> bool {
    Command::new(python).args(["-c", "import numpy"]).output().is_ok_and(|o| o.status.success())
}

fn python_with_numpy() -> Option<String> {
    let venv = repo().join(".venv/bin/python3").display().to_string();
    let candidates = std::env::var("STRATA_PYTHON").into_iter().chain([venv, "python3".to_string()]);
    candidates.into_iter().find(|p| imports_numpy(p))
}

#[test]
fn kernels_run_from_python_on_numpy_arrays() {
    let Some(python) = python_with_numpy() else {
        let required = std::env::var("STRATA_REQUIRE_NUMPY").is_ok_and(|v| v == "1");
        assert!(!required, "no Python with NumPy: run scripts/setup-python.sh (STRATA_REQUIRE_NUMPY=1)");
        eprintln!("skipped: no Python with NumPy (scripts/setup-python.sh installs it into .venv)");
        return;
    };
    let out = Command::new(&python)
        .arg(repo().join("examples/python/saxpy_numpy.py"))
        .env("STRATA", env!("CARGO_BIN_EXE_strata"))
        .output()
        .expect("run python");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{python} saxpy_numpy.py failed:\n{stdout}\n{stderr}");
    for line in [
        "saxpy: 65536 elements equal to NumPy's a * x + y",
        "block_sums: 64 block sums equal to NumPy's",
        "transpose: 256 x 256 equal to NumPy's m.T",
        "refused: saxpy: the launch refused its sizes (EINVAL)",
    ] {
        assert!(stdout.contains(line), "`{line}` in:\n{stdout}");
    }
    assert!(stdout.ends_with("ok\n"), "{stdout}");
}
