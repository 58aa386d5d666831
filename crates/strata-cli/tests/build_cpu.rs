//! `strata build --target cpu FILE -o EXE`: a native executable of the same C, with the same
//! run-time checks, that `strata run` runs on the cpu device. Every example with a `main` is built
//! and run with its `//@ program-args:`, and must print what `strata run` prints, with the same
//! exit status; a run-time error is reported by both as `file:line:col: error[E09xx]: message`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A fresh directory for one test's executables and program cache.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("build_cpu_{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn strata(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_strata"));
    c.current_dir(root()).env("STRATA_CACHE_DIR", dir.join("cache"));
    c
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The words after `//@ NAME:` in the leading comments of `src`.
fn directive(src: &str, name: &str) -> Vec<String> {
    let prefix = format!("//@ {name}:");
    src.lines()
        .filter_map(|l| l.strip_prefix(&prefix))
        .flat_map(|rest| rest.split_whitespace().map(str::to_string).collect::<Vec<_>>())
        .collect()
}

/// Every `.strata` file under `examples/` that has a `main`, relative to the repository root.
fn examples() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![root().join("examples")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "strata")
                && std::fs::read_to_string(&path).unwrap().contains("fn main(")
            {
                out.push(path.strip_prefix(root()).unwrap().to_path_buf());
            }
        }
    }
    out.sort();
    out
}

/// Builds `file` (relative to the root) with `compiler_args` into `dir`, runs the executable
/// and `strata run` with `program_args`, and asserts that both print the same and end alike.
fn same_as_run(dir: &Path, file: &Path, compiler_args: &[String], program_args: &[String]) -> Output {
    let exe = dir.join(file.file_stem().unwrap());
    let built = strata(dir)
        .args(["build", "--target", "cpu"])
        .args(compiler_args)
        .arg("-o")
        .arg(&exe)
        .arg(file)
        .output()
        .unwrap();
    assert_eq!(built.status.code(), Some(0), "{}: {}", file.display(), text(&built.stderr));
    assert!(built.stdout.is_empty() && built.stderr.is_empty(), "{}: {}", file.display(), text(&built.stderr));
    let ran = strata(dir)
        .args(["run", "--format", "short"])
        .args(compiler_args)
        .arg(file)
        .arg("--")
        .args(program_args)
        .output()
        .unwrap();
    // Run from the root like `strata run`, so that relative program arguments name the same files.
    let native = Command::new(&exe).args(program_args).current_dir(root()).output().unwrap();
    let what = format!("{} {program_args:?}", file.display());
    assert_eq!(text(&native.stdout), text(&ran.stdout), "{what}: stdout");
    assert_eq!(native.status.code(), ran.status.code(), "{what}: exit status\n{}", text(&native.stderr));
    assert_eq!(text(&native.stderr), text(&ran.stderr), "{what}: stderr");
    native
}

#[test]
fn every_example_built_for_the_cpu_prints_what_strata_run_prints() {
    let dir = scratch("examples");
    let examples = examples();
    assert!(examples.len() >= 20, "{examples:?}");
    for file in &examples {
        let src = std::fs::read_to_string(root().join(file)).unwrap();
        let out = same_as_run(&dir, file, &directive(&src, "args"), &directive(&src, "program-args"));
        assert_eq!(out.status.code(), Some(0), "{}: {}", file.display(), text(&out.stderr));
        assert!(!out.stdout.is_empty(), "{}", file.display());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The executable keeps the cpu device's run-time checks: a division by zero and a missing
/// argument stop it with the error `strata run` reports, at the same place, exit status 1.
#[test]
fn the_executable_keeps_the_run_time_checks() {
    let dir = scratch("checks");
    let file = dir.join("div.strata");
    std::fs::write(&file, "fn main() -[t: cpu.thread]-> () {\n    let d = arg_u64(0);\n    println(10u64 / d);\n}\n")
        .unwrap();
    let out = same_as_run(&dir, &file, &[], &["5".to_string()]);
    assert_eq!(text(&out.stdout), "2\n");
    let out = same_as_run(&dir, &file, &[], &["0".to_string()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("div.strata:3:") && text(&out.stderr).contains("error[E0909]: division by zero"),
        "{}",
        text(&out.stderr)
    );
    let out = same_as_run(&dir, &file, &[], &[]);
    assert!(text(&out.stderr).contains("error[E0912]"), "{}", text(&out.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `-D` and `--arch` apply as for `strata run`; a program without `main`, a checker error and an
/// output that cannot be written are refused before anything is compiled, and leave no file.
#[test]
fn build_for_the_cpu_refuses_what_run_refuses() {
    let dir = scratch("refusals");
    let lib = dir.join("lib.strata");
    std::fs::write(&lib, "fn helper(x: i32) -[t: cpu.thread]-> i32 { x + 1 }\n").unwrap();
    let bad = dir.join("bad.strata");
    std::fs::write(&bad, "fn main() -[t: cpu.thread]-> () {\n    println(missing);\n}\n").unwrap();
    let exe = dir.join("never");
    for (file, code, needle) in [(&lib, 1, "error[E0106]"), (&bad, 1, "error[E0101]")] {
        let out = strata(&dir).args(["build", "--target", "cpu", "-o"]).arg(&exe).arg(file).output().unwrap();
        assert_eq!(out.status.code(), Some(code), "{}", text(&out.stderr));
        assert!(text(&out.stderr).contains(needle), "{}", text(&out.stderr));
        assert!(!exe.exists());
    }
    let out = strata(&dir)
        .args(["build", "--target", "cpu", "-o", "/nonexistent/dir/prog", "examples/array_sum.strata"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("cannot write `/nonexistent/dir/prog`"), "{}", text(&out.stderr));
    let out = same_as_run(
        &dir,
        Path::new("examples/array_sum.strata"),
        &["-D", "N=1024", "-D", "NBLOCKS=4"].map(String::from),
        &[],
    );
    assert_eq!(out.status.code(), Some(0));
    let _ = std::fs::remove_dir_all(&dir);
}
