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
mod fmt_cmd;

use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;
use strata_diag::{codes, Diagnostic, SourceMap};

#[derive(Parser)]
#[command(name = "strata", version, about = "The Strata safe GPU programming language")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check programs and report every error found.
    Check {
        /// How to print diagnostics.
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
        /// Print the checking phases this build implements, one per line, and exit.
        #[arg(long)]
        phases: bool,
        /// Override a `const` item: `-D N=4096`.
        #[arg(short = 'D', value_name = "NAME=VALUE", value_parser = parse_define)]
        define: Vec<(String, u64)>,
        /// The `.strata` files to check.
        #[arg(required_unless_present = "phases")]
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
        /// semantics).
        #[arg(long, value_enum, default_value_t = Device::Cpu)]
        device: Device,
        /// Override a `const` item: `-D N=4096`.
        #[arg(short = 'D', value_name = "NAME=VALUE", value_parser = parse_define)]
        define: Vec<(String, u64)>,
        /// Thread steps after which `sim` stops a runaway program.
        #[arg(long, default_value_t = 200_000_000)]
        max_steps: u64,
        /// Order in which `sim` runs blocks and threads.
        #[arg(long, value_enum, default_value_t = Schedule::Deterministic)]
        schedule: Schedule,
        /// Seed for `--schedule random`.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// `sim` without race detection (bounds, barriers and memory spaces are still checked).
        #[arg(long)]
        no_race_check: bool,
        /// How to print diagnostics.
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
        /// The `.strata` file to run.
        file: PathBuf,
    },
    /// Print what a program compiles to.
    Emit {
        /// What to emit: `c` (the cpu device's C) or `ir` (the IR, for compiler developers).
        #[arg(long, value_enum, default_value_t = Target::C)]
        target: Target,
        /// Override a `const` item: `-D N=4096`.
        #[arg(short = 'D', value_name = "NAME=VALUE", value_parser = parse_define)]
        define: Vec<(String, u64)>,
        /// Write to this file instead of standard output.
        #[arg(short = 'o', long)]
        output: Option<PathBuf>,
        /// The `.strata` file.
        file: PathBuf,
    },
    /// Compile a program to an executable for a real GPU: emits CUDA C++ and runs `nvcc` on it
    /// (`$NVCC`, else `nvcc` on the PATH, else `.venv/bin/nvcc` from `scripts/setup-nvcc.sh`).
    Build {
        /// What to build for: `cuda` (NVIDIA GPUs).
        #[arg(long, value_enum, default_value_t = BuildTarget::Cuda)]
        target: BuildTarget,
        /// The GPU architecture to compile for, as nvcc's `-arch` (e.g. `sm_80`, `sm_90`).
        #[arg(long, default_value = "sm_80")]
        arch: String,
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
    },
    /// Print the long explanation of a diagnostic code, e.g. `strata explain E0501`.
    Explain {
        /// The code, e.g. `E0501`.
        code: String,
    },
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
    // Deeply nested (but legal) programs need more stack than the main thread may have.
    let worker = std::thread::Builder::new().stack_size(256 << 20).spawn(move || run(cli));
    match worker.map(|h| h.join()) {
        Ok(Ok(code)) => ExitCode::from(code),
        _ => ExitCode::from(101),
    }
}

fn run(cli: Cli) -> u8 {
    match cli.command {
        Command::Check { format, phases, define, files } => {
            if phases {
                outln!("syntax");
                outln!("check");
                outln!("run");
                return 0;
            }
            check(&files, format, &define)
        }
        Command::Fmt { check, write, files } => fmt_cmd::run(check, write, &files),
        Command::Explain { code } => explain(&code),
        Command::Emit { target, define, output, file } => emit(&file, target, &define, output.as_deref()),
        Command::Bench { device, define, warmup, runs, json, svg, no_race_check, files } => {
            let sim = strata_sim::Options { check_races: !no_race_check, ..strata_sim::Options::default() };
            bench_cmd::run(&files, &bench_cmd::BenchOptions { device, defines: define, warmup, runs, json, svg, sim })
        }
        Command::Build { target: BuildTarget::Cuda, arch, define, output, file } => {
            build_cuda(&file, &arch, &define, &output)
        }
        Command::Run { device, define, max_steps, schedule, seed, no_race_check, format, file } => {
            let opts = strata_sim::Options {
                max_steps,
                random_seed: (schedule == Schedule::Random).then_some(seed),
                check_races: !no_race_check,
            };
            run_file(&file, device, &define, &opts, format)
        }
    }
}

fn explain(code: &str) -> u8 {
    match codes::lookup(code) {
        Some(info) => {
            outln!("{}", info.explanation.trim_end());
            0
        }
        None => {
            eprintln!("error: `{code}` is not a Strata diagnostic code (they look like `E0501`)");
            EXIT_USAGE
        }
    }
}

/// Reads every file; returns `None` (after reporting) if one cannot be read.
fn load(files: &[PathBuf], sources: &mut SourceMap) -> Option<Vec<strata_diag::FileId>> {
    let mut ids = Vec::new();
    for path in files {
        match std::fs::read_to_string(path) {
            Ok(text) => ids.push(sources.add(path.display().to_string(), text)),
            Err(e) => {
                eprintln!("error: cannot read `{}`: {e}", path.display());
                return None;
            }
        }
    }
    Some(ids)
}

/// `-D NAME=VALUE`
fn parse_define(s: &str) -> Result<(String, u64), String> {
    let (name, value) = s.split_once('=').ok_or_else(|| format!("expected NAME=VALUE, found `{s}`"))?;
    let value = value.trim().parse::<u64>().map_err(|e| format!("`{value}` is not a natural number: {e}"))?;
    Ok((name.trim().to_string(), value))
}

fn check(files: &[PathBuf], format: Format, defines: &[(String, u64)]) -> u8 {
    let mut sources = SourceMap::new();
    let Some(ids) = load(files, &mut sources) else { return EXIT_USAGE };
    let prelude = sources.add("<prelude>", strata_check::program::PRELUDE);
    let mut all = Vec::new();
    for id in ids {
        let parsed = strata_syntax::parse(id, sources.source(id));
        let syntax_ok = !strata_diag::has_errors(&parsed.diagnostics);
        all.extend(parsed.diagnostics);
        // Type checking a tree with holes would only report consequences of the syntax errors.
        if syntax_ok {
            all.extend(strata_check::check_module(&parsed.module, prelude, defines));
        }
    }
    report(&all, &sources, format);
    if strata_diag::has_errors(&all) {
        EXIT_PROGRAM_ERRORS
    } else {
        0
    }
}

/// Parses, checks and lowers one file; on failure reports and returns the exit status.
fn compile(
    file: &PathBuf,
    defines: &[(String, u64)],
    format: Format,
) -> Result<(SourceMap, strata_diag::FileId, strata_ir::ir::Program), u8> {
    let mut sources = SourceMap::new();
    let Some(ids) = load(std::slice::from_ref(file), &mut sources) else { return Err(EXIT_USAGE) };
    let id = ids[0];
    let prelude_id = sources.add("<prelude>", strata_check::program::PRELUDE);
    let parsed = strata_syntax::parse(id, sources.source(id));
    if strata_diag::has_errors(&parsed.diagnostics) {
        report(&parsed.diagnostics, &sources, format);
        return Err(EXIT_PROGRAM_ERRORS);
    }
    let checked = strata_check::check_program(&parsed.module, prelude_id, defines);
    if strata_diag::has_errors(&checked.diagnostics) {
        report(&checked.diagnostics, &sources, format);
        return Err(EXIT_PROGRAM_ERRORS);
    }
    let prelude = strata_check::program::parse_prelude(prelude_id);
    let env = strata_check::program_env(&parsed.module, &prelude, defines);
    match strata_ir::lower(&parsed.module, &env, &checked.types) {
        Ok(mut p) => {
            // Run-time errors of the emitted C and CUDA name `file:line:col`.
            p.sources = vec![strata_ir::ir::SourceFile::new(id, sources.name(id), sources.source(id))];
            Ok((sources, id, p))
        }
        Err(diags) => {
            report(&diags, &sources, format);
            Err(EXIT_PROGRAM_ERRORS)
        }
    }
}

/// `strata emit`: the C of the cpu device, or the IR.
fn emit(file: &PathBuf, target: Target, defines: &[(String, u64)], output: Option<&std::path::Path>) -> u8 {
    let (sources, _, program) = match compile(file, defines, Format::Human) {
        Ok(x) => x,
        Err(code) => return code,
    };
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
fn build_cuda(file: &PathBuf, arch: &str, defines: &[(String, u64)], output: &std::path::Path) -> u8 {
    let (sources, _, program) = match compile(file, defines, Format::Human) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let cuda = match strata_cuda::emit_cuda(&program) {
        Ok(c) => c,
        Err(d) => {
            report(&[*d], &sources, Format::Human);
            return EXIT_PROGRAM_ERRORS;
        }
    };
    match strata_cuda::build(&cuda, arch, output) {
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

/// Checks, lowers and runs one program.
fn run_file(
    file: &PathBuf,
    device: Device,
    defines: &[(String, u64)],
    opts: &strata_sim::Options,
    format: Format,
) -> u8 {
    let (sources, id, program) = match compile(file, defines, format) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let result = match device {
        Device::Sim => strata_sim::run(&program, opts, &mut out).map(|_| ()),
        Device::Cpu => strata_cpu::run(&program, id, &mut out),
    };
    match result {
        Ok(_) => 0,
        Err(d) => {
            use std::io::Write;
            let _ = out.flush();
            report(&[*d], &sources, format);
            EXIT_PROGRAM_ERRORS
        }
    }
}

fn report(diags: &[Diagnostic], sources: &SourceMap, format: Format) {
    match format {
        Format::Human => strata_diag::render(diags, sources),
        Format::Short => {
            for d in diags {
                let file = d.primary.span.file;
                let src = sources.source(file);
                let lo = (d.primary.span.lo as usize).min(src.len());
                let line = sources.line_of(file, d.primary.span.lo);
                let line_start = src[..lo].rfind('\n').map_or(0, |i| i + 1);
                let col = src[line_start..lo].chars().count() + 1;
                let sev = match d.severity {
                    strata_diag::Severity::Error => "error",
                    strata_diag::Severity::Warning => "warning",
                    strata_diag::Severity::Note => "note",
                };
                eprintln!("{}:{line}:{col}: {sev}[{}]: {}", sources.name(file), d.code, d.message);
            }
        }
    }
}
