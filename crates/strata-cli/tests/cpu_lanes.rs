//! Threads as SIMD lanes on the cpu device (issue 27, `crates/strata-emit/src/emit/lanes.rs`):
//! which loops the emitted C interchanges with the thread loop, what it says about the choice,
//! where it writes `#pragma omp simd`, that `STRATA_LANES=0` turns it off, and that the program
//! prints the same either way. (`tests/corpus.rs` compares every program's output on `cpu` with
//! `sim`; the timings are in docs/benchmarks.md, `bench/lanes.sh`.)

use std::process::{Command, Output};

mod common;
use common::root;

fn strata(args: &[&str], lanes_off: bool) -> Output {
    strata_lanes(args, if lanes_off { Some("0") } else { None })
}

/// `strata ARGS` with `STRATA_LANES` set to `lanes` (unset for `None`).
fn strata_lanes(args: &[&str], lanes: Option<&str>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_strata"));
    c.current_dir(root()).args(args).env_remove("STRATA_ARITH_CHECKS");
    match lanes {
        Some(v) => c.env("STRATA_LANES", v),
        None => c.env_remove("STRATA_LANES"),
    };
    c.output().unwrap()
}

/// The stdout of `strata run` on `device`, asserting success.
fn run_on(file: &str, device: &str, lanes: Option<&str>) -> String {
    let out = strata_lanes(&["run", "--device", device, file], lanes);
    assert!(out.status.success(), "{file} on {device}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// The C of kernel `name` with every legal loop interchanged (`STRATA_LANES=all`).
fn forced_kernel_c(file: &str, name: &str) -> String {
    let out = strata_lanes(&["emit", "--target", "c", file], Some("all"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let c = String::from_utf8(out.stdout).unwrap();
    let head = format!("static void {name}(");
    let start = c.match_indices(&head).map(|(i, _)| i).find(|i| !c[*i..].split('\n').next().unwrap().ends_with(';'));
    let start = start.unwrap_or_else(|| panic!("no kernel `{name}` in the C of {file}"));
    let end = c[start..].find("\n}\n").map_or(c.len(), |e| start + e);
    c[start..end].to_string()
}

/// The C of kernel `name` in the C that `strata emit --target c FILE` writes.
fn kernel_c(file: &str, name: &str, lanes_off: bool) -> String {
    let out = strata(&["emit", "--target", "c", file], lanes_off);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let c = String::from_utf8(out.stdout).unwrap();
    let head = format!("static void {name}(");
    let start = c.match_indices(&head).map(|(i, _)| i).find(|i| !c[*i..].split('\n').next().unwrap().ends_with(';'));
    let start = start.unwrap_or_else(|| panic!("no kernel `{name}` in the C of {file}"));
    let end = c[start..].find("\n}\n").map_or(c.len(), |e| start + e);
    c[start..end].to_string()
}

#[test]
fn the_papers_matmul_runs_its_k_loop_around_simd_thread_loops() {
    let k = kernel_c("bench/matmul_element.strata", "matmul", false);
    let why = k.find("threads as SIMD lanes: `for k` runs at block level").expect(&k);
    let k_loop = k.find("for (uint64_t k = ").expect(&k);
    let simd = k[k_loop..].find("#pragma omp simd").map(|i| k_loop + i).expect(&k);
    let tx = k[simd..].find("for (uint64_t tx_").map(|i| simd + i).expect(&k);
    assert!(why < k_loop && k_loop < simd && simd < tx, "the k loop must enclose the SIMD thread loop:\n{k}");
    // `sum` lives across the split: one per thread.
    assert!(k.contains("sum_pt_[tid_]"), "{k}");
}

#[test]
fn short_loops_whose_lines_stay_in_l1_keep_their_thread_loop_outside() {
    // 64 iterations over B's column touch 4 KiB: the next threads find those lines in L1.
    let k = kernel_c("tests/corpus/run/matmul_element_per_thread_2d.strata", "matmul", false);
    assert!(k.contains("thread loop outside `for k`: its 1 strided accesses touch 4 KiB"), "{k}");
    assert!(!k.contains("omp simd"), "{k}");
}

#[test]
fn a_row_per_thread_matmul_keeps_its_thread_loop_outside_and_says_why() {
    // A's row is strided along tx as much as B's column is along k: a tie keeps the loop inside.
    let k = kernel_c("bench/matmul.strata", "matmul", false);
    assert!(k.contains("thread loop outside `for k`"), "{k}");
    assert!(!k.contains("threads as SIMD lanes"), "{k}");
    assert!(!k.contains("omp simd"), "{k}");
}

#[test]
fn thread_loops_outside_interchanged_regions_are_no_simd_loops() {
    // Shared-memory atomics are plain adds on the cpu device: lanes would collide.
    assert!(!kernel_c("bench/histogram.strata", "histogram", false).contains("omp simd"));
    // Kernels without an interchanged loop keep their thread loops as they were.
    assert!(!kernel_c("bench/reduce.strata", "reduce", false).contains("omp simd"));
}

#[test]
fn strata_lanes_0_turns_lanes_off_and_the_output_is_the_same() {
    let off = kernel_c("bench/matmul_element.strata", "matmul", true);
    assert!(!off.contains("omp simd") && !off.contains("SIMD lanes"), "{off}");
    for lanes_off in [false, true] {
        let out = strata(&["run", "-D", "N=512", "-D", "REPS=1", "bench/matmul_element.strata"], lanes_off);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(String::from_utf8_lossy(&out.stdout), "matmul ok\n");
    }
}

#[test]
fn the_papers_matmul_is_tiled_by_rows_of_threads() {
    // 16 x 16 threads: the k loop runs once per tile of 4 rows, so each k step works on the 4
    // rows' running sums only.
    let k = kernel_c("bench/matmul_element.strata", "matmul", false);
    assert!(k.contains("tiled by 4 of the 16 rows of threads"), "{k}");
    let tile = k.find("for (uint64_t tile").expect(&k);
    let k_loop = k.find("for (uint64_t k = ").expect(&k);
    assert!(tile < k_loop, "the tile loop must enclose the k loop:\n{k}");
    assert!(k[k_loop..].contains("ty_ < tile"), "{k}");
}

#[test]
fn forced_interchange_of_accumulators_read_after_the_loop_prints_what_sim_prints() {
    let file = "tests/corpus/run/lanes_accumulators_read_after_loop.strata";
    let k = forced_kernel_c(file, "acc");
    // Both uniform loop nests run at block level (the second's inner bound is the outer
    // counter), the accumulators are per-thread arrays, and 8 rows of threads are tiled.
    assert!(k.contains("`for k` runs at block level (forced"), "{k}");
    assert!(k.contains("`for j` runs at block level (forced"), "{k}");
    assert!(k.contains("sum_pt_[tid_]") && k.contains("m_pt_[tid_]"), "{k}");
    assert!(k.contains("tiled by 4 of the 8 rows of threads"), "{k}");
    let sim = run_on(file, "sim", None);
    assert_eq!(sim, "ok\n");
    assert_eq!(run_on(file, "cpu", Some("all")), sim);
    assert_eq!(run_on(file, "cpu", Some("0")), sim);
}

#[test]
fn loops_left_by_break_or_under_thread_conditions_stay_inside_the_thread_loop() {
    let file = "tests/corpus/run/lanes_loops_kept_inside_threads.strata";
    let k = forced_kernel_c(file, "kept");
    // Only the first, uniform loop is interchanged: the loop with `break` (its exit flag), the
    // loop under `if row[0] > 1.0` and the `while` run inside the thread loop.
    assert_eq!(k.matches("runs at block level").count(), 1, "{k}");
    assert!(k.contains("`for k` runs at block level (forced"), "{k}");
    let after = &k[k.find("runs at block level").unwrap()..];
    let thread_loop = after.find("for (uint64_t tx_").expect(&k);
    let second = &after[thread_loop + 1..];
    let tx = second.find("for (uint64_t tx_").expect(&k);
    for inner in ["&& !break_", "for (uint64_t k_2", "while ("] {
        let at = second.find(inner).unwrap_or_else(|| panic!("no `{inner}` in\n{k}"));
        assert!(tx < at, "`{inner}` must be inside a thread loop:\n{k}");
    }
    let sim = run_on(file, "sim", None);
    assert_eq!(run_on(file, "cpu", Some("all")), sim);
    assert_eq!(run_on(file, "cpu", None), sim);
}

#[test]
fn every_lanes_kernel_of_bench_prints_what_sim_prints_when_forced() {
    // The paper's matmul at a small size, every legal loop interchanged.
    let args = ["run", "-D", "N=64", "-D", "REPS=1", "bench/matmul_element.strata"];
    let out = strata_lanes(&args, Some("all"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "matmul ok\n");
}
