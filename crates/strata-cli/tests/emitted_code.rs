//! The C and CUDA C++ that `strata emit` writes, as people read, profile, debug and build it by
//! hand: Strata's names, `const … __restrict__` on read-only kernel parameters, standard C11
//! without GNU extensions, run-time errors as `file:line:col: error[E09xx]: message`, kernel
//! launches that wait only when timing was asked for, and dynamic shared memory beyond 48 KiB.
//!
//! The C programs are compiled with `$CC` (default `cc`) and run; nothing here needs nvcc or a GPU
//! (`tests/cuda_compile.rs` compiles the CUDA of every program).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

mod common;
use common::{cc, compiled_programs, root};

/// `strata ARGS` run in the repository root (so that paths print as given, relative).
fn strata(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_strata")).current_dir(root()).args(args).output().unwrap()
}

fn emit(target: &str, file: &str, extra: &[&str]) -> String {
    let mut args = vec!["emit", "--target", target];
    args.extend(extra);
    args.push(file);
    let out = strata(&args);
    assert!(out.status.success(), "strata {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn work_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("strata-emitted-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Compiles the C `c` into an executable in `dir` by hand, the way a user would.
fn build_c(c: &str, dir: &Path, name: &str) -> PathBuf {
    let src = dir.join(format!("{name}.c"));
    let exe = dir.join(name);
    std::fs::write(&src, c).unwrap();
    let out = Command::new(cc()).args(["-O1", "-fopenmp", "-o"]).arg(&exe).arg(&src).arg("-lm").output().unwrap();
    assert!(out.status.success(), "{} failed on {}:\n{}", cc(), src.display(), String::from_utf8_lossy(&out.stderr));
    exe
}

/// The part of an emitted program after the runtime (the program's own functions).
fn program_part(text: &str) -> &str {
    let start = text.find("void strata_main(void)").unwrap_or(0);
    &text[start..]
}

#[test]
fn cuda_kernels_keep_their_names_and_read_only_inputs_are_const_restrict() {
    let cuda = emit("cuda", "examples/transpose.strata", &[]);
    assert!(
        cuda.contains("__global__ void transpose(const double* __restrict__ input, double* __restrict__ output)"),
        "{cuda}"
    );
    // Locals keep their names too; the second `i` of the kernel is numbered.
    assert!(cuda.contains("__shared__ double tmp["), "{cuda}");
    assert!(cuda.contains("for (int32_t i = INT32_C(0)"), "{cuda}");
    assert!(cuda.contains("for (int32_t i_1 = INT32_C(0)"), "{cuda}");
    assert!(cuda.contains("transpose<<<dim3(2, 2, 1), dim3(32, 8, 1)>>>(gpu_in, gpu_out);"), "{cuda}");
    // The C of the cpu device has the same names.
    let c = emit("c", "examples/transpose.strata", &[]);
    assert!(c.contains("static void transpose(const double* input, double* output,"), "{c}");
}

#[test]
fn clashing_names_are_numbered_and_the_rest_kept() {
    let cuda = emit("cuda", "tests/corpus/run/names_reserved_in_c.strata", &[]);
    for expected in [
        "__device__ int32_t printf_1(int32_t class_1, int32_t errno_1)",
        "__global__ void min_1(const int32_t* __restrict__ int_1, int32_t* __restrict__ threadIdx_1)",
        "int32_t tid_1 = ",
        "int32_t x_1 = tid_1;",
        "int32_t a_b_1 = printf_1(x_1, tid_1);",
        "int32_t *stdout_1 = ",
        "int32_t* strata_alloc_1 = ",
        "min_1<<<",
        // The label of the timing line is the Strata name.
        "strata_cuda_check_kernel(\"min\", t0_, ",
    ] {
        assert!(cuda.contains(expected), "no `{expected}` in\n{cuda}");
    }
}

#[test]
fn run_time_errors_of_hand_built_c_name_file_line_and_column() {
    let dir = work_dir("errors");
    // (program, -D arguments, expected stderr)
    let cases: [(&str, &[&str], &str); 3] = [
        (
            "tests/corpus/run/div_zero_on_host_average.strata",
            &[],
            "tests/corpus/run/div_zero_on_host_average.strata:25:13: error[E0909]: division by zero\n",
        ),
        (
            "tests/corpus/run/div_zero_in_kernel_from_data.strata",
            &[],
            "tests/corpus/run/div_zero_in_kernel_from_data.strata:12:14: error[E0909]: division by zero\n",
        ),
        // Out of memory points at the allocation, not at the top of the file.
        (
            "tests/corpus/run/alloc_large_host_buffer.strata",
            &["-D", "N=576460752303423488"],
            "tests/corpus/run/alloc_large_host_buffer.strata:8:19: error[E0903]: out of memory\n",
        ),
    ];
    for (i, (file, defines, expected)) in cases.iter().enumerate() {
        let c = emit("c", file, defines);
        let exe = build_c(&c, &dir, &format!("p{i}"));
        let out = Command::new(&exe).env_remove("STRATA_ERRORS").output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{file}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), *expected, "{file}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn strata_run_renders_run_time_errors_at_their_span() {
    // The cpu device runs the same C with STRATA_ERRORS=spans and renders the diagnostic.
    let out = strata(&["run", "-D", "N=576460752303423488", "tests/corpus/run/alloc_large_host_buffer.strata"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("error[E0903]: out of memory"), "{stderr}");
    assert!(stderr.contains("┌─ tests/corpus/run/alloc_large_host_buffer.strata:8:19"), "{stderr}");
    assert!(!stderr.contains("STRATA-ERROR"), "{stderr}");
}

#[test]
fn launches_wait_and_time_only_with_strata_time_1() {
    // CUDA: no synchronisation in the program's own code except the final one in `main`.
    let cuda = emit("cuda", "examples/array_sum.strata", &[]);
    let own = program_part(&cuda);
    let main = own.find("int main(").unwrap();
    assert!(!own[..main].contains("cudaDeviceSynchronize"), "{own}");
    assert!(own[main..].contains("cudaDeviceSynchronize"), "{own}");
    assert_eq!(own.matches("strata_cuda_check_kernel(\"sum\", t0_, ").count(), 2, "{own}");
    // C: a `STRATA-TIME` line per launch only with STRATA_TIME=1.
    let dir = work_dir("timing");
    let exe = build_c(&emit("c", "examples/array_sum.strata", &[]), &dir, "array_sum");
    for (value, lines) in [(None, 0), (Some("0"), 0), (Some("yes"), 0), (Some("1"), 2)] {
        let mut cmd = Command::new(&exe);
        match value {
            Some(v) => cmd.env("STRATA_TIME", v),
            None => cmd.env_remove("STRATA_TIME"),
        };
        let out = cmd.output().unwrap();
        assert!(out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().filter(|l| l.starts_with("STRATA-TIME sum ")).count(), lines, "{value:?}: {stderr}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn shared_memory_beyond_48_kib_is_dynamic_and_the_launch_raises_the_limit() {
    let cuda = emit("cuda", "tests/corpus/run/shared_param_64kib.strata", &[]);
    assert!(cuda.contains("extern __shared__ __align__(16) unsigned char strata_smem[];"), "{cuda}");
    assert!(cuda.contains("double *stage = (double *)(strata_smem + smem_off_);"), "{cuda}");
    assert!(!cuda.contains("__shared__ double stage["), "{cuda}");
    let own = program_part(&cuda);
    let attr = own
        .find("cudaFuncSetAttribute(reverse_blocks, cudaFuncAttributeMaxDynamicSharedMemorySize, ")
        .unwrap_or_else(|| panic!("no attribute in\n{own}"));
    let launch = own.find("reverse_blocks<<<dim3(2, 1, 1), dim3(256, 1, 1), smem_>>>").unwrap();
    assert!(attr < launch);
    // Small constant buffers stay static, and a launch of their kernel sets no attribute.
    let small = emit("cuda", "examples/transpose.strata", &[]);
    assert!(small.contains("__shared__ double tmp[UINT64_C(1024)];\n    (void)&tmp[0];"), "{small}");
    assert!(!program_part(&small).contains("cudaFuncSetAttribute"), "{small}");
}

#[test]
fn emitted_code_is_standard_c11_and_cuda_without_gnu_extensions() {
    let files = compiled_programs();
    assert!(files.len() >= 30, "found only {} programs", files.len());
    let dir = work_dir("std");
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..std::thread::available_parallelism().map_or(2, |n| n.get()).min(4) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(file) = files.get(i) else { break };
                let rel = file.strip_prefix(root()).unwrap_or(file).display().to_string();
                for target in ["c", "cuda"] {
                    let out = strata(&["emit", "--target", target, &rel]);
                    let text = String::from_utf8_lossy(&out.stdout);
                    if !out.status.success() {
                        failures.lock().unwrap().push(format!("{rel} ({target}): strata emit failed"));
                        continue;
                    }
                    for gnu in ["({", "__typeof__", "typeof("] {
                        if text.contains(gnu) {
                            failures.lock().unwrap().push(format!("{rel} ({target}): contains `{gnu}`"));
                        }
                    }
                    if target == "c" {
                        let src = dir.join(format!("p{i}.c"));
                        std::fs::write(&src, text.as_bytes()).unwrap();
                        let cc = Command::new(cc())
                            .args(["-std=c11", "-Wpedantic", "-Werror", "-fopenmp", "-fsyntax-only"])
                            .arg(&src)
                            .output()
                            .unwrap();
                        if !cc.status.success() {
                            failures.lock().unwrap().push(format!(
                                "{rel}: `cc -std=c11 -Wpedantic -Werror` rejects its C:\n{}",
                                String::from_utf8_lossy(&cc.stderr)
                            ));
                        }
                    }
                }
            });
        }
    });
    let _ = std::fs::remove_dir_all(&dir);
    let failures = failures.into_inner().unwrap();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn cuda_shfl_up_and_xor_clamp_a_run_time_offset_as_shfl_down_does() {
    // An offset of 32 or more keeps every lane's own value (as on `sim`); the hardware reads only
    // its low five bits, so a run-time offset is clamped to 32 for `shfl_up` and `shfl_xor` too.
    let cuda = emit("cuda", "tests/corpus/run/shfl_up_xor_large_runtime_offset.strata", &[]);
    assert!(cuda.contains("__shfl_up_sync(0xffffffffu, x, min((unsigned)(d), 32u))"), "{cuda}");
    assert!(cuda.contains("__shfl_xor_sync(0xffffffffu, x, min((unsigned)(d), 32u))"), "{cuda}");
}

#[test]
fn parallel_runs_of_one_program_share_the_cache_without_reading_a_half_written_source() {
    // Every run writes its C under a name of its own and renames only whole files into place, so
    // runs of the same program at once (a test suite, `make -j`) all succeed, and a successful
    // build leaves no source behind for another run's compiler to read while it is rewritten.
    let dir = work_dir("cache-race");
    let cache = dir.join("cache");
    let _ = std::fs::remove_dir_all(&cache);
    let src = dir.join("one.strata");
    std::fs::write(&src, "fn main() -[t: cpu.thread]-> () {\n    println(7);\n}\n").unwrap();
    let runs: Vec<_> = (0..6)
        .map(|_| {
            Command::new(env!("CARGO_BIN_EXE_strata"))
                .env("STRATA_CACHE_DIR", &cache)
                .arg("run")
                .arg(&src)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for run in runs {
        let out = run.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(String::from_utf8_lossy(&out.stdout), "7\n");
    }
    let left: Vec<_> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".c") || n.contains(".tmp"))
        .collect();
    assert!(left.is_empty(), "left in the cache: {left:?}");
}

#[test]
fn cpu_blocks_are_collapsed_loops_over_their_coordinates() {
    // A grid extent that is a run-time size must not cost a 64-bit division per block (a
    // constant one was a mask): the blocks are three collapsed loops, so OpenMP derives the
    // coordinates once per chunk of blocks. That every block runs once with its own coordinates
    // is `tests/corpus/run/grid_3d_run_time_extents_every_block_once.strata`.
    let c = emit("c", "tests/corpus/run/grid_3d_run_time_extents_every_block_once.strata", &[]);
    let own = program_part(&c);
    assert!(
        c.contains(
            "        #pragma omp for collapse(3) schedule(static)\n        for (uint64_t bz_ = 0; bz_ < GZ_; bz_++)\n        \
             for (uint64_t by_ = 0; by_ < GY_; by_++)\n        for (uint64_t bx_ = 0; bx_ < GX_; bx_++) {\n"
        ),
        "{own}"
    );
    assert!(!c.contains("% GX_") && !c.contains("/ GX_"), "{own}");
}

/// Sizes bound at run time (issue 13): a kernel over a size parameter takes it as a parameter on
/// both targets; a thread-local array of such a length, which CUDA cannot express (no
/// variable-length arrays in device code), is refused by the cuda target with E0801 instead of
/// C that nvcc rejects; the cpu device runs it.
#[test]
fn run_time_sizes_are_kernel_parameters_and_cuda_refuses_local_arrays_of_run_time_length() {
    let cuda = emit("cuda", "tests/corpus/run/size_bound_at_run_time_saxpy.strata", &[]);
    assert!(cuda.contains("__global__ void saxpy(uint64_t n, float a,"), "{}", program_part(&cuda));
    let c = emit("c", "tests/corpus/run/size_bound_at_run_time_saxpy.strata", &[]);
    assert!(c.contains("static void saxpy(uint64_t n, float a,"), "{}", program_part(&c));
    for (example, signature) in [
        ("saxpy", "__global__ void saxpy(uint64_t n, float a,"),
        ("stencil", "__global__ void stencil3(uint64_t n,"),
        ("block_reduction", "__global__ void block_sums(uint64_t nb,"),
    ] {
        let cuda = emit("cuda", &format!("examples/npy/{example}.strata"), &[]);
        assert!(cuda.contains(signature), "{example}: {}", program_part(&cuda));
    }
    let file = "tests/corpus/adversarial/rt_11_gpu_local_array_of_size_parameter_nvcc.strata";
    let out = strata(&["emit", "--target", "cuda", file]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("error[E0801]: not supported by the cuda target"), "{err}");
    let run = strata(&["run", file]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    assert_eq!(String::from_utf8_lossy(&run.stdout), "5\n");
    // Size arithmetic in a kernel over an unbounded size parameter is checked on the cpu device
    // as on sim (n = 2^63: `n * 3` does not fit 64 bits), never a wrapped offset.
    let wraps = strata(&["run", "tests/corpus/adversarial/rt_04_kernel_size_arithmetic_wraps_in_c.strata"]);
    let err = String::from_utf8_lossy(&wraps.stderr);
    assert_eq!(wraps.status.code(), Some(1), "{err}");
    assert!(err.contains("error[E0903]: size arithmetic overflowed"), "{err}");
}

#[test]
fn cpu_kernel_index_arithmetic_is_checked_only_where_ranges_allow_wrap_around() {
    // The ranges of `for` counters bound index arithmetic on the cpu device as on CUDA: the
    // benchmarks' kernels, with constant sizes or sizes bounded by `where` clauses, compute their
    // offsets in plain 64-bit arithmetic (checking every offset cost 2-4x on matmul_ikj).
    for file in [
        "bench/matmul_ikj.strata",
        "bench/runtime/matmul_ikj.strata",
        "bench/scan.strata",
        "bench/runtime/scan.strata",
        "bench/transpose.strata",
        "bench/runtime/transpose.strata",
    ] {
        let c = emit("c", file, &[]);
        let own = program_part(&c);
        let kernels = &own[..own.find("static void strata_main(void) {").unwrap()];
        assert!(!kernels.contains("strata_k"), "{file}: {kernels}");
    }
    // A size without a bound still gets its checks (E0903 instead of a wrapped offset).
    let c = emit("c", "tests/corpus/adversarial/rt_04_kernel_size_arithmetic_wraps_in_c.strata", &[]);
    assert!(program_part(&c).contains("strata_kmul("), "{}", program_part(&c));
}
