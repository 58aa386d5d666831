//! Helpers shared by the integration tests that compile emitted code (`cuda_compile.rs`,
//! `emitted_code.rs`, `library.rs`). Each test crate uses only some of them.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A working nvcc: `$NVCC`, else the project's `.venv/bin/nvcc` (`scripts/setup-nvcc.sh`).
pub fn nvcc() -> Option<PathBuf> {
    let candidate = std::env::var_os("NVCC")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join(".venv/bin/nvcc"));
    let ok = Command::new(&candidate).arg("--version").output().is_ok_and(|o| o.status.success());
    ok.then_some(candidate)
}

/// Programs whose C and CUDA must compile: examples, benchmarks and `run-pass` corpus programs
/// with a `main` that are not `sim-only` or `known-bug` (the cpu and cuda targets refuse those
/// with E0801 by design), sorted.
pub fn compiled_programs() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root().join("examples"), root().join("bench"), root().join("tests/corpus")];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            if p.extension().is_none_or(|x| x != "strata") {
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap_or_default();
            let in_corpus = p.starts_with(root().join("tests/corpus"));
            let runs = text.lines().any(|l| l.trim() == "//@ run-pass");
            let refused = text.lines().any(|l| l.starts_with("//@ known-bug") || l.starts_with("//@ sim-only"));
            if text.contains("fn main(") && !refused && (!in_corpus || runs) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// What `p` prints on `sim` and on `cpu`, which must run it without error.
pub fn output_on_both_devices(p: &strata_ir::ir::Program) -> (String, String) {
    let mut sim = Vec::new();
    strata_sim::run(p, &strata_sim::Options::default(), &mut sim).unwrap();
    let mut cpu = Vec::new();
    strata_cpu::run(p, strata_diag::FileId(0), &mut cpu, &strata_cpu::RunOptions::default()).unwrap();
    (String::from_utf8(sim).unwrap(), String::from_utf8(cpu).unwrap())
}

/// The C compiler the tests use: `$CC`, else `cc`.
pub fn cc() -> String {
    std::env::var("CC").unwrap_or_else(|_| "cc".to_string())
}

/// The C compiler's flags for AddressSanitizer and UndefinedBehaviorSanitizer, if it builds and
/// runs a program with them (probed with an empty one), and whether leak detection works there too
/// (it needs ptrace, which some containers refuse).
pub const SANITIZER_FLAGS: &str = "-fsanitize=address,undefined -fno-sanitize-recover=undefined";

pub fn sanitizers_work() -> Option<bool> {
    let dir = std::env::temp_dir().join(format!("strata-sanitizer-probe-{}", std::process::id()));
    let (src, exe) = (dir.join("probe.c"), dir.join("probe"));
    let built = std::fs::create_dir_all(&dir).is_ok()
        && std::fs::write(&src, "#include <stdlib.h>\nint main(void) { free(malloc(8)); return 0; }\n").is_ok()
        && Command::new(cc())
            .args(SANITIZER_FLAGS.split(' '))
            .arg("-o")
            .arg(&exe)
            .arg(&src)
            .output()
            .is_ok_and(|o| o.status.success());
    let runs = |opts: &str| Command::new(&exe).env("ASAN_OPTIONS", opts).output().is_ok_and(|o| o.status.success());
    let result = (built && runs("detect_leaks=0")).then(|| runs("detect_leaks=1"));
    let _ = std::fs::remove_dir_all(&dir);
    result
}
