//! Mutation soundness test: every program of `examples/` and `tests/corpus/` that the checker
//! accepts (spec `check-pass`, the default, or `run-pass`; files with `unsafe` or a `known-bug`
//! are left out) is broken on purpose by one safety-breaking textual mutation at a time:
//!
//! | kind | mutation |
//! |---|---|
//! | `delete sync` | a `sync(…);`/`sync;` is deleted |
//! | `drop selection` | a `[[x]]` is deleted |
//! | `swap selection` | `[[x]]` becomes `[[y]]`, another selection of the file |
//! | `selection to [0]` | `[[x]]` becomes `[0]` |
//! | `copy param into thread` | `let c = p; c[0] = c[0];` at the start of a `sched` body, `p` a `&uniq` parameter |
//! | `move write into split arm` | an assignment is moved to the start of a `split` arm (the nearest one before it and after it), in a `sched` over the arm's threads with the binder of the `sched` it was in |
//! | `index + 1` | a static index `[i]` becomes `[i + 1]` |
//! | `widen take_left` | `take_left::<n>` becomes `take_left::<n + 1>` |
//! | `swap take_left/right` | `take_left` becomes `take_right` or the other way round |
//! | `weaken condition` | in an `if` condition, a conjunct of `&&` is dropped or a comparison is negated (`>=` becomes `<`, …), so that facts from conditions would be wrong |
//! | `delete stream sync` | a `stream_sync(…);`/`device_sync();` is deleted |
//! | `swap stream` | the stream of a launch (`<<<…, s>>>`) or asynchronous copy (`&s)`) becomes another stream of the file |
//! | `selection to run-time index` | `[[x]]` becomes `[x.idx]` or `[x.idx + 1u32]`: the same element, or a neighbour's, read at an index the checker cannot bound (a write there is E0302) |
//! | `jump on a coordinate` | the condition of the `if` around a `break;`/`continue;` becomes `x.idx == 0u32`, `x` a `sched` binder of the file, so the jump may depend on the block, warp or thread |
//!
//! Most mutants are rejected. Every mutant the checker still accepts is lowered and, if it has a
//! `main`, run on `sim` with the deterministic schedule and [`RANDOM_SEEDS`] random ones. A data
//! race (E0901), barrier divergence (E0902), out-of-bounds access (E0903, except at an
//! `atomic_fetch_add_at` and at a run-time index, checked when they run by design), wrong-device access
//! (E0905) or use after free (E0906) on an accepted mutant is a soundness bug: the mutant is saved
//! to `target/tmp/mutation-<file>-<n>.strata`, listed at the end, and the test fails. Other run
//! errors (an assertion, E0908, since the mutant computes something else; uninitialised reads,
//! E0904; arithmetic errors, E0909; the step limit, E0907) are counted, not failures: the checker
//! does not promise to prevent them.
//!
//! At most [`PER_KIND`] mutants per kind and file are tried, spread evenly over the file;
//! `STRATA_MUTATION_PER_KIND=n` changes that, `0` tries every mutant. `STRATA_MUTATION_JOBS=n` sets the worker
//! threads, `STRATA_MUTATION_FILTER=text` keeps the files whose path contains `text`,
//! `STRATA_MUTATION_DUMP=1` prints the change of every accepted mutant that runs.
//!
//! Every [`CPU_EVERY`]th accepted mutant that runs clean on `sim` (`STRATA_MUTATION_CPU_EVERY=n`;
//! `1` all of them, `0` none) also runs on `cpu`, built at the device's flags and at `-O0`: both
//! must print what `sim` printed (a difference is a failure, as in the random-program test).

use std::collections::{BTreeMap, BTreeSet};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use strata_diag::FileId;

const PROGRAM: FileId = FileId(0);
const PRELUDE: FileId = FileId(1);
/// Random schedules each accepted mutant runs under, besides the deterministic one.
const RANDOM_SEEDS: [u64; 3] = [1, 0x5eed, 0xdead_beef];
/// Mutants per kind and file by default (0: all of them). 4 keeps the test near two minutes on
/// the 2-core CI machine; the big examples have the most mutants and the longest runs.
const PER_KIND: usize = 4;
/// Every how many accepted mutants that run clean on `sim` also run on `cpu` by default: each
/// costs two C builds (about a second of CPU each).
const CPU_EVERY: usize = 16;
/// Run errors that an accepted program must never have.
const PROMISED: [&str; 5] = ["E0901", "E0902", "E0903", "E0905", "E0906"];

const KINDS: [&str; 14] = [
    "delete sync",
    "drop selection",
    "swap selection",
    "selection to [0]",
    "copy param into thread",
    "move write into split arm",
    "index + 1",
    "widen take_left",
    "swap take_left/right",
    "weaken condition",
    "delete stream sync",
    "swap stream",
    "selection to run-time index",
    "jump on a coordinate",
];

// ------------------------------------------------------------------------------------------------
// The programs.

/// An accepted program of the corpus: its path, text and `-D` definitions.
struct Seed {
    path: PathBuf,
    text: String,
    defines: Vec<(String, u64)>,
    max_steps: Option<u64>,
    /// `//@ no-run:` or no `main`: checked only.
    runnable: bool,
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|e| e == "strata") {
            out.push(p);
        }
    }
}

/// Reads the header directives of a corpus file; `None` if the file is not an accepted program.
fn seed(path: PathBuf) -> Option<Seed> {
    let text = std::fs::read_to_string(&path).ok()?;
    let mut mode = "check-pass";
    let mut defines = Vec::new();
    let mut max_steps = None;
    let mut runnable = true;
    for line in text.lines() {
        let t = line.trim_start();
        if !(t.is_empty() || t.starts_with("//")) {
            break;
        }
        let Some(d) = t.strip_prefix("//@") else { continue };
        let d = d.trim();
        match d {
            "parse-fail" | "check-fail" | "run-fail" | "check-pass" | "run-pass" => mode = d,
            _ if d.starts_with("known-bug:") => return None,
            _ if d.starts_with("no-run:") => runnable = false,
            _ if d.starts_with("args:") => {
                let words: Vec<&str> = d["args:".len()..].split_whitespace().collect();
                for (i, w) in words.iter().enumerate() {
                    if *w == "-D" {
                        if let Some((name, value)) = words.get(i + 1).and_then(|kv| kv.split_once('=')) {
                            defines.push((name.to_string(), value.parse().ok()?));
                        }
                    } else if *w == "--max-steps" {
                        max_steps = words.get(i + 1).and_then(|v| v.parse().ok());
                    }
                }
            }
            _ => {}
        }
    }
    if !matches!(mode, "check-pass" | "run-pass") || text.contains("unsafe") {
        return None;
    }
    Some(Seed { path, text, defines, max_steps, runnable })
}

// ------------------------------------------------------------------------------------------------
// The mutations.

struct Mutant {
    kind: &'static str,
    text: String,
}

/// The byte ranges of the code of `text` (not of comments): a line's part before `//`.
fn code_lines(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        let code = line.split("//").next().unwrap_or("");
        out.push((start, code.trim_end_matches(['\n', '\r'])));
        start += line.len();
    }
    out
}

/// Every occurrence (byte offset) of `pat` in the code of `text`.
fn occurrences(text: &str, pat: &str) -> Vec<usize> {
    let mut out = Vec::new();
    for (start, code) in code_lines(text) {
        let mut from = 0;
        while let Some(i) = code[from..].find(pat) {
            out.push(start + from + i);
            from += i + pat.len();
        }
    }
    out
}

/// The selections `[[…]]` of the code: range and content.
fn selections(text: &str) -> Vec<(usize, usize, String)> {
    let mut out = Vec::new();
    for i in occurrences(text, "[[") {
        // A view-array type `[[T; n]]` is not a selection.
        if let Some(len) = text[i + 2..].find("]]") {
            let inner = &text[i + 2..i + 2 + len];
            if !inner.contains(['[', ';', '\n']) && !inner.trim().is_empty() {
                out.push((i, i + 2 + len + 2, inner.to_string()));
            }
        }
    }
    out
}

fn replace(text: &str, from: usize, to: usize, with: &str) -> String {
    format!("{}{with}{}", &text[..from], &text[to..])
}

/// Whether `s` is an index expression worth shifting: names, numbers and `+ - * /`.
fn simple_index(s: &str) -> bool {
    !s.trim().is_empty()
        && !s.contains("..")
        && s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | ' ' | '+' | '-' | '*' | '/' | '(' | ')'))
}

fn mutants(text: &str) -> Vec<Mutant> {
    let mut out = Vec::new();
    let mut push = |kind: &'static str, t: String| out.push(Mutant { kind, text: t });
    // Barriers.
    for i in occurrences(text, "sync") {
        let rest = &text[i..];
        let before = text[..i].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let end = if rest.starts_with("sync;") {
            Some(5)
        } else if rest.starts_with("sync(") {
            rest.find(')').filter(|&j| rest[j + 1..].starts_with(';')).map(|j| j + 2)
        } else {
            None
        };
        if let Some(len) = end {
            push("delete sync", replace(text, i, i + len, ""));
        }
    }
    // Streams: their synchronisations, and the stream work is issued on.
    for pat in ["stream_sync(", "device_sync("] {
        for i in occurrences(text, pat) {
            if let Some(j) = text[i..].find(");") {
                push("delete stream sync", replace(text, i, i + j + 2, ""));
            }
        }
    }
    let streams: Vec<String> = occurrences(text, "= Stream::new()")
        .into_iter()
        .filter_map(|i| text[..i].trim_end().rsplit([' ', '\n']).next().map(str::to_string))
        .filter(|n| !n.is_empty())
        .collect();
    if streams.len() > 1 {
        for (k, st) in streams.iter().enumerate() {
            let other = &streams[(k + 1) % streams.len()];
            for (pat, at) in [(format!(" {st}>>>"), 1), (format!("&{st});"), 1)] {
                for i in occurrences(text, &pat) {
                    push("swap stream", replace(text, i + at, i + at + st.len(), other));
                }
            }
        }
    }
    // Selections.
    let sels = selections(text);
    let names: BTreeSet<String> = sels.iter().map(|(_, _, s)| s.clone()).collect();
    let names: Vec<String> = names.into_iter().collect();
    for (from, to, inner) in &sels {
        push("drop selection", replace(text, *from, *to, ""));
        push("selection to [0]", replace(text, *from, *to, "[0]"));
        if names.len() > 1 {
            let k = names.iter().position(|n| n == inner).unwrap_or(0);
            let other = &names[(k + 1) % names.len()];
            push("swap selection", replace(text, *from, *to, &format!("[[{other}]]")));
        }
        if inner.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            push("selection to run-time index", replace(text, *from, *to, &format!("[{inner}.idx]")));
            push("selection to run-time index", replace(text, *from, *to, &format!("[{inner}.idx + 1u32]")));
        }
    }
    // Jumps: the `if` around a `break;`/`continue;` decided by a coordinate instead.
    let binders: Vec<String> = occurrences(text, "sched(")
        .into_iter()
        .filter_map(|i| {
            let rest = &text[i..];
            let close = rest.find(')')?;
            let b = rest[close + 1..].split_whitespace().next()?;
            b.chars().all(|c| c.is_ascii_alphanumeric() || c == '_').then(|| b.to_string())
        })
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let code = code_lines(text);
    for (n, (_, line)) in code.iter().enumerate() {
        let t = line.trim();
        if !(t == "break;" || t == "continue;" || t.starts_with("break;") || t.starts_with("continue;")) {
            continue;
        }
        // The nearest `if … {` above it, at most three lines up.
        let Some((start, l)) =
            code[n.saturating_sub(3)..n].iter().rev().find(|(_, l)| l.trim_start().starts_with("if "))
        else {
            continue;
        };
        let (Some(at), Some(brace)) = (l.find("if "), l.rfind(" {")) else { continue };
        if at + 3 >= brace {
            continue;
        }
        for b in binders.iter().take(3) {
            push("jump on a coordinate", replace(text, start + at + 3, start + brace, &format!("{b}.idx == 0u32")));
        }
    }
    // Static indices `[i]` (not types `[T; n]`, ranges, selections or view arrays).
    for (start, code) in code_lines(text) {
        let b = code.as_bytes();
        for (j, &c) in b.iter().enumerate() {
            if c != b'[' || b.get(j + 1) == Some(&b'[') || (j > 0 && b[j - 1] == b'[') {
                continue;
            }
            // Indexing follows a name, `]` or `)`.
            if j == 0 || !(b[j - 1].is_ascii_alphanumeric() || matches!(b[j - 1], b'_' | b']' | b')')) {
                continue;
            }
            if let Some(len) = code[j + 1..].find(']') {
                let inner = &code[j + 1..j + 1 + len];
                if simple_index(inner) {
                    let (from, to) = (start + j + 1, start + j + 1 + len);
                    push("index + 1", replace(text, from, to, &format!("{inner} + 1")));
                }
            }
        }
    }
    // Views.
    for i in occurrences(text, "take_left::<") {
        let from = i + "take_left::<".len();
        // The size argument ends at the `>` that closes the `<`.
        let mut depth = 1;
        let mut end = None;
        for (k, c) in text[from..].char_indices() {
            match c {
                '<' => depth += 1,
                '>' => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(from + k);
                        break;
                    }
                }
                '\n' => break,
                _ => {}
            }
        }
        if let Some(end) = end {
            push("widen take_left", replace(text, from, end, &format!("({}) + 1", &text[from..end])));
        }
        push("swap take_left/right", replace(text, i, i + "take_left".len(), "take_right"));
    }
    for i in occurrences(text, "take_right::<") {
        push("swap take_left/right", replace(text, i, i + "take_right".len(), "take_left"));
    }
    // `if` conditions, which may give their branches facts about sizes.
    for (start, code) in code_lines(text) {
        let Some(at) = code.find("if ") else { continue };
        if !(at == 0 || code[..at].ends_with(' ')) {
            continue;
        }
        let Some(brace) = code.rfind(" {") else { continue };
        let (from, to) = (start + at + 3, start + brace);
        if from >= to {
            continue;
        }
        let cond = &text[from..to];
        let conjuncts: Vec<&str> = cond.split(" && ").collect();
        if conjuncts.len() > 1 {
            for k in 0..conjuncts.len() {
                let kept: Vec<&str> = conjuncts.iter().enumerate().filter(|(j, _)| *j != k).map(|(_, c)| *c).collect();
                push("weaken condition", replace(text, from, to, &kept.join(" && ")));
            }
        }
        for (k, c) in conjuncts.iter().enumerate() {
            let negated = [
                (" >= ", " < "),
                (" <= ", " > "),
                (" == ", " != "),
                (" != ", " == "),
                (" < ", " >= "),
                (" > ", " <= "),
            ]
            .iter()
            .find_map(|(op, neg)| c.find(op).map(|i| format!("{}{neg}{}", &c[..i], &c[i + op.len()..])));
            if let Some(n) = negated {
                let mut parts: Vec<String> = conjuncts.iter().map(|x| x.to_string()).collect();
                parts[k] = n;
                push("weaken condition", replace(text, from, to, &parts.join(" && ")));
            }
        }
    }
    // A `&uniq` parameter of a GPU function copied into every thread of a `sched` and written.
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut offsets = Vec::new();
    let mut o = 0;
    for l in &lines {
        offsets.push(o);
        o += l.len();
    }
    let mut params: Vec<String> = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        if code.trim_start().starts_with("fn ") {
            // The signature may span several lines, up to the `{`.
            let mut sig = String::new();
            for l in &lines[n..] {
                sig.push_str(l.split("//").next().unwrap_or(""));
                if l.contains('{') || l.trim_end().ends_with(';') {
                    break;
                }
            }
            params.clear();
            if sig.contains("gpu.") && sig.contains("-[") {
                for part in sig.split(['(', ',']) {
                    if let Some((name, ty)) = part.split_once(':') {
                        let name = name.trim().trim_start_matches("mut ").trim();
                        if ty.trim_start().starts_with("&uniq")
                            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                        {
                            params.push(name.to_string());
                        }
                    }
                }
            }
        }
        let t = code.trim_start();
        if t.starts_with("sched") && t.trim_end().ends_with('{') {
            let indent = &line[..line.len() - line.trim_start().len()];
            for p in params.iter().take(2) {
                let at = offsets[n] + line.len();
                let ins = format!("{indent}    let c_mut = {p};\n{indent}    c_mut[0] = c_mut[0];\n");
                push("copy param into thread", replace(text, at, at, &ins));
            }
        }
    }
    // An assignment moved to the start of a split arm (before or after it in the text).
    let arms: Vec<usize> = (0..lines.len())
        .filter(|&n| {
            let c = lines[n].split("//").next().unwrap_or("").trim();
            c.ends_with("=> {") && !c.starts_with("//")
        })
        .collect();
    for (n, line) in lines.iter().enumerate() {
        let c = line.split("//").next().unwrap_or("").trim();
        let is_write = !c.starts_with("let ")
            && c.ends_with(';')
            && c.find('=').is_some_and(|k| {
                let b = c.as_bytes();
                k > 0 && !matches!(b[k - 1], b'=' | b'!' | b'<' | b'>') && b.get(k + 1) != Some(&b'=')
            });
        if !is_write {
            continue;
        }
        let before = arms.iter().rev().find(|&&a| a < n);
        let after = arms.iter().find(|&&a| a > n);
        // The `sched` that runs the write: `(dims, binder)` of the nearest enclosing one.
        let depth = |l: &str| l.len() - l.trim_start().len();
        let sched =
            lines[..n].iter().rev().find(|l| depth(l) < depth(line) && l.trim_start().starts_with("sched(")).and_then(
                |l| {
                    let t = l.trim_start();
                    let close = t.find(')')?;
                    let binder = t[close + 1..].split_whitespace().next()?;
                    Some((t[..close + 1].to_string(), binder.to_string()))
                },
            );
        for &a in before.into_iter().chain(after) {
            let indent = &lines[a][..lines[a].len() - lines[a].trim_start().len()];
            let arm = lines[a].split_whitespace().next().unwrap_or("");
            // In the arm, run by the arm's threads under the write's own binder name, or as is.
            let moved = match &sched {
                Some((dims, binder)) if a != n => format!("{indent}    {dims} {binder} in {arm} {{ {c} }}\n"),
                _ => format!("{indent}    {c}\n"),
            };
            let mut t = String::new();
            for (k, l) in lines.iter().enumerate() {
                if k != n {
                    t.push_str(l);
                }
                if k == a {
                    t.push_str(&moved);
                }
            }
            push("move write into split arm", t);
        }
    }
    out
}

/// At most `per_kind` mutants of each kind, spread evenly over the file (0: all of them).
fn sample(all: Vec<Mutant>, per_kind: usize) -> Vec<Mutant> {
    if per_kind == 0 {
        return all;
    }
    let mut by_kind: BTreeMap<&'static str, Vec<Mutant>> = BTreeMap::new();
    for m in all {
        by_kind.entry(m.kind).or_default().push(m);
    }
    let mut out = Vec::new();
    for (_, ms) in by_kind {
        let n = ms.len();
        let step = n.div_ceil(per_kind).max(1);
        out.extend(ms.into_iter().enumerate().filter(|(i, _)| i % step == 0).map(|(_, m)| m));
    }
    out
}

// ------------------------------------------------------------------------------------------------
// The harness.

enum Outcome {
    ParseError,
    Rejected,
    Unsupported,
    /// Accepted, but not run (no `main`, or `no-run`).
    NotRun,
    /// The run error of each schedule that had one: code, message, the source at its span and
    /// whether it is E0903 at a run-time index (checked when it runs by design); and, where it
    /// ran clean and was picked for `cpu`, how `cpu` disagreed with `sim` (`Some(Ok(()))`: not).
    Ran(Vec<(String, String, String, bool)>, Option<Result<(), String>>),
}

fn check_and_run(seed: &Seed, text: &str, cpu_dir: Option<&Path>) -> Outcome {
    let parsed = strata_syntax::parse(PROGRAM, text);
    if parsed.diagnostics.iter().any(|d| d.severity == strata_diag::Severity::Error) {
        return Outcome::ParseError;
    }
    let checked = strata_check::check_program(&parsed.module, PRELUDE, &seed.defines);
    if checked.diagnostics.iter().any(|d| d.severity == strata_diag::Severity::Error) {
        return Outcome::Rejected;
    }
    if !seed.runnable {
        return Outcome::NotRun;
    }
    let prelude = strata_check::program::parse_prelude(PRELUDE);
    let env = strata_check::program_env(&parsed.module, &prelude, &seed.defines);
    let Ok(program) = strata_ir::lower(&parsed.module, &env, &checked.types) else {
        return Outcome::Unsupported;
    };
    if program.entry.is_none() {
        return Outcome::NotRun;
    }
    let schedules = std::iter::once(None).chain(RANDOM_SEEDS.iter().map(|&s| Some(s)));
    let mut printed = None;
    let errors: Vec<_> = schedules
        .filter_map(|random_seed| {
            let opts = strata_sim::Options {
                max_steps: seed.max_steps.unwrap_or(50_000_000),
                random_seed,
                check_races: true,
                deadline: None,
                args: Vec::new(),
            };
            let mut out = Vec::new();
            let result = strata_sim::run(&program, &opts, &mut out);
            printed.get_or_insert(out);
            result.err().map(|d| {
                let sp = d.primary.span;
                let src = if sp.file == PROGRAM {
                    text.get(sp.lo as usize..sp.hi as usize).unwrap_or("").to_string()
                } else {
                    String::new()
                };
                let run_time_index = d.primary.message == strata_sim::RUN_TIME_INDEX_LABEL;
                (d.code.as_str().to_string(), d.message.clone(), src, run_time_index)
            })
        })
        .collect();
    let cpu = match (cpu_dir, printed) {
        (Some(dir), Some(sim)) if errors.is_empty() => Some(same_on_cpu(&program, &sim, dir)),
        _ => None,
    };
    Outcome::Ran(errors, cpu)
}

/// Whether `program` prints `sim` on `cpu`, built at the device's flags and at `-O0`.
fn same_on_cpu(program: &strata_ir::ir::Program, sim: &[u8], dir: &Path) -> Result<(), String> {
    let c = match strata_cpu::emit_c(program) {
        Ok(c) => c,
        // A construct the cpu device does not lower: counted as not compared.
        Err(d) if d.code.as_str() == "E0801" => return Ok(()),
        Err(d) => return Err(format!("cpu emit: {} {}", d.code.as_str(), d.message)),
    };
    for flags in [None, Some(["-O0".to_string()])] {
        let mut out = Vec::new();
        let r = match &flags {
            None => strata_cpu::build(&c, dir),
            Some(f) => strata_cpu::build_with_flags(&c, dir, f),
        }
        .and_then(|exe| strata_cpu::execute(&exe, PROGRAM, &mut out));
        let _ = std::fs::remove_dir_all(dir);
        let at = if flags.is_some() { "-O0" } else { "the device's flags" };
        match r {
            Err(d) => return Err(format!("cpu at {at}: {} {}", d.code.as_str(), d.message)),
            Ok(()) if out != sim => {
                return Err(format!(
                    "cpu at {at} prints {:?}, sim {:?}",
                    String::from_utf8_lossy(&out),
                    String::from_utf8_lossy(sim)
                ))
            }
            Ok(()) => {}
        }
    }
    Ok(())
}

#[derive(Default, Clone, Copy)]
struct KindCount {
    mutants: usize,
    parsed: usize,
    accepted: usize,
    run: usize,
    /// Accepted mutants that stopped with an error the checker does not promise to prevent.
    other_errors: usize,
    /// Accepted mutants run clean on `sim`, then on `cpu` too.
    cpu: usize,
    failures: usize,
}

/// The first line where `a` and `b` differ, as `line N: old => new`.
fn first_change(a: &str, b: &str) -> String {
    let (la, lb): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let n = la.iter().zip(&lb).take_while(|(x, y)| x == y).count();
    format!("line {}: `{}` => `{}`", n + 1, la.get(n).map_or("", |l| l.trim()), lb.get(n).map_or("", |l| l.trim()))
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn env_num(name: &str) -> Option<usize> {
    std::env::var(name).ok()?.trim().parse().ok()
}

#[test]
fn accepted_mutants_run_without_races_divergence_or_bad_accesses() {
    let root = root();
    let mut files = Vec::new();
    collect(&root.join("examples"), &mut files);
    collect(&root.join("tests/corpus"), &mut files);
    let filter = std::env::var("STRATA_MUTATION_FILTER").unwrap_or_default();
    let seeds: Vec<Seed> =
        files.into_iter().filter(|p| p.display().to_string().contains(&filter)).filter_map(seed).collect();
    let per_kind = env_num("STRATA_MUTATION_PER_KIND").unwrap_or(PER_KIND);
    let cpu_every = env_num("STRATA_MUTATION_CPU_EVERY").unwrap_or(CPU_EVERY);
    let jobs = env_num("STRATA_MUTATION_JOBS")
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()).min(16))
        .max(1);
    // Every (seed, mutant) pair, in a fixed order.
    let mut work: Vec<(usize, Mutant)> = Vec::new();
    for (i, s) in seeds.iter().enumerate() {
        work.extend(sample(mutants(&s.text), per_kind).into_iter().map(|m| (i, m)));
    }
    let start = std::time::Instant::now();
    let seeds = Arc::new(seeds);
    let work = Arc::new(work);
    let next = Arc::new(AtomicUsize::new(0));
    let (tx, rx) = mpsc::channel();
    let workers: Vec<_> = (0..jobs)
        .map(|j| {
            let (seeds, work, next, tx) = (seeds.clone(), work.clone(), next.clone(), tx.clone());
            // Each worker builds its C in a directory of its own, emptied after every build.
            let cpu_dir = root.join(format!("target/tmp/mutation-cpu-{}-{j}", std::process::id()));
            std::thread::Builder::new()
                .stack_size(256 << 20)
                .spawn(move || loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let Some((s, m)) = work.get(k) else { break };
                    let cpu = (cpu_every > 0 && k % cpu_every == 0).then_some(cpu_dir.as_path());
                    let outcome = catch_unwind(AssertUnwindSafe(|| check_and_run(&seeds[*s], &m.text, cpu)));
                    if tx.send((k, outcome)).is_err() {
                        break;
                    }
                })
                .unwrap()
        })
        .collect();
    drop(tx);
    let mut results: Vec<_> = rx.iter().collect();
    for w in workers {
        w.join().unwrap();
    }
    results.sort_by_key(|(k, _)| *k);

    let mut counts: BTreeMap<&'static str, KindCount> = KINDS.iter().map(|k| (*k, KindCount::default())).collect();
    let mut other: BTreeMap<String, usize> = BTreeMap::new();
    let mut failures: Vec<String> = Vec::new();
    let tmp = root.join("target/tmp");
    let _ = std::fs::create_dir_all(&tmp);
    for (k, outcome) in results {
        let (s, m) = &work[k];
        let seed = &seeds[*s];
        let c = counts.entry(m.kind).or_default();
        c.mutants += 1;
        let problem = match outcome {
            Err(_) => Some("panic while checking, lowering or running".to_string()),
            Ok(Outcome::ParseError) => None,
            Ok(o) => {
                c.parsed += 1;
                match o {
                    Outcome::Rejected => None,
                    Outcome::Unsupported | Outcome::NotRun => {
                        c.accepted += 1;
                        None
                    }
                    Outcome::Ran(errors, cpu) => {
                        c.accepted += 1;
                        c.run += 1;
                        if cpu.is_some() {
                            c.cpu += 1;
                        }
                        if std::env::var_os("STRATA_MUTATION_DUMP").is_some() {
                            eprintln!(
                                "accepted and run: {} of {}: {}",
                                m.kind,
                                seed.path.display(),
                                first_change(&seed.text, &m.text)
                            );
                        }
                        let bad = errors.iter().find(|(code, _, src, run_time_index)| {
                            PROMISED.contains(&code.as_str())
                                && !(code == "E0903" && (*run_time_index || src.contains("atomic_fetch_add_at")))
                        });
                        match (bad, cpu) {
                            (Some((code, msg, _, _)), _) => Some(format!("{code}: {msg}")),
                            (None, Some(Err(differs))) => Some(format!("sim and cpu differ: {differs}")),
                            (None, _) => {
                                if let Some((code, _, _, _)) = errors.first() {
                                    c.other_errors += 1;
                                    *other.entry(code.clone()).or_default() += 1;
                                }
                                None
                            }
                        }
                    }
                    Outcome::ParseError => unreachable!(),
                }
            }
        };
        if let Some(p) = problem {
            c.failures += 1;
            let stem = seed.path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            let path = tmp.join(format!("mutation-{stem}-{k}.strata"));
            let _ = std::fs::write(&path, &m.text);
            let rel = seed.path.strip_prefix(&root).unwrap_or(&seed.path).display().to_string();
            failures.push(format!("{} of {rel}: {p}\n    mutant: {}", m.kind, path.display()));
        }
    }
    eprintln!(
        "mutation: {} accepted programs, {} mutants, {jobs} jobs, {:.1} s",
        seeds.len(),
        work.len(),
        start.elapsed().as_secs_f64()
    );
    eprintln!("| mutation | mutants | parsed | accepted | run on sim | other run errors | run on cpu | failures |");
    eprintln!("|---|---:|---:|---:|---:|---:|---:|---:|");
    let mut total = KindCount::default();
    for (kind, c) in &counts {
        eprintln!(
            "| {kind} | {} | {} | {} | {} | {} | {} | {} |",
            c.mutants, c.parsed, c.accepted, c.run, c.other_errors, c.cpu, c.failures
        );
        total.mutants += c.mutants;
        total.parsed += c.parsed;
        total.accepted += c.accepted;
        total.run += c.run;
        total.other_errors += c.other_errors;
        total.cpu += c.cpu;
        total.failures += c.failures;
    }
    eprintln!(
        "| all | {} | {} | {} | {} | {} | {} | {} |",
        total.mutants, total.parsed, total.accepted, total.run, total.other_errors, total.cpu, total.failures
    );
    eprintln!("other run errors of accepted mutants (not promised by the checker), by code: {other:?}");
    if !failures.is_empty() {
        eprintln!("\nSOUNDNESS FAILURES ({}): accepted mutants with a race, divergence or bad access", failures.len());
        for f in &failures {
            eprintln!("  {f}");
        }
    }
    assert!(failures.is_empty(), "{} accepted mutants misbehave on sim (listed above)", failures.len());
}

/// The mutations themselves, on a small kernel.
#[test]
fn mutations_apply() {
    let text = "fn k(v: &uniq gpu.global [f32; 64]) -[grid: gpu.grid<X<2>, X<32>>]-> () {
    sched(X) block in grid.blocks {
        sched(X) t in block.threads {
            v.group::<32>[[block]].take_left::<32>[[t]] = v[0];
            for k in 0..4 {
                if k == 2 {
                    break;
                }
            }
        }
        sync(block);
        if 64 % 32 == 0 && 64 >= 32 {
            split(X) block.threads at 16 {
                lo => {
                },
                hi => { }
            }
        }
    }
}
fn main() -[t: cpu.thread]-> () {
    let s1 = Stream::new();
    let s2 = Stream::new();
    k::<<<X<2>, X<32>, s1>>>(&uniq d);
    stream_sync(&s1);
}
";
    let ms = mutants(text);
    let kinds: BTreeSet<&str> = ms.iter().map(|m| m.kind).collect();
    for k in KINDS {
        assert!(kinds.contains(k), "no mutant of kind `{k}`");
    }
    assert!(ms.iter().any(|m| m.kind == "delete sync" && !m.text.contains("sync(block);")));
    assert!(ms.iter().any(|m| m.kind == "delete stream sync" && !m.text.contains("stream_sync(&s1);")));
    assert!(ms.iter().any(|m| m.kind == "swap stream" && m.text.contains("X<32>, s2>>>")));
    assert!(ms.iter().any(|m| m.kind == "index + 1" && m.text.contains("v[0 + 1]")));
    assert!(ms.iter().any(|m| m.kind == "widen take_left" && m.text.contains("take_left::<(32) + 1>")));
    assert!(ms.iter().any(|m| m.kind == "weaken condition" && m.text.contains("if 64 >= 32 {")));
    assert!(ms.iter().any(|m| m.kind == "weaken condition" && m.text.contains("if 64 % 32 == 0 && 64 < 32 {")));
    assert!(ms.iter().any(|m| m.kind == "selection to [0]" && m.text.contains("[[block]].take_left::<32>[0]")));
    assert!(ms.iter().any(|m| m.kind == "copy param into thread" && m.text.contains("let c_mut = v;")));
    assert!(ms
        .iter()
        .any(|m| m.kind == "selection to run-time index" && m.text.contains("[[block]].take_left::<32>[t.idx]")));
    assert!(ms.iter().any(|m| m.kind == "selection to run-time index" && m.text.contains("[block.idx + 1u32]")));
    assert!(ms.iter().any(|m| m.kind == "jump on a coordinate" && m.text.contains("if t.idx == 0u32 {\n")));
    // Types are not indices, and view-array types are not selections.
    assert!(!ms.iter().any(|m| m.text.contains("[f32; 64 + 1]")));
}
