//! The Strata pipeline as a library: one [`Pipeline`] loads source files, parses and checks them,
//! lowers a program to the IR and runs it on a device. The `strata` command (`main.rs`) only reads
//! its command line, drives a pipeline and renders what it returns; another driver (a language
//! server, a build integration) uses the same calls and gets the same diagnostics.
//!
//! Nothing here prints: every failure is an [`Error`], either a usage or I/O message or a list of
//! diagnostics with their spans in [`Pipeline::sources`], and [`Error::exit_status`] says what the
//! command exits with.

pub mod lsp;

use std::path::{Path, PathBuf};
use strata_check::TargetProfile;
use strata_diag::{codes, Diagnostic, FileId, SourceMap, Span};
use strata_ir::ir;

/// Exit status for "the program has errors".
pub const EXIT_PROGRAM_ERRORS: u8 = 1;
/// Exit status for usage and I/O errors, and for a tool or driver missing from the machine.
pub const EXIT_USAGE: u8 = 2;

/// Why a phase stopped.
#[derive(Debug)]
pub enum Error {
    /// A usage or I/O error: the message, whose first line follows `error: ` and whose further
    /// lines (`  = help: …`) are advice.
    Usage(String),
    /// The program has errors, or the machine lacks a tool (E10xx): the diagnostics, whose spans
    /// point into [`Pipeline::sources`].
    Diagnostics(Vec<Diagnostic>),
    /// A tool refused what Strata generated (nvcc rejected the emitted CUDA): its message, which
    /// follows `error: `; exit status 1.
    Rejected(String),
}

impl Error {
    /// The exit status of the `strata` command for this error: 2 for usage and I/O errors and for
    /// a problem of the machine (an environment code), else 1.
    pub fn exit_status(&self) -> u8 {
        match self {
            Error::Usage(_) => EXIT_USAGE,
            Error::Diagnostics(ds) => exit_status_of(ds),
            Error::Rejected(_) => EXIT_PROGRAM_ERRORS,
        }
    }
}

/// The exit status for diagnostics that fail a command: 2 if one of them is a problem of the
/// machine (`codes::Phase::Environment`), else 1.
pub fn exit_status_of(diags: &[Diagnostic]) -> u8 {
    if diags.iter().any(|d| d.code.is_environment()) {
        EXIT_USAGE
    } else {
        EXIT_PROGRAM_ERRORS
    }
}

/// The device a program runs on.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Device {
    /// The simulator: reference semantics with race, divergence and memory checks.
    Sim,
    /// Native code on all CPU cores: C compiled with the system compiler.
    Cpu,
}

/// How [`Pipeline::run`] runs a program.
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub device: Device,
    /// The options of `sim` (its `args` are the program's arguments on both devices).
    pub sim: strata_sim::Options,
    /// Stop the program after this long (E0910); counts the run only, not compiling it.
    pub time_limit: Option<std::time::Duration>,
}

/// What [`Pipeline::emit`] emits.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// C for the cpu device.
    C,
    /// CUDA C++ for NVIDIA GPUs.
    Cuda,
    /// The IR, printed for debugging.
    Ir,
}

/// The text [`Pipeline::emit`] produced.
pub enum Emitted {
    /// A program (or the IR).
    Program(String),
    /// A kernel library: its source and the header declaring its launch functions.
    Library { source: String, header: String },
}

/// A program lowered to the IR, with what produced it.
pub struct Lowered {
    /// The file it was read from.
    pub file: FileId,
    /// The IR.
    pub program: ir::Program,
    /// The checker's environment of the program (signatures, views, constants), which kernel
    /// libraries need.
    pub env: strata_check::program::Program,
}

/// What [`Pipeline::analyse`] found in one file.
pub struct Analysis {
    /// The diagnostics `strata check` reports for the file.
    pub diagnostics: Vec<Diagnostic>,
    /// The module the parser recovered (items with syntax errors left out).
    pub module: strata_syntax::ast::Module,
    /// What the checker knows about positions in the file (types, resources, uniformity, memory
    /// spaces, the declarations variables refer to).
    pub facts: strata_check::query::Recorded,
}

/// One run of the phases over some files: the source texts, the `-D` overrides and the target
/// profile whose limits the checker enforces.
pub struct Pipeline {
    sources: SourceMap,
    defines: Vec<(String, u64)>,
    profile: &'static TargetProfile,
    prelude: Option<FileId>,
}

impl Pipeline {
    /// A pipeline with the `-D` overrides `defines`, for the limits of `profile`.
    pub fn new(defines: Vec<(String, u64)>, profile: &'static TargetProfile) -> Pipeline {
        Pipeline { sources: SourceMap::new(), defines, profile, prelude: None }
    }

    /// The source texts every diagnostic of this pipeline points into.
    pub fn sources(&self) -> &SourceMap {
        &self.sources
    }

    /// Reads a file ([`load_file`]).
    pub fn load(&mut self, path: &Path) -> Result<FileId, Error> {
        load_file(path, &mut self.sources)
    }

    /// Adds a source text that is not read from a file (an editor's buffer).
    pub fn add_source(&mut self, name: impl Into<String>, text: impl Into<String>) -> FileId {
        self.sources.add(name, text)
    }

    /// The prelude's file, added after the program's files the first time it is needed.
    fn prelude(&mut self) -> FileId {
        *self.prelude.get_or_insert_with(|| self.sources.add("<prelude>", strata_check::program::PRELUDE))
    }

    /// Parses and checks `files`: every diagnostic, in order (a file with syntax errors is not
    /// type checked: that would only report consequences of them). `Err` only for a `-D` that
    /// names no constant of the files (checked when they all parse).
    pub fn check(&mut self, files: &[FileId]) -> Result<Vec<Diagnostic>, Error> {
        self.check_files(files, false).map(|(all, _)| all)
    }

    /// [`Pipeline::check`] of one file, for an editor: the same diagnostics, the parsed module
    /// (what the parser recovered of it) and what the checker knows about its positions
    /// ([`strata_check::query`]; empty when the file has syntax errors).
    pub fn analyse(&mut self, file: FileId) -> Result<Analysis, Error> {
        let (diagnostics, mut checked) = self.check_files(&[file], true)?;
        let empty =
            || (strata_syntax::ast::Module { items: Vec::new(), span: Span::new(file, 0, 0) }, Default::default());
        let (module, facts) = checked.pop().unwrap_or_else(empty);
        Ok(Analysis { diagnostics, module, facts })
    }

    /// [`Pipeline::check`], also returning each file's module and, when `recording`, its facts.
    #[allow(clippy::type_complexity)]
    fn check_files(
        &mut self,
        files: &[FileId],
        recording: bool,
    ) -> Result<(Vec<Diagnostic>, Vec<(strata_syntax::ast::Module, strata_check::query::Recorded)>), Error> {
        let prelude = self.prelude();
        let parsed: Vec<_> = files.iter().map(|&id| strata_syntax::parse(id, self.sources.source(id))).collect();
        // A file with syntax errors may have lost a `const`; its errors are reported instead.
        if parsed.iter().all(|p| !strata_diag::has_errors(&p.diagnostics)) {
            defines_known(&self.defines, &parsed.iter().map(|p| &p.module).collect::<Vec<_>>())?;
        }
        let mut all = Vec::new();
        let mut modules = Vec::new();
        for parsed in parsed {
            let syntax_ok = !strata_diag::has_errors(&parsed.diagnostics);
            all.extend(parsed.diagnostics);
            let mut facts = strata_check::query::Recorded::default();
            if syntax_ok && recording {
                let checked =
                    strata_check::check_program_recording(&parsed.module, prelude, &self.defines, self.profile);
                all.extend(checked.diagnostics);
                facts = checked.types.query;
            } else if syntax_ok {
                all.extend(strata_check::check_module_for(&parsed.module, prelude, &self.defines, self.profile));
            }
            modules.push((parsed.module, facts));
        }
        Ok((all, modules))
    }

    /// Parses, checks and lowers the program in `file`.
    pub fn lower(&mut self, file: FileId) -> Result<Lowered, Error> {
        let prelude_id = self.prelude();
        let parsed = strata_syntax::parse(file, self.sources.source(file));
        if strata_diag::has_errors(&parsed.diagnostics) {
            return Err(Error::Diagnostics(parsed.diagnostics));
        }
        defines_known(&self.defines, &[&parsed.module])?;
        let checked = strata_check::check_program_for(&parsed.module, prelude_id, &self.defines, self.profile);
        if strata_diag::has_errors(&checked.diagnostics) {
            return Err(Error::Diagnostics(checked.diagnostics));
        }
        let prelude = strata_check::program::parse_prelude(prelude_id);
        let env = strata_check::program_env(&parsed.module, &prelude, &self.defines);
        // Run-time errors of the emitted C and CUDA name `file:line:col` of this file.
        let source = ir::SourceFile::new(file, self.sources.name(file), self.sources.source(file));
        let mut program = strata_ir::lower(&parsed.module, &env, &checked.types).map_err(Error::Diagnostics)?;
        program.sources = vec![source];
        Ok(Lowered { file, program, env })
    }

    /// Lowers a CUDA-C file (docs/cuda-c.md) read from `path`, with the program's own headers
    /// found next to it and in `include` ([`cuda_headers`]). A file of kernels without `main`
    /// whose GPUVerify header gives the launch becomes that launch, printing the buffers
    /// (kernel-only mode). `-D` does not apply. Every construct the front end refuses is
    /// reported, not only the first.
    pub fn lower_cuda_c(&mut self, path: &Path, file: FileId, include: &[PathBuf]) -> Result<ir::Program, Error> {
        if !self.defines.is_empty() {
            return Err(Error::Usage(
                "`-D` does not apply to CUDA-C files (`.cu`); edit the `#define`s instead".to_string(),
            ));
        }
        let headers = cuda_headers(path, file, include, &mut self.sources)?;
        let (name, text) = (self.sources.name(file).to_string(), self.sources.source(file).to_string());
        let no_main =
            matches!(strata_cudac::lower_items_with_headers(file, &text, &headers), Ok(p) if p.entry.is_none());
        let lowered = match strata_cudac::harness::header(&text) {
            Ok(Some(h)) if no_main => {
                let threads =
                    h.grid.iter().chain(&h.block).try_fold(1u64, |a, &d| a.checked_mul(d)).unwrap_or(u64::MAX);
                let launch = strata_cudac::harness::KernelLaunch {
                    kernel: None,
                    grid: h.grid,
                    block: h.block,
                    buffer_len: threads,
                    shared_bytes: 0,
                    args: Vec::new(),
                    print_buffers: true,
                };
                match strata_cudac::harness::kernel_only_with_headers(file, &name, &text, &headers, &launch) {
                    Ok(p) => Ok(p),
                    Err(strata_cudac::harness::HarnessError::Diag(ds)) => Err(ds),
                    Err(strata_cudac::harness::HarnessError::Usage(m)) => return Err(Error::Usage(m)),
                }
            }
            _ => strata_cudac::lower_all(file, &name, &text, &headers),
        };
        let mut program = lowered.map_err(Error::Diagnostics)?;
        program.sources = vec![ir::SourceFile::new(file, self.sources.name(file), self.sources.source(file))];
        for h in &headers {
            program.sources.push(ir::SourceFile::new(h.file, self.sources.name(h.file), self.sources.source(h.file)));
        }
        Ok(program)
    }

    /// A program to run or build must have a `main` (E0106, pointing at the start of its file).
    pub fn require_main(&self, program: &ir::Program, file: FileId) -> Result<(), Error> {
        if program.entry.is_some() {
            return Ok(());
        }
        let d = Diagnostic::error(
            codes::NO_MAIN,
            "the program has no `main` function",
            Span::new(file, 0, 0),
            "no `fn main` in this file",
        )
        .with_note("a program starts at `fn main() -[t: cpu.thread]-> ()`")
        .with_note(
            "help: a file without `main` is a kernel library: `strata emit --target c|cuda FILE -o OUT --header H` \
             compiles its kernels with launch functions (docs/libraries.md)",
        );
        Err(Error::Diagnostics(vec![d]))
    }

    /// Runs a lowered program's `main` on `opts.device`, its standard output going to `out`;
    /// its run-time error, if any.
    pub fn run(
        &self,
        program: &ir::Program,
        file: FileId,
        opts: &RunOptions,
        out: &mut dyn std::io::Write,
    ) -> Result<(), Error> {
        self.run_status(program, file, opts, out).map(|_| ())
    }

    /// [`Pipeline::run`], and the program's own exit status: 0, or the status of its `exit(n)`
    /// (CUDA-C's `exit(n)` and `return n;` in `main`, `strata_ir::ir::Builtin::Exit`).
    pub fn run_status(
        &self,
        program: &ir::Program,
        file: FileId,
        opts: &RunOptions,
        out: &mut dyn std::io::Write,
    ) -> Result<u8, Error> {
        // The limit counts the program's run only, not checking or compiling it.
        let deadline = opts.time_limit.map(|t| (std::time::Instant::now() + t, t));
        let sim = strata_sim::Options { deadline, ..opts.sim.clone() };
        let result = match opts.device {
            Device::Sim => strata_sim::run(program, &sim, out).map(|st| st.exit_status),
            Device::Cpu => {
                let run = strata_cpu::RunOptions {
                    time_limit: opts.time_limit,
                    main_span: main_name_span(program, &self.sources),
                    args: sim.args.clone(),
                };
                strata_cpu::run_status(program, file, out, &run)
            }
        };
        result.map_err(one)
    }

    /// The C or CUDA C++ of a lowered program, or its IR. With `library` (for `c` and `cuda`; a
    /// program without `main` always is one), its kernels as a library with a launch function
    /// each, named after `name` (the include guard `STRATA_SAXPY_H` for `saxpy`): docs/libraries.md.
    pub fn emit(&self, lowered: &Lowered, target: Target, library: bool, name: &str) -> Result<Emitted, Error> {
        let program = &lowered.program;
        if target != Target::Ir && (library || program.entry.is_none()) {
            let library =
                strata_ir::library::library(program, &lowered.env, lowered.file).map_err(Error::Diagnostics)?;
            let emitted = match target {
                Target::Cuda => strata_emit::emit_cuda_library(&library, name),
                _ => strata_emit::emit_c_library(&library, name),
            };
            let out = emitted.map_err(one)?;
            return Ok(Emitted::Library { source: out.source, header: out.header });
        }
        let text = match target {
            Target::Ir => format!("{program:#?}\n"),
            Target::Cuda => strata_cuda::emit_cuda(program).map_err(one)?,
            Target::C => strata_cpu::emit_c(program).map_err(one)?,
        };
        Ok(Emitted::Program(text))
    }

    /// Compiles a lowered program's CUDA C++ with nvcc into the executable `output`, for the
    /// pipeline's architecture. No nvcc is E1002 (listing where it was looked for).
    pub fn build_cuda(&self, lowered: &Lowered, output: &Path) -> Result<(), Error> {
        let cuda = strata_cuda::emit_cuda(&lowered.program).map_err(one)?;
        match strata_cuda::build(&cuda, self.profile.arch, output) {
            Ok(()) => Ok(()),
            Err(e @ strata_cuda::BuildError::Rejected(_)) => Err(Error::Rejected(e.to_string())),
            Err(strata_cuda::BuildError::NvccMissing(searched)) => {
                let mut looked = String::from("looked at:");
                for place in &searched {
                    looked.push_str("\n    ");
                    looked.push_str(place);
                }
                let d = Diagnostic::error(
                    codes::NVCC_MISSING,
                    "`nvcc` not found: `--target cuda` compiles with NVIDIA's CUDA compiler",
                    Span::new(lowered.file, 0, 0),
                    "",
                )
                .with_note(looked)
                .with_note(
                    "help: `scripts/setup-nvcc.sh` installs nvcc from PyPI into .venv (no GPU needed), or install \
                     NVIDIA's CUDA Toolkit and set NVCC=/path/to/nvcc, or STRATA_HOME to the Strata checkout whose \
                     .venv has it (`strata explain E1002`)",
                );
                Err(Error::Diagnostics(vec![d]))
            }
            Err(e) => Err(Error::Usage(e.to_string())),
        }
    }

    /// Builds the native executable of a lowered program (the cpu device's C, with its run-time
    /// checks) in the program cache, as [`Pipeline::run`] does on `cpu`, and returns its path.
    pub fn build_cpu(&self, program: &ir::Program) -> Result<std::path::PathBuf, Error> {
        strata_cpu::emit_c(program).and_then(|c| strata_cpu::build(&c, &strata_cpu::cache_dir())).map_err(one)
    }
}

/// The error of a phase that reports one diagnostic (boxed, as the phases return it).
#[allow(clippy::boxed_local)]
fn one(d: Box<Diagnostic>) -> Error {
    Error::Diagnostics(vec![*d])
}

/// Reads a source file into `sources`. A file that cannot be read is a usage error, one that is
/// not UTF-8 a program error (E0005 at the first bad byte; the file is added with the bad bytes
/// replaced, so the diagnostic can show it).
pub fn load_file(path: &Path, sources: &mut SourceMap) -> Result<FileId, Error> {
    let bytes = std::fs::read(path).map_err(|e| Error::Usage(format!("cannot read `{}`: {e}", path.display())))?;
    match String::from_utf8(bytes) {
        Ok(text) => Ok(sources.add(path.display().to_string(), text)),
        Err(e) => {
            // The lossy text keeps the valid prefix, so the offset is the same in both.
            let at = e.utf8_error().valid_up_to() as u32;
            let text = String::from_utf8_lossy(e.as_bytes()).into_owned();
            let id = sources.add(path.display().to_string(), text);
            let span = Span::new(id, at, at + '\u{fffd}'.len_utf8() as u32);
            let d = Diagnostic::error(codes::INVALID_UTF8, "this file is not valid UTF-8", span, "invalid byte here")
                .with_note("Strata source files are UTF-8 text; re-save the file as UTF-8");
            Err(Error::Diagnostics(vec![d]))
        }
    }
}

/// Every `-D` must name a `const` of the program (of one of `modules`): a misspelt name would
/// otherwise be ignored without a word. The first that does not is a usage error listing the
/// constants the program has.
pub fn defines_known(defines: &[(String, u64)], modules: &[&strata_syntax::ast::Module]) -> Result<(), Error> {
    let consts: Vec<&str> = modules
        .iter()
        .flat_map(|m| &m.items)
        .filter_map(|item| match item {
            strata_syntax::ast::Item::Const(c) => Some(c.name.name.as_str()),
            _ => None,
        })
        .collect();
    let Some((name, value)) = defines.iter().find(|(n, _)| !consts.contains(&n.as_str())) else { return Ok(()) };
    let mut names: Vec<&str> = consts.clone();
    names.sort_unstable();
    names.dedup();
    let listed = names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ");
    let files = if modules.len() > 1 { "programs define" } else { "program defines" };
    let mut message = format!("`-D {name}={value}`: the {files} no constant `{name}`\n");
    match strata_diag::suggest(name, names.iter().copied()) {
        Some(s) => message.push_str(&format!("  = help: did you mean `{s}`? (the constants are {listed})")),
        None if names.is_empty() => message.push_str(&format!(
            "  = note: the {files} no constants at all (`-D` overrides a `const N: nat = …;` item)"
        )),
        None => message.push_str(&format!("  = note: the constants are {listed}")),
    }
    Err(Error::Usage(message))
}

/// The name in `fn main`'s signature, where a run-time error of the whole program points.
pub fn main_name_span(program: &ir::Program, sources: &SourceMap) -> Option<Span> {
    let span = program.functions.iter().find(|f| f.name == "main")?.span;
    let text = sources.source(span.file).get(span.lo as usize..span.hi as usize)?;
    let at = span.lo + text.find("main")? as u32;
    Some(Span::new(span.file, at, at + 4))
}

/// The program's own headers that `file` (`id`, read from `file`) includes, directly or through
/// another header: `#include "name.h"` is looked for next to the including file, then in each
/// `-I` directory, as nvcc does. A header that is not found is left out (the front end refuses
/// its `#include`).
pub fn cuda_headers(
    file: &Path,
    id: FileId,
    include: &[PathBuf],
    sources: &mut SourceMap,
) -> Result<Vec<strata_cudac::Header>, Error> {
    let mut headers: Vec<strata_cudac::Header> = Vec::new();
    let dir = |p: &Path| p.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let mut queue = vec![(id, dir(file))];
    while let Some((from, from_dir)) = queue.pop() {
        for name in strata_cudac::quoted_includes(from, sources.source(from)) {
            if headers.iter().any(|h| h.name == name) {
                continue;
            }
            let found = std::iter::once(&from_dir).chain(include).map(|d| d.join(&name)).find(|p| p.is_file());
            let Some(path) = found else { continue };
            let hid = load_file(&path, sources)?;
            queue.push((hid, dir(&path)));
            let (shown, text) = (sources.name(hid).to_string(), sources.source(hid).to_string());
            headers.push(strata_cudac::Header { name, path: shown, file: hid, text });
        }
    }
    Ok(headers)
}
