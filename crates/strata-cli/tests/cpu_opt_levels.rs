//! The emitted C means one thing at every optimisation level: a differential test of the `cpu`
//! device against `sim`.
//!
//! A miscompile that only the device's own flags (`-O3 -march=native -fopenmp`) show — undefined
//! behaviour in the emitted C that the optimiser exploits (aliasing, an index out of range in a
//! vectorised loop, a broken `restrict` contract, an OpenMP data-sharing mistake), or a C compiler
//! bug that the emitter must avoid — passes a test that builds at one level only when the program
//! happens not to trip it. So every `run-pass` program of the corpus that uses warp collectives or
//! warp barriers (the shuffles and ballots are exchanges through a per-block buffer on `cpu`, the
//! kind of code where such a miscompile was found), and every `//@ opt-levels` program, runs on
//! `sim` and then on `cpu` built three ways, each of which must print exactly what `sim` prints and
//! end the same way:
//!
//! * `O0`: `STRATA_CFLAGS=-O0` (the C compiler's last `-O` wins over the device's `-O3`);
//! * `device`: the device's flags unchanged;
//! * `sanitizers`: the device's flags plus AddressSanitizer and UndefinedBehaviorSanitizer
//!   (skipped, with a note, where the C compiler lacks them).
//!
//! `STRATA_OPT_FILTER=text` runs only the programs whose path contains `text`.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// `run-pass` corpus programs with a `main` that use warp collectives or warp barriers, or that
/// say `//@ opt-levels` (sorted).
fn programs() -> Vec<PathBuf> {
    let filter = std::env::var("STRATA_OPT_FILTER").unwrap_or_default();
    common::compiled_programs()
        .into_iter()
        .filter(|p| p.starts_with(common::root().join("tests/corpus")))
        .filter(|p| p.to_string_lossy().contains(&filter))
        .filter(|p| {
            let text = std::fs::read_to_string(p).unwrap_or_default();
            let collective = ["shfl_", "ballot(", "sync(warp)", "sync(w)"].iter().any(|c| text.contains(c));
            collective || text.lines().any(|l| l.trim() == "//@ opt-levels")
        })
        .collect()
}

/// The compiler arguments (`//@ args:`) and program arguments (`//@ program-args:`) of a file.
fn directives(text: &str) -> (Vec<String>, Vec<String>) {
    let words = |key: &str| -> Vec<String> {
        text.lines()
            .filter_map(|l| l.trim().strip_prefix(key))
            .flat_map(|r| r.split_whitespace().map(str::to_string).collect::<Vec<_>>())
            .collect()
    };
    (words("//@ args:"), words("//@ program-args:"))
}

/// `//@ args:` without the options of the `sim` device, which `strata run --device cpu` refuses.
fn cpu_args(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--schedule" | "--seed" | "--max-steps" => {
                it.next();
            }
            "--no-race-check" => {}
            a if ["--schedule=", "--seed=", "--max-steps="].iter().any(|p| a.starts_with(p)) => {}
            a => out.push(a.to_string()),
        }
    }
    out
}

/// (exit status, standard output) of `strata run --device DEVICE FILE`.
fn run(file: &Path, device: &str, env: &[(&str, &str)], cache: &Path) -> (Option<i32>, String) {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    let (mut args, program_args) = directives(&text);
    if device == "cpu" {
        args = cpu_args(&args);
    }
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_strata"));
    cmd.current_dir(common::root()).args(["run", "--device", device]).args(&args).arg(file);
    if !program_args.is_empty() {
        cmd.arg("--").args(&program_args);
    }
    cmd.env("STRATA_CACHE_DIR", cache).env("NO_COLOR", "1").env_remove("STRATA_CFLAGS");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("cannot start strata");
    (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn cpu_at_o0_at_the_device_flags_and_under_sanitizers_prints_what_sim_prints() {
    let files = programs();
    assert!(!files.is_empty() || std::env::var("STRATA_OPT_FILTER").is_ok(), "no programs found");
    let cache = std::env::temp_dir().join(format!("strata-opt-levels-{}", std::process::id()));
    let sanitizers = common::sanitizers_work().is_some();
    if !sanitizers {
        eprintln!(
            "cpu_opt_levels: `{}` cannot build with {}; that build is skipped",
            common::cc(),
            common::SANITIZER_FLAGS
        );
    }
    let mut variants: Vec<(&str, Vec<(&str, &str)>)> = vec![("O0", vec![("STRATA_CFLAGS", "-O0")]), ("device", vec![])];
    if sanitizers {
        variants
            .push(("sanitizers", vec![("STRATA_CFLAGS", common::SANITIZER_FLAGS), ("ASAN_OPTIONS", "detect_leaks=0")]));
    }
    let mut failures = Vec::new();
    for file in &files {
        let name = file.strip_prefix(common::root()).unwrap_or(file).display().to_string();
        let reference = run(file, "sim", &[], &cache);
        for (variant, env) in &variants {
            let got = run(file, "cpu", env, &cache);
            if got != reference {
                failures.push(format!(
                    "{name}: cpu ({variant}) differs from sim:\n  sim: {:?} {:?}\n  cpu: {:?} {:?}",
                    reference.0, reference.1, got.0, got.1
                ));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&cache);
    eprintln!("cpu_opt_levels: {} programs x {} builds of the C", files.len(), variants.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
