//! The `strata` command: check, format, run, emit, build and explain Strata programs.
//!
//! This file reads the command line, drives the phases through the library's
//! [`strata_cli::Pipeline`] and renders what they return.
//!
//! Exit status: 0 when every file is accepted, 1 when a program has errors, 2 for usage or I/O
//! errors and for a tool or driver missing from the machine (E10xx). A panic is always a bug.

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
use strata_cli::{Error, Pipeline, EXIT_PROGRAM_ERRORS, EXIT_USAGE};
use strata_diag::{codes, Diagnostic, SourceMap};

#[derive(Parser)]
#[command(name = "strata", version, about = "The Strata safe GPU programming language")]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Show at most this many errors (`0`: all of them); the rest are counted.
    #[arg(long, allow_negative_numbers = true, global = true, value_name = "N", default_value_t = strata_diag::DEFAULT_ERROR_LIMIT)]
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
        /// The `.strata` files to format (CUDA-C `.cu` files are not formatted).
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Run a program's `main` (a `.strata` program, or a CUDA-C `.cu` program: docs/cuda-c.md).
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
        #[arg(long, allow_negative_numbers = true)]
        max_steps: Option<u64>,
        /// Order in which `sim` runs blocks and threads [default: deterministic] (`--device sim`
        /// only).
        #[arg(long, value_enum)]
        schedule: Option<Schedule>,
        /// Seed for `--schedule random` [default: 0].
        #[arg(long, allow_negative_numbers = true)]
        seed: Option<u64>,
        /// `sim` without race detection (bounds, barriers and memory spaces are still checked;
        /// `--device sim` only).
        #[arg(long)]
        no_race_check: bool,
        /// Stop the program after this many seconds of wall-clock time (E0910); no limit by default.
        #[arg(long, value_name = "SECONDS", value_parser = parse_time_limit, allow_negative_numbers = true)]
        time_limit: Option<std::time::Duration>,
        /// The GPU architecture whose limits the program must respect (threads per block, grid
        /// sizes, shared memory): `sm_70`, `sm_75`, `sm_80`, `sm_86`, `sm_87`, `sm_89`, `sm_90`,
        /// `sm_100`, `sm_120`.
        #[arg(long, value_name = "ARCH", default_value = strata_check::target::DEFAULT_ARCH, value_parser = parse_arch)]
        arch: &'static TargetProfile,
        /// How to print diagnostics.
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
        /// The program to run: a `.strata` file, or a CUDA-C `.cu` file (run on `sim` unless
        /// `--device cpu`; `-D` and `--arch` do not apply to it).
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
        /// The `.strata` file (CUDA-C `.cu` files are run and checked, not emitted).
        file: PathBuf,
    },
    /// Compile a program to an executable: for a real GPU (`--target cuda`, the default: emits
    /// CUDA C++ and runs `nvcc` on it: `$NVCC`, else `nvcc` on the PATH, else `.venv/bin/nvcc` from
    /// `scripts/setup-nvcc.sh`), or for the cpu (`--target cpu`: the cpu device's C, with its
    /// run-time checks, compiled by `$CC` or `cc`).
    Build {
        /// What to build for: `cuda` (NVIDIA GPUs) or `cpu` (a native executable, the C that
        /// `strata run` runs).
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
        /// The `.strata` file (CUDA-C `.cu` files are run and checked, not built).
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
        #[arg(long, allow_negative_numbers = true, default_value_t = 1)]
        warmup: usize,
        /// Timed runs of each program.
        #[arg(long, allow_negative_numbers = true, default_value_t = 5)]
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
        /// The `.strata` files (CUDA-C `.cu` files are not benchmarked).
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
    /// Run the language server on stdin and stdout, for editors (docs/editor.md): the
    /// diagnostics of `check` as you type, hover, go to definition and formatting.
    Lsp,
}

/// The options of `strata check FILE.cu` (docs/cuda-c.md).
#[derive(clap::Args)]
struct CudaCheckArgs {
    /// CUDA-C: random schedules to run besides the default order (seeds 1 to N).
    #[arg(long, allow_negative_numbers = true, value_name = "N", default_value_t = 4)]
    schedules: u64,
    /// CUDA-C: run only the random schedule with this seed.
    #[arg(long, allow_negative_numbers = true, conflicts_with = "schedules")]
    seed: Option<u64>,
    /// CUDA-C: thread steps after which `sim` stops a runaway program [default: 200000000].
    #[arg(long, allow_negative_numbers = true)]
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
    /// A native executable: the C of the cpu device, with its run-time checks.
    Cpu,
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

impl From<Device> for strata_cli::Device {
    fn from(d: Device) -> Self {
        match d {
            Device::Sim => strata_cli::Device::Sim,
            Device::Cpu => strata_cli::Device::Cpu,
        }
    }
}

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
        Command::Lsp => strata_cli::lsp::run(),
        Command::Emit { target, define, output, arch, lib, header, file } => {
            let outputs = [("-o", output.as_deref()), ("--header", header.as_deref())];
            if !outputs_distinct(&file, &outputs) || !strata_input(&file, "emit") {
                return EXIT_USAGE;
            }
            emit(&file, target, &define, output.as_deref(), arch, lib, header.as_deref())
        }
        Command::Bench { device, define, warmup, runs, json, svg, no_race_check, files, args } => {
            if !sim_flags_allowed(device, &[("--no-race-check", no_race_check)])
                || !files.iter().all(|f| strata_input(f, "bench"))
            {
                return EXIT_USAGE;
            }
            let sim = strata_sim::Options { check_races: !no_race_check, args, ..strata_sim::Options::default() };
            bench_cmd::run(&files, &bench_cmd::BenchOptions { device, defines: define, warmup, runs, json, svg, sim })
        }
        Command::Build { target, arch, define, output, file } => {
            if !outputs_distinct(&file, &[("-o", Some(&output))]) || !strata_input(&file, "build") {
                return EXIT_USAGE;
            }
            match target {
                BuildTarget::Cuda => build_cuda(&file, arch, &define, &output),
                BuildTarget::Cpu => build_cpu(&file, arch, &define, &output),
            }
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
            let sim = strata_sim::Options {
                max_steps: max_steps.unwrap_or(strata_sim::Options::default().max_steps),
                random_seed: (schedule == Some(Schedule::Random)).then_some(seed.unwrap_or(0)),
                check_races: !no_race_check,
                deadline: None,
                args,
            };
            let opts = strata_cli::RunOptions { device: device.into(), sim, time_limit };
            if cuda_c {
                return run_cuda_c(&file, &include, &define, &opts, format);
            }
            run_file(&file, &define, &opts, format, arch)
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

/// Reads a file for `fmt` and `strata check FILE.cu` ([`strata_cli::load_file`]); on failure
/// reports it and returns the exit status.
fn load_file(path: &std::path::Path, sources: &mut SourceMap, format: Format) -> Result<strata_diag::FileId, u8> {
    strata_cli::load_file(path, sources).map_err(|e| fail(e, sources, format))
}

/// Reports a pipeline's error (usage errors as `error: …`, diagnostics with [`report`]) and
/// returns the exit status.
fn fail(e: Error, sources: &SourceMap, format: Format) -> u8 {
    match &e {
        Error::Usage(message) | Error::Rejected(message) => eprintln!("error: {message}"),
        Error::Diagnostics(diags) => report(diags, sources, format),
    }
    e.exit_status()
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

fn check(files: &[PathBuf], format: Format, defines: &[(String, u64)], profile: &'static TargetProfile) -> u8 {
    let mut pipeline = Pipeline::new(defines.to_vec(), profile);
    let mut ids = Vec::new();
    for path in files {
        match pipeline.load(path) {
            Ok(id) => ids.push(id),
            Err(e) => return fail(e, pipeline.sources(), format),
        }
    }
    let all = match pipeline.check(&ids) {
        Ok(all) => all,
        Err(e) => return fail(e, pipeline.sources(), format),
    };
    report(&all, pipeline.sources(), format);
    if strata_diag::has_errors(&all) {
        EXIT_PROGRAM_ERRORS
    } else {
        0
    }
}

/// Loads, checks and lowers one file with `pipeline`; on failure reports and returns the exit
/// status.
fn compile(pipeline: &mut Pipeline, file: &std::path::Path, format: Format) -> Result<strata_cli::Lowered, u8> {
    let lowered = pipeline.load(file).and_then(|id| pipeline.lower(id));
    lowered.map_err(|e| fail(e, pipeline.sources(), format))
}

/// [`compile`], then the check that the program has a `main` (to run or build it).
fn compile_main(pipeline: &mut Pipeline, file: &std::path::Path, format: Format) -> Result<strata_cli::Lowered, u8> {
    let lowered = compile(pipeline, file, format)?;
    match pipeline.require_main(&lowered.program, lowered.file) {
        Ok(()) => Ok(lowered),
        Err(e) => Err(fail(e, pipeline.sources(), format)),
    }
}

/// `strata emit`: the C of the cpu device, the CUDA C++, or the IR; for a file without `main`
/// (or with `--lib`) a kernel library ([`emit_library`]).
fn emit(
    file: &std::path::Path,
    target: Target,
    defines: &[(String, u64)],
    output: Option<&std::path::Path>,
    profile: &'static TargetProfile,
    lib: bool,
    header: Option<&std::path::Path>,
) -> u8 {
    if target == Target::Ir && (lib || header.is_some()) {
        eprintln!("error: `--lib` and `--header` are for `--target c` and `--target cuda`");
        return EXIT_USAGE;
    }
    let mut pipeline = Pipeline::new(defines.to_vec(), profile);
    let lowered = match compile(&mut pipeline, file, Format::Human) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let target = match target {
        Target::C => strata_cli::Target::C,
        Target::Cuda => strata_cli::Target::Cuda,
        Target::Ir => strata_cli::Target::Ir,
    };
    // A program (with `main`, no `--lib`) has no header to write: refused before it is emitted.
    let library = target != strata_cli::Target::Ir && (lib || lowered.program.entry.is_none());
    if header.is_some() && !library {
        eprintln!(
            "error: `--header` is for kernel libraries, and `{}` is a program (it has `main`): add `--lib` to \
             emit its kernels as a library",
            file.display()
        );
        return EXIT_USAGE;
    }
    let name = file.file_stem().map_or_else(|| "library".to_string(), |s| s.to_string_lossy().into_owned());
    let text = match pipeline.emit(&lowered, target, lib, &name) {
        Ok(strata_cli::Emitted::Library { source, header: text }) => {
            return write_library(&source, &text, output, header)
        }
        Ok(strata_cli::Emitted::Program(text)) => text,
        Err(e) => return fail(e, pipeline.sources(), Format::Human),
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
fn build_cuda(
    file: &std::path::Path,
    profile: &'static TargetProfile,
    defines: &[(String, u64)],
    output: &std::path::Path,
) -> u8 {
    // Found now, not by the linker after nvcc has run (which would read as nvcc rejecting Strata's code).
    if let Err(e) = writable(output) {
        eprintln!("error: cannot write `{}`: {e}", output.display());
        return EXIT_USAGE;
    }
    let mut pipeline = Pipeline::new(defines.to_vec(), profile);
    let lowered = match compile_main(&mut pipeline, file, Format::Human) {
        Ok(x) => x,
        Err(code) => return code,
    };
    match pipeline.build_cuda(&lowered, output) {
        Ok(()) => 0,
        Err(e) => fail(e, pipeline.sources(), Format::Human),
    }
}

/// `strata build --target cpu`: the C of the cpu device (the same C, with the same run-time
/// checks, that `strata run` runs), compiled by the system's C compiler into an executable.
fn build_cpu(
    file: &std::path::Path,
    profile: &'static TargetProfile,
    defines: &[(String, u64)],
    output: &std::path::Path,
) -> u8 {
    if let Err(e) = writable(output) {
        eprintln!("error: cannot write `{}`: {e}", output.display());
        return EXIT_USAGE;
    }
    let mut pipeline = Pipeline::new(defines.to_vec(), profile);
    let lowered = match compile_main(&mut pipeline, file, Format::Human) {
        Ok(x) => x,
        Err(code) => return code,
    };
    // Built in (or found in) the program cache, as for `strata run`, then copied out whole.
    let exe = match pipeline.build_cpu(&lowered.program) {
        Ok(exe) => exe,
        Err(e) => return fail(e, pipeline.sources(), Format::Human),
    };
    match copy_executable(&exe, output) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: cannot write `{}`: {e}", output.display());
            EXIT_USAGE
        }
    }
}

/// Copies the executable `exe` to `output`: written beside it under a temporary name, then
/// renamed, so that `output` is never a half-written file.
fn copy_executable(exe: &std::path::Path, output: &std::path::Path) -> std::io::Result<()> {
    let name = output.file_name().map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    let tmp = output.with_file_name(format!(".{name}.strata-tmp-{}", std::process::id()));
    let copied = std::fs::copy(exe, &tmp).and_then(|_| std::fs::rename(&tmp, output));
    if copied.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    copied
}

/// `emit`, `build` and `bench` take Strata programs: a CUDA-C file (`.cu`), which they would
/// read as Strata and fill with syntax errors, is a usage error that says what does take one.
fn strata_input(file: &std::path::Path, command: &str) -> bool {
    if file.extension().is_some_and(|e| e == "cu") {
        eprintln!(
            "error: `strata {command}` takes `.strata` programs; CUDA-C files (`{}`) run with `strata run` and \
             are checked with `strata check` (docs/cuda-c.md)",
            file.display()
        );
        return false;
    }
    true
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
    file: &std::path::Path,
    defines: &[(String, u64)],
    opts: &strata_cli::RunOptions,
    format: Format,
    profile: &'static TargetProfile,
) -> u8 {
    let mut pipeline = Pipeline::new(defines.to_vec(), profile);
    let lowered = match compile_main(&mut pipeline, file, format) {
        Ok(x) => x,
        Err(code) => return code,
    };
    run_lowered(&pipeline, &lowered.program, lowered.file, opts, format)
}

/// `strata run FILE.cu`: a CUDA-C program, lowered by `strata-cudac` and run on `sim` or `cpu`
/// (docs/cuda-c.md; `-D` does not apply: a usage error before the file is read). The program's
/// own headers are found next to the file and in each `-I` directory.
fn run_cuda_c(
    file: &std::path::Path,
    include: &[PathBuf],
    defines: &[(String, u64)],
    opts: &strata_cli::RunOptions,
    format: Format,
) -> u8 {
    let mut pipeline = Pipeline::new(defines.to_vec(), TargetProfile::default_profile());
    if !defines.is_empty() {
        eprintln!("error: `-D` does not apply to CUDA-C files (`.cu`); edit the `#define`s instead");
        return EXIT_USAGE;
    }
    let lowered = pipeline.load(file).and_then(|id| Ok((id, pipeline.lower_cuda_c(file, id, include)?)));
    match lowered {
        Ok((id, program)) => run_lowered(&pipeline, &program, id, opts, format),
        Err(e) => fail(e, pipeline.sources(), format),
    }
}

/// [`strata_cli::cuda_headers`] for the commands that keep their own source map: errors are
/// rendered here and become the exit status.
pub(crate) fn cuda_headers(
    file: &std::path::Path,
    id: strata_diag::FileId,
    include: &[PathBuf],
    sources: &mut SourceMap,
    format: Format,
) -> Result<Vec<strata_cudac::Header>, u8> {
    strata_cli::cuda_headers(file, id, include, sources).map_err(|e| fail(e, sources, format))
}

/// Runs a lowered program and reports its run-time error, if any: the exit status.
fn run_lowered(
    pipeline: &Pipeline,
    program: &strata_ir::ir::Program,
    id: strata_diag::FileId,
    opts: &strata_cli::RunOptions,
    format: Format,
) -> u8 {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match pipeline.run_status(program, id, opts, &mut out) {
        // The program's own exit status (`exit(n)`, `return n;` in a CUDA-C `main`).
        Ok(status) => status,
        Err(e) => {
            use std::io::Write;
            let _ = out.flush();
            fail(e, pipeline.sources(), format)
        }
    }
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
/// header.
fn write_library(
    source: &str,
    header_text: &str,
    output: Option<&std::path::Path>,
    header: Option<&std::path::Path>,
) -> u8 {
    let write = |path: &std::path::Path, text: &str| match std::fs::write(path, text) {
        Ok(()) => true,
        Err(e) => {
            eprintln!("error: cannot write `{}`: {e}", path.display());
            false
        }
    };
    if let Some(path) = header {
        if !write(path, header_text) {
            return EXIT_USAGE;
        }
    }
    match output {
        Some(path) if !write(path, source) => EXIT_USAGE,
        Some(_) => 0,
        None => {
            out!("{source}");
            0
        }
    }
}
