//! CUDA-C language coverage (docs/cuda-c.md): `__device__`/`__host__` functions, `dim3` and 2-D/3-D
//! launches, pointer arithmetic, atomics and the other constructs of the subset beyond the first
//! slice (`cuda_c.rs`). Each test runs a program of `tests/cuda_c/` with `strata run` on `sim` and
//! asserts its output, exit status and diagnostic (code and `.cu` position); a correct program
//! must print the same on the cpu device.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `tests/cuda_c/NAME.cu` with `--format short` and `extra`; returns (exit code, stdout,
/// stderr).
fn run(name: &str, extra: &[&str]) -> (i32, String, String) {
    let file = format!("tests/cuda_c/{name}.cu");
    let mut args = vec!["run", "--format", "short"];
    args.extend_from_slice(extra);
    args.push(&file);
    let out = Command::new(env!("CARGO_BIN_EXE_strata")).current_dir(root()).args(&args).output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

/// Asserts that `name` runs cleanly and prints `want`, also under random schedules and on the
/// cpu device.
fn runs_and_prints(name: &str, want: &str) {
    let (code, stdout, stderr) = run(name, &[]);
    assert_eq!((code, stderr.as_str()), (0, ""), "{name}: {stdout}");
    assert_eq!(stdout, want, "{name}");
    let (code, stdout, stderr) = run(name, &["--device", "cpu"]);
    assert_eq!((code, stderr.as_str()), (0, ""), "{name} on cpu: {stdout}");
    assert_eq!(stdout, want, "{name} on cpu");
    for seed in ["1", "7"] {
        let (code, stdout, stderr) = run(name, &["--schedule", "random", "--seed", seed]);
        assert_eq!((code, stderr.as_str()), (0, ""), "{name}, seed {seed}");
        assert_eq!(stdout, want, "{name}, seed {seed}");
    }
}

/// Asserts that `name` fails with exactly `stderr` (one short diagnostic) and exit status 1.
fn fails_with(name: &str, want_stdout: &str, want_stderr: &str) {
    let (code, stdout, stderr) = run(name, &[]);
    assert_eq!(code, 1, "{name}: {stderr}");
    assert_eq!(stdout, want_stdout, "{name}");
    assert_eq!(stderr, format!("tests/cuda_c/{name}.cu:{want_stderr}\n"), "{name}");
}

#[test]
fn device_and_host_functions_with_scalar_and_pointer_parameters_and_recursion() {
    runs_and_prints(
        "device_functions",
        "0 7\n2 38\n5 69\n11 100\n19 131\n30 162\n44 193\n62 224\nsum 173, mix on the host 33\n",
    );
}

#[test]
fn a_race_inside_a_device_function_points_into_it() {
    fails_with("device_function_race", "", "5:5: error[E0901]: data race on `d[0]` (gpu.global)");
}

#[test]
fn deep_recursion_runs_and_runaway_recursion_is_stopped() {
    fails_with("device_recursion", "9000\n", "8:16: error[E0907]: more than 10000 calls in progress at once");
}

#[test]
fn syncthreads_in_a_device_function_is_refused() {
    fails_with(
        "device_syncthreads",
        "",
        "4:5: error[E0801]: not supported in CUDA-C yet: `__syncthreads` in a `__device__` function",
    );
}

#[test]
fn a_value_function_without_a_final_return_is_refused() {
    fails_with(
        "device_missing_return",
        "",
        "8:1: error[E0801]: not supported in CUDA-C yet: the end of `sign`, which returns a value, reached without a `return`",
    );
}

#[test]
fn dim3_variables_and_two_and_three_dimensional_launches() {
    let mut want = String::from("grid 2 x 2 x 1, block 4 x 4 x 1\n");
    for y in 0..6 {
        for x in 0..8 {
            want.push_str(&format!(" {}", 100 * y + x));
        }
        want.push('\n');
    }
    want.push_str("1 21 321\n");
    runs_and_prints("dim3_grid", &want);
}

#[test]
fn a_race_between_threads_of_a_2d_block_names_both_coordinates() {
    fails_with("dim3_race", "", "3:5: error[E0901]: data race on `d[0]` (gpu.global)");
    let out = Command::new(env!("CARGO_BIN_EXE_strata"))
        .current_dir(root())
        .args(["run", "tests/cuda_c/dim3_race.cu"])
        .output()
        .unwrap();
    let human = String::from_utf8_lossy(&out.stderr);
    assert!(human.contains("write by thread (0, 1) of block (0, 0)"), "{human}");
    assert!(human.contains("write by thread (0, 0) of block (0, 0)"), "{human}");
}

#[test]
fn pointer_arithmetic_into_allocations_and_offset_arguments() {
    runs_and_prints("pointer_arith", "5 14 29 50 -1 -1 149 194 \n");
}

#[test]
fn an_offset_pointer_is_checked_against_its_whole_allocation() {
    fails_with("pointer_oob", "", "3:5: error[E0903]: out of bounds: `d` has 8 elements, the access is at 8");
}

#[test]
fn a_negative_index_inside_the_allocation_runs_and_one_before_its_start_is_refused() {
    fails_with("pointer_negative", "", "3:54: error[E0903]: index `-2` is negative");
}

#[test]
fn memcpy_of_all_four_kinds_memset_and_get_last_error() {
    // The last copy, of 3 elements to `b + 4` in a buffer of 6, is past its end.
    fails_with(
        "memcpy_kinds",
        "-1 -1 1 -1 -1 -1 err 0\n0\n",
        "41:5: error[E0903]: a pointer past the end of its buffer",
    );
}

#[test]
fn freeing_an_interior_pointer_or_twice_is_reported() {
    fails_with("free_interior", "", "8:5: error[E0906]: release of a pointer into `a` that is not its start");
    fails_with("double_free", "", "4:5: error[E0906]: `a` freed a second time");
}

#[test]
fn the_cpu_device_checks_copies_and_frees_against_the_allocations() {
    // What `sim` reports at these calls, the cpu device reports at the same place (its registry
    // of allocations), in its own words.
    let cases = [
        (
            "memcpy_kinds",
            "-1 -1 1 -1 -1 -1 err 0\n0\n",
            "41:5: error[E0903]: out of bounds: the copy writes past the end of its destination buffer",
        ),
        ("free_interior", "", "8:5: error[E0906]: free of a pointer that is not the start of a live allocation"),
        ("double_free", "", "4:5: error[E0906]: free of a pointer that is not the start of a live allocation"),
    ];
    for (name, stdout_want, stderr_want) in cases {
        let (code, stdout, stderr) = run(name, &["--device", "cpu"]);
        assert_eq!((code, stdout.as_str()), (1, stdout_want), "{name}: {stderr}");
        assert_eq!(stderr, format!("tests/cuda_c/{name}.cu:{stderr_want}\n"), "{name}");
    }
}

#[test]
fn a_barrier_some_threads_returned_before_is_passed_on_cpu() {
    // `sim` reports the divergence; the cpu device does not check it, and the threads still
    // running pass the barrier: the kernel ends, nothing hangs.
    let (code, _, stderr) = run("corpus/x_return_before_sync", &[]);
    assert_eq!(code, 1);
    assert!(stderr.contains("error[E0902]"), "{stderr}");
    let (code, stdout, stderr) = run("corpus/x_return_before_sync", &["--device", "cpu", "--time-limit", "60"]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    assert!(stdout.starts_with("a: "), "{stdout}");
}

#[test]
fn every_atomic_on_global_and_shared_memory() {
    runs_and_prints(
        "atomics",
        "sum 4986 neg -4986 min 0 claimed 1 max 100 count 100\nor 4294967295 and 0 xor 36 fsum 50\n",
    );
}

#[test]
fn an_atomic_on_a_type_cuda_does_not_declare_it_for_is_refused() {
    fails_with("atomic_wrong_type", "", "4:5: error[E0801]: not supported in CUDA-C yet: `atomicSub` on `double`");
}

#[test]
fn warp_shuffles_ballot_syncwarp_and_block_reductions() {
    let mut want = String::new();
    let rows = [(496, 1, 0, 4, 26), (1520, 1, 0, 36, 58), (2544, 0, 1, 68, 90), (3568, 0, 1, 100, 122)];
    for (w, (sum, and, or, up, xor)) in rows.iter().enumerate() {
        want.push_str(&format!("warp {w}: sum {sum} odd 2863311530 evens 32 and {and} or {or} up {up} xor {xor}\n"));
    }
    runs_and_prints("warp", &want);
}

#[test]
fn a_shuffle_only_part_of_the_warp_reaches_diverges() {
    fails_with(
        "warp_divergent_shuffle",
        "",
        "6:13: error[E0902]: barrier divergence: not every thread reaches this barrier",
    );
}

#[test]
fn conditional_short_circuit_break_continue_do_while_and_switch() {
    runs_and_prints("control_flow", "0:100203 5:100201 3:-29793 1:20202 6:121205 4:100008 | first negative 2\n");
}

#[test]
fn a_thread_that_breaks_out_of_a_loop_with_a_barrier_diverges() {
    fails_with(
        "break_barrier",
        "2 2\n",
        "18:9: error[E0902]: barrier divergence: not every thread reaches this barrier",
    );
}

#[test]
fn printf_conversions_with_flags_width_and_precision_as_c_writes_them() {
    // What gcc's build of the same host loop prints (checked byte for byte when written).
    let want = "thread  0:    1.500 1.500000e+00 1500 0 a\n\
                thread  1:   -0.125 -1.250000e-01 -125 0x11 b\n\
                thread  2:    3.142 3.141590e+00 3141.59 0x22 c\n\
                [3.141593] [3.14] [3.1416    ] [+0003.14] [3.141593E+10] [3.14159E-06] [3.14]\n\
                [   42] [42   ] [-0042] [ff] [FF] [0000beef] [10] [8] [text] [%]\n\
                [   42] [7     ] [3.14] [   2.500] [9   ]\n";
    // Device output comes in the order the schedule runs the threads: the default one here.
    let (code, stdout, stderr) = run("printf_formats", &[]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    assert_eq!(stdout, want);
}

#[test]
fn function_like_macros_as_values_and_statements() {
    runs_and_prints("macros", "81 49 10\n");
}

#[test]
fn assert_holds_and_exit_ends_the_program_with_its_status() {
    let (code, stdout, stderr) = run("exit_assert", &[]);
    assert_eq!((code, stdout.as_str(), stderr.as_str()), (2, "kernel done\n", ""));
}

#[test]
fn math_functions_print_what_gcc_builds_of_the_same_code_print() {
    // The expected text is what the same computation, compiled by gcc as plain C, prints.
    runs_and_prints(
        "math",
        "-10.044283\n-8.010836\n-5.282349\n-0.068567\n6.570637\n15.005090\n21.186634\n28.274485\n\
         1.4142135623731 7.38905609893065 1.4142135623731\n-4 3 7 5\n",
    );
}

#[test]
fn structs_as_values_on_host_and_device() {
    runs_and_prints("structs", "3 1.5 2 3.5 | 16 8 2\n");
}

#[test]
fn a_field_pointer_used_past_its_field_is_refused() {
    fails_with(
        "field_pointer_offset",
        "",
        "15:10: error[E0801]: not supported in CUDA-C yet: a pointer to a field of a struct in memory where parameter 1 \
         of `fill` is used other than at offset 0 (an index other than 0 at line 11): an access through it at another \
         offset would reach the next field unchecked",
    );
}

#[test]
fn a_pointer_to_a_struct_in_shared_memory_is_refused() {
    // Structs in shared memory are supported, laid out by field: a pointer to a whole one is not.
    fails_with(
        "struct_shared",
        "",
        "10:18: error[E0801]: not supported in CUDA-C yet: a pointer to `__shared__` `Vec2`s (each field is a \
         buffer of its own: reach the fields through the array, `s[i].f`)",
    );
}
