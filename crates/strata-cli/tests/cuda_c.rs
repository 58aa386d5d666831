//! CUDA-C input (docs/cuda-c.md): `strata run FILE.cu` lowers the file with `strata-cudac` and runs
//! it on `sim`. The programs are in `tests/cuda_c/`: the CUDA-C semantics paper's Figure 1
//! verbatim (`fig1.cu`), its two broken variants from §3.2 of the paper, and small programs of
//! our own. Each test asserts the output, the exit status, the diagnostic code and where it points.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_strata")).current_dir(root()).args(args).output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

const FIG1_INPUT: &str = "INPUT:  29  50  71  92  13  34  55  76  97  18  39  60  81  2  23  44  65  86 \n";

/// Runs `file` with `--format short` and returns (exit code, stdout, stderr).
fn run_short(file: &str, extra: &[&str]) -> (i32, String, String) {
    let mut args = vec!["run", "--format", "short"];
    args.extend_from_slice(extra);
    args.push(file);
    let out = run(&args);
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

#[test]
fn figure_1_prints_what_the_paper_says() {
    // The paper: "INPUT: 29 50 71 … 86" and "OUTPUT: 767" (printf's spacing as written).
    let (code, stdout, stderr) = run_short("tests/cuda_c/fig1.cu", &[]);
    assert_eq!(code, 0, "stderr: {stderr}");
    assert_eq!(stdout, format!("{FIG1_INPUT}OUTPUT: 767\n"));
    assert_eq!(stderr, "");
}

#[test]
fn figure_1_is_race_free_under_random_schedules() {
    for seed in ["1", "2", "3"] {
        let (code, stdout, stderr) = run_short("tests/cuda_c/fig1.cu", &["--schedule", "random", "--seed", seed]);
        assert_eq!(code, 0, "seed {seed}: {stderr}");
        assert!(stdout.ends_with("OUTPUT: 767\n"), "seed {seed}: {stdout}");
    }
}

#[test]
fn figure_1_without_the_second_barrier_races_at_line_17() {
    // The paper: "Possible race on shared device memory detected at ./sum.cu:17".
    let (code, stdout, stderr) = run_short("tests/cuda_c/fig1_race.cu", &[]);
    assert_eq!(code, 1);
    assert_eq!(stdout, FIG1_INPUT, "the host output before the kernel ran");
    assert_eq!(stderr, "tests/cuda_c/fig1_race.cu:12:5: error[E0901]: data race on `shared[1]` (gpu.shared)\n");
    // The human form names the other access: thread 0's read of `shared[i]` on line 17.
    let out = run(&["run", "tests/cuda_c/fig1_race.cu"]);
    let human = text(&out.stderr);
    assert!(human.contains("17 │       shared[0] += shared[i];"), "{human}");
    assert!(human.contains("read by thread (0) of block (0)"), "{human}");
    assert!(human.contains("write by thread (1) of block (0)"), "{human}");
}

#[test]
fn figure_1_with_a_barrier_inside_the_if_deadlocks() {
    // The paper: "Detected a deadlock caused by misplaced __syncthreads()".
    let (code, stdout, stderr) = run_short("tests/cuda_c/fig1_deadlock.cu", &[]);
    assert_eq!(code, 1);
    assert_eq!(stdout, FIG1_INPUT);
    assert_eq!(
        stderr,
        "tests/cuda_c/fig1_deadlock.cu:12:5: error[E0902]: barrier divergence: not every thread reaches this barrier\n"
    );
    let human = text(&run(&["run", "tests/cuda_c/fig1_deadlock.cu"]).stderr);
    assert!(human.contains("thread (4) of block (0) waits at this other barrier"), "{human}");
}

#[test]
fn vector_add_with_malloc_floats_and_a_guard() {
    let (code, stdout, stderr) = run_short("tests/cuda_c/vector_add.cu", &[]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    assert_eq!(stdout, "errors: 0, c[999] = 2997\n");
}

#[test]
fn vector_add_without_the_guard_is_out_of_bounds() {
    let (code, stdout, stderr) = run_short("tests/cuda_c/vector_add_oob.cu", &[]);
    assert_eq!((code, stdout.as_str()), (1, ""));
    assert_eq!(
        stderr,
        "tests/cuda_c/vector_add_oob.cu:8:12: error[E0903]: out of bounds: `da` has 1000 elements, the access is at 1000\n"
    );
}

#[test]
fn tree_reduction_in_static_shared_memory() {
    let (code, stdout, stderr) = run_short("tests/cuda_c/reduce.cu", &[]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    assert_eq!(stdout, "block 0: 2016\nblock 1: 6112\nblock 2: 10208\nblock 3: 14304\ntotal 32640\n");
}

#[test]
fn unwritten_shared_memory_read_is_reported() {
    let (code, _, stderr) = run_short("tests/cuda_c/uninit_shared.cu", &[]);
    assert_eq!(code, 1);
    assert_eq!(stderr, "tests/cuda_c/uninit_shared.cu:10:14: error[E0904]: read of uninitialised memory: `s[31]`\n");
}

#[test]
fn host_code_reading_device_memory_is_reported() {
    let (code, stdout, stderr) = run_short("tests/cuda_c/host_reads_device.cu", &[]);
    assert_eq!((code, stdout.as_str()), (1, ""));
    assert_eq!(
        stderr,
        "tests/cuda_c/host_reads_device.cu:6:20: error[E0905]: host code accessed `d` in `gpu.global`\n"
    );
}

#[test]
fn constructs_outside_the_subset_are_refused_with_e0801() {
    let (code, stdout, stderr) = run_short("tests/cuda_c/unsupported_atomic.cu", &[]);
    assert_eq!((code, stdout.as_str()), (1, ""));
    assert_eq!(
        stderr,
        "tests/cuda_c/unsupported_atomic.cu:4:5: error[E0801]: not supported in CUDA-C yet: calls of `atomicAdd_block`\n"
    );
}

#[test]
fn unsupported_constructs_never_run() {
    // Each snippet is refused before anything runs (no output), with E0801 at a `.cu` position.
    let cases = [
        ("int w = 3; printf(\"%*d\\n\", w, 1);", "a `printf` `*` width or precision that is not a constant"),
        ("int a[2][2]; int *p = a + 1;", "pointer arithmetic on a multi-dimensional array"),
        ("int a[2][2]; a[1] = 0;", "a row of a multi-dimensional array where an element is expected"),
        ("#if FN(1)\n#endif", "this `#if` expression"),
        ("again: ; goto again;", "`goto` backwards (to a label before it)"),
        ("int *p; cudaMemcpy(p, p, 4, cudaMemcpyDefault);", "`cudaMemcpy` of kind"),
        ("int m = 4; float a[m];", "an array length that is not a constant"),
    ];
    let dir = std::env::temp_dir().join(format!("strata-cudac-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (i, (body, what)) in cases.iter().enumerate() {
        let file = dir.join(format!("case{i}.cu"));
        std::fs::write(
            &file,
            format!(
                "#include <stdio.h>\nint main(void) {{\n    printf(\"start\\n\");\n    {body}\n    return 0;\n}}\n"
            ),
        )
        .unwrap();
        let out = run(&["run", "--format", "short", file.to_str().unwrap()]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{body}: {stderr}");
        assert_eq!(text(&out.stdout), "", "{body}: nothing runs");
        assert!(stderr.contains(":4:") && stderr.contains("error[E0801]") && stderr.contains(what), "{body}: {stderr}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn figure_1_prints_the_same_on_the_cpu_device() {
    let (code, stdout, stderr) = run_short("tests/cuda_c/fig1.cu", &["--device", "cpu"]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    assert_eq!(stdout, format!("{FIG1_INPUT}OUTPUT: 767\n"));
}

#[test]
fn a_barrier_under_a_thread_dependent_condition_diverges_on_cpu_as_on_sim() {
    // Figure 1 with a barrier inside `if (tid < bdim/2)`: the cpu device cannot prove the
    // condition the same in every thread, so every thread evaluates it and they must agree; they
    // do not, which is the barrier divergence `sim` reports, at the same barrier.
    let (code, stdout, stderr) = run_short("tests/cuda_c/fig1_deadlock.cu", &["--device", "cpu"]);
    assert_eq!((code, stdout.as_str()), (1, FIG1_INPUT), "{stderr}");
    assert!(
        stderr.starts_with(
            "tests/cuda_c/fig1_deadlock.cu:12:5: error[E0902]: barrier divergence: the threads of a block disagree"
        ),
        "{stderr}"
    );
}

#[test]
fn cuda_c_takes_no_defines_on_either_device() {
    for device in ["sim", "cpu"] {
        let out = run(&["run", "--device", device, "-D", "N=4", "tests/cuda_c/fig1.cu"]);
        assert_eq!(out.status.code(), Some(2), "{device}");
        assert!(text(&out.stderr).contains("`-D` does not apply"), "{device}");
    }
}
