//! The corpus test: runs the `strata` binary over every `.strata` file under `tests/` and
//! `examples/` and checks it against the expectations written in the file itself.
//!
//! A file states how it is tested in `//@` directive lines at its top:
//!
//! * `//@ parse-fail` — syntax errors expected;
//! * `//@ check-fail` — checker errors expected;
//! * `//@ check-pass` — the program is accepted (the default when no mode is given);
//! * `//@ run-pass` — the program is accepted and, once `strata run` exists, runs and prints the
//!   `//@ stdout: TEXT` lines (one directive per expected line);
//! * `//@ args: -D N=64` — extra arguments for the compiler;
//! * `//@ program-args: tests/corpus/run/data/x.npy 2.5` — arguments of the program itself, given
//!   after `--` to every `strata run` (paths are relative to the repository root);
//! * `//@ no-run: TEXT` — an accepted program with a `main` that cannot run (TEXT says why, e.g. it
//!   only declares the kernel it launches); every other accepted program with a `main` must run
//!   on `sim` without error;
//! * `//@ sim-only: TEXT` — a `run-pass` program the `cpu` device cannot run yet (TEXT says why;
//!   it must then refuse with E0801, never print something else);
//! * `//@ cpu-large: -D N=…` — one more run on `cpu` with these arguments (a larger size than the
//!   one `sim` runs), which must end without error: the program's own checks must hold there too;
//! * `//@ opt-levels` — `tests/cpu_opt_levels.rs` also runs the program on `cpu` built at `-O0`
//!   and under sanitizers, against `sim` (programs with warp collectives are run there anyway);
//! * `//@ known-bug: TEXT` — the file states the correct expectation but the compiler does not meet
//!   it yet (TEXT says why); it is counted as a known bug while it fails and fails the test once it
//!   passes, so that the directive is removed.
//!
//! Expected diagnostics are annotated rustc-UI style on the offending line: `//~ ERROR E0501`,
//! `//~^ ERROR E0501` for the line above (`^^` two above), `//~| ERROR E0501` for the line of the
//! previous annotation, `//~ WARNING E0xxx` for warnings. Text after the code must occur in the
//! diagnostic's message. Several annotations may share a line.
//!
//! For every file the multiset of (line, severity, code) that `strata check --format short`
//! reports must equal the annotated one. Codes of the `Check` phase (see
//! `crates/strata-diag/src/codes.rs`) can only be verified once `strata check --phases` lists
//! `check`; until then such files must parse without syntax errors and count as pending.
//! Files with expected errors also have the rendered diagnostics snapshot-tested against
//! `FILE.stderr`; `STRATA_BLESS=1 cargo test` rewrites the snapshots.
//!
//! Environment: `STRATA_BLESS=1` blesses snapshots, `STRATA_CORPUS_FILTER=text` runs only the files
//! whose path contains `text`, `STRATA_CORPUS_TIMEOUT=secs` bounds one compiler run (default 60).

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

// ------------------------------------------------------------------------------------------------
// In-file specs

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Mode {
    ParseFail,
    CheckFail,
    CheckPass,
    RunPass,
    /// Accepted by the checker, but `strata run --device sim` must report the annotated errors.
    RunFail,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::ParseFail => "parse-fail",
            Mode::CheckFail => "check-fail",
            Mode::CheckPass => "check-pass",
            Mode::RunPass => "run-pass",
            Mode::RunFail => "run-fail",
        }
    }

    fn expects_errors(self) -> bool {
        matches!(self, Mode::ParseFail | Mode::CheckFail)
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Severity {
    Error,
    Warning,
}

impl Severity {
    fn word(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// One `//~` annotation: a diagnostic expected on `line` (1-based).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Annotation {
    line: usize,
    severity: Severity,
    code: String,
    /// Text that must occur in the diagnostic's message.
    message: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Spec {
    mode: Mode,
    args: Vec<String>,
    stdout: Vec<String>,
    annotations: Vec<Annotation>,
    known_bug: Option<String>,
    no_run: Option<String>,
    sim_only: Option<String>,
    /// `//@ cpu-large: -D …`: arguments of one more run on `cpu` at a larger size, which must
    /// end without error (the program's own checks hold); its output is not compared.
    cpu_large: Option<Vec<String>>,
    /// `//@ program-args: …`: the program's own arguments, after `--` on every `strata run`.
    program_args: Vec<String>,
}

/// Reads the directives and annotations of a corpus file. Every malformed or misplaced
/// directive or annotation is an error, so a typo can never silently weaken a test.
fn parse_spec(text: &str) -> Result<Spec, Vec<String>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut errors = Vec::new();
    let mut mode = None;
    let mut args = Vec::new();
    let mut stdout = Vec::new();
    let mut known_bug = None;
    let mut no_run = None;
    let mut sim_only = None;
    let mut cpu_large = None;
    let mut program_args = Vec::new();
    let mut in_header = true;

    for (index, line) in text.lines().enumerate() {
        let lineno = index + 1;
        let trimmed = line.trim_start();
        if in_header && !(trimmed.is_empty() || trimmed.starts_with("//")) {
            in_header = false;
        }
        let Some(directive) = trimmed.strip_prefix("//@") else {
            continue;
        };
        if !in_header {
            errors.push(format!("line {lineno}: `//@` directive after the leading comment block"));
            continue;
        }
        let directive = directive.trim_end();
        let word = directive.trim_start();
        let new_mode = match word {
            "parse-fail" => Some(Mode::ParseFail),
            "check-fail" => Some(Mode::CheckFail),
            "check-pass" => Some(Mode::CheckPass),
            "run-pass" => Some(Mode::RunPass),
            "run-fail" => Some(Mode::RunFail),
            _ => None,
        };
        if let Some(new_mode) = new_mode {
            if let Some(old) = mode.replace(new_mode) {
                errors.push(format!(
                    "line {lineno}: second mode `{}` (already `{}`)",
                    new_mode.name(),
                    Mode::name(old)
                ));
            }
        } else if let Some(rest) = word.strip_prefix("stdout:") {
            stdout.push(rest.strip_prefix(' ').unwrap_or(rest).to_string());
        } else if let Some(rest) = word.strip_prefix("program-args:") {
            program_args.extend(rest.split_whitespace().map(str::to_string));
        } else if let Some(rest) = word.strip_prefix("args:") {
            args.extend(rest.split_whitespace().map(str::to_string));
        } else if let Some(rest) = word.strip_prefix("known-bug:").map(str::trim).filter(|r| !r.is_empty()) {
            known_bug = Some(rest.to_string());
        } else if let Some(rest) = word.strip_prefix("no-run:").map(str::trim).filter(|r| !r.is_empty()) {
            no_run = Some(rest.to_string());
        } else if let Some(rest) = word.strip_prefix("sim-only:").map(str::trim).filter(|r| !r.is_empty()) {
            sim_only = Some(rest.to_string());
        } else if let Some(rest) = word.strip_prefix("cpu-large:").map(str::trim).filter(|r| !r.is_empty()) {
            cpu_large = Some(rest.split_whitespace().map(str::to_string).collect());
        } else if word == "opt-levels" {
            // For tests/cpu_opt_levels.rs: the program also runs on `cpu` built at `-O0`.
        } else {
            errors.push(format!("line {lineno}: unknown directive `//@{directive}`"));
        }
    }

    let annotations = match parse_annotations(text) {
        Ok(a) => a,
        Err(mut e) => {
            errors.append(&mut e);
            Vec::new()
        }
    };
    let mode = mode.unwrap_or(Mode::CheckPass);
    let has_errors = annotations.iter().any(|a| a.severity == Severity::Error);
    if mode.expects_errors() && !has_errors {
        errors.push(format!("`{}` file without any `//~ ERROR` annotation", mode.name()));
    }
    if !mode.expects_errors() && mode != Mode::RunFail && has_errors {
        errors.push(format!(
            "`{}` file with `//~ ERROR` annotations (add `//@ check-fail` or `//@ parse-fail`)",
            mode.name()
        ));
    }
    if !stdout.is_empty() && mode != Mode::RunPass {
        errors.push("`//@ stdout:` is only meaningful in a `run-pass` file".to_string());
    }
    if cpu_large.is_some() && (mode != Mode::RunPass || sim_only.is_some()) {
        errors.push("`//@ cpu-large:` is only meaningful in a `run-pass` file the cpu device runs".to_string());
    }
    if errors.is_empty() {
        Ok(Spec { mode, args, stdout, annotations, known_bug, no_run, sim_only, cpu_large, program_args })
    } else {
        Err(errors)
    }
}

/// Finds every `//~` annotation of a file.
fn parse_annotations(text: &str) -> Result<Vec<Annotation>, Vec<String>> {
    let mut out: Vec<Annotation> = Vec::new();
    let mut errors = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let lineno = index + 1;
        for segment in line.split("//~").skip(1) {
            match parse_annotation(segment, lineno, out.last().map(|a| a.line)) {
                Ok(a) => out.push(a),
                Err(e) => errors.push(format!("line {lineno}: {e} in `//~{}`", segment.trim_end())),
            }
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

/// Parses the text after one `//~`: `^^ ERROR E0501 optional message`.
fn parse_annotation(segment: &str, lineno: usize, previous: Option<usize>) -> Result<Annotation, String> {
    let (line, rest) = if let Some(rest) = segment.strip_prefix('|') {
        (previous.ok_or("`//~|` without a previous annotation")?, rest)
    } else {
        let carets = segment.chars().take_while(|&c| c == '^').count();
        if carets >= lineno {
            return Err(format!("`{}` points above the first line", "^".repeat(carets)));
        }
        (lineno - carets, &segment[carets..])
    };
    let mut words = rest.trim_start().splitn(2, char::is_whitespace);
    let severity = match words.next().unwrap_or("") {
        "ERROR" => Severity::Error,
        "WARNING" | "WARN" => Severity::Warning,
        other => return Err(format!("expected `ERROR` or `WARNING`, found `{other}`")),
    };
    let rest = words.next().unwrap_or("").trim_start();
    let code_len = rest.find(|c: char| !c.is_ascii_alphanumeric()).unwrap_or(rest.len());
    let code = &rest[..code_len];
    if !is_code(code) {
        return Err(format!("expected a code like `E0501`, found `{code}`"));
    }
    let message = rest[code_len..].trim_start_matches(':').trim();
    let message = (!message.is_empty()).then(|| message.to_string());
    Ok(Annotation { line, severity, code: code.to_string(), message })
}

fn is_code(s: &str) -> bool {
    s.len() == 5 && s.starts_with('E') && s[1..].bytes().all(|b| b.is_ascii_digit())
}

// ------------------------------------------------------------------------------------------------
// The code registry: which phase raises which code (read from codes.rs, so it never goes stale)

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Phase {
    Syntax,
    Check,
    Run,
}

/// Reads `NAME = "E0001", Syntax, "title";` entries out of the source of codes.rs.
fn parse_registry(source: &str) -> BTreeMap<String, Phase> {
    let mut out = BTreeMap::new();
    for line in source.lines() {
        let Some((_, rest)) = line.split_once("= \"") else {
            continue;
        };
        let Some((code, rest)) = rest.split_once('"') else {
            continue;
        };
        if !is_code(code) {
            continue;
        }
        let phase = rest.trim_start_matches(',').split(',').next().unwrap_or("").trim();
        let phase = match phase {
            "Syntax" => Phase::Syntax,
            "Check" => Phase::Check,
            "Run" => Phase::Run,
            _ => continue,
        };
        out.insert(code.to_string(), phase);
    }
    out
}

// ------------------------------------------------------------------------------------------------
// Compiler output

/// One diagnostic of `strata check --format short`: `PATH:LINE:COL: error[E0010]: message`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Reported {
    path: String,
    line: usize,
    col: usize,
    severity: Severity,
    code: String,
    message: String,
}

impl std::fmt::Display for Reported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Reported { path, line, col, severity, code, message } = self;
        write!(f, "{path}:{line}:{col}: {}[{code}]: {message}", severity.word())
    }
}

fn parse_short_line(line: &str) -> Option<Reported> {
    let (location, severity, rest) = [(": error[", Severity::Error), (": warning[", Severity::Warning)]
        .iter()
        .find_map(|(marker, sev)| line.split_once(marker).map(|(loc, rest)| (loc, *sev, rest)))?;
    let (code, message) = rest.split_once(']')?;
    if !is_code(code) {
        return None;
    }
    let message = message.strip_prefix(':').unwrap_or(message).trim().to_string();
    let mut parts = location.rsplitn(3, ':');
    let col = parts.next()?.parse().ok()?;
    let line = parts.next()?.parse().ok()?;
    let path = parts.next()?.to_string();
    Some(Reported { path, line, col, severity, code: code.to_string(), message })
}

/// Splits stderr into parsed diagnostics and the lines that are not diagnostics.
fn parse_short_output(stderr: &str) -> (Vec<Reported>, Vec<String>) {
    let mut diags = Vec::new();
    let mut other = Vec::new();
    for line in stderr.lines() {
        match parse_short_line(line) {
            Some(d) => diags.push(d),
            None if line.trim().is_empty() => {}
            None => other.push(line.to_string()),
        }
    }
    (diags, other)
}

/// Matches expected annotations against reported diagnostics as multisets of
/// (line, severity, code); annotations with a message need a diagnostic containing it.
/// Returns the problems, empty when they match.
fn compare(expected: &[Annotation], reported: &[Reported]) -> Vec<String> {
    let mut unmatched: Vec<Option<&Reported>> = reported.iter().map(Some).collect();
    let mut missing = Vec::new();
    // Annotations with a message first, so they are not robbed by a message-less one.
    let mut order: Vec<&Annotation> = expected.iter().collect();
    order.sort_by_key(|a| a.message.is_none());
    for a in order {
        let slot = unmatched.iter_mut().find(|slot| {
            slot.is_some_and(|r| {
                r.line == a.line
                    && r.severity == a.severity
                    && r.code == a.code
                    && match &a.message {
                        Some(m) => r.message.contains(m.as_str()),
                        None => true,
                    }
            })
        });
        match slot {
            Some(slot) => *slot = None,
            None => missing.push(a),
        }
    }
    let mut problems = Vec::new();
    missing.sort_by_key(|a| (a.line, a.code.clone()));
    for a in missing {
        let message = a.message.as_ref().map(|m| format!(" containing \"{m}\"")).unwrap_or_default();
        problems.push(format!("expected, not reported: line {}: {}[{}]{message}", a.line, a.severity.word(), a.code));
    }
    for r in unmatched.into_iter().flatten() {
        problems.push(format!("reported, not expected: {r}"));
    }
    problems
}

// ------------------------------------------------------------------------------------------------
// Running the compiler

struct Output {
    status: Option<i32>,
    stdout: String,
    stderr: String,
    timed_out: bool,
}

fn run_strata(root: &Path, args: &[&str], timeout: Duration) -> Result<Output, String> {
    run_strata_env(root, args, &[], timeout)
}

fn run_strata_env(root: &Path, args: &[&str], envs: &[(&str, &str)], timeout: Duration) -> Result<Output, String> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(args)
        .envs(envs.iter().copied())
        .current_dir(root)
        .env("NO_COLOR", "1")
        .env("TERM", "dumb")
        .env_remove("CLICOLOR_FORCE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start strata: {e}"))?;
    let reader = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = pipe.read_to_end(&mut buf);
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let out = reader(Box::new(child.stdout.take().expect("piped stdout")));
    let err = reader(Box::new(child.stderr.take().expect("piped stderr")));
    let start = Instant::now();
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if start.elapsed() > timeout {
            timed_out = true;
            let _ = child.kill();
            break child.wait().map_err(|e| e.to_string())?;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Ok(Output {
        status: status.code(),
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
        timed_out,
    })
}

/// Describes an exit that is neither "accepted" (0) nor "program has errors" (1).
fn bad_exit(what: &str, out: &Output, timeout: Duration) -> Option<String> {
    if out.timed_out {
        return Some(format!("`{what}` did not finish within {}s", timeout.as_secs()));
    }
    match out.status {
        Some(0 | 1) => None,
        status => Some(format!(
            "`{what}` exited with {}; stderr:\n{}",
            status.map_or("a signal".to_string(), |s| format!("status {s}")),
            indent(&out.stderr)
        )),
    }
}

// ------------------------------------------------------------------------------------------------
// Diffs

/// A line diff of `expected` against `actual` (`-` expected only, `+` actual only).
fn diff(expected: &str, actual: &str) -> String {
    let a: Vec<&str> = expected.lines().collect();
    let b: Vec<&str> = actual.lines().collect();
    // Longest common subsequence table, filled from the end.
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] { lcs[i + 1][j + 1] + 1 } else { lcs[i + 1][j].max(lcs[i][j + 1]) };
        }
    }
    let mut out = String::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            out.push_str(&format!("   {}\n", a[i]));
            i += 1;
            j += 1;
        } else if i < a.len() && (j == b.len() || lcs[i + 1][j] >= lcs[i][j + 1]) {
            out.push_str(&format!(" - {}\n", a[i]));
            i += 1;
        } else {
            out.push_str(&format!(" + {}\n", b[j]));
            j += 1;
        }
    }
    out
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("    {l}\n")).collect()
}

// ------------------------------------------------------------------------------------------------
// The corpus

enum Outcome {
    Passed,
    PendingChecker,
    PendingRun,
    /// Fails as a `//@ known-bug` file says it does.
    KnownBug(String, Vec<String>),
    Failed(Vec<String>),
}

struct Ctx {
    root: PathBuf,
    phases: BTreeSet<String>,
    registry: BTreeMap<String, Phase>,
    bless: bool,
    timeout: Duration,
    /// Environment of the `cpu32` run: 32-bit indices, and the C built with AddressSanitizer and
    /// UndefinedBehaviorSanitizer where the C compiler has them.
    cpu32_env: Vec<(String, String)>,
}

/// The environment of the `cpu32` run (see [`Ctx::cpu32_env`]). The sanitizers are probed by
/// building and running an empty program with them; leak detection only where it works (it needs
/// ptrace, which some containers refuse).
fn cpu32_env() -> Vec<(String, String)> {
    let mut env = vec![("STRATA_NARROW_C".to_string(), "1".to_string())];
    match common::sanitizers_work() {
        Some(leaks) => {
            env.push(("STRATA_CFLAGS".to_string(), common::SANITIZER_FLAGS.to_string()));
            let opts = if leaks { "detect_leaks=1" } else { "detect_leaks=0" };
            env.push(("ASAN_OPTIONS".to_string(), opts.to_string()));
        }
        None => eprintln!(
            "corpus: `{}` cannot build with {}; the cpu32 run goes without sanitizers",
            common::cc(),
            common::SANITIZER_FLAGS
        ),
    }
    env
}

/// Collects the `.strata` files and the `.strata.stderr` snapshots under `dir`.
fn find_files(dir: &Path, programs: &mut Vec<PathBuf>, snapshots: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if path.is_dir() {
            if name != "target" {
                find_files(&path, programs, snapshots);
            }
        } else if name.ends_with(".strata") {
            programs.push(path);
        } else if name.ends_with(".strata.stderr") {
            snapshots.push(path);
        }
    }
}

/// A path relative to the workspace root, with `/` separators.
fn relative(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    Some(rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/"))
}

/// Checks one file, turning the failure of a `//@ known-bug` file into [`Outcome::KnownBug`] and
/// its success into a failure.
fn check_file(ctx: &Ctx, rel: &str) -> Outcome {
    let text = std::fs::read_to_string(ctx.root.join(rel)).unwrap_or_default();
    let known_bug = parse_spec(&text).ok().and_then(|spec| spec.known_bug);
    // A known-bug file is judged by its diagnostics alone: it has no snapshot while it fails.
    match (check_file_strictly(ctx, rel, known_bug.is_none()), known_bug) {
        (Outcome::Failed(problems), Some(bug)) => Outcome::KnownBug(bug, problems),
        (Outcome::Passed, Some(bug)) => Outcome::Failed(vec![format!(
            "passes although marked `//@ known-bug: {bug}`; remove the directive (and bless its snapshot)"
        )]),
        (outcome, _) => outcome,
    }
}

/// `//@ args:` without the options of the `sim` device, which `strata run --device cpu` refuses.
fn cpu_args(args: &[String]) -> Vec<&str> {
    let mut out = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--schedule" | "--seed" | "--max-steps" => {
                it.next();
            }
            "--no-race-check" => {}
            a if ["--schedule=", "--seed=", "--max-steps="].iter().any(|p| a.starts_with(p)) => {}
            a => out.push(a),
        }
    }
    out
}

/// The part of `//@ args:` that `strata check` takes: the `-D NAME=VALUE` definitions and the
/// target architecture `--arch` (the rest, like `--schedule random`, is for `strata run`).
fn check_args(args: &[String]) -> Vec<&str> {
    let mut out = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "-D" || a == "--arch" {
            out.push(a.as_str());
            if let Some(v) = it.next() {
                out.push(v.as_str());
            }
        } else if a.starts_with("-D") || a.starts_with("--arch=") {
            out.push(a.as_str());
        }
    }
    out
}

/// The program's own arguments (`//@ program-args:`) after `--`, at the end of a `strata run`.
fn with_program_args<'a>(args: &mut Vec<&'a str>, program_args: &'a [String]) {
    if !program_args.is_empty() {
        args.push("--");
        args.extend(program_args.iter().map(String::as_str));
    }
}

fn check_file_strictly(ctx: &Ctx, rel: &str, snapshots: bool) -> Outcome {
    let path = ctx.root.join(rel);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => return Outcome::Failed(vec![format!("cannot read: {e}")]),
    };
    let spec = match parse_spec(&text) {
        Ok(s) => s,
        Err(errors) => return Outcome::Failed(errors),
    };
    let mut problems = Vec::new();
    for a in &spec.annotations {
        if !ctx.registry.contains_key(&a.code) {
            problems.push(format!("line {}: annotation uses unregistered code {}", a.line, a.code));
        }
    }
    let phase_of = |code: &str| ctx.registry.get(code).copied().unwrap_or(Phase::Check);
    let syntax_annotations = spec.annotations.iter().any(|a| phase_of(&a.code) == Phase::Syntax);
    let check_annotations = spec.annotations.iter().any(|a| phase_of(&a.code) == Phase::Check);
    if spec.mode == Mode::ParseFail && !syntax_annotations {
        problems.push("`parse-fail` file without a syntax-phase annotation".to_string());
    }
    if spec.mode == Mode::CheckFail && syntax_annotations {
        problems.push("`check-fail` file with syntax-phase annotations (use `parse-fail`)".to_string());
    }
    if !problems.is_empty() {
        return Outcome::Failed(problems);
    }

    // 1. The short diagnostics against the annotations (all of them: no `--error-limit`).
    let mut args: Vec<&str> = vec!["check", "--format", "short", "--error-limit", "0"];
    args.extend(check_args(&spec.args));
    args.push(rel);
    let out = match run_strata(&ctx.root, &args, ctx.timeout) {
        Ok(out) => out,
        Err(e) => return Outcome::Failed(vec![e]),
    };
    let command = format!("strata {}", args.join(" "));
    if let Some(problem) = bad_exit(&command, &out, ctx.timeout) {
        return Outcome::Failed(vec![problem]);
    }
    let (reported, other) = parse_short_output(&out.stderr);
    let errors_reported = reported.iter().any(|r| r.severity == Severity::Error);
    if errors_reported != (out.status == Some(1)) {
        problems.push(format!(
            "exit status {:?} does not agree with the diagnostics; stderr:\n{}",
            out.status,
            indent(&out.stderr)
        ));
    }
    for r in &reported {
        if r.path != rel {
            problems.push(format!("diagnostic names path `{}`, expected `{rel}`: {r}", r.path));
        }
    }
    let pending_checker = !ctx.phases.contains("check") && (spec.mode == Mode::CheckFail || check_annotations);
    let expected: Vec<Annotation> = if pending_checker {
        spec.annotations.iter().filter(|a| phase_of(&a.code) == Phase::Syntax).cloned().collect()
    } else {
        spec.annotations.iter().filter(|a| phase_of(&a.code) != Phase::Run).cloned().collect()
    };
    let run_annotations: Vec<Annotation> =
        spec.annotations.iter().filter(|a| phase_of(&a.code) == Phase::Run).cloned().collect();
    if spec.mode != Mode::RunFail && !run_annotations.is_empty() {
        return Outcome::Failed(vec!["run-phase annotations need `//@ run-fail`".to_string()]);
    }
    if spec.mode == Mode::RunFail && run_annotations.is_empty() {
        return Outcome::Failed(vec!["`run-fail` file without a run-phase annotation".to_string()]);
    }
    let mismatches = compare(&expected, &reported);
    if !mismatches.is_empty() {
        problems.extend(mismatches);
        if !other.is_empty() {
            problems.push(format!("other output of `{command}`:\n{}", indent(&other.join("\n"))));
        }
    }
    if !problems.is_empty() {
        return Outcome::Failed(problems);
    }

    // 2. The rendered diagnostics against the snapshot.
    let snapshot = ctx.root.join(format!("{rel}.stderr"));
    if snapshots && spec.mode.expects_errors() && !pending_checker {
        let mut args: Vec<&str> = vec!["check"];
        args.extend(check_args(&spec.args));
        args.push(rel);
        let out = match run_strata(&ctx.root, &args, ctx.timeout) {
            Ok(out) => out,
            Err(e) => return Outcome::Failed(vec![e]),
        };
        let command = format!("strata {}", args.join(" "));
        if let Some(problem) = bad_exit(&command, &out, ctx.timeout) {
            return Outcome::Failed(vec![problem]);
        }
        if out.status != Some(1) {
            problems.push(format!("`{command}` exited with {:?}, expected 1", out.status));
        }
        let actual = out.stderr.replace("\r\n", "\n");
        match std::fs::read_to_string(&snapshot) {
            Ok(expected) if expected == actual => {}
            _ if ctx.bless => {
                if let Err(e) = std::fs::write(&snapshot, &actual) {
                    problems.push(format!("cannot write {}: {e}", snapshot.display()));
                }
            }
            Ok(expected) => problems.push(format!(
                "rendered diagnostics differ from {rel}.stderr (- snapshot, + actual; STRATA_BLESS=1 to accept):\n{}",
                diff(&expected, &actual)
            )),
            Err(_) => problems.push(format!(
                "missing snapshot {rel}.stderr (STRATA_BLESS=1 creates it); actual output:\n{}",
                indent(&actual)
            )),
        }
    } else if snapshots && !spec.mode.expects_errors() && spec.mode != Mode::RunFail && snapshot.exists() {
        if ctx.bless {
            let _ = std::fs::remove_file(&snapshot);
        } else {
            problems.push(format!("stale snapshot {rel}.stderr for a file without expected errors"));
        }
    }
    if !problems.is_empty() {
        return Outcome::Failed(problems);
    }
    if pending_checker {
        return Outcome::PendingChecker;
    }

    // 3. Running the program. Every accepted program with a `main` must run cleanly on `sim`.
    if spec.mode == Mode::CheckPass && spec.no_run.is_none() && text.contains("fn main(") && ctx.phases.contains("run")
    {
        let mut args: Vec<&str> = vec!["run", "--device", "sim"];
        args.extend(spec.args.iter().map(String::as_str));
        args.push(rel);
        with_program_args(&mut args, &spec.program_args);
        let out = match run_strata(&ctx.root, &args, ctx.timeout) {
            Ok(out) => out,
            Err(e) => return Outcome::Failed(vec![e]),
        };
        if out.timed_out || out.status != Some(0) {
            let command = format!("strata {}", args.join(" "));
            return Outcome::Failed(vec![format!(
                "an accepted program must run on `sim`: `{command}` ended with {:?}; stderr:\n{}",
                out.status,
                indent(&out.stderr)
            )]);
        }
    }
    if spec.mode == Mode::RunFail {
        if !ctx.phases.contains("run") {
            return Outcome::PendingRun;
        }
        let mut args: Vec<&str> = vec!["run", "--device", "sim", "--format", "short"];
        args.extend(spec.args.iter().map(String::as_str));
        args.push(rel);
        with_program_args(&mut args, &spec.program_args);
        let out = match run_strata(&ctx.root, &args, ctx.timeout) {
            Ok(out) => out,
            Err(e) => return Outcome::Failed(vec![e]),
        };
        let command = format!("strata {}", args.join(" "));
        if out.timed_out || out.status != Some(1) {
            return Outcome::Failed(vec![format!(
                "`{command}` ended with {:?}, expected 1; stderr:\n{}",
                out.status,
                indent(&out.stderr)
            )]);
        }
        let (reported, _) = parse_short_output(&out.stderr);
        let mismatches = compare(&run_annotations, &reported);
        if !mismatches.is_empty() {
            return Outcome::Failed(mismatches);
        }
        if snapshots {
            let mut args: Vec<&str> = vec!["run", "--device", "sim"];
            args.extend(spec.args.iter().map(String::as_str));
            args.push(rel);
            with_program_args(&mut args, &spec.program_args);
            let out = match run_strata(&ctx.root, &args, ctx.timeout) {
                Ok(out) => out,
                Err(e) => return Outcome::Failed(vec![e]),
            };
            let actual = out.stderr.replace("\r\n", "\n");
            let snapshot = ctx.root.join(format!("{rel}.stderr"));
            match std::fs::read_to_string(&snapshot) {
                Ok(expected) if expected == actual => {}
                _ if ctx.bless => {
                    if let Err(e) = std::fs::write(&snapshot, &actual) {
                        return Outcome::Failed(vec![format!("cannot write {}: {e}", snapshot.display())]);
                    }
                }
                Ok(expected) => {
                    return Outcome::Failed(vec![format!(
                        "rendered run diagnostics differ from {rel}.stderr (- snapshot, + actual; STRATA_BLESS=1 to accept):\n{}",
                        diff(&expected, &actual)
                    )])
                }
                Err(_) => {
                    return Outcome::Failed(vec![format!(
                        "missing snapshot {rel}.stderr (STRATA_BLESS=1 creates it); actual output:\n{}",
                        indent(&actual)
                    )])
                }
            }
        }
    }
    // Run programs on every device: each must print exactly the expected output (differential
    // testing of `cpu` against the reference `sim`). `cpu32` is the cpu device with the 32-bit
    // index arithmetic of the CUDA target (`STRATA_NARROW_C=1`), which the cpu device leaves off,
    // built with the sanitizers: an out-of-bounds access, use after free, double free, leak or
    // undefined behaviour in the emitted C fails the program.
    let cpu32_env: Vec<(&str, &str)> = ctx.cpu32_env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    for variant in ["sim", "cpu", "cpu32"] {
        if spec.mode != Mode::RunPass {
            break;
        }
        if !ctx.phases.contains("run") {
            return Outcome::PendingRun;
        }
        let (device, envs): (&str, &[(&str, &str)]) =
            if variant == "cpu32" { ("cpu", &cpu32_env) } else { (variant, &[]) };
        let mut args: Vec<&str> = vec!["run", "--device", device];
        if device == "cpu" {
            args.extend(cpu_args(&spec.args));
        } else {
            args.extend(spec.args.iter().map(String::as_str));
        }
        args.push(rel);
        with_program_args(&mut args, &spec.program_args);
        if device == "cpu" && spec.sim_only.is_some() {
            // The cpu device must refuse (E0801), not run it differently.
            let out = match run_strata_env(&ctx.root, &args, envs, ctx.timeout) {
                Ok(out) => out,
                Err(e) => return Outcome::Failed(vec![e]),
            };
            if out.status != Some(1) || !out.stderr.contains("E0801") {
                return Outcome::Failed(vec![format!(
                    "`//@ sim-only` program: the cpu device must refuse it with E0801; stderr:\n{}",
                    indent(&out.stderr)
                )]);
            }
            continue;
        }
        let out = match run_strata_env(&ctx.root, &args, envs, ctx.timeout) {
            Ok(out) => out,
            Err(e) => return Outcome::Failed(vec![e]),
        };
        let prefix: String = envs.iter().map(|(k, v)| format!("{k}={v} ")).collect();
        let command = format!("{prefix}strata {}", args.join(" "));
        if out.timed_out || out.status != Some(0) {
            let status = if out.timed_out { "a timeout".to_string() } else { format!("{:?}", out.status) };
            return Outcome::Failed(vec![format!("`{command}` ended with {status}; stderr:\n{}", indent(&out.stderr))]);
        }
        let expected: String = spec.stdout.iter().map(|l| format!("{l}\n")).collect();
        let actual = out.stdout.replace("\r\n", "\n");
        if expected.trim_end() != actual.trim_end() {
            return Outcome::Failed(vec![format!(
                "stdout of `{command}` differs (- expected, + actual):\n{}",
                diff(&expected, &actual)
            )]);
        }
    }
    if let (Some(large), Mode::RunPass) = (&spec.cpu_large, spec.mode) {
        let mut args: Vec<&str> = vec!["run", "--device", "cpu"];
        args.extend(large.iter().map(String::as_str));
        args.push(rel);
        with_program_args(&mut args, &spec.program_args);
        let out = match run_strata_env(&ctx.root, &args, &[], ctx.timeout) {
            Ok(out) => out,
            Err(e) => return Outcome::Failed(vec![e]),
        };
        if out.timed_out || out.status != Some(0) {
            return Outcome::Failed(vec![format!(
                "`strata {}` (the `cpu-large` run) failed; stderr:\n{}",
                args.join(" "),
                indent(&out.stderr)
            )]);
        }
    }
    Outcome::Passed
}

#[test]
fn corpus() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let root = root.canonicalize().unwrap_or(root);
    let registry_source = std::fs::read_to_string(root.join("crates/strata-diag/src/codes.rs"))
        .expect("crates/strata-diag/src/codes.rs must be readable");
    let registry = parse_registry(&registry_source);
    assert!(!registry.is_empty(), "no codes found in codes.rs");

    let timeout =
        Duration::from_secs(std::env::var("STRATA_CORPUS_TIMEOUT").ok().and_then(|s| s.parse().ok()).unwrap_or(60));
    let phases_out = run_strata(&root, &["check", "--phases"], timeout).expect("strata must start");
    let phases: BTreeSet<String> = if phases_out.status == Some(0) {
        phases_out.stdout.lines().map(|l| l.trim().to_string()).filter(|l| !l.is_empty()).collect()
    } else {
        eprintln!("corpus: `strata check --phases` failed; assuming only the syntax phase exists");
        BTreeSet::from(["syntax".to_string()])
    };
    let bless = std::env::var("STRATA_BLESS").is_ok_and(|v| !v.is_empty() && v != "0");
    let ctx = Ctx { root: root.clone(), phases, registry, bless, timeout, cpu32_env: cpu32_env() };

    let (mut files, mut snapshots) = (Vec::new(), Vec::new());
    find_files(&root.join("tests"), &mut files, &mut snapshots);
    find_files(&root.join("examples"), &mut files, &mut snapshots);
    let filter = std::env::var("STRATA_CORPUS_FILTER").unwrap_or_default();
    let mut rels: Vec<String> =
        files.iter().filter_map(|p| relative(&root, p)).filter(|rel| rel.contains(&filter)).collect();
    rels.sort();
    assert!(!rels.is_empty(), "no .strata files found under tests/ or examples/");

    let (mut passed, mut pending_checker, mut pending_run, mut known_bugs) = (0, 0, 0, 0);
    let mut failed = Vec::new();
    for snapshot in &snapshots {
        let program = snapshot.with_extension("");
        if program.exists() {
            continue;
        }
        let rel = relative(&root, snapshot).unwrap_or_else(|| snapshot.display().to_string());
        if ctx.bless {
            let _ = std::fs::remove_file(snapshot);
        } else {
            eprintln!("---- {rel} FAILED\n  snapshot of a program that does not exist (STRATA_BLESS=1 removes it)");
            failed.push(rel);
        }
    }
    for rel in &rels {
        match check_file(&ctx, rel) {
            Outcome::Passed => passed += 1,
            Outcome::PendingChecker => pending_checker += 1,
            Outcome::PendingRun => pending_run += 1,
            Outcome::KnownBug(bug, problems) => {
                eprintln!("---- {rel}: known bug: {bug}");
                for p in &problems {
                    eprintln!("  {}", p.trim_end().replace('\n', "\n  "));
                }
                known_bugs += 1;
            }
            Outcome::Failed(problems) => {
                eprintln!("---- {rel} FAILED");
                for p in &problems {
                    eprintln!("  {}", p.trim_end().replace('\n', "\n  "));
                }
                failed.push(rel.clone());
            }
        }
    }
    let summary = format!(
        "corpus: {} files, {passed} passed, {pending_checker} pending (checker), {pending_run} pending (run), \
         {known_bugs} known bugs, {} failed (phases: {})",
        rels.len(),
        failed.len(),
        ctx.phases.iter().cloned().collect::<Vec<_>>().join(", ")
    );
    // Written to the real stderr so that the summary shows even when the test's output is captured.
    let _ = writeln!(std::io::stderr(), "{summary}");
    if ctx.bless {
        let _ = writeln!(std::io::stderr(), "corpus: snapshots blessed");
    }
    assert!(failed.is_empty(), "{summary}\nfailing files:\n{}", indent(&failed.join("\n")));
}

// ------------------------------------------------------------------------------------------------
// Tests of the harness itself

#[cfg(test)]
mod harness {
    use super::*;

    fn ann(line: usize, code: &str) -> Annotation {
        Annotation { line, severity: Severity::Error, code: code.to_string(), message: None }
    }

    fn rep(line: usize, code: &str, message: &str) -> Reported {
        Reported {
            path: "t.strata".to_string(),
            line,
            col: 1,
            severity: Severity::Error,
            code: code.to_string(),
            message: message.to_string(),
        }
    }

    #[test]
    fn default_mode_is_check_pass() {
        let spec = parse_spec("fn main() -[t: cpu.thread]-> () { }\n").unwrap();
        assert_eq!(spec.mode, Mode::CheckPass);
        assert!(spec.annotations.is_empty() && spec.args.is_empty() && spec.stdout.is_empty());
        assert_eq!(spec.known_bug, None);
    }

    #[test]
    fn directives_are_read_from_the_leading_comment_block() {
        let text =
            "// a comment\n//@ run-pass\n\n//@ args: -D N=64  -D M=2\n//@ stdout: 1 2 3\n//@ stdout:\nfn main() {}\n";
        let spec = parse_spec(text).unwrap();
        assert_eq!(spec.mode, Mode::RunPass);
        assert_eq!(spec.args, ["-D", "N=64", "-D", "M=2"]);
        assert_eq!(spec.stdout, ["1 2 3", ""]);
        let spec = parse_spec("//@ known-bug: parser cascade\nfn f() {}\n").unwrap();
        assert_eq!(spec.known_bug.as_deref(), Some("parser cascade"));
    }

    #[test]
    fn bad_directives_are_errors() {
        assert!(parse_spec("//@ chek-pass\nfn f() {}\n").is_err(), "unknown directive");
        assert!(parse_spec("//@ check-pass\n//@ run-pass\nfn f() {}\n").is_err(), "two modes");
        assert!(parse_spec("fn f() {}\n//@ check-pass\n").is_err(), "directive after code");
        assert!(parse_spec("//@ check-pass\n//@ stdout: 1\nfn f() {}\n").is_err(), "stdout without run-pass");
        assert!(parse_spec("//@ known-bug:\nfn f() {}\n").is_err(), "known-bug without a reason");
    }

    #[test]
    fn mode_and_annotations_must_agree() {
        assert!(parse_spec("//@ check-fail\nfn f() {}\n").is_err(), "check-fail needs an error");
        assert!(parse_spec("//@ parse-fail\nfn f() {}\n").is_err(), "parse-fail needs an error");
        assert!(parse_spec("fn f() {} //~ ERROR E0010\n").is_err(), "check-pass with an error");
        assert!(parse_spec("//@ check-pass\nfn f() {} //~ WARNING E0501\n").is_ok(), "warnings are fine");
    }

    #[test]
    fn annotations_point_at_their_line_or_above() {
        let text = "//@ check-fail\nlet a = 1; //~ ERROR E0501\nx\n//~^ ERROR E0502\n\n//~^^^^ ERROR E0503\n";
        let spec = parse_spec(text).unwrap();
        assert_eq!(spec.annotations, vec![ann(2, "E0501"), ann(3, "E0502"), ann(2, "E0503")]);
    }

    #[test]
    fn several_annotations_per_line_and_continuations() {
        let text = "//@ check-fail\nf(a, b); //~ ERROR E0201 //~ ERROR E0201: mismatched\n//~| WARNING E0501\n";
        let spec = parse_spec(text).unwrap();
        let mut second = ann(2, "E0201");
        second.message = Some("mismatched".to_string());
        let warning = Annotation { severity: Severity::Warning, ..ann(2, "E0501") };
        assert_eq!(spec.annotations, vec![ann(2, "E0201"), second, warning]);
    }

    #[test]
    fn malformed_annotations_are_errors() {
        assert!(parse_annotations("x //~ ERROR\n").is_err(), "missing code");
        assert!(parse_annotations("x //~ ERR E0501\n").is_err(), "bad severity");
        assert!(parse_annotations("x //~ ERROR 501\n").is_err(), "bad code");
        assert!(parse_annotations("x //~^ ERROR E0501\n").is_err(), "above line 1");
        assert!(parse_annotations("x //~| ERROR E0501\n").is_err(), "| without a previous annotation");
    }

    #[test]
    fn short_lines_are_parsed() {
        let d = parse_short_line("tests/a b.strata:12:5: error[E0010]: unexpected token `;`").unwrap();
        assert_eq!((d.path.as_str(), d.line, d.col, d.severity), ("tests/a b.strata", 12, 5, Severity::Error));
        assert_eq!((d.code.as_str(), d.message.as_str()), ("E0010", "unexpected token `;`"));
        let w = parse_short_line("x.strata:1:1: warning[E0501]: careful: here").unwrap();
        assert_eq!((w.severity, w.message.as_str()), (Severity::Warning, "careful: here"));
        assert!(parse_short_line("thread 'main' panicked at src/main.rs:1:1:").is_none());
        assert!(parse_short_line("x.strata:1: error[E0010]: no column").is_none());
        let (diags, other) = parse_short_output("a.strata:1:2: error[E0001]: x\n\nerror: aborting\n");
        assert_eq!((diags.len(), other), (1, vec!["error: aborting".to_string()]));
    }

    #[test]
    fn comparison_accepts_exact_matches() {
        let expected = [ann(3, "E0501"), ann(3, "E0501"), ann(7, "E0010")];
        let reported = [rep(7, "E0010", "x"), rep(3, "E0501", "a"), rep(3, "E0501", "b")];
        assert!(compare(&expected, &reported).is_empty());
    }

    #[test]
    fn comparison_can_fail() {
        // Missing diagnostic.
        assert_eq!(compare(&[ann(3, "E0501")], &[]).len(), 1);
        // Unexpected diagnostic.
        assert_eq!(compare(&[], &[rep(3, "E0501", "m")]).len(), 1);
        // Wrong line and wrong code.
        assert_eq!(compare(&[ann(3, "E0501")], &[rep(4, "E0501", "m")]).len(), 2);
        assert_eq!(compare(&[ann(3, "E0501")], &[rep(3, "E0502", "m")]).len(), 2);
        // Multiplicity counts.
        assert_eq!(compare(&[ann(3, "E0501"), ann(3, "E0501")], &[rep(3, "E0501", "m")]).len(), 1);
        assert_eq!(compare(&[ann(3, "E0501")], &[rep(3, "E0501", "m"), rep(3, "E0501", "m")]).len(), 1);
        // Severity and message.
        let warning = Annotation { severity: Severity::Warning, ..ann(3, "E0501") };
        assert_eq!(compare(&[warning], &[rep(3, "E0501", "m")]).len(), 2);
        let with_message = Annotation { message: Some("conflict".to_string()), ..ann(3, "E0501") };
        assert_eq!(compare(std::slice::from_ref(&with_message), &[rep(3, "E0501", "other")]).len(), 2);
        assert!(compare(&[with_message], &[rep(3, "E0501", "a conflicting access")]).is_empty());
    }

    #[test]
    fn message_annotations_are_matched_first() {
        let plain = ann(3, "E0501");
        let specific = Annotation { message: Some("second".to_string()), ..ann(3, "E0501") };
        let reported = [rep(3, "E0501", "second"), rep(3, "E0501", "first")];
        assert!(compare(&[plain, specific], &reported).is_empty());
    }

    #[test]
    fn diff_marks_changed_lines() {
        let d = diff("a\nb\nc\n", "a\nB\nc\nd\n");
        assert_eq!(d, "   a\n - b\n + B\n   c\n + d\n");
        assert_eq!(diff("same\n", "same\n"), "   same\n");
    }

    #[test]
    fn registry_is_read_from_codes_rs() {
        let source =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../strata-diag/src/codes.rs")).unwrap();
        let registry = parse_registry(&source);
        assert_eq!(registry.get("E0001"), Some(&Phase::Syntax));
        assert_eq!(registry.get("E0018"), Some(&Phase::Syntax));
        assert_eq!(registry.get("E0501"), Some(&Phase::Check));
        assert_eq!(registry.get("E9999"), None);
        let sample =
            "    X = \"E0042\", Syntax, \"t\";\n    Y = \"E0777\", Check, \"u\";\n    Z = \"nope\", Check, \"v\";";
        let parsed = parse_registry(sample);
        assert_eq!(parsed.len(), 2);
        assert_eq!(parsed["E0777"], Phase::Check);
    }
}
