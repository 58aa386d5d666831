//! The `strata` command's messages and flags: long lines in snippets, the error limit, `-D`
//! checks, the options of the `sim` device, `explain` of a code that does not exist, programs
//! without `main`, `--help` texts, `bench` output paths and where `build` looks for nvcc.
//! Behaviour only: no test asserts a time.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn strata() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_strata"));
    c.current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."));
    c
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A fresh directory for one test's files.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("strata-cli-messages-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(dir: &Path, name: &str, src: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, src).unwrap();
    path
}

fn run(args: &[&str], file: &Path) -> Output {
    strata().args(args).arg(file).output().unwrap()
}

// ------------------------------------------------------------------------------------------------
// Long lines and many errors

#[test]
fn a_five_megabyte_line_renders_as_a_few_hundred_bytes() {
    let dir = scratch("long-line");
    // One line: a 5 MB comment, then an error, then a 5 MB name that is not defined.
    let src = format!(
        "fn main() -[t: cpu.thread]-> () {{ /* {} */ let y: i32 = 1.5; let z = q{}; }}\n",
        "c".repeat(5_000_000),
        "w".repeat(5_000_000)
    );
    let file = write(&dir, "long.strata", &src);
    let col = src.find("1.5").unwrap() + 1;
    for format in ["human", "short"] {
        let out = run(&["check", "--format", format], &file);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{format}");
        assert!(stderr.len() < 2000, "{format}: {} bytes of stderr", stderr.len());
        assert!(stderr.contains(&format!("long.strata:1:{col}")), "{format}: {stderr}");
        assert!(stderr.contains("E0201") && stderr.contains("E0101"), "{format}: {stderr}");
    }
    let out = run(&["check"], &file);
    let stderr = text(&out.stderr);
    // The snippet shows the text around the label, cut on both sides, and the carets stand under
    // `1.5`.
    let line = stderr.lines().find(|l| l.contains("1.5")).unwrap();
    let carets = stderr.lines().find(|l| l.contains("^^^")).unwrap();
    assert!(line.starts_with("1 │ …") && line.ends_with('…'), "{stderr}");
    let col_of = |s: &str, pat: &str| s[..s.find(pat).unwrap()].chars().count();
    assert_eq!(col_of(line, "1.5"), col_of(carets, "^^^"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A program with `n` errors E0101, one per line.
fn many_errors(dir: &Path, n: usize) -> PathBuf {
    let body: String = (0..n).map(|i| format!("    let x{i} = missing{i};\n")).collect();
    write(dir, "many.strata", &format!("fn main() -[t: cpu.thread]-> () {{\n{body}}}\n"))
}

#[test]
fn errors_are_capped_at_the_limit_with_a_count_of_the_rest() {
    let dir = scratch("many-errors");
    let file = many_errors(&dir, 120);
    let count = |out: &Output| text(&out.stderr).matches("error[E0101]").count();
    let summary = "… and 70 more errors (120 errors in total; `--error-limit 0` shows them all)";
    for format in ["human", "short"] {
        let out = run(&["check", "--format", format], &file);
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(count(&out), 50, "{format}");
        assert!(text(&out.stderr).trim_end().ends_with(summary), "{format}: {}", text(&out.stderr));
        let out = run(&["check", "--format", format, "--error-limit", "0"], &file);
        assert_eq!(count(&out), 120, "{format}");
        assert!(!text(&out.stderr).contains("more errors"), "{format}");
        let out = run(&["check", "--format", format, "--error-limit", "7"], &file);
        assert_eq!(count(&out), 7, "{format}");
        assert!(text(&out.stderr).contains("… and 113 more errors"), "{format}");
    }
    // The same for the commands that check before they do anything else.
    for args in [
        &["run"][..],
        &["run", "--device", "sim", "--format", "short"],
        &["emit", "--target", "c"],
        &["build", "--target", "cuda", "-o", "never-written"],
        &["bench"],
    ] {
        let out = run(args, &file);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(count(&out), 50, "{args:?}");
        assert!(text(&out.stderr).contains(summary), "{args:?}: {}", text(&out.stderr));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `fmt` reports a file's syntax errors exactly as `check` does: within `--error-limit`, the rest
/// counted (it used to print all of them: 60 002 lines for 10 000 errors).
#[test]
fn fmt_reports_syntax_errors_like_check_within_the_error_limit() {
    let dir = scratch("fmt-errors");
    let body: String = (0..10_000).map(|i| format!("    let x{i} = ;\n")).collect();
    let file = write(&dir, "bad.strata", &format!("fn main() -[t: cpu.thread]-> () {{\n{body}}}\n"));
    let summary = "… and 9950 more errors (10000 errors in total; `--error-limit 0` shows them all)";
    let check = run(&["check"], &file);
    assert_eq!(check.status.code(), Some(1));
    assert!(text(&check.stderr).contains(summary), "{}", text(&check.stderr));
    for args in [&["fmt"][..], &["fmt", "--check"], &["fmt", "--write"]] {
        let out = run(args, &file);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(text(&out.stderr), text(&check.stderr), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        let out = run(&[args, &["--error-limit", "3"][..]].concat(), &file);
        assert_eq!(text(&out.stderr).matches("error[E").count(), 3, "{args:?}");
        assert!(text(&out.stderr).contains("… and 9997 more errors"), "{args:?}");
    }
    let out = run(&["fmt", "--error-limit", "0"], &file);
    assert_eq!(text(&out.stderr).matches("error[E").count(), 10_000);
    let _ = std::fs::remove_dir_all(&dir);
}

// ------------------------------------------------------------------------------------------------
// -D

const WITH_CONSTS: &str = "const N: nat = 4;\nconst BLOCKS: nat = 2;\n\
    fn main() -[t: cpu.thread]-> () { let a = [1; N]; println(a[0] + BLOCKS); }\n";

#[test]
fn a_define_that_names_no_constant_is_a_usage_error_listing_the_constants() {
    let dir = scratch("defines");
    let file = write(&dir, "consts.strata", WITH_CONSTS);
    for cmd in [&["check"][..], &["run"], &["run", "--device", "sim"], &["emit"], &["bench", "--runs", "1"]] {
        let out = strata().args(cmd).args(["-D", "M=4"]).arg(&file).output().unwrap();
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{cmd:?}: {stderr}");
        assert!(stderr.contains("no constant `M`"), "{cmd:?}: {stderr}");
        assert!(stderr.contains("`BLOCKS`, `N`"), "{cmd:?}: {stderr}");
    }
    // A near miss is suggested.
    let out = strata().args(["check", "-D", "BLOKCS=4"]).arg(&file).output().unwrap();
    assert!(text(&out.stderr).contains("did you mean `BLOCKS`?"), "{}", text(&out.stderr));
    // A program without constants says so.
    let none = write(&dir, "none.strata", "fn main() -[t: cpu.thread]-> () { println(1); }\n");
    let out = strata().args(["run", "-D", "N=4"]).arg(&none).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("defines no constants at all"), "{}", text(&out.stderr));
    // Known names still work.
    let out = strata().args(["run", "-D", "N=8", "-D", "BLOCKS=5"]).arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "6");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_constant_defined_twice_is_a_usage_error() {
    let dir = scratch("twice-defines");
    let file = write(&dir, "consts.strata", WITH_CONSTS);
    let build = &["build", "--target", "cuda", "-o", "never-written"][..];
    for cmd in [&["check"][..], &["run"], &["run", "--device", "sim"], &["emit"], &["bench", "--runs", "1"], build] {
        for defines in [["-D", "N=2", "-D", "N=18"], ["-D", "N=18", "-D", "N=2"]] {
            let out = strata().args(cmd).args(["-D", "BLOCKS=5"]).args(defines).arg(&file).output().unwrap();
            let stderr = text(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{cmd:?} {defines:?}: {stderr}");
            assert!(stderr.contains("`N` is given twice"), "{cmd:?} {defines:?}: {stderr}");
            assert!(out.stdout.is_empty(), "{cmd:?} {defines:?}: ran anyway");
        }
    }
    assert!(!Path::new(env!("CARGO_MANIFEST_DIR")).join("../../never-written").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn malformed_defines_are_usage_errors_that_say_what_is_wrong() {
    let dir = scratch("bad-defines");
    let file = write(&dir, "consts.strata", WITH_CONSTS);
    for (define, says) in [
        ("=4", "name is missing"),
        ("N=", "value of `N` is missing"),
        ("N=x", "`x` is not a natural number"),
        ("N=-1", "`-1` is negative"),
        ("N=99999999999999999999", "too large"),
        ("1N=3", "not the name of a constant"),
        ("N", "expected NAME=VALUE"),
    ] {
        let out = strata().args(["check", "-D", define]).arg(&file).output().unwrap();
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "-D {define}: {stderr}");
        assert!(stderr.contains(says), "-D {define}: {stderr}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

// ------------------------------------------------------------------------------------------------
// The options of the sim device

#[test]
fn sim_options_without_device_sim_are_refused() {
    let file = Path::new("examples/array_sum.strata");
    for args in [
        &["run", "--schedule", "random", "--seed", "3"][..],
        &["run", "--device", "cpu", "--schedule", "random"],
        &["run", "--max-steps", "1000"],
        &["run", "--no-race-check"],
        &["bench", "--no-race-check", "--runs", "1"],
    ] {
        let out = run(args, file);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("only applies to the `sim` device") && stderr.contains("--device sim"), "{stderr}");
        assert!(out.stdout.is_empty(), "{args:?} ran the program");
    }
    let out = run(&["run", "--device", "sim", "--seed", "3"], file);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("`--seed` only applies to `--schedule random`"));
    let out = run(&["run", "--device", "sim", "--schedule", "random", "--seed", "3", "--max-steps", "100000000"], file);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).trim_end().ends_with("767"));
}

// ------------------------------------------------------------------------------------------------
// explain, main, --help

#[test]
fn explain_of_a_code_that_does_not_exist_says_so() {
    let out = strata().args(["explain", "E9999"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("`E9999` is not a Strata diagnostic code: it does not exist"),
        "{}",
        text(&out.stderr)
    );
    let out = strata().args(["explain", "E0199"]).output().unwrap();
    assert!(text(&out.stderr).contains("the codes of E01xx are E0101"), "{}", text(&out.stderr));
    let out = strata().args(["explain", "banana"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("is not a Strata diagnostic code"));
    let out = strata().args(["explain", "501"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).starts_with("# E0501"));
    let out = strata().args(["explain", "E0106"]).output().unwrap();
    assert!(text(&out.stdout).starts_with("# E0106: no `main` function"));
}

#[test]
fn a_program_without_main_is_e0106_when_run_or_built_and_accepted_by_check() {
    let dir = scratch("no-main");
    let file = write(&dir, "lib.strata", "fn helper(x: i32) -[t: cpu.thread]-> i32 { x + 1 }\n");
    for args in [
        &["run"][..],
        &["run", "--device", "sim"],
        &["bench", "--runs", "1"],
        &["build", "--target", "cuda", "-o", "never-written"],
    ] {
        let out = run(args, &file);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains("error[E0106]: the program has no `main` function"), "{args:?}: {stderr}");
        assert!(stderr.contains("lib.strata:1:1") && !stderr.contains("E0801"), "{args:?}: {stderr}");
    }
    let out = run(&["check"], &file);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn help_shows_files_as_required_and_every_emit_target() {
    let out = strata().args(["check", "--help"]).output().unwrap();
    let help = text(&out.stdout);
    assert!(help.contains("Usage: strata check [OPTIONS] <FILES>..."), "{help}");
    let out = strata().args(["check"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = strata().args(["check", "--phases"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).lines().any(|l| l == "check"));
    let out = strata().args(["emit", "--help"]).output().unwrap();
    let help = text(&out.stdout);
    let target = help.lines().find(|l| l.contains("What to emit")).unwrap_or_default();
    assert!(target.contains("`c`") && target.contains("`cuda`") && target.contains("`ir`"), "{help}");
    assert!(help.contains("cuda: CUDA C++"), "{help}");
}

/// Every command's help names every input it takes: `run` takes `.cu` files too, `build` both
/// targets; the commands that take only `.strata` files say so, and refuse a `.cu` file with a
/// usage error naming the commands that take it (they would read it as Strata: syntax errors).
#[test]
fn help_texts_name_every_accepted_input() {
    let help = |cmd: &str| text(&strata().args([cmd, "--help"]).output().unwrap().stdout);
    let run_help = help("run");
    assert!(run_help.contains("a `.strata` file, or a CUDA-C `.cu` file"), "{run_help}");
    let check_help = help("check");
    assert!(check_help.contains("`.strata` files") && check_help.contains("`.cu` files"), "{check_help}");
    let build_help = help("build");
    assert!(
        build_help.contains("- cpu:") && build_help.contains("A native executable") && build_help.contains("- cuda:"),
        "{build_help}"
    );
    for cmd in ["fmt", "emit", "build", "bench"] {
        let h = help(cmd);
        assert!(h.contains("`.strata` file") && h.contains("`.cu` files"), "{cmd}: {h}");
        let args: Vec<&str> = match cmd {
            "emit" => vec!["emit"],
            "build" => vec!["build", "-o", "never-written"],
            _ => vec![cmd],
        };
        let out = strata().args(&args).arg("tests/cuda_c/unsupported_atomic.cu").output().unwrap();
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{cmd}: {stderr}");
        assert!(stderr.contains(&format!("`strata {cmd}` takes `.strata` programs")), "{cmd}: {stderr}");
        assert!(stderr.contains("`strata run`") && !stderr.contains("error["), "{cmd}: {stderr}");
    }
}

/// A negative number for a numeric option is refused by that option's own check, not with
/// clap's hint to pass it after `--` (which passes program arguments).
#[test]
fn negative_numbers_get_the_options_own_message() {
    for (flag, needle) in [
        ("--time-limit", "the time limit must be a positive number of seconds, found `-1`"),
        ("--max-steps", "invalid value '-1' for '--max-steps"),
        ("--seed", "invalid value '-1' for '--seed"),
        ("--error-limit", "invalid value '-1' for '--error-limit"),
    ] {
        let out = strata().args(["run", flag, "-1", "examples/array_sum.strata"]).output().unwrap();
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag}: {stderr}");
        assert!(stderr.contains(needle), "{flag}: {stderr}");
        assert!(!stderr.contains("'-- -1'") && !stderr.contains("unexpected argument"), "{flag}: {stderr}");
    }
    let out = strata().args(["bench", "--runs", "-3", "examples/array_sum.strata"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("invalid value '-3' for '--runs"), "{}", text(&out.stderr));
}

// ------------------------------------------------------------------------------------------------
// bench outputs

#[test]
fn bench_checks_its_output_paths_before_running() {
    let missing = std::env::temp_dir().join(format!("strata-no-such-dir-{}", std::process::id())).join("out.json");
    for (flag, path) in
        [("--json", missing.clone()), ("--svg", missing.with_extension("svg")), ("--svg", std::env::temp_dir())]
    {
        let out =
            strata().args(["bench", "--runs", "1", flag]).arg(&path).arg("examples/array_sum.strata").output().unwrap();
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag} {}: {stderr}", path.display());
        assert!(
            stderr.contains(flag) && (stderr.contains("does not exist") || stderr.contains("is a directory")),
            "{stderr}"
        );
        // Nothing ran: no table was printed.
        assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    }
}

// ------------------------------------------------------------------------------------------------
// nvcc

#[cfg(unix)]
#[test]
fn build_finds_nvcc_in_strata_home() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("strata-home");
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    // A stand-in for nvcc: answers `--version` and writes the `-o` file.
    let nvcc = write(
        &bin,
        "nvcc",
        "#!/bin/sh\nif [ \"$1\" = --version ]; then exit 0; fi\n\
         while [ $# -gt 0 ]; do if [ \"$1\" = -o ]; then echo built > \"$2\"; fi; shift; done\n",
    );
    std::fs::set_permissions(&nvcc, std::fs::Permissions::from_mode(0o755)).unwrap();
    let exe = dir.join("array_sum");
    let out = strata()
        .env_remove("NVCC")
        .env("PATH", "/nonexistent")
        .env("STRATA_HOME", &dir)
        .args(["build", "--target", "cuda", "-o"])
        .arg(&exe)
        .arg("examples/array_sum.strata")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_to_string(&exe).unwrap_or_default().trim(), "built");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_missing_nvcc_lists_the_places_looked_at() {
    let out = strata()
        .env_remove("NVCC")
        .env_remove("STRATA_HOME")
        .env("PATH", "/nonexistent")
        .args(["build", "--target", "cuda", "-o", "never-written", "examples/array_sum.strata"])
        .output()
        .unwrap();
    if out.status.code() == Some(0) {
        // This checkout has `.venv/bin/nvcc` (scripts/setup-nvcc.sh): it was found.
        let _ = std::fs::remove_file(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../never-written"));
        return;
    }
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("error[E1002]: `nvcc` not found"), "{stderr}");
    assert!(stderr.contains("looked at:") && stderr.contains("scripts/setup-nvcc.sh"), "{stderr}");
    assert!(stderr.contains("$STRATA_HOME"), "{stderr}");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap();
    assert!(stderr.contains(&root.join(".venv/bin/nvcc").display().to_string()), "{stderr}");
}

/// A build whose output cannot be written is a usage error found before nvcc runs, and no build
/// leaves its temporary directory behind, except for a program nvcc rejects, where the error says
/// where the source is kept.
#[cfg(unix)]
#[test]
fn build_checks_its_output_and_leaves_no_temporary_files() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("build-output");
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    // A stand-in for nvcc: records each compile; fails when `$FAIL` is set, else writes `-o`.
    let ran = dir.join("nvcc-ran");
    let nvcc = write(
        &dir,
        "nvcc",
        &format!(
            "#!/bin/sh\nif [ \"$1\" = --version ]; then exit 0; fi\necho x >> '{}'\n\
             if [ -n \"$FAIL\" ]; then echo 'nvcc: no' >&2; exit 1; fi\n\
             while [ $# -gt 0 ]; do if [ \"$1\" = -o ]; then echo built > \"$2\"; fi; shift; done\n",
            ran.display()
        ),
    );
    std::fs::set_permissions(&nvcc, std::fs::Permissions::from_mode(0o755)).unwrap();
    let build = |output: &Path, fail: bool| {
        let mut c = strata();
        c.env("NVCC", &nvcc).env("TMPDIR", &tmp).args(["build", "--target", "cuda", "-o"]).arg(output);
        if fail {
            c.env("FAIL", "1");
        }
        c.arg("examples/array_sum.strata").output().unwrap()
    };
    let leftovers = || std::fs::read_dir(&tmp).unwrap().count();
    for output in [Path::new("/nonexistent-dir/prog"), &dir.join("missing/prog"), &dir] {
        let out = build(output, false);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{}: {stderr}", output.display());
        assert!(stderr.contains("cannot write"), "{}: {stderr}", output.display());
        assert!(!stderr.contains("bug in Strata"), "{}: {stderr}", output.display());
        assert!(!ran.exists(), "{}: nvcc ran", output.display());
        assert_eq!(leftovers(), 0, "{}: temporary files left", output.display());
    }
    let exe = dir.join("prog");
    let out = build(&exe, false);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(leftovers(), 0, "a successful build left temporary files");
    // nvcc rejects the program: the source is kept, and the error says where.
    let out = build(&exe, true);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let kept: Vec<_> = std::fs::read_dir(&tmp).unwrap().flatten().map(|e| e.path()).collect();
    assert_eq!(kept.len(), 1, "{stderr}");
    assert!(stderr.contains(&format!("kept in `{}`", kept[0].display())), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}
