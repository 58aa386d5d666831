//! `strata check FILE.cu` (docs/cuda-c.md): runs a CUDA-C program on `sim` under several
//! schedules — the default order and `--schedules N` random seeds — and reports every distinct
//! finding in CUDA terms: its kind, the threads as `blockIdx`/`threadIdx`, the accesses with
//! `file:line:col`, the variable and index, and a seed that shows it. A file of kernels without
//! `main` (or with a GPUVerify header, or given `--kernel`/`--grid`/`--block`) is checked in
//! kernel-only mode: one launch from a synthetic `main` (`strata_cudac::harness`).
//!
//! The findings come from `sim`'s record of the failure ([`strata_sim::Finding`]), not from its
//! messages. Exit status: 0 when every file is clean, 1 when anything is found (or a file is not
//! valid CUDA-C of the subset), 2 for usage errors.

use crate::{cuda_headers, load_file, report, Format, EXIT_PROGRAM_ERRORS, EXIT_USAGE};
use std::path::PathBuf;
use strata_cudac::harness::{self, HarnessError, KernelLaunch};
use strata_diag::{Diagnostic, SourceMap, Span};
use strata_sim::{AccessKind, Finding};

/// How `strata check` prints the findings of `.cu` files.
#[derive(Copy, Clone, PartialEq, Eq)]
pub enum CheckFormat {
    Human,
    Short,
    /// One JSON document on stdout (schema in docs/cuda-c.md).
    Json,
}

/// The options of `strata check` that concern CUDA-C files.
pub struct CudaCheck {
    pub format: CheckFormat,
    /// Random schedules besides the default order (seeds 1..=N).
    pub schedules: u64,
    /// Run only the random schedule of this seed.
    pub seed: Option<u64>,
    pub max_steps: Option<u64>,
    pub kernel: Option<String>,
    pub grid: Option<[u64; 3]>,
    pub block: Option<[u64; 3]>,
    pub buffer_len: Option<u64>,
    pub shared_bytes: u64,
    pub args: Vec<(String, String)>,
}

/// One distinct finding of a file.
struct Found {
    diag: Diagnostic,
    finding: Option<Finding>,
    /// The schedule that showed it first: `None` the default order, `Some(seed)` a random one.
    seed: Option<u64>,
    /// Whether the schedule ran at all (false: the file was refused before running).
    ran: bool,
}

/// How a file was checked.
struct Checked {
    file: String,
    kernel: Option<(String, [u64; 3], [u64; 3], u64)>,
    expect: Option<harness::Expect>,
    schedules: Vec<Option<u64>>,
    found: Vec<Found>,
}

/// `strata check` of CUDA-C files.
pub fn run(files: &[PathBuf], opts: &CudaCheck) -> u8 {
    if opts.kernel.is_some() && files.len() > 1 {
        eprintln!("error: `--kernel` applies to one file; check the files one at a time");
        return EXIT_USAGE;
    }
    let mut sources = SourceMap::new();
    let mut all = Vec::new();
    for path in files {
        let fmt = if opts.format == CheckFormat::Short { Format::Short } else { Format::Human };
        let id = match load_file(path, &mut sources, fmt) {
            Ok(id) => id,
            Err(code) => return code,
        };
        let headers = match cuda_headers(path, id, &[], &mut sources, fmt) {
            Ok(h) => h,
            Err(code) => return code,
        };
        match check_file(path, id, &headers, &sources, opts) {
            Ok(c) => all.push(c),
            Err(msg) => {
                eprintln!("error: {}: {msg}", path.display());
                return EXIT_USAGE;
            }
        }
    }
    match opts.format {
        CheckFormat::Json => outln!("{}", json(&all, &sources)),
        CheckFormat::Human | CheckFormat::Short => {
            let format = if opts.format == CheckFormat::Short { Format::Short } else { Format::Human };
            for c in &all {
                let diags: Vec<Diagnostic> =
                    c.found.iter().map(|f| in_cuda_terms(f, c, &sources, format == Format::Short)).collect();
                report(&diags, &sources, format);
                if format == Format::Human {
                    summary(c);
                }
            }
        }
    }
    if all.iter().any(|c| !c.found.is_empty()) {
        EXIT_PROGRAM_ERRORS
    } else {
        0
    }
}

/// The schedules of a check: the default order, then seeds 1..=N (or only `--seed`).
fn schedules(opts: &CudaCheck) -> Vec<Option<u64>> {
    match opts.seed {
        Some(s) => vec![Some(s)],
        None => std::iter::once(None).chain((1..=opts.schedules).map(Some)).collect(),
    }
}

/// Lowers (in kernel-only mode where it applies) and runs one file under every schedule. `Err`:
/// a usage error.
fn check_file(
    path: &std::path::Path,
    id: strata_diag::FileId,
    headers: &[strata_cudac::Header],
    sources: &SourceMap,
    opts: &CudaCheck,
) -> Result<Checked, String> {
    let text = sources.source(id);
    let header = harness::header(text)?;
    let mut checked = Checked {
        file: path.display().to_string(),
        kernel: None,
        expect: header.as_ref().map(|h| h.expect.clone()),
        schedules: schedules(opts),
        found: Vec::new(),
    };
    let refused = |d: Box<Diagnostic>| Found { diag: *d, finding: None, seed: None, ran: false };
    let has_main = match strata_cudac::lower_items_all(id, sources.name(id), text, headers) {
        Ok(p) => p.entry.is_some(),
        Err(ds) => {
            checked.found.extend(ds.into_iter().map(|d| refused(Box::new(d))));
            return Ok(checked);
        }
    };
    let kernel_mode =
        opts.kernel.is_some() || opts.grid.is_some() || opts.block.is_some() || header.is_some() || !has_main;
    let program = if kernel_mode {
        let (grid, block) = match (opts.grid, opts.block, &header) {
            (Some(g), Some(b), _) => (g, b),
            (g, b, Some(h)) => (g.unwrap_or(h.grid), b.unwrap_or(h.block)),
            _ => {
                let why = if has_main { "kernel-only mode" } else { "the file has no `main`, so kernel-only mode" };
                return Err(format!(
                    "{why} needs `--grid G --block B` (or a GPUVerify header `//--blockDim=… --gridDim=…`)"
                ));
            }
        };
        let threads = grid.iter().chain(&block).try_fold(1u64, |a, &d| a.checked_mul(d)).unwrap_or(u64::MAX);
        let launch = KernelLaunch {
            kernel: opts.kernel.clone(),
            grid,
            block,
            buffer_len: opts.buffer_len.unwrap_or(threads),
            shared_bytes: opts.shared_bytes,
            args: opts.args.clone(),
            print_buffers: false,
        };
        match harness::kernel_only_with_headers(id, sources.name(id), text, headers, &launch) {
            Ok(p) => {
                let main = p.entry.map(|e| &p.functions[e].body);
                let launched = main.into_iter().flatten().find_map(|s| match s {
                    strata_ir::ir::Stmt::Launch { kernel, .. } => Some(p.functions[*kernel].name.clone()),
                    _ => None,
                });
                let name = launched.unwrap_or_default();
                checked.kernel = Some((name, grid, block, launch.buffer_len));
                p
            }
            Err(HarnessError::Usage(m)) => return Err(m),
            Err(HarnessError::Diag(ds)) => {
                checked.found.extend(ds.into_iter().map(|d| refused(Box::new(d))));
                return Ok(checked);
            }
        }
    } else {
        match strata_cudac::lower_all(id, sources.name(id), text, headers) {
            Ok(p) => p,
            Err(ds) => {
                checked.found.extend(ds.into_iter().map(|d| refused(Box::new(d))));
                return Ok(checked);
            }
        }
    };
    let mut program = program;
    program.sources = vec![strata_ir::ir::SourceFile::new(id, sources.name(id), text)];
    for h in headers {
        program.sources.push(strata_ir::ir::SourceFile::new(h.file, sources.name(h.file), sources.source(h.file)));
    }
    let mut keys: Vec<Vec<(u32, u32)>> = Vec::new();
    for &seed in &checked.schedules.clone() {
        let sim = strata_sim::Options {
            max_steps: opts.max_steps.unwrap_or(strata_sim::Options::default().max_steps),
            random_seed: seed,
            ..strata_sim::Options::default()
        };
        let (r, finding) = strata_sim::run_with_finding(&program, &sim, &mut std::io::sink(), &mut std::io::sink());
        let d = match r {
            Err(d) => d,
            // The program's own check failed: `exit(n)` or `return n;` in `main` with n != 0.
            Ok(st) if st.exit_status != 0 => Box::new(Diagnostic::error(
                strata_diag::codes::RUN_ASSERTION,
                format!("the program exited with status {}", st.exit_status),
                st.exit_span.unwrap_or(Span::DUMMY),
                "the program ends here with a failure status",
            )),
            Ok(_) => continue,
        };
        let key = key_of(&d, finding.as_ref());
        if !keys.contains(&key) {
            keys.push(key);
            checked.found.push(Found { diag: *d, finding, seed, ran: true });
        }
    }
    Ok(checked)
}

/// What makes two findings the same: the code and the source positions of their accesses (in
/// either order).
fn key_of(d: &Diagnostic, f: Option<&Finding>) -> Vec<(u32, u32)> {
    let code = d.code.as_str().trim_start_matches('E').parse::<u32>().unwrap_or(0);
    let mut k = vec![(code, 0)];
    match f {
        Some(f) if !f.accesses.is_empty() => k.extend(f.accesses.iter().map(|a| (a.span.lo, a.span.hi))),
        _ => k.push((d.primary.span.lo, d.primary.span.hi)),
    }
    // A race with work that is not one thread (an asynchronous copy, the host, another stream's
    // kernel): its other side is only a label.
    if f.is_none_or(|f| f.accesses.len() < 2) {
        k.extend(d.secondary.iter().map(|l| (l.span.lo, l.span.hi)));
    }
    // A race seen from either side is one finding.
    k[1..].sort_unstable();
    k
}

/// The name of a finding's kind, for people and tools.
fn kind(code: &str) -> &'static str {
    match code {
        "E0901" => "data-race",
        "E0902" => "barrier-divergence",
        "E0903" => "out-of-bounds",
        "E0904" => "uninitialised-read",
        "E0905" => "wrong-memory-space",
        "E0906" => "use-after-free",
        "E0907" => "step-limit",
        "E0909" => "arithmetic",
        "E0910" => "time-limit",
        c if c.starts_with("E08") => "unsupported",
        _ => "error",
    }
}

fn dim3(d: [u64; 3]) -> String {
    format!("({}, {}, {})", d[0], d[1], d[2])
}

fn thread(a: &strata_sim::Access) -> String {
    format!("blockIdx {} / threadIdx {}", dim3(a.block), dim3(a.thread))
}

fn verb(k: AccessKind) -> &'static str {
    match k {
        AccessKind::Read => "read by",
        AccessKind::Write => "write by",
        AccessKind::Barrier => "barrier reached by",
        AccessKind::Exit => "never reached by",
        AccessKind::Executes => "executed by",
    }
}

/// The command that shows a finding again.
fn reproduce(c: &Checked, seed: Option<u64>) -> String {
    let sched = seed.map_or_else(String::new, |s| format!(" --schedule random --seed {s}"));
    match &c.kernel {
        None => format!("strata run{sched} {}", c.file),
        Some((k, g, b, len)) => {
            let d = |x: [u64; 3]| format!("{},{},{}", x[0], x[1], x[2]);
            let seed = seed.map_or_else(|| " --schedules 0".to_string(), |s| format!(" --seed {s}"));
            format!("strata check {} --kernel {k} --grid {} --block {} --buffer-len {len}{seed}", c.file, d(*g), d(*b))
        }
    }
}

/// A finding as a diagnostic in CUDA terms: each thread's access labelled with its
/// `blockIdx`/`threadIdx`, the variable and index, and the schedule that shows it.
fn in_cuda_terms(f: &Found, c: &Checked, sources: &SourceMap, short: bool) -> Diagnostic {
    let d = &f.diag;
    if !f.ran {
        return d.clone();
    }
    let mut out = Diagnostic { secondary: Vec::new(), notes: Vec::new(), ..d.clone() };
    if let Some(fi) = &f.finding {
        for (i, a) in fi.accesses.iter().enumerate() {
            let text = format!("{} {}", verb(a.kind), thread(a));
            if a.span == Span::DUMMY {
                out.notes.push(text);
            } else if i == 0 {
                out.primary = strata_diag::Label::new(a.span, text);
            } else {
                out.secondary.push(strata_diag::Label::new(a.span, text));
            }
        }
        if let (Some(b), Some(i)) = (&fi.buffer, fi.index) {
            let space = fi.space.map_or_else(String::new, |s| format!(" in `{s}`"));
            let field = fi.field.map_or_else(String::new, |k| format!(", field {k}"));
            out.notes.push(format!("variable `{b}`, index {i}{field}{space}"));
        }
    }
    // The diagnostic's other labels where the record has no thread for them (a race with an
    // asynchronous copy or the host).
    if f.finding.as_ref().is_none_or(|fi| fi.accesses.len() < 2) {
        out.secondary.extend(d.secondary.iter().cloned());
    }
    // The short form is one line: the threads, and where the other accesses are.
    if short {
        if let Some(fi) = &f.finding {
            let parts: Vec<String> = fi
                .accesses
                .iter()
                .enumerate()
                .map(|(i, a)| {
                    let at = if i == 0 || a.span == Span::DUMMY {
                        String::new()
                    } else {
                        let (line, col) = sources.line_col(a.span.file, a.span.lo);
                        format!(" at {}:{line}:{col}", sources.name(a.span.file))
                    };
                    format!("{} {}{at}", verb(a.kind), thread(a))
                })
                .collect();
            if !parts.is_empty() {
                out.message = format!("{}: {}", out.message, parts.join("; "));
            }
        }
        let seed = f.seed.map_or_else(|| "default schedule".to_string(), |s| format!("seed {s}"));
        out.message = format!("{} [{seed}]", out.message);
    }
    out.notes.extend(d.notes.iter().cloned());
    let shown = match f.seed {
        None => "shown by the default schedule".to_string(),
        Some(s) => format!("shown by random schedule {s}"),
    };
    out.notes.push(format!("{shown}: `{}` reproduces it", reproduce(c, f.seed)));
    out
}

/// The last line of the human form: what was run and what it found.
fn summary(c: &Checked) {
    let n = c.schedules.len();
    let scheds = match (c.schedules.first(), n) {
        (Some(Some(s)), 1) => format!("random schedule {s}"),
        (_, 1) => "the default schedule".to_string(),
        _ => format!("{n} schedules (the default order and random seeds 1-{})", n - 1),
    };
    let what = match &c.kernel {
        Some((k, g, b, len)) => {
            format!(" (kernel `{k}`, grid {}, block {}, buffers of {len} elements)", dim3(*g), dim3(*b))
        }
        None => String::new(),
    };
    let ran = c.found.iter().all(|f| f.ran);
    match c.found.len() {
        0 => outln!("{}{what}: clean under {scheds}", c.file),
        _ if !ran => outln!("{}: not checked: the file is not in the supported CUDA-C subset", c.file),
        k => outln!("{}{what}: {k} finding{} under {scheds}", c.file, if k == 1 { "" } else { "s" }),
    }
}

fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn opt_u64(v: Option<u64>) -> String {
    v.map_or_else(|| "null".to_string(), |v| v.to_string())
}

fn arr3(d: [u64; 3]) -> String {
    format!("[{}, {}, {}]", d[0], d[1], d[2])
}

/// The JSON document of `--format json` (schema in docs/cuda-c.md).
fn json(all: &[Checked], sources: &SourceMap) -> String {
    let loc = |s: Span| {
        if s == Span::DUMMY {
            return "null".to_string();
        }
        let (line, col) = sources.line_col(s.file, s.lo);
        format!("{{\"file\": {}, \"line\": {line}, \"col\": {col}}}", esc(sources.name(s.file)))
    };
    let mut files = Vec::new();
    let mut findings = Vec::new();
    for c in all {
        let kernel = match &c.kernel {
            Some((k, g, b, len)) => format!(
                "{{\"name\": {}, \"grid\": {}, \"block\": {}, \"buffer_len\": {len}}}",
                esc(k),
                arr3(*g),
                arr3(*b)
            ),
            None => "null".to_string(),
        };
        let expect = match &c.expect {
            None => "null".to_string(),
            Some(harness::Expect::Pass) => "\"pass\"".to_string(),
            Some(harness::Expect::Xfail(r)) => esc(&format!("xfail:{r}")),
        };
        let scheds: Vec<String> = c.schedules.iter().map(|s| opt_u64(*s)).collect();
        files.push(format!(
            "{{\"file\": {}, \"kernel\": {kernel}, \"expect\": {expect}, \"schedules\": [{}], \"findings\": {}}}",
            esc(&c.file),
            scheds.join(", "),
            c.found.len()
        ));
        for f in &c.found {
            let d = &f.diag;
            let (mut locs, mut threads) = (Vec::new(), Vec::new());
            match &f.finding {
                Some(fi) if f.ran => {
                    for a in &fi.accesses {
                        locs.push(loc(a.span));
                        threads.push(format!(
                            "{{\"blockIdx\": {}, \"threadIdx\": {}, \"access\": \"{}\"}}",
                            arr3(a.block),
                            arr3(a.thread),
                            a.kind.name()
                        ));
                    }
                    // A side that is not a thread (an asynchronous copy, the host): its location
                    // follows the threads'.
                    if fi.accesses.is_empty() {
                        locs.push(loc(d.primary.span));
                    }
                    if fi.accesses.len() < 2 {
                        locs.extend(d.secondary.iter().map(|l| loc(l.span)));
                    }
                }
                _ => {
                    locs.push(loc(d.primary.span));
                    locs.extend(d.secondary.iter().map(|l| loc(l.span)));
                }
            }
            let fi = f.finding.as_ref();
            let variable = fi.and_then(|x| x.buffer.as_deref()).map_or_else(|| "null".to_string(), esc);
            let space = fi.and_then(|x| x.space).map_or_else(|| "null".to_string(), esc);
            let seed = if f.ran { opt_u64(f.seed) } else { "null".to_string() };
            let repro = if f.ran { esc(&reproduce(c, f.seed)) } else { "null".to_string() };
            findings.push(format!(
                "{{\"file\": {}, \"kind\": \"{}\", \"code\": \"{}\", \"message\": {}, \"locations\": [{}], \"threads\": [{}], \
                 \"variable\": {variable}, \"index\": {}, \"field\": {}, \"space\": {space}, \"default_schedule\": {}, \"seed\": {seed}, \
                 \"reproduce\": {repro}}}",
                esc(&c.file),
                kind(d.code.as_str()),
                d.code.as_str(),
                esc(&d.message),
                locs.join(", "),
                threads.join(", "),
                opt_u64(fi.and_then(|x| x.index)),
                opt_u64(fi.and_then(|x| x.field)),
                f.ran && f.seed.is_none(),
            ));
        }
    }
    format!("{{\"version\": 1, \"files\": [{}], \"findings\": [{}]}}", files.join(", "), findings.join(", "))
}
