//! The `strata` command: check, format and explain Strata programs.
//!
//! Exit status: 0 when every file is accepted, 1 when a program has errors, 2 for usage or I/O
//! errors. A panic is always a bug.

// Standard output goes through these instead of `print!`/`println!`, which panic when the
// reader has gone (`strata emit … | head`); a closed pipe just ends the output.
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout(), $($t)*);
    }};
}
macro_rules! outln {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($t)*);
    }};
}

mod bench_cmd;
mod cuda_check;
mod fmt_cmd;

use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;
use strata_check::TargetProfile;
use strata_diag::{codes, Diagnostic, SourceMap};

#[derive(Parser)]
#[command(name = "strata", version, about = "The Strata safe GPU programming language")]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Show at most this many errors (`0`: all of them); the rest are counted.
    #[arg(long, global = true, value_name = "N", default_value_t = strata_diag::DEFAULT_ERROR_LIMIT)]
    error_limit: usize,
}

/// `--error-limit`, for [`report`].
static ERROR_LIMIT: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(strata_diag::DEFAULT_ERROR_LIMIT);

#[derive(Subcommand)]
enum Command {
    /// Check programs and report every error found.
    Check {
        /// How to print diagnostics (`json`: CUDA-C findings as one JSON document, docs/cuda-c.md).
        #[arg(long, value_enum, default_value_t = CheckFormat::Human)]
        format: CheckFormat,
        /// Print the checking phases this build implements, one per line, and exit (alone: no
        /// files or other options).
        #[arg(long, exclusive = true)]
        phases: bool,
        /// Override a `const` item: `-D N=4096`.
        #[arg(short = 'D', value_name = "NAME=VALUE", value_parser = parse_define)]
        define: Vec<(String, u64)>,
        /// The GPU architecture whose limits the program must respect (threads per block, grid
        /// sizes, shared memory): `sm_70`, `sm_75`, `sm_80`, `sm_86`, `sm_87`, `sm_89`, `sm_90`,
        /// `sm_100`, `sm_120`.
        #[arg(long, value_name = "ARCH", default_value = strata_check::target::DEFAULT_ARCH, value_parser = parse_arch)]
        arch: &'static TargetProfile,
        #[command(flatten)]
        cuda: CudaCheckArgs,
        /// The `.strata` files to check, or CUDA-C `.cu` files to run on `sim` under several
        /// schedules (docs/cuda-c.md).
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Format programs in the canonical style (to stdout unless `--check` or `--write`).
    Fmt {
        /// Change nothing; list the files that are not formatted and exit with 1 if there are any.
        #[arg(long, conflicts_with = "write")]
        check: bool,
        /// Rewrite the files that are not formatted in place.
        #[arg(long)]
        write: bool,
        /// The `.strata` files to format.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Run a program's `main`.
    Run {
        /// The device to run on: `cpu` (native code, the default) or `sim` (the checked reference
        /// semantics; the default for CUDA-C `.cu` files, which run on `cpu` too).
        #[arg(long, value_enum)]
        device: Option<Device>,
        /// Override a `const` item: `-D N=4096`.
        #[arg(short = 'D', value_name = "NAME=VALUE", value_parser = parse_define)]
        define: Vec<(String, u64)>,
        /// CUDA-C (`.cu`): a directory where `#include "name.h"` looks for the program's own
        /// headers after the including file's directory, as nvcc's `-I`.
        #[arg(short = 'I', value_name = "DIR")]
        include: Vec<PathBuf>,
        /// Thread steps after which `sim` stops a runaway program [default: 200000000]
        /// (`--device sim` only).
        #[arg(long)]
        max_steps: Option<u64>,
        /// Order in which `sim` runs blocks and threads [default: deterministic] (`--device sim`
        /// only).
        #[arg(long, value_enum)]
        schedule: Option<Schedule>,
        /// Seed for `--schedule random` [default: 0].
        #[arg(long)]
        seed: Option<u64>,
        /// `sim` without race detection (bounds, barriers and memory spaces are still checked;
        /// `--device sim` only).
        #[arg(long)]
        no_race_check: bool,
        /// Stop the program after this many seconds of wall-clock time (E0910); no limit by default.
        #[arg(long, value_name = "SECONDS", value_parser = parse_time_limit)]
        time_limit: Option<std::time::Duration>,
        /// The GPU architecture whose limits the program must respect (threads per block, grid
        /// sizes, shared memory): `sm_70`, `sm_75`, `sm_80`, `sm_86`, `sm_87`, `sm_89`, `sm_90`,
        /// `sm_100`, `sm_120`.
        #[arg(long, value_name = "ARCH", default_value = strata_check::target::DEFAULT_ARCH, value_parser = parse_arch)]
        arch: &'static TargetProfile,
        /// How to print diagnostics.
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
        /// The `.strata` file to run.
        file: PathBuf,
        /// The program's arguments, after `--`: `strata run prog.strata -- a.npy 2.5` (argument 0
        /// is `a.npy`; `arg_u64`, `arg_f64`, `load_npy`, `save_npy` read them).
        #[arg(last = true, value_name = "ARGS")]
        args: Vec<std::ffi::OsString>,
    },
    /// Print what a program compiles to.
    Emit {
        /// What to emit: `c` (the cpu device's C), `cuda` (CUDA C++ for NVIDIA GPUs, which
        /// `strata build` compiles with nvcc) or `ir` (the IR, for compiler developers).
        #[arg(long, value_enum, default_value_t = Target::C)]
        target: Target,
        /// Override a `const` item: `-D N=4096`.
        #[arg(short = 'D', value_name = "NAME=VALUE", value_parser = parse_define)]
        define: Vec<(String, u64)>,
        /// Write to this file instead of standard output.
        #[arg(short = 'o', long)]
        output: Option<PathBuf>,
        /// The GPU architecture whose limits the program must respect (threads per block, grid
        /// sizes, shared memory): `sm_70`, `sm_75`, `sm_80`, `sm_86`, `sm_87`, `sm_89`, `sm_90`,
        /// `sm_100`, `sm_120`.
        #[arg(long, value_name = "ARCH", default_value = strata_check::target::DEFAULT_ARCH, value_parser = parse_arch)]
        arch: &'static TargetProfile,
        /// Emit the kernels as a library (a launch function per kernel) even though the file has
        /// `main` (left out, with all host code). A file without `main` is always a library.
        #[arg(long)]
        lib: bool,
        /// For a kernel library: also write the header declaring its launch functions to this file.
        #[arg(long, value_name = "FILE")]
        header: Option<PathBuf>,
        /// The `.strata` file.
        file: PathBuf,
    },
    /// Compile a program to an executable for a real GPU: emits CUDA C++ and runs `nvcc` on it
    /// (`$NVCC`, else `nvcc` on the PATH, else `.venv/bin/nvcc` from `scripts/setup-nvcc.sh`).
    Build {
        /// What to build for: `cuda` (NVIDIA GPUs).
        #[arg(long, value_enum, default_value_t = BuildTarget::Cuda)]
        target: BuildTarget,
        /// The GPU architecture to compile for, as nvcc's `-arch`, whose limits the program must
        /// also respect: `sm_70`, `sm_75`, `sm_80`, `sm_86`, `sm_87`, `sm_89`, `sm_90`, `sm_100`,
        /// `sm_120`.
        #[arg(long, value_name = "ARCH", default_value = strata_check::target::DEFAULT_ARCH, value_parser = parse_arch)]
        arch: &'static TargetProfile,
        /// Override a `const` item: `-D N=4096`.
        #[arg(short = 'D', value_name = "NAME=VALUE", value_parser = parse_define)]
        define: Vec<(String, u64)>,
        /// The executable to write.
        #[arg(short = 'o', long)]
        output: PathBuf,
        /// The `.strata` file.
        file: PathBuf,
    },
    /// Time the kernels of programs: runs each `main` repeatedly and reports every kernel's
    /// median, minimum and maximum time per launch (compilation and host code are not timed).
    Bench {
        /// The device to run on.
        #[arg(long, value_enum, default_value_t = Device::Cpu)]
        device: Device,
        /// Override a `const` item: `-D N=4096`.
        #[arg(short = 'D', value_name = "NAME=VALUE", value_parser = parse_define)]
        define: Vec<(String, u64)>,
        /// Untimed runs before the timed ones.
        #[arg(long, default_value_t = 1)]
        warmup: usize,
        /// Timed runs of each program.
        #[arg(long, default_value_t = 5)]
        runs: usize,
        /// Also write the results, with every sample, as JSON to this file.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Also draw the medians (with min-max ranges) as an SVG bar chart to this file.
        #[arg(long)]
        svg: Option<PathBuf>,
        /// `sim` without race detection.
        #[arg(long)]
        no_race_check: bool,
        /// The `.strata` files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// The programs' arguments, after `--` (as for `strata run`).
        #[arg(last = true, value_name = "ARGS")]
        args: Vec<std::ffi::OsString>,
    },
    /// Print the long explanation of a diagnostic code, e.g. `strata explain E0501`.
    Explain {
        /// The code, e.g. `E0501`.
        code: String,
    },
}

/// The options of `strata check FILE.cu` (docs/cuda-c.md).
#[derive(clap::Args)]
struct CudaCheckArgs {
    /// CUDA-C: random schedules to run besides the default order (seeds 1 to N).
    #[arg(long, value_name = "N", default_value_t = 4)]
    schedules: u64,
    /// CUDA-C: run only the random schedule with this seed.
    #[arg(long, conflicts_with = "schedules")]
    seed: Option<u64>,
    /// CUDA-C: thread steps after which `sim` stops a runaway program [default: 200000000].
    #[arg(long)]
    max_steps: Option<u64>,
    /// CUDA-C kernel-only mode: the kernel to launch (needed when the file has several).
    #[arg(long, value_name = "NAME")]
    kernel: Option<String>,
    /// CUDA-C kernel-only mode: `gridDim`, `N` or `X,Y[,Z]`.
    #[arg(long, value_name = "DIMS", value_parser = strata_cudac::harness::parse_dims)]
    grid: Option<[u64; 3]>,
    /// CUDA-C kernel-only mode: `blockDim`, `N` or `X,Y[,Z]`.
    #[arg(long, value_name = "DIMS", value_parser = strata_cudac::harness::parse_dims)]
    block: Option<[u64; 3]>,
    /// CUDA-C kernel-only mode: elements of every pointer parameter's buffer (`4096`, `64K`,
    /// `1M`) [default: the number of threads].
    #[arg(long, value_name = "N", value_parser = parse_count)]
    buffer_len: Option<u64>,
    /// CUDA-C kernel-only mode: bytes of dynamic shared memory (`extern __shared__`).
    #[arg(long, value_name = "BYTES", value_parser = parse_count, default_value = "0")]
    shared_bytes: u64,
    /// CUDA-C kernel-only mode: the value of a scalar kernel parameter, `--arg n=100`.
    #[arg(long = "arg", value_name = "NAME=VALUE", value_parser = parse_kernel_arg)]
    args: Vec<(String, String)>,
}

impl CudaCheckArgs {
    /// Whether any option other than the defaults was given.
    fn given(&self) -> bool {
        self.schedules != 4
            || self.seed.is_some()
            || self.max_steps.is_some()
            || self.kernel.is_some()
            || self.grid.is_some()
            || self.block.is_some()
            || self.buffer_len.is_some()
            || self.shared_bytes != 0
            || !self.args.is_empty()
    }
}

/// How `strata check` prints.
#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
enum CheckFormat {
    /// Source snippets with labels, like rustc.
    Human,
    /// One line per diagnostic: `path:line:col: error[E0010]: message`.
    Short,
    /// One JSON document of findings (CUDA-C files only).
    Json,
}

/// `--buffer-len 1M`: a count, optionally with K (2^10), M (2^20) or G (2^30).
fn parse_count(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (digits, mul) = match t.char_indices().last() {
        Some((i, 'K' | 'k')) => (&t[..i], 1u64 << 10),
        Some((i, 'M' | 'm')) => (&t[..i], 1 << 20),
        Some((i, 'G' | 'g')) => (&t[..i], 1 << 30),
        _ => (t, 1),
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|v| v.checked_mul(mul))
        .ok_or_else(|| format!("`{s}` is not a count (write e.g. `4096`, `64K` or `1M`)"))
}

/// `--arg NAME=VALUE`
fn parse_kernel_arg(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((n, v)) if !n.trim().is_empty() && !v.trim().is_empty() => {
            Ok((n.trim().to_string(), v.trim().to_string()))
        }
        _ => Err(format!("expected NAME=VALUE, found `{s}`")),
    }
}

#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
enum Device {
    /// The simulator: reference semantics with race, divergence and memory checks.
    Sim,
    /// Native code on all CPU cores: C compiled with the system compiler.
    Cpu,
}

#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
enum Target {
    /// C for the cpu device.
    C,
    /// CUDA C++ for NVIDIA GPUs (compile with nvcc).
    Cuda,
    /// The IR, printed for debugging.
    Ir,
}

#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
enum BuildTarget {
    /// An executable for NVIDIA GPUs, compiled by nvcc.
    Cuda,
}

#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
enum Schedule {
    Deterministic,
    Random,
}

#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
enum Format {
    /// Source snippets with labels, like rustc.
    Human,
    /// One line per diagnostic: `path:line:col: error[E0010]: message`.
    Short,
}

/// Exit status for "the program has errors".
const EXIT_PROGRAM_ERRORS: u8 = 1;
/// Exit status for usage and I/O errors.
const EXIT_USAGE: u8 = 2;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { ExitCode::from(EXIT_USAGE) } else { ExitCode::SUCCESS };
        }
    };
    stop_children_on_signals();
    // Deeply nested (but legal) programs need more stack than the main thread may have: `sim`'s
    // 10 000 calls in progress (`MAX_CALL_DEPTH`) took about 27 KiB each in a debug build. The
    // size is reserved, not committed: only what a program uses is touched.
    let worker = std::thread::Builder::new().stack_size(512 << 20).spawn(move || run(cli));
    match worker.map(|h| h.join()) {
        Ok(Ok(code)) => ExitCode::from(code),
        _ => ExitCode::from(101),
    }
}

/// When `strata` is interrupted or terminated, the program it runs on the cpu device must stop
/// too (it runs in its own process group, so the terminal's Ctrl-C does not reach it): kill it,
/// then exit with the conventional status 128 + signal.
fn stop_children_on_signals() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else { return };
    std::thread::spawn(move || {
        if let Some(sig) = signals.forever().next() {
            strata_cpu::kill_all();
            std::process::exit(128 + sig);
        }
    });
}

fn run(cli: Cli) -> u8 {
    ERROR_LIMIT.store(cli.error_limit, std::sync::atomic::Ordering::Relaxed);
    if let Command::Check { define, .. }
    | Command::Run { define, .. }
    | Command::Emit { define, .. }
    | Command::Build { define, .. }
    | Command::Bench { define, .. } = &cli.command
    {
        if !defines_unique(define) {
            return EXIT_USAGE;
        }
    }
    match cli.command {
        Command::Check { format, phases, define, arch, cuda, files } => {
            if phases {
                outln!("syntax");
                outln!("check");
                outln!("run");
                return 0;
            }
            let is_cu = |f: &PathBuf| f.extension().is_some_and(|e| e == "cu");
            if files.iter().any(is_cu) {
                if !files.iter().all(is_cu) || !define.is_empty() {
                    eprintln!("error: check CUDA-C (`.cu`) files on their own, without `-D`");
                    return EXIT_USAGE;
                }
                let format = match format {
                    CheckFormat::Human => cuda_check::CheckFormat::Human,
                    CheckFormat::Short => cuda_check::CheckFormat::Short,
                    CheckFormat::Json => cuda_check::CheckFormat::Json,
                };
                let opts = cuda_check::CudaCheck {
                    format,
                    schedules: cuda.schedules,
                    seed: cuda.seed,
                    max_steps: cuda.max_steps,
                    kernel: cuda.kernel,
                    grid: cuda.grid,
                    block: cuda.block,
                    buffer_len: cuda.buffer_len,
                    shared_bytes: cuda.shared_bytes,
                    args: cuda.args,
                };
                return cuda_check::run(&files, &opts);
            }
            if cuda.given() {
                eprintln!("error: `--schedules`, `--seed`, `--max-steps`, `--kernel`, `--grid`, `--block`, `--buffer-len`, `--shared-bytes` and `--arg` are for CUDA-C (`.cu`) files");
                return EXIT_USAGE;
            }
            let format = match format {
                CheckFormat::Human => Format::Human,
                CheckFormat::Short => Format::Short,
                CheckFormat::Json => {
                    eprintln!("error: `--format json` is for CUDA-C (`.cu`) files");
                    return EXIT_USAGE;
                }
            };
            check(&files, format, &define, arch)
        }
        Command::Fmt { check, write, files } => fmt_cmd::run(check, write, &files),
        Command::Explain { code } => explain(&code),
        Command::Emit { target, define, output, arch, lib, header, file } => {
            let outputs = [("-o", output.as_deref()), ("--header", header.as_deref())];
            if !outputs_distinct(&file, &outputs) {
                return EXIT_USAGE;
            }
            emit(&file, target, &define, output.as_deref(), arch, lib, header.as_deref())
        }
        Command::Bench { device, define, warmup, runs, json, svg, no_race_check, files, args } => {
            if !sim_flags_allowed(device, &[("--no-race-check", no_race_check)]) {
                return EXIT_USAGE;
            }
            let sim = strata_sim::Options { check_races: !no_race_check, args, ..strata_sim::Options::default() };
            bench_cmd::run(&files, &bench_cmd::BenchOptions { device, defines: define, warmup, runs, json, svg, sim })
        }
        Command::Build { target: BuildTarget::Cuda, arch, define, output, file } => {
            if !outputs_distinct(&file, &[("-o", Some(&output))]) {
                return EXIT_USAGE;
            }
            build_cuda(&file, arch, &define, &output)
        }
        Command::Run {
            device,
            define,
            max_steps,
            schedule,
            seed,
            no_race_check,
            time_limit,
            arch,
            format,
            file,
            args,
            include,
        } => {
            let cuda_c = file.extension().is_some_and(|e| e == "cu");
            if !cuda_c && !include.is_empty() {
                eprintln!("error: `-I` is for CUDA-C (`.cu`) files");
                return EXIT_USAGE;
            }
            let device = device.unwrap_or(if cuda_c { Device::Sim } else { Device::Cpu });
            let sim_flags = [
                ("--max-steps", max_steps.is_some()),
                ("--schedule", schedule.is_some()),
                ("--seed", seed.is_some()),
                ("--no-race-check", no_race_check),
            ];
            if !sim_flags_allowed(device, &sim_flags) {
                return EXIT_USAGE;
            }
            if seed.is_some() && schedule != Some(Schedule::Random) {
                eprintln!("error: `--seed` only applies to `--schedule random`");
                return EXIT_USAGE;
            }
            let opts = strata_sim::Options {
                max_steps: max_steps.unwrap_or(strata_sim::Options::default().max_steps),
                random_seed: (schedule == Some(Schedule::Random)).then_some(seed.unwrap_or(0)),
                check_races: !no_race_check,
                deadline: None,
                args,
            };
            if cuda_c {
                return run_cuda_c(&file, &include, device, &define, &opts, time_limit, format);
            }
            run_file(&file, device, &define, &opts, time_limit, format, arch)
        }
    }
}

/// The file a path names, for comparing paths: the canonical path when it exists, else the
/// canonical directory joined with the name (a file about to be written), else the path itself.
fn resolved(path: &std::path::Path) -> PathBuf {
    if let Ok(p) = path.canonicalize() {
        return p;
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    match (dir.canonicalize(), path.file_name()) {
        (Ok(d), Some(name)) => d.join(name),
        _ => path.to_path_buf(),
    }
}

/// No output file (`-o`, `--header`) may be the input file or another output file: writing it
/// would destroy the source or one of the outputs. Reports the first clash and returns false.
fn outputs_distinct(input: &std::path::Path, outputs: &[(&str, Option<&std::path::Path>)]) -> bool {
    let input_file = resolved(input);
    let given: Vec<(&str, &std::path::Path)> = outputs.iter().filter_map(|(f, p)| p.map(|p| (*f, p))).collect();
    for (i, &(flag, path)) in given.iter().enumerate() {
        let file = resolved(path);
        if file == input_file {
            eprintln!(
                "error: `{flag} {}` is the input file `{}`: writing it would overwrite the source",
                path.display(),
                input.display()
            );
            return false;
        }
        if let Some((other, _)) = given[..i].iter().find(|(_, p)| resolved(p) == file) {
            eprintln!("error: `{other}` and `{flag}` name the same file `{}`", path.display());
            return false;
        }
    }
    true
}

/// The options of the `sim` device are refused on any other device, where they would be ignored
/// without a word: reports the first such option given and returns false.
fn sim_flags_allowed(device: Device, flags: &[(&str, bool)]) -> bool {
    if device == Device::Sim {
        return true;
    }
    match flags.iter().find(|f| f.1) {
        Some((flag, _)) => {
            eprintln!(
                "error: `{flag}` only applies to the `sim` device; add `--device sim` (the default device is `cpu`)"
            );
            false
        }
        None => true,
    }
}

fn explain(code: &str) -> u8 {
    match codes::lookup(code) {
        Some(info) => {
            outln!("{}", info.explanation.trim_end());
            0
        }
        None => {
            let digits = code.trim().trim_start_matches(['e', 'E']);
            if !digits.is_empty() && digits.len() <= 4 && digits.bytes().all(|b| b.is_ascii_digit()) {
                let (first, last) = (codes::ALL[0].code, codes::ALL[codes::ALL.len() - 1].code);
                let code = format!("E{digits:0>4}");
                eprintln!(
                    "error: `{code}` is not a Strata diagnostic code: it does not exist (codes run from {first} to {last})"
                );
                let near: Vec<&str> =
                    codes::ALL.iter().map(|i| i.code.as_str()).filter(|c| c[..3] == code[..3]).collect();
                if !near.is_empty() {
                    eprintln!("  = note: the codes of {}xx are {}", &code[..3], near.join(", "));
                }
            } else {
                eprintln!("error: `{code}` is not a Strata diagnostic code (they look like `E0501`)");
            }
            EXIT_USAGE
        }
    }
}

/// Reads every file. On failure reports it and returns the exit status: a file that cannot be
/// read is a usage error, one that is not UTF-8 a program error (E0005 at the first bad byte).
fn load(files: &[PathBuf], sources: &mut SourceMap, format: Format) -> Result<Vec<strata_diag::FileId>, u8> {
    files.iter().map(|path| load_file(path, sources, format)).collect()
}

/// [`load`] of one file (also `strata fmt`'s reader).
fn load_file(path: &std::path::Path, sources: &mut SourceMap, format: Format) -> Result<strata_diag::FileId, u8> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) => {
            eprintln!("error: cannot read `{}`: {e}", path.display());
            return Err(EXIT_USAGE);
        }
    };
    match String::from_utf8(bytes) {
        Ok(text) => Ok(sources.add(path.display().to_string(), text)),
        Err(e) => {
            // The lossy text keeps the valid prefix, so the offset is the same in both.
            let at = e.utf8_error().valid_up_to() as u32;
            let text = String::from_utf8_lossy(e.as_bytes()).into_owned();
            let id = sources.add(path.display().to_string(), text);
            let span = strata_diag::Span::new(id, at, at + '\u{fffd}'.len_utf8() as u32);
            let d = Diagnostic::error(codes::INVALID_UTF8, "this file is not valid UTF-8", span, "invalid byte here")
                .with_note("Strata source files are UTF-8 text; re-save the file as UTF-8");
            report(&[d], sources, format);
            Err(EXIT_PROGRAM_ERRORS)
        }
    }
}

/// `--time-limit SECONDS`: a positive number of seconds (fractions allowed).
fn parse_time_limit(s: &str) -> Result<std::time::Duration, String> {
    let secs: f64 = s.trim().parse().map_err(|_| format!("`{s}` is not a number of seconds"))?;
    if !(secs > 0.0 && secs <= 1e9) {
        return Err(format!("the time limit must be a positive number of seconds, found `{s}`"));
    }
    Ok(std::time::Duration::from_secs_f64(secs))
}

/// `--arch sm_80`: the target profile of a known architecture.
fn parse_arch(s: &str) -> Result<&'static TargetProfile, String> {
    TargetProfile::for_arch(s.trim())
        .ok_or_else(|| format!("unknown GPU architecture `{s}`; the known ones are {}", TargetProfile::known_archs()))
}

/// `-D NAME=VALUE`
fn parse_define(s: &str) -> Result<(String, u64), String> {
    let usage = "write `-D NAME=VALUE`, e.g. `-D N=4096`";
    let (name, value) = s.split_once('=').ok_or_else(|| format!("expected NAME=VALUE, found `{s}`; {usage}"))?;
    let (name, value) = (name.trim(), value.trim());
    if name.is_empty() {
        return Err(format!("the constant's name is missing in `{s}`; {usage}"));
    }
    let mut chars = name.chars();
    if !chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return Err(format!("`{name}` is not the name of a constant; {usage}"));
    }
    if value.is_empty() {
        return Err(format!("the value of `{name}` is missing in `{s}`; {usage}"));
    }
    if value.starts_with('-') && value[1..].bytes().all(|b| b.is_ascii_digit()) && value.len() > 1 {
        return Err(format!("`{value}` is negative: constants are natural numbers (0, 1, 2, …)"));
    }
    value.parse::<u64>().map(|v| (name.to_string(), v)).map_err(|e| match e.kind() {
        std::num::IntErrorKind::PosOverflow => {
            format!("`{value}` is too large for a constant (at most {})", u64::MAX)
        }
        _ => format!("`{value}` is not a natural number: constants are natural numbers (0, 1, 2, …)"),
    })
}

/// A constant may be given by `-D` once: which of two values was meant is not guessed. Reports
/// the first constant given twice and returns false.
fn defines_unique(defines: &[(String, u64)]) -> bool {
    for (i, (name, first)) in defines.iter().enumerate() {
        if let Some((_, second)) = defines[i + 1..].iter().find(|(n, _)| n == name) {
            eprintln!(
                "error: the constant `{name}` is given twice: `-D {name}={first}` and `-D {name}={second}`; give it once"
            );
            return false;
        }
    }
    true
}

/// Every `-D` must name a `const` of the program (of one of `modules`): a misspelt name would
/// otherwise be ignored without a word. Reports the first that does not, with the constants
/// the program has, and returns false.
fn defines_known(defines: &[(String, u64)], modules: &[&strata_syntax::ast::Module]) -> bool {
    let consts: Vec<&str> = modules
        .iter()
        .flat_map(|m| &m.items)
        .filter_map(|item| match item {
            strata_syntax::ast::Item::Const(c) => Some(c.name.name.as_str()),
            _ => None,
        })
        .collect();
    let Some((name, value)) = defines.iter().find(|(n, _)| !consts.contains(&n.as_str())) else { return true };
    let mut names: Vec<&str> = consts.clone();
    names.sort_unstable();
    names.dedup();
    let listed = names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ");
    let files = if modules.len() > 1 { "programs define" } else { "program defines" };
    eprintln!("error: `-D {name}={value}`: the {files} no constant `{name}`");
    match strata_diag::suggest(name, names.iter().copied()) {
        Some(s) => eprintln!("  = help: did you mean `{s}`? (the constants are {listed})"),
        None if names.is_empty() => {
            eprintln!("  = note: the {files} no constants at all (`-D` overrides a `const N: nat = …;` item)")
        }
        None => eprintln!("  = note: the constants are {listed}"),
    }
    false
}

fn check(files: &[PathBuf], format: Format, defines: &[(String, u64)], profile: &TargetProfile) -> u8 {
    let mut sources = SourceMap::new();
    let ids = match load(files, &mut sources, format) {
        Ok(ids) => ids,
        Err(code) => return code,
    };
    let prelude = sources.add("<prelude>", strata_check::program::PRELUDE);
    let parsed: Vec<_> = ids.iter().map(|&id| strata_syntax::parse(id, sources.source(id))).collect();
    // A file with syntax errors may have lost a `const`; its errors are reported instead.
    if parsed.iter().all(|p| !strata_diag::has_errors(&p.diagnostics))
        && !defines_known(defines, &parsed.iter().map(|p| &p.module).collect::<Vec<_>>())
    {
        return EXIT_USAGE;
    }
    let mut all = Vec::new();
    for parsed in parsed {
        let syntax_ok = !strata_diag::has_errors(&parsed.diagnostics);
        all.extend(parsed.diagnostics);
        // Type checking a tree with holes would only report consequences of the syntax errors.
        if syntax_ok {
            all.extend(strata_check::check_module_for(&parsed.module, prelude, defines, profile));
        }
    }
    report(&all, &sources, format);
    if strata_diag::has_errors(&all) {
        EXIT_PROGRAM_ERRORS
    } else {
        0
    }
}

/// Parses, checks (for the default architecture) and lowers one file; on failure reports and
/// returns the exit status.
fn compile(
    file: &PathBuf,
    defines: &[(String, u64)],
    format: Format,
) -> Result<(SourceMap, strata_diag::FileId, strata_ir::ir::Program), u8> {
    compile_for(file, defines, format, TargetProfile::default_profile())
}

/// [`compile`] for the limits of the GPU architecture `profile`.
fn compile_for(
    file: &PathBuf,
    defines: &[(String, u64)],
    format: Format,
    profile: &TargetProfile,
) -> Result<(SourceMap, strata_diag::FileId, strata_ir::ir::Program), u8> {
    compile_with(file, defines, format, profile, |_, _, program| Ok(program))
}

/// [`compile_for`], then `then` on the lowered program, with the checker's environment and the file.
fn compile_with<T>(
    file: &PathBuf,
    defines: &[(String, u64)],
    format: Format,
    profile: &TargetProfile,
    then: impl FnOnce(
        &strata_check::program::Program,
        strata_diag::FileId,
        strata_ir::ir::Program,
    ) -> Result<T, Vec<Diagnostic>>,
) -> Result<(SourceMap, strata_diag::FileId, T), u8> {
    let mut sources = SourceMap::new();
    let ids = load(std::slice::from_ref(file), &mut sources, format)?;
    let id = ids[0];
    let prelude_id = sources.add("<prelude>", strata_check::program::PRELUDE);
    let parsed = strata_syntax::parse(id, sources.source(id));
    if strata_diag::has_errors(&parsed.diagnostics) {
        report(&parsed.diagnostics, &sources, format);
        return Err(EXIT_PROGRAM_ERRORS);
    }
    if !defines_known(defines, &[&parsed.module]) {
        return Err(EXIT_USAGE);
    }
    let checked = strata_check::check_program_for(&parsed.module, prelude_id, defines, profile);
    if strata_diag::has_errors(&checked.diagnostics) {
        report(&checked.diagnostics, &sources, format);
        return Err(EXIT_PROGRAM_ERRORS);
    }
    let prelude = strata_check::program::parse_prelude(prelude_id);
    let env = strata_check::program_env(&parsed.module, &prelude, defines);
    // Run-time errors of the emitted C and CUDA name `file:line:col` of this file.
    let source = strata_ir::ir::SourceFile::new(id, sources.name(id), sources.source(id));
    let lowered = strata_ir::lower(&parsed.module, &env, &checked.types).map(|mut p| {
        p.sources = vec![source];
        p
    });
    match lowered.and_then(|p| then(&env, id, p)) {
        Ok(p) => Ok((sources, id, p)),
        Err(diags) => {
            report(&diags, &sources, format);
            Err(EXIT_PROGRAM_ERRORS)
        }
    }
}

/// `strata emit`: the C of the cpu device, the CUDA C++, or the IR; for a file without `main`
/// (or with `--lib`) a kernel library ([`emit_library`]).
fn emit(
    file: &PathBuf,
    target: Target,
    defines: &[(String, u64)],
    output: Option<&std::path::Path>,
    profile: &TargetProfile,
    lib: bool,
    header: Option<&std::path::Path>,
) -> u8 {
    if target == Target::Ir && (lib || header.is_some()) {
        eprintln!("error: `--lib` and `--header` are for `--target c` and `--target cuda`");
        return EXIT_USAGE;
    }
    let compiled = compile_with(file, defines, Format::Human, profile, |env, id, program| {
        if target != Target::Ir && (lib || program.entry.is_none()) {
            strata_ir::library::library(&program, env, id).map(|l| (program, Some(l)))
        } else {
            Ok((program, None))
        }
    });
    let (sources, _, (program, library)) = match compiled {
        Ok(x) => x,
        Err(code) => return code,
    };
    if let Some(library) = library {
        return emit_library(file, target, &library, &sources, output, header);
    }
    if header.is_some() {
        eprintln!(
            "error: `--header` is for kernel libraries, and `{}` is a program (it has `main`): add `--lib` to \
             emit its kernels as a library",
            file.display()
        );
        return EXIT_USAGE;
    }
    let text = match target {
        Target::Ir => format!("{program:#?}\n"),
        Target::Cuda => match strata_cuda::emit_cuda(&program) {
            Ok(c) => c,
            Err(d) => {
                report(&[*d], &sources, Format::Human);
                return EXIT_PROGRAM_ERRORS;
            }
        },
        Target::C => match strata_cpu::emit_c(&program) {
            Ok(c) => c,
            Err(d) => {
                report(&[*d], &sources, Format::Human);
                return EXIT_PROGRAM_ERRORS;
            }
        },
    };
    match output {
        Some(path) => match std::fs::write(path, text) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("error: cannot write `{}`: {e}", path.display());
                EXIT_USAGE
            }
        },
        None => {
            out!("{text}");
            0
        }
    }
}

/// `strata build --target cuda`: the emitted CUDA C++, compiled by nvcc into an executable.
fn build_cuda(file: &PathBuf, profile: &TargetProfile, defines: &[(String, u64)], output: &std::path::Path) -> u8 {
    // Found now, not by the linker after nvcc has run (which would read as nvcc rejecting Strata's code).
    if let Err(e) = writable(output) {
        eprintln!("error: cannot write `{}`: {e}", output.display());
        return EXIT_USAGE;
    }
    let (sources, id, program) = match compile_for(file, defines, Format::Human, profile) {
        Ok(x) => x,
        Err(code) => return code,
    };
    if let Err(code) = require_main(&program, id, &sources, Format::Human) {
        return code;
    }
    let cuda = match strata_cuda::emit_cuda(&program) {
        Ok(c) => c,
        Err(d) => {
            report(&[*d], &sources, Format::Human);
            return EXIT_PROGRAM_ERRORS;
        }
    };
    match strata_cuda::build(&cuda, profile.arch, output) {
        Ok(()) => 0,
        Err(e @ strata_cuda::BuildError::Rejected(_)) => {
            eprintln!("error: {e}");
            EXIT_PROGRAM_ERRORS
        }
        Err(e) => {
            eprintln!("error: {e}");
            EXIT_USAGE
        }
    }
}

/// Whether the file `path` can be written: its directory exists and takes a new file (tried with
/// a probe file, removed at once), and `path` is not a directory nor a file that cannot be opened
/// for writing. Changes nothing.
fn writable(path: &std::path::Path) -> Result<(), String> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(format!("`{}` is not a directory", dir.display())),
        Err(e) => return Err(e.to_string()),
    }
    if path.is_dir() {
        return Err("it is a directory".to_string());
    }
    if path.exists() {
        return std::fs::OpenOptions::new().write(true).open(path).map(drop).map_err(|e| e.to_string());
    }
    let probe = dir.join(format!(".strata-write-probe-{}", std::process::id()));
    std::fs::OpenOptions::new().write(true).create_new(true).open(&probe).map_err(|e| e.to_string())?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// Checks, lowers and runs one program.
fn run_file(
    file: &PathBuf,
    device: Device,
    defines: &[(String, u64)],
    opts: &strata_sim::Options,
    time_limit: Option<std::time::Duration>,
    format: Format,
    profile: &TargetProfile,
) -> u8 {
    let (sources, id, program) = match compile_for(file, defines, format, profile) {
        Ok(x) => x,
        Err(code) => return code,
    };
    if let Err(code) = require_main(&program, id, &sources, format) {
        return code;
    }
    run_lowered(&program, id, &sources, device, opts, time_limit, format)
}

/// `strata run FILE.cu`: a CUDA-C program, lowered by `strata-cudac` and run on `sim` or `cpu`
/// (docs/cuda-c.md). A file of kernels without `main` whose GPUVerify header gives the launch
/// runs that launch and prints the buffers (kernel-only mode). `-D` does not apply.
fn run_cuda_c(
    file: &std::path::Path,
    include: &[PathBuf],
    device: Device,
    defines: &[(String, u64)],
    opts: &strata_sim::Options,
    time_limit: Option<std::time::Duration>,
    format: Format,
) -> u8 {
    if !defines.is_empty() {
        eprintln!("error: `-D` does not apply to CUDA-C files (`.cu`); edit the `#define`s instead");
        return EXIT_USAGE;
    }
    let mut sources = SourceMap::new();
    let id = match load_file(file, &mut sources, format) {
        Ok(id) => id,
        Err(code) => return code,
    };
    let headers = match cuda_headers(file, id, include, &mut sources, format) {
        Ok(h) => h,
        Err(code) => return code,
    };
    let text = sources.source(id);
    let no_main = matches!(strata_cudac::lower_items_with_headers(id, text, &headers), Ok(p) if p.entry.is_none());
    let lowered = match strata_cudac::harness::header(text) {
        Ok(Some(h)) if no_main => {
            let threads = h.grid.iter().chain(&h.block).try_fold(1u64, |a, &d| a.checked_mul(d)).unwrap_or(u64::MAX);
            let launch = strata_cudac::harness::KernelLaunch {
                kernel: None,
                grid: h.grid,
                block: h.block,
                buffer_len: threads,
                shared_bytes: 0,
                args: Vec::new(),
                print_buffers: true,
            };
            match strata_cudac::harness::kernel_only_with_headers(id, sources.name(id), text, &headers, &launch) {
                Ok(p) => Ok(p),
                Err(strata_cudac::harness::HarnessError::Diag(ds)) => Err(ds),
                Err(strata_cudac::harness::HarnessError::Usage(m)) => {
                    eprintln!("error: {m}");
                    return EXIT_USAGE;
                }
            }
        }
        _ => strata_cudac::lower_all(id, sources.name(id), text, &headers),
    };
    let mut program = match lowered {
        Ok(p) => p,
        Err(ds) => {
            // Every construct the front end refuses, up to `--error-limit`.
            report(&ds, &sources, format);
            return EXIT_PROGRAM_ERRORS;
        }
    };
    program.sources = vec![strata_ir::ir::SourceFile::new(id, sources.name(id), sources.source(id))];
    for h in &headers {
        program.sources.push(strata_ir::ir::SourceFile::new(h.file, sources.name(h.file), sources.source(h.file)));
    }
    run_lowered(&program, id, &sources, device, opts, time_limit, format)
}

/// The program's own headers that `file` (`id`) includes, directly or through another header:
/// `#include "name.h"` is looked for next to the including file, then in each `-I` directory, as
/// nvcc does. A header that is not found is left out (the front end refuses its `#include`).
pub(crate) fn cuda_headers(
    file: &std::path::Path,
    id: strata_diag::FileId,
    include: &[PathBuf],
    sources: &mut SourceMap,
    format: Format,
) -> Result<Vec<strata_cudac::Header>, u8> {
    let mut headers: Vec<strata_cudac::Header> = Vec::new();
    let dir = |p: &std::path::Path| p.parent().map_or_else(|| PathBuf::from("."), std::path::Path::to_path_buf);
    let mut queue = vec![(id, dir(file))];
    while let Some((from, from_dir)) = queue.pop() {
        for name in strata_cudac::quoted_includes(from, sources.source(from)) {
            if headers.iter().any(|h| h.name == name) {
                continue;
            }
            let found = std::iter::once(&from_dir).chain(include).map(|d| d.join(&name)).find(|p| p.is_file());
            let Some(path) = found else { continue };
            let hid = load_file(&path, sources, format)?;
            queue.push((hid, dir(&path)));
            let (shown, text) = (sources.name(hid).to_string(), sources.source(hid).to_string());
            headers.push(strata_cudac::Header { name, path: shown, file: hid, text });
        }
    }
    Ok(headers)
}

/// Runs a lowered program on `device` and reports its run-time error, if any: the exit status.
fn run_lowered(
    program: &strata_ir::ir::Program,
    id: strata_diag::FileId,
    sources: &SourceMap,
    device: Device,
    opts: &strata_sim::Options,
    time_limit: Option<std::time::Duration>,
    format: Format,
) -> u8 {
    // The limit counts the program's run only, not checking or compiling it.
    let opts =
        &strata_sim::Options { deadline: time_limit.map(|t| (std::time::Instant::now() + t, t)), ..opts.clone() };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let result = match device {
        Device::Sim => strata_sim::run(program, opts, &mut out).map(|_| ()),
        Device::Cpu => {
            let run = strata_cpu::RunOptions {
                time_limit,
                main_span: main_name_span(program, sources),
                args: opts.args.clone(),
            };
            strata_cpu::run(program, id, &mut out, &run)
        }
    };
    match result {
        Ok(_) => 0,
        Err(d) => {
            use std::io::Write;
            let _ = out.flush();
            report(&[*d], sources, format);
            EXIT_PROGRAM_ERRORS
        }
    }
}

/// A program to run or build must have a `main` (E0106, pointing at the start of the file);
/// reports and returns the exit status if it has none.
fn require_main(
    program: &strata_ir::ir::Program,
    file: strata_diag::FileId,
    sources: &SourceMap,
    format: Format,
) -> Result<(), u8> {
    if program.entry.is_some() {
        return Ok(());
    }
    let d = Diagnostic::error(
        codes::NO_MAIN,
        "the program has no `main` function",
        strata_diag::Span::new(file, 0, 0),
        "no `fn main` in this file",
    )
    .with_note("a program starts at `fn main() -[t: cpu.thread]-> ()`")
    .with_note(
        "help: a file without `main` is a kernel library: `strata emit --target c|cuda FILE -o OUT --header H` \
         compiles its kernels with launch functions (docs/libraries.md)",
    );
    report(&[d], sources, format);
    Err(EXIT_PROGRAM_ERRORS)
}

/// The name in `fn main`'s signature, where a run-time error of the whole program points.
fn main_name_span(program: &strata_ir::ir::Program, sources: &SourceMap) -> Option<strata_diag::Span> {
    let span = program.functions.iter().find(|f| f.name == "main")?.span;
    let text = sources.source(span.file).get(span.lo as usize..span.hi as usize)?;
    let at = span.lo + text.find("main")? as u32;
    Some(strata_diag::Span::new(span.file, at, at + 4))
}

/// Renders diagnostics, at most `--error-limit` errors of them, then counts the rest.
fn report(diags: &[Diagnostic], sources: &SourceMap, format: Format) {
    let (diags, omitted) = strata_diag::limit_errors(diags, ERROR_LIMIT.load(std::sync::atomic::Ordering::Relaxed));
    match format {
        Format::Human => strata_diag::render(diags, sources),
        Format::Short => {
            for d in diags {
                let file = d.primary.span.file;
                let (line, col) = sources.line_col(file, d.primary.span.lo);
                let sev = match d.severity {
                    strata_diag::Severity::Error => "error",
                    strata_diag::Severity::Warning => "warning",
                    strata_diag::Severity::Note => "note",
                };
                eprintln!(
                    "{}:{line}:{col}: {sev}[{}]: {}",
                    sources.name(file),
                    d.code,
                    strata_diag::shorten(&d.message)
                );
            }
        }
    }
    if let Some(summary) = omitted.summary() {
        eprintln!("{summary}");
    }
}

/// `strata emit` of a kernel library: the source (to `-o` or stdout) and, with `--header`, the
/// header. The include guard is named after the file (`saxpy.strata`: `STRATA_SAXPY_H`).
fn emit_library(
    file: &std::path::Path,
    target: Target,
    library: &strata_ir::library::Library,
    sources: &SourceMap,
    output: Option<&std::path::Path>,
    header: Option<&std::path::Path>,
) -> u8 {
    let name = file.file_stem().map_or_else(|| "library".to_string(), |s| s.to_string_lossy().into_owned());
    let emitted = match target {
        Target::Cuda => strata_emit::emit_cuda_library(library, &name),
        _ => strata_emit::emit_c_library(library, &name),
    };
    let out = match emitted {
        Ok(out) => out,
        Err(d) => {
            report(&[*d], sources, Format::Human);
            return EXIT_PROGRAM_ERRORS;
        }
    };
    let write = |path: &std::path::Path, text: &str| match std::fs::write(path, text) {
        Ok(()) => true,
        Err(e) => {
            eprintln!("error: cannot write `{}`: {e}", path.display());
            false
        }
    };
    if let Some(path) = header {
        if !write(path, &out.header) {
            return EXIT_USAGE;
        }
    }
    match output {
        Some(path) if !write(path, &out.source) => EXIT_USAGE,
        Some(_) => 0,
        None => {
            out!("{}", out.source);
            0
        }
    }
}
