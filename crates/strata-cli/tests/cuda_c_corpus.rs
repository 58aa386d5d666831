//! The CUDA-C corpus (docs/cuda-c.md): every `.cu` file under `tests/cuda_c/` is labelled, and
//! `strata check` must classify it so — a correct program or kernel is clean on `sim` under every
//! schedule (no false report is acceptable), a buggy one reports its finding.
//!
//! Labels, in the first comment lines of a file:
//! * GPUVerify style (kernel-only mode): `//pass`, or `//xfail:REASON` and optionally
//!   `// expect: E0901` (the code that must be among the findings) on the third line; the second
//!   line is the launch, `//--blockDim=… --gridDim=…`.
//! * Programs with `main`: `// expect: clean` or `// expect: E0901`.
//!
//! The programs at the top of `tests/cuda_c/` (Figure 1 verbatim and the front end's own tests,
//! `cuda_c.rs`, `cuda_c_lang.rs`) keep their text; their labels are in [`TOP_LEVEL`], and a file
//! there without a label is left to those tests. Files expected to be refused (E0801) are checked
//! but not counted as classified kernels.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

const TOP_LEVEL: &[(&str, &str)] = &[
    ("fig1.cu", "clean"),
    ("fig1_race.cu", "E0901"),
    ("fig1_deadlock.cu", "E0902"),
    ("host_reads_device.cu", "E0905"),
    ("reduce.cu", "clean"),
    ("uninit_shared.cu", "E0904"),
    ("unsupported_atomic.cu", "E0801"),
    ("vector_add.cu", "clean"),
    ("vector_add_oob.cu", "E0903"),
    ("device_function_race.cu", "E0901"),
    ("device_functions.cu", "clean"),
    ("device_missing_return.cu", "E0801"),
    ("device_recursion.cu", "E0907"),
    ("device_syncthreads.cu", "E0801"),
    ("dim3_grid.cu", "clean"),
    ("dim3_race.cu", "E0901"),
];

/// The label of a corpus file: `None` clean, `Some("")` any finding, `Some(code)` that code.
fn label(path: &Path, text: &str) -> Option<String> {
    let name = path.file_name().unwrap().to_str().unwrap();
    if let Some((_, l)) = TOP_LEVEL.iter().find(|(n, _)| *n == name) {
        return (*l != "clean").then(|| l.to_string());
    }
    assert!(labelled(path, text), "{name}: no label");
    let lines: Vec<&str> = text.lines().take(3).map(str::trim).collect();
    let expect = lines.iter().find_map(|l| l.strip_prefix("// expect:")).map(|e| e.trim().to_string());
    match lines.first() {
        Some(&"//pass") => {
            assert!(expect.is_none(), "{name}: `//pass` with an expected finding");
            None
        }
        Some(l) if l.starts_with("//xfail") => Some(expect.unwrap_or_default()),
        _ => match expect.as_deref() {
            Some("clean") => None,
            Some(code) if code.starts_with('E') => Some(code.to_string()),
            _ => panic!("{name}: no label (`//pass`, `//xfail:…` or `// expect: clean|E0xxx` on the first lines)"),
        },
    }
}

/// Whether a file carries a label of its own (a file at the top of `tests/cuda_c/` may not).
fn labelled(path: &Path, text: &str) -> bool {
    let name = path.file_name().unwrap().to_str().unwrap();
    TOP_LEVEL.iter().any(|(n, _)| *n == name)
        || text
            .lines()
            .take(3)
            .any(|l| l.starts_with("//pass") || l.starts_with("//xfail") || l.starts_with("// expect:"))
}

fn corpus() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in ["tests/cuda_c", "tests/cuda_c/corpus"] {
        for e in std::fs::read_dir(root().join(dir)).unwrap() {
            let p = e.unwrap().path();
            let text = std::fs::read_to_string(&p).unwrap_or_default();
            let in_corpus = dir.ends_with("corpus") || labelled(&p, &text);
            if p.extension().is_some_and(|x| x == "cu") && in_corpus {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

/// The codes `strata check --format short` reported, and its exit status.
fn check(file: &Path) -> (i32, Vec<String>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_strata"))
        .current_dir(root())
        .args(["check", "--format", "short"])
        .arg(file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let codes = stderr
        .lines()
        .filter_map(|l| l.split("error[").nth(1).and_then(|r| r.split(']').next()).map(str::to_string))
        .collect();
    (out.status.code().unwrap_or(-1), codes, stderr)
}

#[test]
fn every_corpus_file_is_classified_right() {
    let files = corpus();
    assert!(files.len() >= 40, "the corpus has {} files", files.len());
    let (mut right, mut wrong) = (0, Vec::new());
    let (mut clean, mut buggy, mut refused) = (0, 0, 0);
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let want = label(f, &text);
        let (code, codes, stderr) = check(f);
        let ok = match &want {
            None => {
                clean += 1;
                code == 0 && stderr.is_empty()
            }
            Some(c) => {
                if c == "E0801" {
                    refused += 1;
                } else {
                    buggy += 1;
                }
                code == 1
                    && !codes.is_empty()
                    && (c.is_empty() && !codes.iter().any(|x| x == "E0801") || codes.contains(c))
            }
        };
        if ok {
            right += 1;
        } else {
            wrong.push(format!("{}: expected {want:?}, exit {code}: {stderr}", f.display()));
        }
    }
    eprintln!(
        "CUDA-C corpus: {} of {} programs and kernels classified right ({clean} correct, {buggy} buggy); \
         {refused} refused with E0801 as expected",
        right - refused.min(right),
        files.len() - refused
    );
    assert!(wrong.is_empty(), "misclassified:\n{}", wrong.join("\n"));
}

/// Correct programs print the same under every schedule (their output is part of the contract).
#[test]
fn correct_programs_print_the_same_under_every_schedule() {
    for f in corpus() {
        let text = std::fs::read_to_string(&f).unwrap();
        if label(&f, &text).is_some() || !text.contains("int main") || text.starts_with("//pass") {
            continue;
        }
        let run = |extra: &[&str]| {
            let out = Command::new(env!("CARGO_BIN_EXE_strata"))
                .current_dir(root())
                .arg("run")
                .args(extra)
                .arg(&f)
                .output()
                .unwrap();
            assert!(out.status.success(), "{}: {}", f.display(), String::from_utf8_lossy(&out.stderr));
            String::from_utf8_lossy(&out.stdout).into_owned()
        };
        let first = run(&[]);
        assert!(!first.is_empty(), "{}: prints nothing", f.display());
        for seed in ["1", "7"] {
            assert_eq!(run(&["--schedule", "random", "--seed", seed]), first, "{} seed {seed}", f.display());
        }
    }
}

/// Every correct program and `//pass` kernel prints on the cpu device exactly what it prints on
/// `sim` under the default schedule (a kernel-only file: its buffers after the launch, which
/// `strata run` prints). Figure 1 is among them. The C is built with AddressSanitizer and
/// UndefinedBehaviorSanitizer where the C compiler can, so that a correct program that touched
/// memory outside its allocations on cpu would fail here even where its output came out right.
#[test]
fn correct_programs_print_the_same_on_cpu() {
    let sanitizers = sanitizer_env();
    let (mut same, mut total, mut wrong) = (0, 0, Vec::new());
    for f in corpus() {
        let text = std::fs::read_to_string(&f).unwrap();
        if label(&f, &text).is_some() {
            continue;
        }
        total += 1;
        let run = |device: &str| {
            let out = Command::new(env!("CARGO_BIN_EXE_strata"))
                .current_dir(root())
                .args(["run", "--device", device])
                .arg(&f)
                .envs(sanitizers.iter().filter(|_| device == "cpu").cloned())
                .output()
                .unwrap();
            let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
            (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
        };
        let sim = run("sim");
        assert!(sim.0 == 0 && !sim.1.is_empty(), "{} on sim: {sim:?}", f.display());
        let cpu = run("cpu");
        if cpu == sim {
            same += 1;
        } else {
            wrong.push(format!("{}: sim {sim:?}\ncpu {cpu:?}", f.display()));
        }
    }
    eprintln!("CUDA-C corpus on cpu: {same} of {total} correct programs and kernels print what they print on sim");
    assert!(total >= 40, "only {total} correct files");
    assert!(wrong.is_empty(), "cpu differs from sim:\n{}", wrong.join("\n"));
}

/// `STRATA_CFLAGS` for ASan and UBSan (leaks not reported: CUDA-C programs may leave memory to
/// the end of the process) if the C compiler builds and runs a program with them, else nothing.
fn sanitizer_env() -> Vec<(String, String)> {
    if common::sanitizers_work().is_none() {
        eprintln!(
            "cuda_c_corpus: `{}` cannot build with {}; the cpu runs go without sanitizers",
            common::cc(),
            common::SANITIZER_FLAGS
        );
        return Vec::new();
    }
    vec![
        ("STRATA_CFLAGS".to_string(), common::SANITIZER_FLAGS.to_string()),
        ("ASAN_OPTIONS".to_string(), "detect_leaks=0".to_string()),
    ]
}
