//! CUDA-C as third-party programs write it (issue 26): 8- and 16-bit integers and `bool`,
//! `main(argc, argv)` with the run's arguments, `printf("%s")` of any string, conditional format
//! strings, `cudaGetErrorString`, `exit(EXIT_SUCCESS)`, and the smaller constructs of
//! docs/cuda-c.md. Each program of `tests/cuda_c/` runs with `strata run` on `sim` and on the cpu
//! device with the output gcc's build of the same C prints; each refusal is one diagnostic with
//! its position and code.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `tests/cuda_c/NAME.cu` with `--format short`, `flags` and the program's `args`; returns
/// (exit code, stdout, stderr).
fn run(name: &str, flags: &[&str], args: &[&str]) -> (i32, String, String) {
    let file = format!("tests/cuda_c/{name}.cu");
    let mut all = vec!["run", "--format", "short"];
    all.extend_from_slice(flags);
    all.push(&file);
    if !args.is_empty() {
        all.push("--");
        all.extend_from_slice(args);
    }
    let out = Command::new(env!("CARGO_BIN_EXE_strata")).current_dir(root()).args(&all).output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

/// `name` with `args` prints `want` on `sim`, under a random schedule and on the cpu device.
fn runs_and_prints(name: &str, args: &[&str], want: &str) {
    for flags in [&[][..], &["--schedule", "random", "--seed", "3"], &["--device", "cpu"]] {
        let (code, stdout, stderr) = run(name, flags, args);
        assert_eq!((code, stderr.as_str()), (0, ""), "{name} {flags:?}: {stdout}");
        assert_eq!(stdout, want, "{name} {flags:?}");
    }
}

/// `name` stops with exit status 1 after printing `want_stdout`, with exactly the diagnostic
/// `want_stderr` (after the file name).
fn fails_with(name: &str, args: &[&str], want_stdout: &str, want_stderr: &str) {
    let (code, stdout, stderr) = run(name, &[], args);
    assert_eq!(code, 1, "{name}: {stderr}");
    assert_eq!(stdout, want_stdout, "{name}");
    assert_eq!(stderr, format!("tests/cuda_c/{name}.cu:{want_stderr}\n"), "{name}");
}

#[test]
fn eight_and_sixteen_bit_integers_and_bool_wrap_promote_and_size_as_in_c() {
    // What gcc's build of the same C (the kernels as loops) prints.
    runs_and_prints(
        "small_ints",
        &[],
        "3 75 900 1\n43 115 12900 1\n83 -101 24900 1\n123 -61 -28636 1\n163 -21 -16636 1\n203 19 -4636 1\n\
         243 59 7364 1\n27 99 8100 1\nsizes 1 2 2 1 16\n-128 65535 128 4464 1 0 C 44 65535 ff\nsteps 3, argc 1\n",
    );
}

#[test]
fn argv_atoi_and_strings_in_printf() {
    runs_and_prints(
        "args_strings",
        &[],
        "a.out: n=6 k=3 (1 arguments)\nmode [default] [left    ] [right]\n3 6 9 12 15 18\n\
         status: no error (cudaSuccess)\nlarge\n",
    );
    runs_and_prints(
        "args_strings",
        &["4", "-2", "--fast", "x"],
        "a.out: n=4 k=-2 (5 arguments)\nargv[1] = '4', first 4, 0 dashes\nargv[2] = '-2', first -, 1 dashes\n\
         argv[3] = '--fast', first -, 2 dashes\nargv[4] = 'x', first x, 0 dashes\nmode [--fast] [left    ] [right]\n\
         -2 -4 -6 -8\nstatus: no error (cudaSuccess)\nsmall\n",
    );
}

#[test]
fn a_string_is_a_checked_buffer_up_to_its_zero() {
    fails_with(
        "x_argv_past_end",
        &[],
        "ab\0",
        "9:22: error[E0903]: out of bounds: `\"ab\"` has 3 elements, the access is at 3",
    );
    fails_with(
        "x_argv_past_end",
        &["xy"],
        "xy\0",
        "9:22: error[E0903]: out of bounds: `argv[i]` has 3 elements, the access is at 3",
    );
    let (code, stdout, _) = run("x_argv_past_end", &[], &["abcdefg"]);
    assert_eq!((code, stdout.as_str()), (0, "abcd\n"));
}

#[test]
fn a_number_printed_with_percent_s_is_refused_at_the_argument() {
    fails_with(
        "strings_refused",
        &[],
        "",
        "7:26: error[E0801]: not supported in CUDA-C yet: this value as a string (`%s` takes a `char *`)",
    );
}

#[test]
fn prototypes_attributes_comma_atomic_inc_dec_and_file_level_shared() {
    runs_and_prints(
        "c_constructs",
        &[],
        "CUDA 13.0\nbins 16 16 16 16\nring 2 down 0\n8 7 6 5 4 3 2 1\ncomma 8, pair 4 4, sizeof 8\nclamped sum 36\n",
    );
}

#[test]
fn a_file_level_shared_array_is_checked_as_a_kernels_own() {
    fails_with("x_file_shared_race", &[], "", "9:5: error[E0901]: data race on `tile[1]` (gpu.shared)");
}

#[test]
fn the_programs_own_headers_are_included_once_and_found_next_to_it() {
    runs_and_prints(
        "local_header",
        &[],
        "main in tests/cuda_c/local_header.cu\nin: -2.0 -1.0 0.0 1.0 2.0 3.0 4.0 5.0\nout: 0.0 0.0 0.0 2.5 5.0 7.5 10.0 10.0\n",
    );
}

#[test]
fn a_header_is_found_through_dash_i_and_findings_point_into_it() {
    let name = "multi/x_header_oob";
    let (code, stdout, stderr) = run(name, &["-I", "tests/cuda_c/include"], &[]);
    assert_eq!((code, stdout.as_str()), (1, ""), "{stderr}");
    assert_eq!(
        stderr,
        "tests/cuda_c/include/fill_util.h:3:5: error[E0903]: out of bounds: `d` has 8 elements, the access is at 8\n"
    );
    let (code, _, stderr) = run(name, &[], &[]);
    assert_eq!(code, 1);
    assert_eq!(
        stderr,
        "tests/cuda_c/multi/x_header_oob.cu:5:10: error[E0801]: not supported in CUDA-C yet: `#include \"fill_util.h\"`: \
         no such file next to this one or in an `-I` directory\n\
         tests/cuda_c/multi/x_header_oob.cu:7:33: error[E0801]: not supported in CUDA-C yet: calls of `fill_pair`\n"
    );
}

#[test]
fn a_refusal_lists_every_construct_once_up_to_the_error_limit() {
    let file = "tests/cuda_c/many_refusals.cu";
    let lines = [
        "7:9: error[E0801]: not supported in CUDA-C yet: struct members other than scalars, pointers and arrays (of \
         scalars or structs)",
        "11:12: error[E0801]: not supported in CUDA-C yet: `atomicAdd_block` used as a value",
        "15:10: error[E0801]: not supported in CUDA-C yet: pointers to pointers",
        "19:5: error[E0801]: not supported in CUDA-C yet: `goto` to other than a label in the function's outermost \
         block",
        "20:15: error[E0801]: not supported in CUDA-C yet: an array length that is not a constant (a literal, a \
         `#define`, or a `const` integer initialised by a constant)",
        "21:7: error[E0801]: not supported in CUDA-C yet: a label other than one in a function's outermost block",
        "22:12: error[E0801]: not supported in CUDA-C yet: the `printf` conversion `%p`",
    ];
    let want: String = lines.iter().map(|l| format!("{file}:{l}\n")).collect();
    let (code, stdout, stderr) = run("many_refusals", &[], &[]);
    assert_eq!((code, stdout.as_str()), (1, ""));
    assert_eq!(stderr, want);
    // `strata check` lists the same; `--error-limit` cuts the list.
    let out = Command::new(env!("CARGO_BIN_EXE_strata"))
        .current_dir(root())
        .args(["check", "--format", "short", file])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stderr), want);
    let (_, _, stderr) = run("many_refusals", &["--error-limit", "2"], &[]);
    assert!(
        stderr.ends_with("… and 5 more errors (7 errors in total; `--error-limit 0` shows them all)\n"),
        "{stderr}"
    );
}

#[test]
fn char_arrays_from_string_literals_and_bool_in_memory() {
    runs_and_prints("char_arrays", &[], "cudaprog ok 9\nfound yes\n2 2 1 3\n");
}

#[test]
fn string_h_on_the_host_and_option_parsing() {
    runs_and_prints("string_h", &[], "n 8 sum 140, strcmp 1 1 0\nxxx 3\n");
    runs_and_prints(
        "string_h",
        &["-v", "-n", "5", "--what"],
        "unknown option --what (6 characters)\n0 1 4 9 16\nn 5 sum 30, strcmp 1 1 0\nxxx 3\n",
    );
}

#[test]
fn kernel_only_mode_gives_small_integer_parameters_values_of_their_type() {
    runs_and_prints(
        "k_small_int_params",
        &[],
        "c: 73 27 98 43 69 56 53 41\nu: 30 78 153 108 147 57 186 165\ns: 52 60 28 46 65 34 71 69\n\
         b: true true false true false false true true\n",
    );
    let check = |extra: &[&str]| {
        let mut args = vec!["check", "--format", "short"];
        args.extend_from_slice(extra);
        args.push("tests/cuda_c/k_small_int_params.cu");
        let out = Command::new(env!("CARGO_BIN_EXE_strata")).current_dir(root()).args(&args).output().unwrap();
        (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    // The default (the buffer length) is at most `CHAR_MAX` for a `char`.
    assert_eq!(check(&["--buffer-len", "1000"]), (0, String::new()));
    assert_eq!(check(&["--arg", "delta=-100"]), (0, String::new()));
    let (code, err) = check(&["--arg", "delta=200"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("`--arg delta=200`: not a value of the parameter's type"), "{err}");
}

#[test]
fn an_sdk_style_program_checks_every_call_and_prints_errors_to_stderr() {
    let want = "[Vector addition of 5000 elements]\nCopy input data from the host memory to the CUDA device\n\
                CUDA kernel launch with 20 blocks of 256 threads\nCopy output data from the CUDA device to the host \
                memory\nTest PASSED\nDone\nbye\n";
    for flags in [&[][..], &["--device", "cpu"]] {
        let (code, stdout, stderr) = run("sdk_vector_add", flags, &[]);
        assert_eq!(code, 0, "{flags:?}: {stderr}");
        assert_eq!(stdout, want, "{flags:?}");
        assert_eq!(stderr, "(a note on stderr: 5000 elements)\n", "{flags:?}");
    }
}

/// `name` with `args` ends with exit status `status` after printing `want_stdout` and (the
/// program's own) `want_stderr`, on `sim`, under a random schedule and on the cpu device.
fn exits_with(name: &str, args: &[&str], status: i32, want_stdout: &str, want_stderr: &str) {
    for flags in [&[][..], &["--schedule", "random", "--seed", "3"], &["--device", "cpu"]] {
        let (code, stdout, stderr) = run(name, flags, args);
        assert_eq!((code, stdout.as_str(), stderr.as_str()), (status, want_stdout, want_stderr), "{name} {flags:?}");
    }
}

#[test]
fn exit_anywhere_ends_the_program_with_its_status() {
    exits_with("exit_outside_main", &[], 0, "usage: prog K [K...]\n", "");
    exits_with("exit_outside_main", &["3"], 0, "3 6 9 12\n", "");
    exits_with("exit_outside_main", &["3", "bad"], 1, "", "not a positive number: bad\n");
}

#[test]
fn the_status_main_returns_is_the_exit_status() {
    exits_with("exit_status", &[], 0, "PASSED: sum 120\n", "");
    exits_with("exit_status", &["64"], 0, "PASSED: sum 2016\n", "");
    exits_with("exit_status", &["100"], 1, "FAILED: sum 2016\n", "");
    // `return -1;` is status 255, as C's `exit` keeps the low byte.
    exits_with("exit_status", &["8", "x"], 255, "PASSED: sum 28\n", "");
    // `strata check` reports a failure status as the program's own check failing (E0908), at
    // the `return`.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_strata"))
        .current_dir(root())
        .args(["check", "--format", "short", "--schedules", "0", "tests/cuda_c/exit_status.cu"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn vector_types_and_make_functions() {
    runs_and_prints(
        "vector_types",
        &[],
        "0 2 4 6 | 1 5\n2 4 6 8 | 3 7\n4 6 8 10 | 5 9\n6 8 10 12 | 7 11\n0 32 64, sizes 16 8 3 16\n250 10 44 0\n",
    );
}

#[test]
fn argv_past_argc_is_reported_in_c_terms_on_both_devices() {
    for flags in [&[][..], &["--device", "cpu"]] {
        let (code, stdout, stderr) = run("x_argv_missing", flags, &[]);
        assert_eq!((code, stdout.as_str()), (1, ""), "{flags:?}");
        assert_eq!(
            stderr,
            "tests/cuda_c/x_argv_missing.cu:7:18: error[E0912]: `argv[1]` is past the program's arguments (`argc` is 1)\n",
            "{flags:?}"
        );
    }
    runs_and_prints("x_argv_missing", &["-12"], "n = -12\n");
}

#[test]
fn reference_parameters_and_chained_assignment() {
    runs_and_prints("references", &[], "1 5 2 9 3 7 4 4 | 6 0 6 0\n-2 18 -4\n");
}

#[test]
fn the_gpu_errchk_idiom_and_default_arguments() {
    runs_and_prints(
        "gpu_errchk",
        &[],
        "sum of squares: 285 items (x1.5) [report]\nlast: 81 units (x1.5) [report]\nfirst: 0 units (x2.0) [report]\n",
    );
}

#[test]
fn quoted_standard_headers_the_one_device_api_and_calls_in_parentheses() {
    runs_and_prints("device_api", &[], "1 device(s), using 0\n0 2 4 6 6\n");
}

#[test]
fn defines_inside_functions() {
    runs_and_prints("defines_in_functions", &[], "0 1 4 9 16 25 36 49 \n");
}

#[test]
fn rand_gives_glibcs_sequence() {
    // What gcc's build of the same C prints on Linux (glibc).
    runs_and_prints(
        "rand_data",
        &[],
        "1804289383 846930886\n0.066940 0.659928 1.381271 0.844973 0.412530 0.500257 \n21\n",
    );
}

#[test]
fn a_seed_from_the_clock_is_refused() {
    let (code, stdout, stderr) = run("srand_time", &[], &[]);
    assert_eq!((code, stdout.as_str()), (1, ""));
    assert!(
        stderr.ends_with(
            "tests/cuda_c/srand_time.cu:8:11: error[E0801]: not supported in CUDA-C yet: a seed from the clock (the \
             run would not be repeatable; give a constant)\n"
        ),
        "{stderr}"
    );
}

#[test]
fn switch_on_chars_of_a_string() {
    runs_and_prints("char_switch", &[], "3 vowels, 1 spaces, 44\n");
    runs_and_prints("char_switch", &["a quick test"], "4 vowels, 2 spaces, 44\n");
}

#[test]
fn clock_is_zero_on_both_devices() {
    runs_and_prints("clock_timing", &[], "sum 499500 in 0.000 ms\n");
}

#[test]
fn function_templates_are_instantiated_at_their_calls_and_launches() {
    runs_and_prints(
        "templates",
        &[],
        "0 0.0\n6 2.0\n12 4.0\n18 6.0\n24 8.0\n30 10.0\n36 12.0\n42 14.0\nmax 42 14.0\nsums 496 1520\n\
         pairs 2 1.0 9 7.0\n",
    );
}

#[test]
fn templates_outside_the_supported_forms_are_each_refused() {
    let (code, stdout, stderr) = run("template_refused", &[], &[]);
    assert_eq!((code, stdout.as_str()), (1, ""));
    let f = "tests/cuda_c/template_refused.cu";
    assert_eq!(
        stderr,
        format!(
            "{f}:6:1: error[E0801]: not supported in CUDA-C yet: templates other than function templates\n\
             {f}:11:11: error[E0801]: not supported in CUDA-C yet: this template parameter (default template \
             arguments, template template parameters and parameter packs are not supported)\n\
             {f}:17:46: error[E0801]: not supported in CUDA-C yet: a call of template `zero` whose `T` cannot be \
             deduced here (write `zero<type>`)\n"
        )
    );
}

#[test]
fn cpp_new_delete_calloc_and_dim3_of_names() {
    runs_and_prints("cpp_new", &[], "threads 16, sum 60.0, block 4 x 4\n");
}

#[test]
fn device_properties_are_an_h100s() {
    runs_and_prints(
        "device_prop",
        &[],
        "sm 9.0, 132 SMs, warp 32: 1024 threads counted\n\
         NVIDIA H100 80GB HBM3: threads (1024, 1024, 64), grid (2147483647, 65535, 65535)\n",
    );
}
