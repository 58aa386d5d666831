//! The `cpu` device: compiles a program's IR to C (`strata_emit::emit_c`), builds it with the system C compiler
//! at `-O3 -march=native` with OpenMP (blocks of a launch run in parallel on all cores), caches the
//! executable by content hash, and runs it. Run-time errors come back as diagnostics.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;
use strata_diag::{codes, Code, Diagnostic, FileId, Span};
use strata_ir::ir::Program;

mod child;
pub use child::kill_all;

pub use strata_emit::emit_c;

fn error(message: impl Into<String>, label: impl Into<String>) -> Box<Diagnostic> {
    Box::new(Diagnostic::error(codes::UNSUPPORTED, message, Span::DUMMY, label))
}

/// E1001: the C compiler `cc` could not be started (not installed, not on the `PATH`, not
/// executable). A problem of the machine, not of the program.
fn no_c_compiler(cc: &str, e: &std::io::Error) -> Box<Diagnostic> {
    let from = if std::env::var_os("CC").is_some() { "`$CC`" } else { "the default (`cc` on the `PATH`)" };
    Box::new(
        Diagnostic::error(
            codes::NO_C_COMPILER,
            format!("no C compiler: cannot run `{cc}`: {e}"),
            Span::DUMMY,
            "the cpu device compiles programs with the system's C compiler",
        )
        .with_note(format!("the compiler is {from}"))
        .with_note(
            "help: install gcc or clang (e.g. `sudo apt-get install gcc`), or set CC=/path/to/compiler; \
             `--device sim` runs the program without one (`strata explain E1001`)",
        ),
    )
}

/// E1004: the program cache cannot be used (created, written, or run from). A problem of the
/// machine, not of the program.
fn cache_unusable(what: String) -> Box<Diagnostic> {
    Box::new(
        Diagnostic::error(codes::CACHE_UNUSABLE, what, Span::DUMMY, "the cpu device compiles programs into its cache")
            .with_note(format!("the cache is `{}`", cache_dir().display()))
            .with_note(
                "help: set STRATA_CACHE_DIR to a directory this user can write and run programs from (not on a \
                 `noexec` mount), e.g. STRATA_CACHE_DIR=$HOME/.cache/strata (`strata explain E1004`)",
            ),
    )
}

/// Where compiled programs are cached: `$STRATA_CACHE_DIR`, else `$XDG_CACHE_HOME/strata`, else
/// `~/.cache/strata`, else the system's temporary directory.
pub fn cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("STRATA_CACHE_DIR") {
        return PathBuf::from(d);
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME") {
        return PathBuf::from(d).join("strata");
    }
    if let Some(h) = std::env::var_os("HOME") {
        return PathBuf::from(h).join(".cache").join("strata");
    }
    std::env::temp_dir().join("strata")
}

/// The flag that keeps GCC on x86-64 from vectorising indexed loads into AVX2 gather
/// instructions (none for other compilers and targets), probed once per compiler.
///
/// GCC 12.2 with `-O3 -march=native` on AMD Zen 3 (whose tuning enables gathers) miscompiled the
/// loop that reads a shuffle's source lane from the exchange buffer (`shuffle[t] =
/// exchange[t / 32 * 32 + arg[t] % 32]`, with `arg[t]` a constant the compiler had propagated): it
/// passed a register holding the index constant `{1, 0, 0, 0}` as the mask of a `vpgatherqd`
/// instead of all ones, so the gather loaded nothing and left the index in the result (lanes 24
/// and 28 of a block printed 1 instead of 0). The C is free of undefined behaviour (the same
/// program is right at `-O0`, at `-O2`, under the sanitizers, with `-mtune=generic`); the bug is in
/// GCC's code generation for gathers, which loop distribution (`memcpy`/`memset` patterns) and
/// OpenMP's `collapse` happened to expose. GCC names the tuning that allows gathers
/// `use_gather_2parts`, `use_gather_4parts` and `use_gather_8parts` (13 and later) or
/// `use_gather` (12 and earlier); the first list the compiler accepts is used.
fn gather_workaround(cc: &str) -> Option<&'static str> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    const CANDIDATES: [&str; 3] = [
        "-mtune-ctrl=^use_gather_2parts,^use_gather_4parts,^use_gather_8parts",
        "-mtune-ctrl=^use_gather_2parts,^use_gather_4parts,^use_gather",
        "-mtune-ctrl=^use_gather",
    ];
    static PROBED: OnceLock<Mutex<HashMap<String, usize>>> = OnceLock::new();
    let probed = PROBED.get_or_init(|| Mutex::new(HashMap::new()));
    let mut probed = probed.lock().unwrap_or_else(|e| e.into_inner());
    let found = *probed.entry(cc.to_string()).or_insert_with(|| {
        let accepts = |flag: &str| {
            Command::new(cc)
                .args(["-fsyntax-only", flag, "-x", "c", "/dev/null"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        };
        CANDIDATES.iter().position(|f| accepts(f)).unwrap_or(CANDIDATES.len())
    });
    CANDIDATES.get(found).copied()
}

/// Compiles `c` (or finds it in the cache) and returns the executable.
pub fn build(c: &str, cache: &Path) -> Result<PathBuf, Box<Diagnostic>> {
    // Extra flags for the C compiler, e.g. sanitizers (the corpus test builds with them).
    let extra: Vec<String> =
        std::env::var("STRATA_CFLAGS").map(|f| f.split_whitespace().map(str::to_string).collect()).unwrap_or_default();
    build_with_flags(c, cache, &extra)
}

/// [`build`] with `extra` flags after the device's (instead of `$STRATA_CFLAGS`): `-O0` builds the
/// program unoptimised (the compiler's last `-O` wins), as the differential tests do.
pub fn build_with_flags(c: &str, cache: &Path, extra: &[String]) -> Result<PathBuf, Box<Diagnostic>> {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    // No contraction of `a * b + c` into a fused multiply-add: floats round after every
    // operation, as on `sim`, so both devices print the same digits.
    let base = ["-O3", "-march=native", "-fwrapv", "-ffp-contract=off", "-std=gnu11", "-w"];
    let mut h = DefaultHasher::new();
    c.hash(&mut h);
    cc.hash(&mut h);
    base.hash(&mut h);
    extra.hash(&mut h);
    // The flags of `gather_workaround` depend on the compiler only; its version marker stands
    // for them, so that a cached program needs no probe of the compiler.
    "no-gather-1".hash(&mut h);
    let key = format!("{:016x}", h.finish());
    let exe = cache.join(format!("prog-{key}"));
    if exe.exists() {
        return Ok(exe);
    }
    std::fs::create_dir_all(cache)
        .map_err(|e| cache_unusable(format!("cannot create the program cache `{}`: {e}", cache.display())))?;
    // Another `strata` may be building the same program in the same cache at the same time: the
    // source and the executable are written under names of this process (and call) only, so no
    // compiler ever reads a half-written file, and the executable is renamed into place whole.
    static BUILDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let unique = format!("{}-{}", std::process::id(), BUILDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
    let src = cache.join(format!("prog-{key}.{unique}.c"));
    std::fs::write(&src, c).map_err(|e| cache_unusable(format!("cannot write `{}`: {e}", src.display())))?;
    let tmp = cache.join(format!("prog-{key}.tmp{unique}"));
    let workaround = gather_workaround(&cc);
    let attempt = |openmp: bool| {
        let mut cmd = Command::new(&cc);
        cmd.args(base).args(workaround).args(extra);
        if openmp {
            cmd.arg("-fopenmp");
        }
        cmd.arg("-o").arg(&tmp).arg(&src).arg("-lm");
        // Like the program, the compiler must not outlive `strata` (see `child`).
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        let compiler = child::spawn(&mut cmd)?;
        let pid = compiler.id();
        let out = compiler.wait_with_output();
        child::finished(pid);
        out
    };
    let out = match attempt(true) {
        Ok(o) if o.status.success() => o,
        // Without OpenMP the program is still correct, only single-threaded.
        Ok(_) => attempt(false).map_err(|e| no_c_compiler(&cc, &e))?,
        Err(e) => return Err(no_c_compiler(&cc, &e)),
    };
    if !out.status.success() {
        let _ = std::fs::remove_file(&tmp);
        // The source stays for the bug report, under the program's own name (renamed whole).
        let kept = cache.join(format!("prog-{key}.c"));
        let src = if std::fs::rename(&src, &kept).is_ok() { kept } else { src };
        let stderr = String::from_utf8_lossy(&out.stderr);
        let first: String = stderr.lines().take(20).collect::<Vec<_>>().join("\n");
        return Err(Box::new(
            Diagnostic::error(
                codes::UNSUPPORTED,
                format!("the C compiler `{cc}` rejected the generated program"),
                Span::DUMMY,
                "this is a bug in Strata's cpu device",
            )
            .with_note(format!(
                "`{cc} {}{} -fopenmp -o … {}`:\n{first}",
                base.join(" "),
                workaround.map_or(String::new(), |w| format!(" {w}")),
                src.display()
            )),
        ));
    }
    let _ = std::fs::remove_file(&src);
    std::fs::rename(&tmp, &exe).map_err(|e| cache_unusable(format!("cannot store the compiled program: {e}")))?;
    Ok(exe)
}

/// How a compiled program is run.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Stop the program (E0910) when it runs longer than this.
    pub time_limit: Option<Duration>,
    /// Where a time-limit error points (the program's `main`).
    pub main_span: Option<Span>,
    /// The program's arguments (argument 0 is the first after the executable's name).
    pub args: Vec<std::ffi::OsString>,
}

/// Runs a compiled program, copying its standard output to `out`. `file` is the source the
/// program's spans point into.
pub fn execute(exe: &Path, file: FileId, out: &mut dyn Write) -> Result<(), Box<Diagnostic>> {
    execute_with(exe, file, out, None, &RunOptions::default())
}

/// Like [`execute`], and returns every kernel launch in order: the kernel's name and its wall
/// time in seconds, measured around the launch only (no compilation, no host code).
pub fn execute_timed(exe: &Path, file: FileId, out: &mut dyn Write) -> Result<Vec<(String, f64)>, Box<Diagnostic>> {
    execute_timed_with(exe, file, out, &RunOptions::default())
}

/// [`execute_timed`] with options (the program's arguments).
pub fn execute_timed_with(
    exe: &Path,
    file: FileId,
    out: &mut dyn Write,
    opts: &RunOptions,
) -> Result<Vec<(String, f64)>, Box<Diagnostic>> {
    let mut times = Vec::new();
    execute_with(exe, file, out, Some(&mut times), opts)?;
    Ok(times)
}

fn execute_with(
    exe: &Path,
    file: FileId,
    out: &mut dyn Write,
    times: Option<&mut Vec<(String, f64)>>,
    opts: &RunOptions,
) -> Result<(), Box<Diagnostic>> {
    execute_status(exe, file, out, times, opts).map(|_| ())
}

/// [`execute_with`], and the program's own exit status: 0, or the status of its `exit(n)`
/// ([`strata_ir::ir::Builtin::Exit`]).
fn execute_status(
    exe: &Path,
    file: FileId,
    out: &mut dyn Write,
    mut times: Option<&mut Vec<(String, f64)>>,
    opts: &RunOptions,
) -> Result<u8, Box<Diagnostic>> {
    let mut cmd = Command::new(exe);
    cmd.args(&opts.args);
    // Run-time errors as `STRATA-ERROR E0903 lo hi message` (byte offsets), parsed below.
    cmd.env("STRATA_ERRORS", "spans");
    if times.is_some() {
        cmd.env("STRATA_TIME", "1");
    }
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = child::spawn(&mut cmd)
        .map_err(|e| cache_unusable(format!("cannot run the compiled program `{}`: {e}", exe.display())))?;
    let pid = child.id();
    // The watchdog kills the program at the time limit; dropping `done` releases it earlier.
    let (done, finished) = std::sync::mpsc::channel::<()>();
    let timed_out = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watchdog = opts.time_limit.map(|limit| {
        let timed_out = timed_out.clone();
        std::thread::spawn(move || {
            if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = finished.recv_timeout(limit) {
                timed_out.store(true, std::sync::atomic::Ordering::SeqCst);
                child::kill_group(pid);
            }
        })
    });
    let mut stderr = child.stderr.take();
    let err_thread = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(e) = stderr.as_mut() {
            let _ = e.read_to_string(&mut s);
        }
        s
    });
    if let Some(mut so) = child.stdout.take() {
        let mut buf = [0u8; 1 << 16];
        loop {
            match so.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let _ = out.write_all(&buf[..n]);
                }
            }
        }
    }
    let status = child.wait();
    child::finished(pid);
    drop(done);
    if let Some(w) = watchdog {
        let _ = w.join();
    }
    let status = status.map_err(|e| error(format!("the compiled program failed: {e}"), ""))?;
    let stderr = err_thread.join().unwrap_or_default();
    for line in stderr.lines().filter(|l| !l.starts_with("STRATA-ERROR ") && !l.starts_with("STRATA-EXIT ")) {
        let timing = line.strip_prefix("STRATA-TIME ").and_then(|r| r.rsplit_once(' '));
        match (timing.and_then(|(k, t)| Some((k, t.parse::<f64>().ok()?))), times.as_deref_mut()) {
            (Some((kernel, secs)), Some(times)) => times.push((kernel.to_string(), secs)),
            _ => eprintln!("{line}"),
        }
    }
    if timed_out.load(std::sync::atomic::Ordering::SeqCst) {
        let limit = opts.time_limit.unwrap_or_default().as_secs_f64();
        let span = opts.main_span.unwrap_or(Span::DUMMY);
        return Err(Box::new(
            Diagnostic::error(
                codes::RUN_TIME_LIMIT,
                format!("the program ran longer than the time limit of {limit} s and was stopped"),
                span,
                "this program did not finish in time on the cpu device",
            )
            .with_note("usually a loop that never ends; `--time-limit SECONDS` sets the limit"),
        ));
    }
    for line in stderr.lines() {
        if let Some(rest) = line.strip_prefix("STRATA-ERROR ") {
            return Err(run_time_error(rest, file));
        }
    }
    // The program's own `exit(n)`: its status, which the process exit status repeats.
    let exited = stderr.lines().rev().find_map(|l| l.strip_prefix("STRATA-EXIT ")?.trim().parse::<u8>().ok());
    if let Some(code) = exited {
        if status.code() == Some(i32::from(code)) {
            return Ok(code);
        }
    }
    if let Some(sig) = std::os::unix::process::ExitStatusExt::signal(&status) {
        let name = child::signal_name(sig);
        if child::is_external(sig) {
            return Err(Box::new(Diagnostic::error(
                codes::RUN_KILLED,
                format!("the program was killed by signal {sig} ({name})"),
                opts.main_span.unwrap_or(Span::DUMMY),
                "stopped from outside while running",
            )));
        }
        return Err(error(
            format!("the compiled program crashed with signal {sig} ({name})"),
            "this is a bug in Strata's cpu device; `--device sim` checks the program",
        ));
    }
    if !status.success() {
        return Err(error(
            format!("the compiled program failed ({status})"),
            "this is a bug in Strata's cpu device; `--device sim` checks the program",
        ));
    }
    Ok(0)
}

/// A `STRATA-ERROR CODE LO HI MESSAGE` line of the compiled program, as a diagnostic.
fn run_time_error(rest: &str, file: FileId) -> Box<Diagnostic> {
    let mut parts = rest.splitn(4, ' ');
    let code = parts.next().unwrap_or("E0801");
    let lo: u32 = parts.next().and_then(|x| x.parse().ok()).unwrap_or(0);
    let hi: u32 = parts.next().and_then(|x| x.parse().ok()).unwrap_or(0);
    let message = parts.next().unwrap_or("run-time error").to_string();
    let code: Code = codes::lookup(code).map_or(codes::UNSUPPORTED, |i| i.code);
    let span = if hi > 0 { Span::new(file, lo, hi) } else { Span::DUMMY };
    Box::new(Diagnostic::error(code, message, span, "on the cpu device"))
}

/// Emits, builds (cached) and runs `program`.
pub fn run(program: &Program, file: FileId, out: &mut dyn Write, opts: &RunOptions) -> Result<(), Box<Diagnostic>> {
    run_status(program, file, out, opts).map(|_| ())
}

/// [`run`], and the program's own exit status (0 unless it called `exit(n)`,
/// [`strata_ir::ir::Builtin::Exit`]).
pub fn run_status(
    program: &Program,
    file: FileId,
    out: &mut dyn Write,
    opts: &RunOptions,
) -> Result<u8, Box<Diagnostic>> {
    let c = emit_c(program)?;
    let exe = build(&c, &cache_dir())?;
    let main_span = program.functions.iter().find(|f| f.name == "main").map(|f| f.span);
    let opts = RunOptions { main_span: opts.main_span.or(main_span), ..opts.clone() };
    execute_status(&exe, file, out, None, &opts)
}
