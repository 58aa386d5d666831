//! Bad input on the command line: every case runs the `strata` binary and asserts its exit
//! status and the code or message it prints, and that it never panics, never hangs (each run is
//! bounded by [`HANG`]) and never leaves a process behind (each test has its own program cache,
//! and no process running from it may survive `strata`).
//!
//! The cases cover the issue-12 list (huge and zero sizes on every device, deep nesting, long
//! lines, invalid UTF-8, unknown `-D`, signals to `strata`, a program that runs forever) and
//! whatever else a newcomer types by mistake.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// No single `strata` run in this file may take longer (debug build, 2 cores, C compiler).
const HANG: Duration = Duration::from_secs(120);

struct Outcome {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// A scratch directory for one test: its sources and its own program cache.
struct Scratch {
    dir: PathBuf,
}

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("bad_input_{name}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch dir");
        Scratch { dir }
    }

    fn file(&self, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let p = self.dir.join(name);
        std::fs::write(&p, contents).expect("write source");
        p
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_strata"));
        cmd.args(args)
            .current_dir(&self.dir)
            .env("STRATA_CACHE_DIR", self.dir.join("cache"))
            .env_remove("RUST_BACKTRACE")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }

    fn spawn(&self, args: &[&str]) -> Child {
        self.command(args).spawn().expect("start strata")
    }

    /// Runs `strata ARGS` to the end and checks the invariants of every run.
    fn run(&self, args: &[&str]) -> Outcome {
        let child = self.spawn(args);
        let out = finish(child, args);
        self.assert_nothing_left(args);
        out
    }

    /// Processes still running a program compiled into this test's cache.
    fn survivors(&self) -> Vec<String> {
        let cache = self.dir.join("cache").display().to_string();
        let mut found = Vec::new();
        for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else { continue };
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
            // A zombie (`Z`) has ended; its parent just has not collected it.
            let state = stat.rsplit_once(") ").and_then(|(_, r)| r.chars().next());
            if cmdline.starts_with(&cache) && state != Some('Z') {
                found.push(format!("{} {cmdline}", entry.file_name().to_string_lossy()));
            }
        }
        found
    }

    fn assert_nothing_left(&self, args: &[&str]) {
        // Killing a process group is asynchronous: give the kernel a moment.
        let start = Instant::now();
        while !self.survivors().is_empty() && start.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(
            self.survivors().is_empty(),
            "`strata {}` left processes running: {:?}",
            args.join(" "),
            self.survivors()
        );
    }
}

/// Waits for `child` (killing it after [`HANG`]) and checks it did not panic.
fn finish(mut child: Child, args: &[&str]) -> Outcome {
    let start = Instant::now();
    let mut stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let out_thread = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stdout, &mut s);
        s
    });
    let err_thread = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stderr, &mut s);
        s
    });
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if start.elapsed() > HANG {
            let _ = child.kill();
            panic!("`strata {}` hangs (killed after {HANG:?})", args.join(" "));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = Outcome {
        code: status.code(),
        stdout: String::from_utf8_lossy(&out_thread.join().unwrap()).into_owned(),
        stderr: String::from_utf8_lossy(&err_thread.join().unwrap()).into_owned(),
    };
    assert!(
        !out.stderr.contains("panicked") && !out.stderr.contains("RUST_BACKTRACE") && out.code != Some(101),
        "`strata {}` panicked:\n{}",
        args.join(" "),
        out.stderr
    );
    out
}

/// Asserts the exit status and that stderr contains every one of `needles`.
fn expect(out: &Outcome, code: i32, needles: &[&str], what: &str) {
    assert_eq!(out.code, Some(code), "{what}: exit status\nstdout:\n{}\nstderr:\n{}", out.stdout, out.stderr);
    for n in needles {
        assert!(out.stderr.contains(n), "{what}: stderr lacks `{n}`:\n{}", out.stderr);
    }
}

const FOREVER: &str = "fn main() -[t: cpu.thread]-> () {
    let mut i = 0;
    while i < 10 { i = i * 1; }
    println(i);
}
";

#[test]
fn time_limit_stops_a_program_that_never_ends() {
    let s = Scratch::new("time_limit");
    let f = s.file("forever.strata", FOREVER);
    let f = f.to_str().unwrap();
    for device in ["cpu", "sim"] {
        let out = s.run(&["run", "--device", device, "--time-limit", "0.5", f]);
        expect(&out, 1, &["error[E0910]", "time limit of 0.5 s", "forever.strata:"], device);
    }
    for bad in ["0", "-1", "abc", "nan", "inf"] {
        let arg = format!("--time-limit={bad}");
        let out = s.run(&["run", &arg, f]);
        expect(&out, 2, &["--time-limit"], bad);
    }
}

#[test]
fn a_finished_program_is_not_affected_by_the_time_limit() {
    let s = Scratch::new("time_limit_ok");
    let f = s.file("ok.strata", "fn main() -[t: cpu.thread]-> () {\n    println(42);\n}\n");
    for device in ["cpu", "sim"] {
        let out = s.run(&["run", "--device", device, "--time-limit", "60", f.to_str().unwrap()]);
        expect(&out, 0, &[], device);
        assert_eq!(out.stdout, "42\n");
    }
}

/// Starts `strata run` of a program that never ends and waits until its compiled child runs.
fn start_forever(s: &Scratch) -> Child {
    let f = s.file("forever.strata", FOREVER);
    let child = s.spawn(&["run", f.to_str().unwrap()]);
    let start = Instant::now();
    while s.survivors().is_empty() {
        assert!(start.elapsed() < HANG, "the compiled program never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    child
}

fn send(pid: u32, signal: &str) {
    let ok = Command::new("kill").args(["-s", signal, &pid.to_string()]).status().is_ok_and(|s| s.success());
    assert!(ok, "kill -s {signal} {pid}");
}

#[test]
fn signals_to_strata_stop_the_program_it_runs() {
    for (signal, status) in [("TERM", 143), ("INT", 130), ("HUP", 129)] {
        let s = Scratch::new(&format!("signal_{signal}"));
        let child = start_forever(&s);
        send(child.id(), signal);
        let out = finish(child, &["run", "forever.strata"]);
        assert_eq!(out.code, Some(status), "SIG{signal}: exit status");
        s.assert_nothing_left(&["run (SIG", signal, ")"]);
    }
}

#[test]
fn strata_killed_outright_takes_the_program_with_it() {
    let s = Scratch::new("signal_kill");
    let child = start_forever(&s);
    send(child.id(), "KILL");
    let out = finish(child, &["run", "forever.strata"]);
    assert_eq!(out.code, None, "killed by SIGKILL");
    s.assert_nothing_left(&["run (SIGKILL)"]);
}

#[test]
fn a_program_killed_from_outside_is_not_called_a_strata_bug() {
    let s = Scratch::new("child_killed");
    let child = start_forever(&s);
    for p in s.survivors() {
        send(p.split(' ').next().unwrap().parse().unwrap(), "KILL");
    }
    let out = finish(child, &["run", "forever.strata"]);
    expect(&out, 1, &["error[E0911]", "killed by signal 9 (SIGKILL)"], "child killed");
    assert!(!out.stderr.contains("bug in Strata"), "{}", out.stderr);
}

#[test]
fn files_that_cannot_be_read() {
    let s = Scratch::new("unreadable");
    let missing = s.dir.join("missing.strata");
    for cmd in ["check", "run", "emit", "fmt"] {
        let out = s.run(&[cmd, missing.to_str().unwrap()]);
        expect(&out, 2, &["missing.strata"], cmd);
    }
    let out = s.run(&["check", s.dir.to_str().unwrap()]);
    expect(&out, 2, &["cannot read"], "a directory");
}

#[test]
fn invalid_utf8_is_a_located_error() {
    let s = Scratch::new("utf8");
    let f = s.file("latin1.strata", b"fn main() -[t: cpu.thread]-> () {\n    println(1); // caf\xe9\n}\n");
    for cmd in ["check", "run"] {
        let out = s.run(&[cmd, f.to_str().unwrap()]);
        expect(&out, 1, &["error[E0005]", "latin1.strata:2:"], cmd);
    }
    // `fmt` reads files as the other commands do: E0005 with its span, exit 1, not an I/O error.
    for args in [vec!["fmt"], vec!["fmt", "--check"], vec!["fmt", "--write"]] {
        let mut args = args.clone();
        args.push(f.to_str().unwrap());
        let out = s.run(&args);
        expect(&out, 1, &["error[E0005]", "latin1.strata:2:"], &args.join(" "));
    }
    let g = s.file("binary.strata", [0u8, 159, 146, 150, 255, 0, 1, 2]);
    let out = s.run(&["check", g.to_str().unwrap()]);
    expect(&out, 1, &["error[E0005]"], "binary");
}

#[test]
fn empty_and_whitespace_files() {
    let s = Scratch::new("empty");
    for (name, text) in [("empty.strata", ""), ("blank.strata", " \n\n\t\n"), ("comment.strata", "// nothing\n")] {
        let f = s.file(name, text);
        let out = s.run(&["check", f.to_str().unwrap()]);
        expect(&out, 0, &[], name);
        let out = s.run(&["run", f.to_str().unwrap()]);
        expect(&out, 1, &["main"], name);
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let s = Scratch::new("nesting");
    let depth = 100_000;
    let mut src = String::from("fn main() -[t: cpu.thread]-> () {\n    let x = ");
    src.push_str(&"(".repeat(depth));
    src.push('1');
    src.push_str(&")".repeat(depth));
    src.push_str(";\n}\n");
    let f = s.file("deep.strata", &src);
    let out = s.run(&["check", f.to_str().unwrap()]);
    expect(&out, 1, &["error[E0012]"], "deep parentheses");
    let mut blocks = String::from("fn main() -[t: cpu.thread]-> () ");
    blocks.push_str(&"{ ".repeat(depth));
    blocks.push_str(&"} ".repeat(depth));
    let f = s.file("blocks.strata", &blocks);
    let out = s.run(&["run", f.to_str().unwrap()]);
    expect(&out, 1, &["error[E0012]"], "deep blocks");
}

#[test]
fn usage_errors_exit_with_2() {
    let s = Scratch::new("usage");
    let f = s.file("ok.strata", "fn main() -[t: cpu.thread]-> () {\n    println(1);\n}\n");
    let f = f.to_str().unwrap();
    for args in [
        vec!["frobnicate"],
        vec!["run"],
        vec!["run", "--device", "gpu", f],
        vec!["run", "-D", "N", f],
        vec!["run", "-D", "N=abc", f],
        vec!["run", "-D", "N=-1", f],
        vec!["run", "-D", "N=99999999999999999999999", f],
        vec!["emit", "--target", "wasm", f],
        vec!["explain"],
    ] {
        let out = s.run(&args);
        expect(&out, 2, &["error"], &args.join(" "));
    }
    let out = s.run(&["explain", "E9999"]);
    expect(&out, 2, &["E9999", "not a Strata diagnostic code"], "explain E9999");
}

#[test]
fn outputs_never_overwrite_the_input_or_each_other() {
    let s = Scratch::new("clobber");
    let src = "fn k(v: &uniq gpu.global [i32; 64]) -[grid: gpu.grid<X<2>, X<32>>]-> () {
    sched(X) block in grid.blocks {
        sched(X) thread in block.threads {
            v.group::<32>[[block]][[thread]] = 1;
        }
    }
}
";
    let f = s.file("x.strata", src);
    let abs = f.to_str().unwrap();
    for args in [
        vec!["emit", "--target", "c", "-o", "x.strata", "x.strata"],
        vec!["emit", "--target", "cuda", "-o", "./x.strata", abs],
        vec!["emit", "--target", "ir", "-o", abs, "x.strata"],
        vec!["emit", "--target", "c", "--lib", "-o", "out.c", "--header", "x.strata", "x.strata"],
        vec!["build", "--target", "cuda", "-o", "x.strata", "x.strata"],
        vec!["build", "--target", "cuda", "-o", "../bad_input_clobber/x.strata", "x.strata"],
    ] {
        let out = s.run(&args);
        expect(&out, 2, &["input file"], &args.join(" "));
        assert_eq!(std::fs::read_to_string(&f).unwrap(), src, "`{}` changed the source", args.join(" "));
        assert!(!s.dir.join("out.c").exists(), "`{}` wrote an output", args.join(" "));
    }
    for args in [
        vec!["emit", "--target", "c", "--lib", "-o", "same.c", "--header", "same.c", "x.strata"],
        vec!["emit", "--target", "cuda", "--lib", "-o", "same.c", "--header", "./same.c", "x.strata"],
    ] {
        let out = s.run(&args);
        expect(&out, 2, &["name the same file"], &args.join(" "));
        assert!(!s.dir.join("same.c").exists(), "`{}` wrote an output", args.join(" "));
    }
    // Distinct files are still written.
    let out = s.run(&["emit", "--target", "c", "--lib", "-o", "lib.c", "--header", "lib.h", "x.strata"]);
    expect(&out, 0, &[], "distinct outputs");
    assert!(s.dir.join("lib.c").exists() && s.dir.join("lib.h").exists());
}

/// A program that is fine at its own size, run at sizes that cannot fit or do not exist.
const SIZED: &str = "const N: nat = 1024;

fn add_one(v: &uniq gpu.global [i32; N]) -[grid: gpu.grid<X<N / 256>, X<256>>]-> () {
    sched(X) thread in grid.to_threads {
        v[[thread]] = v[[thread]] + 1;
    }
}

fn main() -[t: cpu.thread]-> () {
    let mut h = CpuHeap::new([0; N]);
    let mut d = GpuGlobal::alloc_copy(&shrd h);
    add_one::<<<X<N / 256>, X<256>>>>(&uniq d);
    copy_mem_to_host(&shrd d, &uniq h);
    println(h[N - 1]);
}
";

/// Host memory only: a size the checker accepts that no machine has.
const HOST_ONLY: &str = "const N: nat = 1024;

fn main() -[t: cpu.thread]-> () {
    let mut h = CpuHeap::new([0; N]);
    h[N - 1] = 7;
    println(h[N - 1]);
}
";

#[test]
fn huge_sizes_on_every_device() {
    let s = Scratch::new("huge");
    let sized = s.file("sized.strata", SIZED);
    let host = s.file("host.strata", HOST_ONLY);
    let (sized, host) = (sized.to_str().unwrap(), host.to_str().unwrap());
    // The grid would have more blocks than a GPU allows: refused before anything runs.
    for cmd in [
        vec!["check"],
        vec!["run", "--device", "sim"],
        vec!["run", "--device", "cpu"],
        vec!["emit", "--target", "cuda"],
    ] {
        let mut args = cmd.clone();
        args.extend(["-D", "N=1099511627776", sized]);
        let out = s.run(&args);
        expect(&out, 1, &["error[E0704]", "sized.strata:3:"], &args.join(" "));
    }
    // 4 TiB of host memory: out of memory at the allocation, on both devices.
    for device in ["sim", "cpu"] {
        let out = s.run(&["run", "--device", device, "-D", "N=1099511627776", host]);
        expect(&out, 1, &["error[E0903]", "out of memory"], device);
    }
    // The largest size that is still a natural number.
    let out = s.run(&["check", "-D", "N=18446744073709551615", sized]);
    assert_eq!(out.code, Some(1), "N = 2^64 - 1: {}", out.stderr);
}

#[test]
fn zero_sizes() {
    let s = Scratch::new("zero");
    let sized = s.file("sized.strata", SIZED);
    // N = 0 makes a grid of zero blocks: a launch configuration no GPU accepts.
    let out = s.run(&["check", "-D", "N=0", sized.to_str().unwrap()]);
    expect(&out, 1, &["error[E0705]"], "N=0");
    let host = s.file("host.strata", HOST_ONLY);
    // An empty host array is fine, but `N - 1` is not a natural number at N = 0.
    let out = s.run(&["check", "-D", "N=0", host.to_str().unwrap()]);
    assert_eq!(out.code, Some(1), "N=0 host: {}", out.stderr);
}

/// What a terminal must never receive from a diagnostic: a control character other than a line
/// break (an escape sequence would recolour or clear the screen).
fn raw_controls(text: &str) -> Vec<char> {
    text.chars().filter(|&c| c.is_control() && c != '\n').collect()
}

#[test]
fn binary_input_is_shown_escaped_never_raw() {
    let s = Scratch::new("binary");
    // Valid UTF-8 with control characters: E0001 at each, shown as control pictures.
    let f =
        s.file("esc.strata", "fn main() -[t: cpu.thread]-> () {\n    \u{1b}[2J\u{1b}]0;owned\u{7}\0 println(1);\n}\n");
    for args in [vec!["check"], vec!["check", "--format", "short"], vec!["run"], vec!["fmt"]] {
        let mut args = args.clone();
        args.push(f.to_str().unwrap());
        let out = s.run(&args);
        expect(&out, 1, &["error[E0001]", "esc.strata:2:"], &args.join(" "));
        assert!(raw_controls(&out.stderr).is_empty(), "{args:?}: {:?}", out.stderr);
        if args.len() == 2 {
            assert!(out.stderr.contains("␛[2J␛]0;owned␇␀ println(1);"), "{args:?}: {}", out.stderr);
        }
    }
    // Not UTF-8: E0005, and the snippet around the bad byte shows the NULs and escapes as pictures.
    let g = s.file("binary.strata", [0u8, 27, b'[', b'H', 159, 146, 150, 255, 0, 1, 2, b'\n']);
    for cmd in ["check", "run", "fmt"] {
        let out = s.run(&[cmd, g.to_str().unwrap()]);
        expect(&out, 1, &["error[E0005]", "binary.strata:1:5"], cmd);
        assert!(raw_controls(&out.stderr).is_empty(), "{cmd}: {:?}", out.stderr);
        assert!(out.stderr.contains("␀␛[H"), "{cmd}: {}", out.stderr);
    }
}

/// `$CC` naming no compiler: the machine lacks something, the program is fine.
#[test]
fn a_missing_c_compiler_is_e1001_with_exit_2_and_what_to_install() {
    let s = Scratch::new("no_cc");
    let f = s.file("ok.strata", "fn main() -[t: cpu.thread]-> () {\n    println(1);\n}\n");
    let f = f.to_str().unwrap();
    let exe = s.dir.join("prog");
    let exe = exe.to_str().unwrap();
    for args in [vec!["run", f], vec!["bench", "--runs", "1", f], vec!["build", "--target", "cpu", "-o", exe, f]] {
        let mut cmd = s.command(&args);
        cmd.env("CC", "/nonexistent/strata-test-cc");
        let out = finish(cmd.spawn().unwrap(), &args);
        expect(
            &out,
            2,
            &["error[E1001]", "no C compiler", "/nonexistent/strata-test-cc", "install gcc or clang"],
            &args.join(" "),
        );
        assert!(!out.stderr.contains("E0801") && !out.stderr.contains("bug in Strata"), "{}", out.stderr);
    }
    assert!(!Path::new(exe).exists());
    // The simulator needs no compiler.
    let mut cmd = s.command(&["run", "--device", "sim", f]);
    cmd.env("CC", "/nonexistent/strata-test-cc");
    let out = finish(cmd.spawn().unwrap(), &["run"]);
    expect(&out, 0, &[], "sim without cc");
    let out = s.run(&["explain", "E1001"]);
    expect(&out, 0, &[], "explain E1001");
    assert!(out.stdout.starts_with("# E1001: no C compiler found") && out.stdout.contains("apt-get install gcc"));
}

/// An executable of `strata build --target cuda` on a machine without a GPU driver (as CI and
/// this build machine are): E1003 with exit status 2, not E0801. Needs nvcc; skipped without it,
/// and where `nvidia-smi` lists a GPU (then the program just runs).
#[test]
fn a_cuda_executable_without_a_gpu_driver_is_e1003_with_exit_2() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let has_nvcc = std::env::var_os("NVCC").is_some() || root.join(".venv/bin/nvcc").exists();
    let gpu = Command::new("nvidia-smi").arg("-L").output().is_ok_and(|o| o.status.success() && !o.stdout.is_empty());
    if !has_nvcc || gpu {
        eprintln!("skipped: needs nvcc and a machine without a GPU driver");
        return;
    }
    let s = Scratch::new("no_gpu");
    let f = root.join("examples/array_sum.strata");
    let exe = s.dir.join("array_sum");
    let mut cmd = s.command(&["build", "--target", "cuda", "-o", exe.to_str().unwrap(), f.to_str().unwrap()]);
    cmd.current_dir(&root);
    let out = finish(cmd.spawn().unwrap(), &["build"]);
    expect(&out, 0, &[], "build");
    let run = Command::new(&exe).output().unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("array_sum.strata:") && stderr.contains("error[E1003]: no usable GPU"), "{stderr}");
    assert!(stderr.contains("install the NVIDIA driver"), "{stderr}");
}

/// A program cache that cannot be created (here it would be below a regular file) is E1004 with
/// exit status 2 and what to set, not a Strata bug; `sim` needs no cache.
#[test]
fn an_unusable_program_cache_is_e1004_with_exit_2() {
    let s = Scratch::new("bad_cache");
    let f = s.file("ok.strata", "fn main() -[t: cpu.thread]-> () {\n    println(1);\n}\n");
    let blocker = s.file("not-a-dir", "");
    for args in [vec!["run", f.to_str().unwrap()], vec!["run", "--device", "sim", f.to_str().unwrap()]] {
        let mut cmd = s.command(&args);
        cmd.env("STRATA_CACHE_DIR", blocker.join("cache"));
        let out = finish(cmd.spawn().unwrap(), &args);
        if args.len() == 2 {
            expect(&out, 2, &["error[E1004]", "cannot create the program cache", "STRATA_CACHE_DIR"], "cpu");
            assert!(!out.stderr.contains("E0801"), "{}", out.stderr);
        } else {
            expect(&out, 0, &[], "sim");
        }
    }
}
