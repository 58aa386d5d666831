//! Integer overflow (docs/language.md, "Literals and operators"; E0913) on the devices the corpus
//! test does not cover: every `tests/corpus/run/overflow_*.strata` program fails on `sim` (the
//! corpus test checks that and its snapshot) and on the cpu device with the same code at the
//! same position and exit status 1; the emitted C stops by itself with `file:line:col:
//! error[E0913]`; `STRATA_ARITH_CHECKS=0` leaves the checks out; the CUDA-C front end keeps C's
//! wrapping arithmetic; and the CUDA of the overflowing programs compiles with nvcc where there
//! is one (the run-pass programs are compiled by `tests/cuda_compile.rs`).

use std::path::PathBuf;
use std::process::{Command, Output};

mod common;
use common::{cc, nvcc, root};

fn strata(args: &[&str], envs: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_strata"));
    cmd.current_dir(root()).args(args);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn emit(target: &str, file: &str, envs: &[(&str, &str)]) -> String {
    // (`strata emit` takes `.strata` programs only.)
    let out = strata(&["emit", "--target", target, file], envs);
    assert!(out.status.success(), "strata emit {target} {file}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn work_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("strata-overflow-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The overflowing corpus programs, relative to the repository root, sorted.
fn overflow_programs() -> Vec<String> {
    let dir = root().join("tests/corpus/run");
    let mut out: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.starts_with("overflow_") && n.ends_with(".strata"))
        .filter(|n| std::fs::read_to_string(dir.join(n)).unwrap_or_default().starts_with("//@ run-fail"))
        .map(|n| format!("tests/corpus/run/{n}"))
        .collect();
    out.sort();
    out
}

/// The `file:line:col: error[E….]` lines of `strata run --format short`.
fn errors(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stderr).lines().filter(|l| l.contains(": error[")).map(str::to_string).collect()
}

#[test]
fn every_overflow_fails_on_sim_and_cpu_at_the_same_operator() {
    let programs = overflow_programs();
    assert!(programs.len() >= 10, "{programs:?}");
    for file in &programs {
        let sim = strata(&["run", "--device", "sim", "--format", "short", file], &[]);
        let cpu = strata(&["run", "--device", "cpu", "--format", "short", file], &[]);
        assert_eq!(sim.status.code(), Some(1), "{file} on sim: {}", String::from_utf8_lossy(&sim.stderr));
        assert_eq!(cpu.status.code(), Some(1), "{file} on cpu: {}", String::from_utf8_lossy(&cpu.stderr));
        let (s, c) = (errors(&sim), errors(&cpu));
        assert_eq!(s.len(), 1, "{file}: {s:?}");
        assert!(s[0].contains("error[E0913]"), "{file}: {s:?}");
        assert_eq!(s, c, "{file}: sim and cpu disagree");
        // What the program printed before the overflow is the same too.
        assert_eq!(sim.stdout, cpu.stdout, "{file}");
    }
}

#[test]
fn the_emitted_c_traps_with_the_operators_position() {
    let file = "tests/corpus/run/overflow_mul_for_counter_i32.strata";
    let dir = work_dir("cpu");
    let src = dir.join("p.c");
    let exe = dir.join("p");
    let c = emit("c", file, &[]);
    assert!(c.contains("strata_mul_i32("), "{c}");
    std::fs::write(&src, c).unwrap();
    let built = Command::new(cc()).args(["-O2", "-fopenmp", "-o"]).arg(&exe).arg(&src).arg("-lm").output().unwrap();
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
    let out = Command::new(&exe).env_remove("STRATA_ERRORS").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!("{file}:11:16: error[E0913]: attempt to multiply with overflow\n")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The lines of emitted code that call the checked helper `f` (with a source position; the
/// runtime's definitions have none).
fn calls(code: &str, f: &str) -> usize {
    code.lines().filter(|l| l.contains(&format!("{f}(")) && l.contains("STRATA_AT(")).count()
}

/// The lines of emitted C that call the deferred helper `f` (`strata_dadd_u32(…, &overflowN_)`).
fn deferred_calls(code: &str, f: &str) -> usize {
    code.lines().filter(|l| l.contains(&format!("{f}(")) && l.contains("&overflow")).count()
}

#[test]
fn straight_line_thread_loops_test_one_overflow_flag_after_the_loop() {
    // The block reduction's `pair[0] + pair[1]` (bench and corpus): deferred, the flag tested
    // once after the thread loop with the operator's position and message.
    for file in ["bench/reduce.strata", "tests/corpus/run/overflow_deferred_block_reduction.strata"] {
        let c = emit("c", file, &[]);
        assert_eq!(deferred_calls(&c, "strata_dadd_u32"), 1, "{file}: {c}");
        // (the host's own checked sums stay as they are)
        let host = calls(&c, "strata_add_u32");
        let test = c.lines().find(|l| l.contains("if (STRATA_UNLIKELY(overflow")).expect(file);
        assert!(
            test.contains("strata_overflow(STRATA_AT(") && test.contains("\"attempt to add with overflow\""),
            "{test}"
        );
        // STRATA_DEFER_CHECKS=0 keeps the check in place.
        let c = emit("c", file, &[("STRATA_DEFER_CHECKS", "0")]);
        assert_eq!(deferred_calls(&c, "strata_dadd_u32"), 0, "{file}: {c}");
        assert_eq!(calls(&c, "strata_add_u32"), host + 1, "{file}: {c}");
        // CUDA is not changed: no deferred helpers in its runtime either.
        assert!(!emit("cuda", file, &[]).contains("strata_dadd_u32"), "{file}");
    }
    // A branch on the sum keeps the check where it is.
    let c = emit("c", "tests/corpus/run/overflow_not_deferred_under_a_branch.strata", &[]);
    assert_eq!(calls(&c, "strata_add_i32"), 1, "{c}");
    assert_eq!(deferred_calls(&c, "strata_dadd_i32"), 0, "{c}");
}

#[test]
fn deferred_and_immediate_checks_report_the_same_error() {
    for file in overflow_programs() {
        let on = strata(&["run", "--device", "cpu", "--format", "short", &file], &[]);
        let off = strata(&["run", "--device", "cpu", "--format", "short", &file], &[("STRATA_DEFER_CHECKS", "0")]);
        assert_eq!(on.status.code(), off.status.code(), "{file}");
        assert_eq!(errors(&on), errors(&off), "{file}");
        assert_eq!(on.stdout, off.stdout, "{file}");
    }
}

#[test]
fn checks_are_left_out_only_on_request_and_where_ranges_rule_out_overflow() {
    let issue = "tests/corpus/run/overflow_mul_for_counter_i32.strata";
    let wrapping = "tests/corpus/run/overflow_wrapping_fns_do_not_fail.strata";
    for target in ["c", "cuda"] {
        // `e * 7919` for `e` in 0..300000 may leave `i32`: checked (the counter itself fits, so
        // its conversion to `i32` is not).
        let on = emit(target, issue, &[]);
        assert_eq!(calls(&on, "strata_mul_i32"), 1, "{target}: {on}");
        assert_eq!(calls(&on, "strata_n2i32"), 0, "{target}: {on}");
        let off = emit(target, issue, &[("STRATA_ARITH_CHECKS", "0")]);
        assert_eq!(calls(&off, "strata_mul_i32"), 0, "{target}: {off}");
        // `(e as i64) * 7919` cannot leave `i64`, and the wrapping functions never fail: no
        // check; `s + …` of the `u64` generator is through them too.
        let on = emit(target, wrapping, &[]);
        assert_eq!(calls(&on, "strata_mul_i64"), 0, "{target}: {on}");
        assert!(on.contains("strata_wrapping_mul_u32("), "{target}: {on}");
        assert!(on.contains("strata_wrapping_add_u64("), "{target}: {on}");
    }
}

#[test]
fn cuda_c_integer_arithmetic_still_wraps() {
    let dir = work_dir("cudac");
    let cu = dir.join("wrap.cu");
    std::fs::write(
        &cu,
        "#include <cstdio>\nint main() {\n    unsigned u = 0u;\n    u = u - 1u;\n    int x = 2147483647;\n    \
         unsigned h = 2166136261u;\n    for (int i = 0; i < 4; i++) h = h * 16777619u;\n    \
         printf(\"%u %u %d\\n\", u, h, x / 2);\n    return 0;\n}\n",
    )
    .unwrap();
    let path = cu.to_string_lossy().to_string();
    for device in ["sim", "cpu"] {
        let out = strata(&["run", "--device", device, &path], &[]);
        assert!(out.status.success(), "{device}: {}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(String::from_utf8_lossy(&out.stdout), "4294967295 1268118805 1073741823\n", "{device}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cuda_of_the_overflowing_programs_compiles_with_nvcc() {
    let Some(nvcc) = nvcc() else {
        assert!(
            std::env::var("STRATA_REQUIRE_NVCC").as_deref() != Ok("1"),
            "STRATA_REQUIRE_NVCC=1 but nvcc was not found: run scripts/setup-nvcc.sh"
        );
        eprintln!("overflow: nvcc not found ($NVCC or .venv/bin/nvcc) — skipped");
        return;
    };
    let dir = work_dir("nvcc");
    for (k, file) in overflow_programs().iter().enumerate() {
        let cu = dir.join(format!("p{k}.cu"));
        std::fs::write(&cu, emit("cuda", file, &[])).unwrap();
        let out = Command::new(&nvcc)
            .args(["-Werror", "all-warnings", "-gencode", "arch=compute_80,code=sm_80", "-c", "-o"])
            .arg(dir.join(format!("p{k}.o")))
            .arg(&cu)
            .output()
            .unwrap();
        assert!(out.status.success(), "{file}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let _ = std::fs::remove_dir_all(&dir);
}
