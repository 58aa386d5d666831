//! Sizes bound at run time (issue 13), end to end: one program, compiled once, runs on every size
//! its argument names; and each benchmark of `bench/` has a run-time-size twin in
//! `bench/runtime/` that prints what the constant version prints, on `sim` and on `cpu`.
//! Behaviour only: the timings are `scripts/bench-runtime-sizes.sh`'s (docs/benchmarks.md).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `strata ARGS` in the repository root with the compiled programs cached in `cache`.
fn strata(cache: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_strata"))
        .current_dir(root())
        .env("STRATA_CACHE_DIR", cache)
        .args(args)
        .output()
        .unwrap()
}

fn fresh_cache(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("strata-runtime-sizes-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The compiled executables in a cache directory: `prog-HASH`, without the `.c` of a kept
/// source or the suffix of a half-written file.
fn executables(cache: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(cache)
        .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    out.retain(|name| name.starts_with("prog-") && !name.contains('.'));
    out.sort();
    out
}

#[test]
fn one_program_on_three_sizes_is_compiled_once_and_right_for_each() {
    let cache = fresh_cache("once");
    let file = "tests/corpus/run/size_from_program_argument.strata";
    // 1 element, a tail in a single block, and several blocks with a tail.
    for n in [1u64, 1000, 70001] {
        let out = strata(&cache, &["run", "--device", "cpu", file, "--", &n.to_string()]);
        assert!(out.status.success(), "size {n}: {}", String::from_utf8_lossy(&out.stderr));
        // The kernel doubles 0..n: the sum is n * (n - 1).
        assert_eq!(String::from_utf8_lossy(&out.stdout), format!("{n}\n{}\n", n * (n - 1)), "size {n}");
        assert_eq!(executables(&cache).len(), 1, "size {n}: {:?}", executables(&cache));
    }
    // A size the program refuses is a message of the program, from the same executable.
    let out = strata(&cache, &["run", "--device", "cpu", file, "--", "0"]);
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "the size must lie between 1 and 2^26\n");
    assert_eq!(executables(&cache).len(), 1);
    let _ = std::fs::remove_dir_all(&cache);
}

/// The benchmarks at small sizes: name, `-D` arguments of the constant version, size argument
/// of the run-time version (the same size).
const PAIRS: &[(&str, &[&str], &str)] = &[
    ("stream_copy", &["-D", "LOG_N=12"], "4096"),
    ("transpose", &["-D", "N=64"], "64"),
    ("reduce", &["-D", "LOG_N=12"], "4096"),
    ("scan", &["-D", "LOG_N=12"], "4096"),
    ("scan_lookback", &["-D", "LOG_N=12"], "4096"),
    ("histogram", &["-D", "NB=2"], "32768"),
    ("matmul", &["-D", "N=32"], "32"),
    ("matmul_ikj", &["-D", "N=32"], "32"),
    ("matmul_element", &["-D", "N=32"], "32"),
];

#[test]
fn every_benchmark_has_a_run_time_size_twin_with_the_same_output_on_sim_and_cpu() {
    let cache = fresh_cache("twins");
    let mut names: Vec<String> = std::fs::read_dir(root().join("bench"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "strata"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut listed: Vec<String> = PAIRS.iter().map(|p| p.0.to_string()).collect();
    listed.sort();
    assert_eq!(names, listed, "every bench/*.strata needs a twin in bench/runtime/ and a line here");
    for (name, defines, size) in PAIRS {
        let constant = format!("bench/{name}.strata");
        let runtime = format!("bench/runtime/{name}.strata");
        let mut outputs = Vec::new();
        for device in ["sim", "cpu"] {
            // REPS is a constant of both versions: two launches suffice here.
            let mut args = vec!["run", "--device", device, "-D", "REPS=2"];
            args.extend(*defines);
            args.push(&constant);
            let c = strata(&cache, &args);
            assert!(c.status.success(), "{constant} on {device}: {}", String::from_utf8_lossy(&c.stderr));
            let r = strata(&cache, &["run", "--device", device, "-D", "REPS=2", &runtime, "--", size]);
            assert!(r.status.success(), "{runtime} on {device}: {}", String::from_utf8_lossy(&r.stderr));
            outputs.push((device, String::from_utf8_lossy(&c.stdout).into_owned()));
            outputs.push((device, String::from_utf8_lossy(&r.stdout).into_owned()));
        }
        let first = &outputs[0].1;
        assert!(first.ends_with(" ok\n"), "{constant}: {first}");
        for (device, out) in &outputs {
            assert_eq!(out, first, "{name} on {device}");
        }
        // A size the kernel's facts exclude is refused with a message naming the sizes it needs.
        let refused = strata(&cache, &["run", "--device", "cpu", &runtime, "--", "1"]);
        assert!(refused.status.success(), "{runtime}: {}", String::from_utf8_lossy(&refused.stderr));
        let text = String::from_utf8_lossy(&refused.stdout);
        assert!(text.contains("needs a multiple of"), "{runtime}: {text}");
    }
    let _ = std::fs::remove_dir_all(&cache);
}
