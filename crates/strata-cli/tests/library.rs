//! Kernel libraries (docs/libraries.md): `strata emit` of a file without `main` writes its kernels
//! with one typed launch function each and a header. The C library of `examples/lib/saxpy.strata`
//! is linked into `examples/lib/main.c`, which checks every result against plain C loops (with and
//! without OpenMP); the CUDA library is compiled and linked with `examples/lib/main.cu` by nvcc
//! (no GPU here to run it). Files the checker rejects, files with nothing to emit and kernels a
//! C function cannot express are refused with diagnostics, and no file is written.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;
use common::{nvcc, root};

fn strata() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_strata"));
    c.current_dir(root());
    c
}

/// A fresh directory for one test.
fn work_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("strata-lib-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn run_ok(cmd: &mut Command, what: &str) -> Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: cannot run: {e}"));
    assert!(out.status.success(), "{what} failed:\n{}{}", text(&out.stdout), text(&out.stderr));
    out
}

/// Emits `examples/lib/saxpy.strata` for `target` into `dir` as `saxpy.<ext>` and `header`.
fn emit_saxpy(dir: &Path, target: &str, ext: &str, header: &str) {
    let src = dir.join(format!("saxpy.{ext}"));
    run_ok(
        strata()
            .args(["emit", "--target", target, "--header"])
            .arg(dir.join(header))
            .arg("-o")
            .arg(&src)
            .arg("examples/lib/saxpy.strata"),
        "strata emit",
    );
}

#[test]
fn c_library_links_into_a_c_program_whose_results_agree_with_plain_c() {
    let dir = work_dir("c");
    emit_saxpy(&dir, "c", "c", "saxpy.h");
    let header = std::fs::read_to_string(dir.join("saxpy.h")).unwrap();
    // One typed launch function per kernel: sizes first, `&shrd` read-only, `&uniq` restrict.
    for decl in [
        "int saxpy_launch(uint64_t n, float a, const float *x, float *STRATA_RESTRICT y);",
        "int block_sums_launch(uint64_t nb, const int32_t *input, int32_t *STRATA_RESTRICT sums);",
        "int transpose_launch(uint64_t n, const double *input, double *STRATA_RESTRICT output);",
    ] {
        assert!(header.contains(decl), "no `{decl}` in\n{header}");
    }
    assert!(header.contains("#ifndef STRATA_SAXPY_H") && header.contains("extern \"C\" {"), "{header}");
    // The device function `axpy` is in the library, not in its interface; no `main`.
    assert!(!header.contains(" axpy_launch("), "{header}");
    let source = std::fs::read_to_string(dir.join("saxpy.c")).unwrap();
    assert!(!source.contains("int main("), "a library has no main");
    std::fs::copy(root().join("examples/lib/main.c"), dir.join("main.c")).unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    // The application's own code sees only the header: strict C99 without a warning.
    run_ok(
        Command::new(&cc).current_dir(&dir).args([
            "-std=c99",
            "-pedantic",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-c",
            "main.c",
        ]),
        "cc main.c",
    );
    for openmp in [true, false] {
        let mut cmd = Command::new(&cc);
        cmd.current_dir(&dir).args(["-O2", "-fwrapv", "-ffp-contract=off"]);
        if openmp {
            cmd.arg("-fopenmp");
        }
        cmd.args(["main.c", "saxpy.c", "-lm", "-o", "main"]);
        let out = cmd.output().unwrap();
        if openmp && !out.status.success() && text(&out.stderr).contains("omp") {
            eprintln!("library: {cc} has no OpenMP; tested without it only");
            continue;
        }
        assert!(out.status.success(), "cc (openmp: {openmp}):\n{}", text(&out.stderr));
        let out = Command::new(dir.join("main")).output().unwrap();
        let stdout = text(&out.stdout);
        assert!(out.status.success(), "openmp: {openmp}:\n{stdout}{}", text(&out.stderr));
        for line in [
            "saxpy n=1024: y[1]=-0.75 y[n-1]=1276.75",
            "block_sums nb=100: total=-132800",
            "transpose n=96: out[1]=96",
            "where clauses: checked",
            "all results agree with plain C",
        ] {
            assert!(stdout.lines().any(|l| l == line), "openmp: {openmp}: no `{line}` in\n{stdout}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn c_header_is_valid_cpp() {
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".to_string());
    if Command::new(&cxx).arg("--version").output().is_err() {
        eprintln!("library: no C++ compiler `{cxx}`; the C++ use of the C header is not tested");
        return;
    }
    let dir = work_dir("cpp");
    emit_saxpy(&dir, "c", "c", "saxpy.h");
    std::fs::write(
        dir.join("use.cpp"),
        "#include \"saxpy.h\"\nint use(float *x, float *y) { return saxpy_launch(256, 2.0f, x, y); }\n",
    )
    .unwrap();
    run_ok(
        Command::new(&cxx).current_dir(&dir).args(["-std=c++11", "-pedantic", "-Wall", "-Werror", "-c", "use.cpp"]),
        "c++ use.cpp",
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cuda_library_compiles_and_links_with_a_cuda_program() {
    let dir = work_dir("cuda");
    emit_saxpy(&dir, "cuda", "cu", "saxpy_cuda.h");
    let header = std::fs::read_to_string(dir.join("saxpy_cuda.h")).unwrap();
    for decl in [
        "#include <cuda_runtime.h>",
        "cudaError_t saxpy_launch(uint64_t n, float a, const float *x, float *STRATA_RESTRICT y, cudaStream_t stream);",
        "cudaError_t transpose_launch(uint64_t n, const double *input, double *STRATA_RESTRICT output, cudaStream_t stream);",
    ] {
        assert!(header.contains(decl), "no `{decl}` in\n{header}");
    }
    let source = std::fs::read_to_string(dir.join("saxpy.cu")).unwrap();
    // On the caller's stream, with the launch checked and no synchronisation.
    assert!(source.contains(", strata_smem, stream>>>(") && source.contains("return cudaGetLastError();"), "{source}");
    // (The runtime at the top has a synchronising helper for timed launches of programs.)
    let launches = &source[source.rfind("cudaError_t saxpy_launch(").unwrap_or(0)..];
    assert!(!launches.contains("cudaDeviceSynchronize") && !source.contains("int main("), "{source}");
    let Some(nvcc) = nvcc() else {
        assert!(
            std::env::var("STRATA_REQUIRE_NVCC").as_deref() != Ok("1"),
            "STRATA_REQUIRE_NVCC=1 but nvcc was not found: run scripts/setup-nvcc.sh"
        );
        eprintln!("library: nvcc not found ($NVCC or .venv/bin/nvcc); run scripts/setup-nvcc.sh — CUDA link skipped");
        return;
    };
    std::fs::copy(root().join("examples/lib/main.cu"), dir.join("main.cu")).unwrap();
    run_ok(
        Command::new(&nvcc).current_dir(&dir).args([
            "-Werror",
            "all-warnings",
            "-gencode",
            "arch=compute_80,code=sm_80",
            "-o",
            "main",
            "main.cu",
            "saxpy.cu",
        ]),
        "nvcc main.cu saxpy.cu",
    );
    assert!(dir.join("main").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// `strata emit --target c` of `source` (written to a file of `dir`) into `dir/out.c` and
/// `dir/out.h`: the exit status and stderr; asserts that a failure writes neither file.
fn emit_source(dir: &Path, source: &str, extra: &[&str]) -> (Option<i32>, String) {
    let file = dir.join("input.strata");
    std::fs::write(&file, source).unwrap();
    let (c, h) = (dir.join("out.c"), dir.join("out.h"));
    let _ = std::fs::remove_file(&c);
    let _ = std::fs::remove_file(&h);
    let out = strata()
        .args(["emit", "--target", "c"])
        .args(extra)
        .arg("-o")
        .arg(&c)
        .arg("--header")
        .arg(&h)
        .arg(&file)
        .output()
        .unwrap();
    if !out.status.success() {
        assert!(!c.exists() && !h.exists(), "a failed emit wrote files");
    }
    (out.status.code(), text(&out.stderr))
}

#[test]
fn a_library_whose_kernel_the_checker_rejects_is_not_emitted() {
    let dir = work_dir("race");
    // Every thread of the block writes v[0].
    let (code, stderr) = emit_source(
        &dir,
        "fn racy(v: &uniq gpu.global [f32; 256]) -[grid: gpu.grid<X<1>, X<256>>]-> () {
    sched(X) block in grid.blocks {
        sched(X) thread in block.threads {
            v[0] = 1.0;
        }
    }
}
",
        &[],
    );
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("error[E0502]"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_file_without_kernel_and_main_has_nothing_to_emit() {
    let dir = work_dir("nothing");
    for source in ["", "fn axpy(a: f32, x: f32, y: f32) -[t: gpu.thread]-> f32 {\n    a * x + y\n}\n"] {
        let (code, stderr) = emit_source(&dir, source, &[]);
        assert_eq!(code, Some(1), "{stderr}");
        assert!(stderr.contains("error[E0806]: nothing to emit: the file has no kernel"), "{stderr}");
        assert!(stderr.contains("input.strata:1:1"), "{stderr}");
    }
    // The same with `--target cuda` and to standard output.
    let out = strata().args(["emit", "--target", "cuda"]).arg(dir.join("input.strata")).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("E0806") && out.stdout.is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn kernels_a_c_function_cannot_express_are_refused() {
    let dir = work_dir("refused");
    let cases = [
        // Generic over a memory space: no C type.
        (
            "fn scale<m: mem>(v: &uniq m [f32; 256]) -[grid: gpu.grid<X<1>, X<256>>]-> () {
    sched(X) thread in grid.to_threads {
        v[[thread]] = 2.0;
    }
}
",
            "E0801",
            "a kernel generic over a memory space (`m`)",
        ),
        // A tuple by value.
        (
            "fn fill(p: (f32, f32), v: &uniq gpu.global [f32; 64]) -[grid: gpu.grid<X<1>, X<64>>]-> () {
    sched(X) thread in grid.to_threads {
        v[[thread]] = p.0;
    }
}
",
            "E0801",
            "the kernel parameter `p` cannot be passed from C",
        ),
        // A `where` clause over constants that is false: the kernel was checked assuming it, and
        // no Strata launch checks it.
        (
            "const N: nat = 100;
fn fill(v: &uniq gpu.global [f32; N]) -[grid: gpu.grid<X<1>, X<N>>]-> () where N % 32 == 0 {
    sched(X) thread in grid.to_threads {
        v[[thread]] = 1.0;
    }
}
",
            "E0301",
            "the `where` clause of kernel `fill` does not hold",
        ),
        // The launch function of `k` would be the function `k_launch`.
        (
            "fn k(v: &uniq gpu.global [f32; 64]) -[grid: gpu.grid<X<1>, X<64>>]-> () {
    sched(X) thread in grid.to_threads {
        v[[thread]] = 1.0;
    }
}
fn k_launch(v: &uniq gpu.global [f32; 64]) -[grid: gpu.grid<X<1>, X<64>>]-> () {
    sched(X) thread in grid.to_threads {
        v[[thread]] = 2.0;
    }
}
",
            "E0801",
            "the launch function `k_launch` of kernel `k` would clash",
        ),
    ];
    for (source, code, message) in cases {
        let (status, stderr) = emit_source(&dir, source, &[]);
        assert_eq!(status, Some(1), "{stderr}");
        assert!(stderr.contains(&format!("error[{code}]")) && stderr.contains(message), "{message}:\n{stderr}");
    }
    // The same `where` clause holds with `-D N=128`.
    let (status, stderr) = emit_source(&dir, cases[2].0, &["-D", "N=128"]);
    assert_eq!(status, Some(0), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn programs_stay_programs_and_lib_makes_a_library_of_one() {
    // Without `--lib`, a file with `main` is emitted as before: a whole program, no launch functions.
    let out = run_ok(strata().args(["emit", "--target", "c", "examples/transpose.strata"]), "emit");
    let c = text(&out.stdout);
    assert!(c.contains("int main(int argc, char **argv)") && !c.contains("_launch"), "{c}");
    // `--header` is for libraries: a usage error for a program.
    let out = strata()
        .args(["emit", "--target", "c", "--header", "/dev/null", "examples/transpose.strata"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("add `--lib`"), "{}", text(&out.stderr));
    // `--lib` leaves out `main` and the host code and exports the kernel.
    let out = run_ok(strata().args(["emit", "--target", "c", "--lib", "examples/transpose.strata"]), "emit --lib");
    let c = text(&out.stdout);
    assert!(c.contains("int transpose_launch(const double *input, double *STRATA_RESTRICT output) {"), "{c}");
    assert!(!c.contains("int main("), "{c}");
    // `--lib` means nothing for the IR.
    let out = strata().args(["emit", "--target", "ir", "--lib", "examples/transpose.strata"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    // A library is not a program: `strata run` still needs `main`.
    let out = strata().args(["run", "examples/lib/saxpy.strata"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("no `main` function"), "{}", text(&out.stderr));
}

/// Every example and benchmark program (constant and run-time sizes) that has a kernel, emitted
/// as a library with `--lib`.
fn programs_with_kernels() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in ["examples", "bench", "bench/runtime"] {
        for e in std::fs::read_dir(root().join(dir)).unwrap().flatten() {
            let p = e.path();
            let text = std::fs::read_to_string(&p).unwrap_or_default();
            if p.extension().is_some_and(|x| x == "strata") && text.contains("gpu.grid<") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_example_as_a_library_compiles_as_c_and_cuda() {
    let dir = work_dir("all");
    let files = programs_with_kernels();
    assert!(files.len() >= 20, "found only {} programs", files.len());
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let nvcc = nvcc();
    // nvcc takes seconds per file: the files are shared out among a few threads.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get()).min(8);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(file) = files.get(i) else { break };
                compile_as_library(&dir, i, file, &cc, nvcc.as_deref());
            });
        }
    });
    if nvcc.is_none() {
        eprintln!("library: nvcc not found; the CUDA libraries were emitted but not compiled");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// [`every_example_as_a_library_compiles_as_c_and_cuda`] for one file (`i` names its outputs).
fn compile_as_library(dir: &Path, i: usize, file: &Path, cc: &str, nvcc: Option<&Path>) {
    for (target, ext) in [("c", "c"), ("cuda", "cu")] {
        let (src, header) = (dir.join(format!("lib{i}.{ext}")), dir.join(format!("lib{i}_{ext}.h")));
        run_ok(
            strata().args(["emit", "--target", target, "--lib", "-o"]).arg(&src).arg("--header").arg(&header).arg(file),
            &format!("strata emit --target {target} --lib {}", file.display()),
        );
        let what = format!("{} ({target})", file.display());
        let object = dir.join(format!("lib{i}_{ext}.o"));
        if target == "c" {
            run_ok(Command::new(cc).args(["-std=gnu11", "-O1", "-fopenmp", "-c", "-o"]).arg(&object).arg(&src), &what);
            // The header alone is strict C99.
            let user = dir.join(format!("user{i}.c"));
            std::fs::write(&user, format!("#include \"{}\"\n", header.display())).unwrap();
            run_ok(
                Command::new(cc)
                    .args(["-std=c99", "-pedantic", "-Wall", "-Werror", "-c", "-o"])
                    .arg(dir.join(format!("user{i}.o")))
                    .arg(&user),
                &format!("{what}: header"),
            );
        } else if let Some(nvcc) = nvcc {
            run_ok(
                Command::new(nvcc)
                    .args(["-Werror", "all-warnings", "-gencode", "arch=compute_80,code=sm_80", "-c", "-o"])
                    .arg(&object)
                    .arg(&src),
                &what,
            );
        }
    }
}

/// Two libraries with kernels and device functions of the same shapes link into one application:
/// nothing but the launch functions is visible outside a library (`static` in C, an unnamed
/// namespace in CUDA C++), so their internal names cannot clash.
#[test]
fn two_libraries_link_into_one_program() {
    let dir = work_dir("two");
    let saxpy = std::fs::read_to_string(root().join("examples/lib/saxpy.strata")).unwrap();
    let other = saxpy
        .replace("fn saxpy<", "fn saxpy_b<")
        .replace("fn block_sums<", "fn block_sums_b<")
        .replace("fn transpose<", "fn transpose_b<");
    std::fs::write(dir.join("saxpy.strata"), &saxpy).unwrap();
    std::fs::write(dir.join("other.strata"), &other).unwrap();
    let nvcc = nvcc();
    for (target, ext) in [("c", "c"), ("cuda", "cu")] {
        for name in ["saxpy", "other"] {
            run_ok(
                strata()
                    .args(["emit", "--target", target, "-o"])
                    .arg(dir.join(format!("{name}.{ext}")))
                    .arg("--header")
                    .arg(dir.join(format!("{name}_{ext}.h")))
                    .arg(dir.join(format!("{name}.strata"))),
                "strata emit",
            );
        }
        let stream = if target == "cuda" { ", 0" } else { "" };
        let main = format!(
            "#include \"saxpy_{ext}.h\"\n#include \"other_{ext}.h\"\n\
             int main(void) {{ return (int)saxpy_launch(0, 1.0f, 0, 0{stream}) + (int)saxpy_b_launch(0, 1.0f, 0, 0{stream}); }}\n"
        );
        std::fs::write(dir.join(format!("main.{ext}")), main).unwrap();
        let files = [format!("main.{ext}"), format!("saxpy.{ext}"), format!("other.{ext}")];
        if target == "c" {
            let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
            run_ok(Command::new(&cc).current_dir(&dir).args(&files).args(["-lm", "-o", "main_c"]), "cc");
            // Both launch functions return at once for 0 elements.
            run_ok(&mut Command::new(dir.join("main_c")), "main_c");
        } else if let Some(nvcc) = &nvcc {
            run_ok(
                Command::new(nvcc)
                    .current_dir(&dir)
                    .args(["-Werror", "all-warnings", "-gencode", "arch=compute_80,code=sm_80", "-o", "main_cuda"])
                    .args(&files),
                "nvcc",
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Scalars of every kind by value, a reference to one scalar and an owning pointer, through a C
/// program: the values arrive.
#[test]
fn parameters_of_every_kind_pass_from_c() {
    let dir = work_dir("params");
    std::fs::write(
        dir.join("kinds.strata"),
        "fn kinds(s: &shrd gpu.global f32, v: [f32; 64] @ gpu.global, on: bool, k: u64, i: i32, d: f64)
-[grid: gpu.grid<X<2>, X<32>>]-> () {
    sched(X) thread in grid.to_threads {
        if on {
            v[[thread]] = *s + (k as f32) + (i as f32) + (d as f32);
        } else {
            v[[thread]] = 0.0;
        }
    }
}
",
    )
    .unwrap();
    run_ok(
        strata()
            .args(["emit", "--target", "c", "-o"])
            .arg(dir.join("kinds.c"))
            .arg("--header")
            .arg(dir.join("kinds.h"))
            .arg(dir.join("kinds.strata")),
        "strata emit",
    );
    let header = std::fs::read_to_string(dir.join("kinds.h")).unwrap();
    let decl = "int kinds_launch(const float *s, float *STRATA_RESTRICT v, bool on, uint64_t k, int32_t i, double d);";
    assert!(header.contains(decl), "no `{decl}` in\n{header}");
    assert!(
        header.contains("on a grid of 2 blocks of 32 threads")
            && header.contains("`s`: points to 1 element of `float`"),
        "{header}"
    );
    std::fs::write(
        dir.join("main.c"),
        "#include \"kinds.h\"
#include <stdio.h>
int main(void) {
    float s = 0.5f, v[64];
    if (kinds_launch(&s, v, true, 2, -4, 0.25) != 0) return 1;
    for (int j = 0; j < 64; j++) if (v[j] != -1.25f) return 2;
    if (kinds_launch(&s, v, false, 2, -4, 0.25) != 0) return 3;
    for (int j = 0; j < 64; j++) if (v[j] != 0.0f) return 4;
    puts(\"ok\");
    return 0;
}
",
    )
    .unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    run_ok(Command::new(&cc).current_dir(&dir).args(["main.c", "kinds.c", "-lm", "-o", "main"]), "cc");
    let out = run_ok(&mut Command::new(dir.join("main")), "main");
    assert_eq!(text(&out.stdout), "ok\n");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A launch checks every `where` clause before it runs anything, and a size that would go below
/// zero (`n - 32` for `n = 0`) is refused, not wrapped around.
#[test]
fn where_clauses_and_size_arithmetic_are_checked_at_launch() {
    let dir = work_dir("where");
    std::fs::write(
        dir.join("shift.strata"),
        "fn shift<n: nat>(x: &shrd gpu.global [f32; n], y: &uniq gpu.global [f32; n - 32])
-[grid: gpu.grid<X<n / 32 - 1>, X<32>>]-> () where n % 32 == 0, n >= 64 {
    sched(X) thread in grid.to_threads {
        y[[thread]] = x.take_right::<32>[[thread]];
    }
}
",
    )
    .unwrap();
    run_ok(
        strata()
            .args(["emit", "--target", "c", "-o"])
            .arg(dir.join("shift.c"))
            .arg("--header")
            .arg(dir.join("shift.h"))
            .arg(dir.join("shift.strata")),
        "strata emit",
    );
    let header = std::fs::read_to_string(dir.join("shift.h")).unwrap();
    for line in ["`y`: points to n - 32 elements of `float`", "Requires `n % 32 == 0`.", "Requires `n >= 64`."] {
        assert!(header.contains(line), "no `{line}` in\n{header}");
    }
    std::fs::write(
        dir.join("main.c"),
        "#include \"shift.h\"
#include <stdio.h>
int main(void) {
    float x[96], y[64] = {0};
    for (int i = 0; i < 96; i++) x[i] = (float)i;
    /* 0 % 32 == 0, but not 0 >= 64 (and 0 - 32 is no size); 48 % 32 != 0; 32 < 64. */
    printf(\"%d %d %d\\n\", shift_launch(0, x, y) == EINVAL, shift_launch(48, x, y) == EINVAL, shift_launch(32, x, y) == EINVAL);
    printf(\"%g\\n\", (double)y[63]);
    int r = shift_launch(96, x, y);
    printf(\"%d %g %g\\n\", r, (double)y[0], (double)y[63]);
    return 0;
}
",
    )
    .unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    run_ok(Command::new(&cc).current_dir(&dir).args(["main.c", "shift.c", "-lm", "-o", "main"]), "cc");
    let out = run_ok(&mut Command::new(dir.join("main")), "main");
    // The refused launches wrote nothing; the good one shifted by 32.
    assert_eq!(text(&out.stdout), "1 1 1\n0\n0 32 95\n");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Parameters named like `<errno.h>`'s macros (`errno`, `EINVAL`, …) or like the names the launch
/// function itself writes (its `stream` parameter, `cudaStream_t`, `cudaError_t`) are renamed: the
/// libraries compile with cc (and nvcc).
#[test]
fn parameters_named_like_errno_macros_or_the_launch_functions_own_names_are_renamed() {
    let dir = work_dir("param-names");
    let file = dir.join("names.strata");
    std::fs::write(
        &file,
        "fn k(errno: i32, EINVAL: i32, EDOM: i32, ENOMEM: i32, v: &uniq gpu.global [i32; 64])\n\
         \x20   -[grid: gpu.grid<X<2>, X<32>>]-> () {\n\
         \x20   sched(X) block in grid.blocks {\n\
         \x20       sched(X) thread in block.threads {\n\
         \x20           v.group::<32>[[block]][[thread]] = errno + EINVAL + EDOM + ENOMEM;\n\
         \x20       }\n\
         \x20   }\n\
         }\n\
         fn s<stream: nat>(cudaStream_t: i32, cudaError_t: i32, v: &uniq gpu.global [i32; stream * 32])\n\
         \x20   -[grid: gpu.grid<X<stream>, X<32>>]-> () {\n\
         \x20   sched(X) block in grid.blocks {\n\
         \x20       sched(X) thread in block.threads {\n\
         \x20           v.group::<32>[[block]][[thread]] = cudaStream_t + cudaError_t;\n\
         \x20       }\n\
         \x20   }\n\
         }\n",
    )
    .unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    compile_as_library(&dir, 0, &file, &cc, nvcc().as_deref());
    let c = std::fs::read_to_string(dir.join("lib0.c")).unwrap();
    assert!(c.contains("int k_launch(int32_t errno_1, int32_t EINVAL_1, int32_t EDOM_1, int32_t ENOMEM_1,"), "{c}");
    let cu = std::fs::read_to_string(dir.join("lib0.cu")).unwrap();
    assert!(
        cu.contains("cudaError_t s_launch(uint64_t stream_1, int32_t cudaStream_t_1, int32_t cudaError_t_1,"),
        "{cu}"
    );
}

/// The CUDA launch function computes the dynamic shared memory with overflow checks (two buffers
/// of 2^63 bytes do not wrap to 0) and refuses a size beyond `int` or the device's opt-in maximum
/// before launching, never truncating it with `(int)`.
#[test]
fn cuda_library_shared_memory_size_is_checked_not_wrapped_or_truncated() {
    let dir = work_dir("smem-sum");
    let file = dir.join("smem.strata");
    std::fs::write(
        &file,
        "fn twobufs<m: nat>([grid.blocks.forall(X)] a: &uniq gpu.shared [[f32; m]; 32],\n\
         \x20                  [grid.blocks.forall(X)] b: &uniq gpu.shared [[f32; m]; 32],\n\
         \x20                  out: &uniq gpu.global [f32; 32])\n\
         \x20   -[grid: gpu.grid<X<1>, X<32>>]-> () where m >= 1 {\n\
         \x20   sched(X) block in grid.blocks {\n\
         \x20       sched(X) t in block.threads {\n\
         \x20           a[[t]][0] = 1.0;\n\
         \x20           b[[t]][0] = a[[t]][0];\n\
         \x20           out.group::<32>[[block]][[t]] = b[[t]][0];\n\
         \x20       }\n\
         \x20   }\n\
         }\n",
    )
    .unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    compile_as_library(&dir, 0, &file, &cc, nvcc().as_deref());
    let cu = std::fs::read_to_string(dir.join("lib0.cu")).unwrap();
    for check in [
        "if (bytes > SIZE_MAX - one) return SIZE_MAX;",
        "if (one > SIZE_MAX - 15) return SIZE_MAX;",
        "if (strata_smem > (size_t)0x7fffffff) return cudaErrorInvalidValue;",
        "if (strata_smem > (size_t)strata_optin) return cudaErrorInvalidValue;",
    ] {
        assert!(cu.contains(check), "missing `{check}`:\n{cu}");
    }
}
