//! Robustness of the type checker: it must neither panic nor hang on any program the parser
//! accepts.
//!
//! Every `.strata` file under `tests/` and `examples/` is mutated at the token level by a
//! deterministic pseudo-random sequence of edits that mostly keep the program parseable but make it
//! ill-typed in interesting ways: identifiers swapped, numbers replaced by edge values (0, 1, 31,
//! 32, 33, 2^64 - 1, …), `uniq`/`shrd`, `X`/`Y`, `take_left`/`take_right`, view names, resource
//! names and memory spaces exchanged, statements and barriers deleted or duplicated, selections
//! redirected to other resources. Each mutant that parses without errors is checked by
//! `strata_check::check_module` on a worker thread (with the stack the `strata` command gives the
//! checker) inside `catch_unwind`; the check must return, without panicking, within
//! [`TIME_LIMIT`].
//!
//! Explicit adversarial programs (deep views, huge sizes, shadowing, recursion, deep nesting) and
//! the minimal reproducers of every failure found so far are checked the same way.
//!
//! If the test process dies (a stack overflow cannot be caught), the mutant being checked is in
//! `target/tmp/check_robustness_current.strata`.
//!
//! About [`MUTANTS`] mutants are generated in all; `STRATA_ROBUSTNESS_MUTANTS=n` asks for `n` per
//! file instead, `STRATA_ROBUSTNESS_SEED=n` changes the seed.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use strata_diag::FileId;
use strata_syntax::lexer::{self, Tok};

/// Hang detector: one `check_module` call may take at most this long (debug build).
const TIME_LIMIT: Duration = Duration::from_secs(2);
/// Mutants generated in all, spread evenly over the corpus files.
const MUTANTS: usize = 8000;
/// The same stack the `strata` command runs the checker on.
const CHECK_STACK: usize = 256 << 20;
const PROGRAM: FileId = FileId(0);
const PRELUDE: FileId = FileId(1);

// ------------------------------------------------------------------------------------------------
// A fixed-seed pseudo-random number generator (SplitMix64).

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        if items.is_empty() {
            None
        } else {
            Some(&items[self.below(items.len())])
        }
    }
}

/// FNV-1a, to derive a per-file seed from its path (so adding a file changes no other's mutants).
fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

// ------------------------------------------------------------------------------------------------
// Token-level mutation

/// A token with the text (whitespace and comments) that precedes it.
#[derive(Clone, Debug)]
struct Piece {
    kind: Tok,
    lead: String,
    text: String,
}

fn tokenize(src: &str) -> Vec<Piece> {
    let lexed = lexer::lex(PROGRAM, src);
    let mut out = Vec::new();
    let mut pos = 0usize;
    for t in lexed.tokens {
        if t.kind == Tok::Eof {
            break;
        }
        let (lo, hi) = (t.span.lo as usize, t.span.hi as usize);
        out.push(Piece { kind: t.kind, lead: src[pos..lo].to_string(), text: src[lo..hi].to_string() });
        pos = hi;
    }
    out
}

fn render(pieces: &[Piece]) -> String {
    let mut s = String::new();
    for p in pieces {
        s.push_str(&p.lead);
        s.push_str(&p.text);
    }
    s
}

/// Identifiers that may stand for one another.
const IDENT_GROUPS: &[&[&str]] = &[
    &["uniq", "shrd"],
    &["X", "Y", "Z"],
    &["take_left", "take_right"],
    &["blocks", "threads", "to_threads", "warps", "lanes", "forall"],
    &["group", "take_left", "take_right", "transpose", "reverse", "map", "to_view", "group_by_row", "group_by_tile"],
    &["grid", "block", "thread", "warp", "Grid", "Block", "Thread", "Warp"],
    &["i32", "u32", "i64", "u64", "i8", "u8", "i16", "u16", "f32", "f64", "bool", "AtomicU32"],
    &["fst", "snd"],
];

const NUMBERS: &[&str] =
    &["0", "1", "2", "31", "32", "33", "1024", "4294967296", "18446744073709551615", "18446744073709551616"];

const MEMS: &[(&str, &str)] = &[("gpu", "global"), ("gpu", "shared"), ("gpu", "local"), ("cpu", "mem")];

/// Token kinds that may replace one another.
const TOK_GROUPS: &[&[(Tok, &str)]] = &[
    &[(Tok::Sched, "sched"), (Tok::Split, "split")],
    &[(Tok::Plus, "+"), (Tok::Minus, "-"), (Tok::Star, "*"), (Tok::Slash, "/"), (Tok::Percent, "%")],
    &[(Tok::Lt, "<"), (Tok::Le, "<="), (Tok::Ge, ">="), (Tok::EqEq, "=="), (Tok::Ne, "!=")],
    &[(Tok::PlusEq, "+="), (Tok::MinusEq, "-="), (Tok::StarEq, "*=")],
];

fn is_open(k: Tok) -> bool {
    matches!(k, Tok::LParen | Tok::LBracket | Tok::LBrace)
}

fn is_close(k: Tok) -> bool {
    matches!(k, Tok::RParen | Tok::RBracket | Tok::RBrace)
}

/// The index of the bracket closing the one at `open`.
fn matching(p: &[Piece], open: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (i, t) in p.iter().enumerate().skip(open) {
        if is_open(t.kind) {
            depth += 1;
        } else if is_close(t.kind) {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        }
    }
    None
}

/// The statement ending with the `;` at `semi`: the tokens after the previous `;`, `{` or `}` at
/// the same nesting level.
fn statement_start(p: &[Piece], semi: usize) -> usize {
    let mut depth = 0i32;
    let mut j = semi;
    while j > 0 {
        let k = p[j - 1].kind;
        if depth == 0 && matches!(k, Tok::Semi | Tok::LBrace | Tok::RBrace) {
            return j;
        }
        if is_close(k) {
            depth += 1;
        } else if is_open(k) {
            depth -= 1;
            if depth < 0 {
                return j;
            }
        }
        j -= 1;
    }
    0
}

/// A block-like statement starting at `kw` (`sched`, `split`, `for`, `while`, `if`): up to the
/// brace closing its first `{`.
fn block_statement(p: &[Piece], kw: usize) -> Option<(usize, usize)> {
    let open = (kw..p.len()).find(|&i| p[i].kind == Tok::LBrace)?;
    Some((kw, matching(p, open)?))
}

fn indices(p: &[Piece], f: impl Fn(usize, &Piece) -> bool) -> Vec<usize> {
    p.iter().enumerate().filter(|(i, t)| f(*i, t)).map(|(i, _)| i).collect()
}

/// Applies one random mutation; returns its name, or `None` if it found nothing to mutate.
fn mutate(p: &mut Vec<Piece>, rng: &mut Rng) -> Option<&'static str> {
    match rng.below(14) {
        0 => {
            let ids = indices(p, |_, t| t.kind == Tok::Ident);
            let (a, b) = (*rng.pick(&ids)?, *rng.pick(&ids)?);
            let ta = p[a].text.clone();
            p[a].text = std::mem::replace(&mut p[b].text, ta);
            Some("swap identifiers")
        }
        1 | 2 => {
            let ints = indices(p, |_, t| t.kind == Tok::Int);
            let i = *rng.pick(&ints)?;
            p[i].text = rng.pick(NUMBERS)?.to_string();
            Some("replace number")
        }
        3 | 4 => {
            let ids = indices(p, |_, t| t.kind == Tok::Ident && IDENT_GROUPS.iter().any(|g| g.contains(&&*t.text)));
            let i = *rng.pick(&ids)?;
            let groups: Vec<&&[&str]> = IDENT_GROUPS.iter().filter(|g| g.contains(&&*p[i].text)).collect();
            let g = rng.pick(&groups)?;
            p[i].text = rng.pick(g)?.to_string();
            Some("replace related identifier")
        }
        5 => {
            let toks = indices(p, |_, t| TOK_GROUPS.iter().any(|g| g.iter().any(|(k, _)| *k == t.kind)));
            let i = *rng.pick(&toks)?;
            let g = TOK_GROUPS.iter().find(|g| g.iter().any(|(k, _)| *k == p[i].kind))?;
            let (k, text) = *rng.pick(g)?;
            p[i].kind = k;
            p[i].text = text.to_string();
            Some("replace operator or keyword")
        }
        6 => {
            let semis = indices(p, |_, t| t.kind == Tok::Semi);
            let i = *rng.pick(&semis)?;
            let s = statement_start(p, i);
            p.drain(s..=i);
            Some("delete statement")
        }
        7 => {
            let semis = indices(p, |_, t| t.kind == Tok::Semi);
            let i = *rng.pick(&semis)?;
            let s = statement_start(p, i);
            let copy: Vec<Piece> = p[s..=i].to_vec();
            p.splice(i + 1..i + 1, copy);
            Some("duplicate statement")
        }
        8 => {
            let syncs = indices(p, |_, t| t.kind == Tok::Sync);
            let i = *rng.pick(&syncs)?;
            let mut end = i;
            if p.get(i + 1).is_some_and(|t| t.kind == Tok::LParen) {
                end = matching(p, i + 1)?;
            }
            if p.get(end + 1).is_some_and(|t| t.kind == Tok::Semi) {
                end += 1;
            }
            p.drain(i..=end);
            Some("delete sync")
        }
        9 => {
            // Memory spaces: `gpu.global`, `gpu.shared`, `gpu.local`, `cpu.mem`.
            let mems = indices(p, |i, t| {
                i + 2 < p.len()
                    && t.kind == Tok::Ident
                    && p[i + 1].kind == Tok::Dot
                    && MEMS.iter().any(|(a, b)| *a == t.text && *b == p[i + 2].text)
            });
            let i = *rng.pick(&mems)?;
            let (a, b) = *rng.pick(MEMS)?;
            p[i].text = a.to_string();
            p[i + 2].text = b.to_string();
            Some("replace memory space")
        }
        10 => {
            // `[[thread]]` to `[[block]]`: a selection redirected to another bound resource.
            let names: Vec<String> = indices(p, |i, t| {
                t.kind == Tok::Ident && p.get(i + 1).is_some_and(|n| matches!(n.kind, Tok::In | Tok::FatArrow))
            })
            .into_iter()
            .map(|i| p[i].text.clone())
            .chain(["grid".to_string(), "t".to_string()])
            .collect();
            let sels = indices(p, |i, t| {
                t.kind == Tok::Ident && i >= 2 && p[i - 1].kind == Tok::LBracket && p[i - 2].kind == Tok::LBracket
            });
            let i = *rng.pick(&sels)?;
            p[i].text = rng.pick(&names)?.clone();
            Some("redirect selection")
        }
        11 => {
            let kws = indices(p, |i, t| {
                matches!(t.kind, Tok::Sched | Tok::Split | Tok::For | Tok::While | Tok::If | Tok::Unsafe)
                    && (i == 0 || matches!(p[i - 1].kind, Tok::Semi | Tok::LBrace | Tok::RBrace))
            });
            let i = *rng.pick(&kws)?;
            let (s, e) = block_statement(p, i)?;
            if rng.below(2) == 0 {
                p.drain(s..=e);
                Some("delete block statement")
            } else {
                let copy: Vec<Piece> = p[s..=e].to_vec();
                p.splice(e + 1..e + 1, copy);
                Some("duplicate block statement")
            }
        }
        12 => {
            // Insert a barrier after a statement.
            let semis = indices(p, |_, t| t.kind == Tok::Semi);
            let i = *rng.pick(&semis)?;
            let mut new = vec![Piece { kind: Tok::Sync, lead: " ".into(), text: "sync".into() }];
            if rng.below(2) == 0 {
                let target = rng.pick(&["block", "grid", "thread", "warp"])?.to_string();
                new.push(Piece { kind: Tok::LParen, lead: String::new(), text: "(".into() });
                new.push(Piece { kind: Tok::Ident, lead: String::new(), text: target });
                new.push(Piece { kind: Tok::RParen, lead: String::new(), text: ")".into() });
            }
            new.push(Piece { kind: Tok::Semi, lead: String::new(), text: ";".into() });
            p.splice(i + 1..i + 1, new);
            Some("insert sync")
        }
        _ => {
            // Drop an `unsafe`, or a view application `.name::<..>`.
            if rng.below(2) == 0 {
                let us = indices(p, |_, t| t.kind == Tok::Unsafe);
                let i = *rng.pick(&us)?;
                p.remove(i);
                Some("delete unsafe")
            } else {
                let views = indices(p, |i, t| {
                    t.kind == Tok::Dot && p.get(i + 1).is_some_and(|n| IDENT_GROUPS[4].contains(&&*n.text))
                });
                let i = *rng.pick(&views)?;
                let mut end = i + 1;
                if p.get(end + 1).is_some_and(|t| t.kind == Tok::ColonColon)
                    && p.get(end + 2).is_some_and(|t| t.kind == Tok::Lt)
                {
                    // `::<` … `>`: skip to the closing `>` at depth zero of `<`.
                    let mut depth = 0;
                    let mut j = end + 2;
                    while j < p.len() {
                        match p[j].kind {
                            Tok::Lt => depth += 1,
                            Tok::Gt => {
                                depth -= 1;
                                if depth == 0 {
                                    break;
                                }
                            }
                            _ => {}
                        }
                        j += 1;
                    }
                    end = j.min(p.len() - 1);
                } else if p.get(end + 1).is_some_and(|t| t.kind == Tok::LParen) {
                    end = matching(p, end + 1)?;
                }
                p.drain(i..=end);
                Some("delete view")
            }
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Running the checker

enum Outcome {
    /// The checker returned this many diagnostics in this time.
    Ok(usize, Duration),
    Panic(String),
    Hang,
}

/// Checks `module` on a worker thread; a panic is caught, a run longer than [`TIME_LIMIT`] is a hang.
fn check(module: strata_syntax::ast::Module, defines: Vec<(String, u64)>) -> Outcome {
    check_within(module, defines, TIME_LIMIT)
}

/// [`check`] with another time limit.
fn check_within(module: strata_syntax::ast::Module, defines: Vec<(String, u64)>, limit: Duration) -> Outcome {
    let (tx, rx) = mpsc::channel();
    let worker = std::thread::Builder::new().stack_size(CHECK_STACK).spawn(move || {
        let start = Instant::now();
        let r = catch_unwind(AssertUnwindSafe(|| strata_check::check_module(&module, PRELUDE, &defines)));
        let elapsed = start.elapsed();
        let _ = tx.send(match r {
            Ok(diags) => Outcome::Ok(diags.len(), elapsed),
            Err(e) => Outcome::Panic(
                e.downcast_ref::<String>()
                    .cloned()
                    .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "(non-string panic payload)".into()),
            ),
        });
    });
    let worker = worker.expect("spawn checker thread");
    match rx.recv_timeout(limit) {
        Ok(Outcome::Ok(_, t)) if t > limit => Outcome::Hang,
        Ok(o) => {
            let _ = worker.join();
            o
        }
        // The worker is left running (it cannot be stopped); the test fails anyway.
        Err(mpsc::RecvTimeoutError::Timeout) => Outcome::Hang,
        Err(mpsc::RecvTimeoutError::Disconnected) => Outcome::Panic("checker thread died".into()),
    }
}

/// `-D NAME=VALUE` from a file's `//@ args:` lines.
fn defines_of(src: &str) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    for line in src.lines().filter_map(|l| l.trim().strip_prefix("//@ args:")) {
        let mut words = line.split_whitespace();
        while let Some(w) = words.next() {
            let def = if w == "-D" { words.next() } else { w.strip_prefix("-D") };
            if let Some((n, v)) = def.and_then(|d| d.split_once('=')) {
                if let Ok(v) = v.parse() {
                    out.push((n.to_string(), v));
                }
            }
        }
    }
    out
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn strata_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            strata_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "strata") {
            out.push(p);
        }
    }
}

fn env_usize(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

/// A failure, with the program that caused it.
struct Failure {
    what: String,
    origin: String,
    src: String,
}

fn report(failures: &[Failure]) -> String {
    let mut s = format!("{} checker failure(s):\n", failures.len());
    for f in failures.iter().take(10) {
        s.push_str(&format!("\n=== {} ({})\n{}\n", f.what, f.origin, f.src));
    }
    s
}

#[test]
fn mutated_corpus_never_panics_or_hangs() {
    let root = workspace_root();
    let mut files = Vec::new();
    strata_files(&root.join("tests"), &mut files);
    strata_files(&root.join("examples"), &mut files);
    assert!(!files.is_empty(), "no .strata files under {}", root.display());
    // About MUTANTS in all, however many files the corpus has (at least 10 per file).
    let per_file = env_usize("STRATA_ROBUSTNESS_MUTANTS").map_or((MUTANTS / files.len()).max(10), |n| n as usize);
    let seed = env_usize("STRATA_ROBUSTNESS_SEED").unwrap_or(0x5eed_c0de);
    let current = Path::new(env!("CARGO_TARGET_TMPDIR")).join("check_robustness_current.strata");
    let start = Instant::now();
    let (mut generated, mut checked, mut rejected) = (0usize, 0usize, 0usize);
    let mut slowest = (Duration::ZERO, String::new());
    let mut diagnostics = 0usize;
    let mut failures = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(&root).unwrap_or(file).display().to_string();
        let Ok(src) = std::fs::read_to_string(file) else { continue };
        let defines = defines_of(&src);
        let base = tokenize(&src);
        let mut rng = Rng(seed ^ fnv(&rel));
        // The unmutated file first, then the mutants.
        for n in 0..=per_file {
            let mut pieces = base.clone();
            let mut applied = Vec::new();
            if n > 0 {
                for _ in 0..1 + rng.below(3) {
                    if let Some(m) = mutate(&mut pieces, &mut rng) {
                        applied.push(m);
                    }
                }
                if applied.is_empty() {
                    continue;
                }
            }
            generated += 1;
            let mutant = render(&pieces);
            let parsed = strata_syntax::parse(PROGRAM, &mutant);
            if strata_diag::has_errors(&parsed.diagnostics) {
                rejected += 1;
                continue;
            }
            checked += 1;
            let origin = format!("{rel}, mutant {n}: {}", applied.join(", "));
            // A crash that cannot be caught (a stack overflow aborts the process) leaves the
            // program that caused it here.
            let _ = std::fs::write(&current, format!("// {origin}\n{mutant}"));
            match check(parsed.module, defines.clone()) {
                Outcome::Ok(d, t) => {
                    diagnostics += d;
                    if t > slowest.0 {
                        slowest = (t, origin);
                    }
                }
                Outcome::Panic(msg) => failures.push(Failure { what: format!("panic: {msg}"), origin, src: mutant }),
                Outcome::Hang => {
                    failures.push(Failure { what: format!("hang (> {TIME_LIMIT:?})"), origin, src: mutant })
                }
            }
        }
    }
    println!(
        "check_robustness: {} files, {generated} programs generated, {checked} checked, {rejected} rejected by the \
         parser, {diagnostics} diagnostics, {} failures, {:.1?} in all; slowest check {:.1?} ({})",
        files.len(),
        failures.len(),
        start.elapsed(),
        slowest.0,
        slowest.1
    );
    assert!(checked >= 1000, "only {checked} mutants parsed; the mutations are too destructive");
    assert!(failures.is_empty(), "{}", report(&failures));
}

// ------------------------------------------------------------------------------------------------
// Explicit adversarial programs and regression cases

/// Checks one program. A program that must parse is checked by the `strata check` command in a
/// child process, so that a crash the checker cannot unwind from (a stack overflow aborts the
/// process) fails this case only; its exit status must be 0 or 1 (program errors). Otherwise the
/// checker runs in-process on the tree the parser recovered, which the command would not check.
fn check_program(name: &str, src: &str, must_parse: bool) {
    let parsed = strata_syntax::parse(PROGRAM, src);
    if !must_parse {
        match check(parsed.module, Vec::new()) {
            Outcome::Ok(..) => return,
            Outcome::Panic(msg) => panic!("{name}: the checker panicked: {msg}\n{src}"),
            Outcome::Hang => panic!("{name}: the checker took more than {TIME_LIMIT:?}\n{src}"),
        }
    }
    assert!(
        !strata_diag::has_errors(&parsed.diagnostics),
        "{name}: does not parse: {:?}",
        parsed.diagnostics.iter().map(|d| &d.message).collect::<Vec<_>>()
    );
    let file = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("check_robustness_{}.strata", name.replace(|c: char| !c.is_ascii_alphanumeric(), "_")));
    std::fs::write(&file, src).expect("write the program");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_strata"))
        .arg("check")
        .arg(&file)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run strata");
    // The limit covers the whole command: start-up, prelude, parse and check.
    let limit = TIME_LIMIT + Duration::from_secs(2);
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for strata") {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{name}: `strata check` took more than {limit:?}\n{src}");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut e, &mut stderr);
    }
    let tail: String =
        stderr.lines().rev().take(6).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join("\n");
    assert!(
        matches!(status.code(), Some(0 | 1)),
        "{name}: `strata check` crashed ({status}):\n{tail}\n--- program:\n{src}"
    );
}

const KERNEL_HEAD: &str = "fn k(a: &uniq gpu.global [f32; 1024]) -[grid: gpu.grid<X<4>, X<256>>]-> () {\n";

#[test]
fn deeply_nested_views() {
    let chain = ".transpose".repeat(100);
    let src = format!(
        "fn k(a: &shrd gpu.global [[f32; 4]; 4]) -[grid: gpu.grid<X<1>, X<1>>]-> () {{\n    let v = &shrd a{chain};\n}}\n"
    );
    check_program("transpose x100", &src, true);
    let src = format!("{KERNEL_HEAD}    let v = &shrd a{};\n}}\n", ".reverse".repeat(120));
    check_program("reverse x120", &src, true);
    // Beyond the parser's nesting limit: checked on the recovered tree.
    let src = format!("{KERNEL_HEAD}    let v = &shrd a{};\n}}\n", ".reverse".repeat(300));
    check_program("reverse x300", &src, false);
    let src = format!("{KERNEL_HEAD}    let v = &shrd a{};\n}}\n", ".group::<2>".repeat(12));
    check_program("group::<2> x12", &src, true);
    let src =
        format!("{KERNEL_HEAD}    let v = &shrd a.group::<4>{}transpose{};\n}}\n", ".map(".repeat(60), ")".repeat(60));
    check_program("map(map(..(transpose))) x60", &src, false);
    let src = format!(
        "view v0 = reverse;\n{}{KERNEL_HEAD}    let x = &shrd a.v99;\n}}\n",
        (1..100).map(|i| format!("view v{i} = v{}.reverse;\n", i - 1)).collect::<String>()
    );
    check_program("100 named views defined by each other", &src, true);
    check_program(
        "self-referential view through map",
        &format!("view w = map(w);\n{KERNEL_HEAD}    let x = &shrd a.w;\n}}\n"),
        true,
    );
}

// Regression cases: minimal programs that crashed the checker.

/// Found by this test: a named view defined in terms of itself sends the view expansion into
/// unbounded recursion, and `strata check` aborts with a stack overflow (the checker recurses
/// `apply_view` -> `apply_named_view` -> `apply_view` … with no cycle check).
#[test]
fn regression_recursive_named_view() {
    check_program("recursive named view", &format!("view v = v;\n{KERNEL_HEAD}    let x = &shrd a.v;\n}}\n"), true);
    check_program(
        "mutually recursive named views",
        &format!("view v = w.reverse;\nview w = v;\n{KERNEL_HEAD}    let x = &shrd a.v;\n}}\n"),
        true,
    );
    check_program(
        "recursive generic view",
        &format!("view v<n: nat> = v::<n + 1>;\n{KERNEL_HEAD}    let x = &shrd a.v::<1>;\n}}\n"),
        true,
    );
}

/// Found by this test: one bounds query costs ~0.6 s in a debug build (~90 ms in release) when
/// the index is a product of many size variables and the length a large polynomial: the
/// bound-substitution search of `nat.rs` expands its whole budget, each step on polynomials of
/// dozens of terms. Eight such indices take ~5 s; the checker should stay far below the limit.
#[test]
fn regression_slow_size_queries() {
    let body: String = (0..8).map(|i| format!("    let v{i} = x[a * b * c * d * e * f * g * h + {i}];\n")).collect();
    let src = format!(
        "fn f<a: nat, b: nat, c: nat, d: nat, e: nat, f: nat, g: nat, h: nat>(\n    \
         x: &shrd gpu.global [f32; (a + b + c + d + e + f)^3 + 1]\n) -[t: gpu.thread]-> () where a >= 1, b >= 1 {{\n\
         {body}}}\n"
    );
    // In-process, so that the limit applies to the check alone (no stack overflow to fear here).
    // Each of these proofs is bounded by the nat engine's search budget but works on polynomials
    // of 56 terms: about 90 ms each in a release build, several times that in a debug build on a
    // loaded machine. The bound here catches a search that is not bounded, not a slow one.
    let limit = Duration::from_secs(20);
    let parsed = strata_syntax::parse(PROGRAM, &src);
    assert!(!strata_diag::has_errors(&parsed.diagnostics), "does not parse");
    match check_within(parsed.module, Vec::new(), limit) {
        Outcome::Ok(..) => {}
        Outcome::Panic(msg) => panic!("the checker panicked: {msg}\n{src}"),
        Outcome::Hang => panic!("the checker took more than {limit:?}\n{src}"),
    }
}

#[test]
fn huge_sizes() {
    for (name, ty) in [
        ("u64::MAX elements", "[f32; 18446744073709551615]"),
        ("2^64 elements", "[f32; 2^64]"),
        ("2^64 - 1 elements", "[f32; 2^64 - 1]"),
        ("2^2^2^2^2 elements", "[f32; 2^2^2^2^2]"),
        ("nested huge", "[[f32; 4294967296]; 4294967296]"),
        ("zero elements", "[f32; 0]"),
        ("division by zero", "[f32; 1 / 0]"),
        ("remainder by zero", "[f32; 1 % 0]"),
        ("negative", "[f32; 0 - 1]"),
    ] {
        let src = format!(
            "fn k(a: &uniq gpu.global {ty}) -[grid: gpu.grid<X<4>, X<256>>]-> () {{\n    \
             sched(X) b in grid.blocks {{\n        sched(X) t in b.threads {{\n            \
             let p = &uniq a.group::<0>[[b]];\n            let q = &uniq a.group::<1024>[[b]].group::<4>[[t]];\n            \
             let r = &shrd a.take_left::<18446744073709551615>;\n            \
             let s = &shrd a.group::<18446744073709551615>;\n            \
             let u = &shrd a.take_right::<2^64>;\n        }}\n    }}\n}}\n\n\
             fn main() -[t: cpu.thread]-> () {{\n    let h = CpuHeap::new([0.0; 18446744073709551615]);\n    \
             let mut d = GpuGlobal::alloc_copy(&h);\n    k::<<<X<4>, X<256>>>>(&uniq d);\n    \
             k::<<<X<18446744073709551615>, X<2^64>>>>(&uniq d);\n    \
             for i in 0..18446744073709551615 {{ }}\n    for i in 18446744073709551615..0 {{ }}\n}}\n"
        );
        check_program(name, &src, false);
    }
    check_program(
        "huge grid",
        "fn k() -[grid: gpu.grid<X<18446744073709551615>, X<18446744073709551615>>]-> () {\n    \
         sched(X) t in grid.to_threads { }\n    sched(X) b in grid.blocks { let w = b.warps; }\n}\n",
        false,
    );
    check_program(
        "huge constants",
        "const N: nat = 18446744073709551615;\nconst M: nat = N * N;\nconst P: nat = 2^N;\n\
         fn f(a: &shrd gpu.global [f32; M]) -[t: gpu.thread]-> f32 { a[N] }\n",
        false,
    );
    check_program(
        "huge where clauses",
        "fn f<n: nat>(a: &shrd gpu.global [f32; n]) -[t: gpu.thread]-> f32 where n == 2^64, n % 0 == 0, \
         n >= 18446744073709551615 { a[n - 1] }\n",
        false,
    );
}

#[test]
fn shadowing() {
    check_program(
        "shadowed variables and binders",
        "fn k(a: &uniq gpu.global [f32; 1024]) -[grid: gpu.grid<X<4>, X<256>>]-> () {\n    \
         let a = &uniq a;\n    sched(X) grid in grid.blocks {\n        sched(X) grid in grid.threads {\n            \
         let a = 1; let a = a + 1; let a = 2.0;\n        }\n    }\n    \
         sched(X) b in grid.blocks {\n        sched(X) b in b.threads {\n            \
         let x = &uniq a.group::<256>[[b]];\n        }\n    }\n}\n\
         fn main() -[t: cpu.thread]-> () {\n    let main = 1;\n    let k = main;\n    let t = k;\n}\n",
        true,
    );
    check_program(
        "for variable shadows a generic",
        "fn f<n: nat>(a: &shrd gpu.global [f32; n]) -[t: gpu.thread]-> () {\n    \
         for n in 0..n { let x = a[n]; }\n    for i in 0..4 { for i in 0..i { let y = a[i]; } }\n}\n",
        true,
    );
}

#[test]
fn recursion() {
    check_program("fn f() { f() }", "fn f() { f() }\n", false);
    check_program("recursive cpu function", "fn f() -[t: cpu.thread]-> () { f(); f() }\n", true);
    check_program(
        "mutual recursion",
        "fn f(x: i32) -[t: cpu.thread]-> i32 { g(x) }\nfn g(x: i32) -[t: cpu.thread]-> i32 { f(x) }\n",
        true,
    );
    check_program(
        "generic recursion",
        "fn f<n: nat>(a: &shrd gpu.global [f32; n]) -[t: gpu.thread]-> () { f::<n + 1>(a); f::<n * n>(a); }\n",
        true,
    );
    check_program(
        "kernel launching itself",
        "fn k(a: &uniq gpu.global [f32; 1024]) -[grid: gpu.grid<X<4>, X<256>>]-> () {\n    \
         k::<<<X<4>, X<256>>>>(a);\n    k(a);\n}\n",
        true,
    );
    check_program(
        "generic kernel launching itself",
        "fn k<n: nat>(a: &uniq gpu.global [f32; n]) -[grid: gpu.grid<X<n / 256>, X<256>>]-> () {\n    \
         k::<<<X<n>, X<256>>>>(a);\n}\n\
         fn main() -[t: cpu.thread]-> () {\n    let h = CpuHeap::new([0.0; 1024]);\n    \
         let mut d = GpuGlobal::alloc_copy(&h);\n    k::<<<X<4>, X<256>>>>(&uniq d);\n}\n",
        true,
    );
}

#[test]
fn deep_nesting() {
    // Within the parser's nesting limit: the whole program is checked.
    let depth = 40;
    let mut body = String::new();
    for i in 0..depth {
        body.push_str(&format!("sched(X) b{i} in grid.blocks {{ "));
    }
    body.push_str(&"}".repeat(depth));
    check_program("40 nested sched", &format!("{KERNEL_HEAD}{body}\n}}\n"), true);
    let mut body = String::new();
    for i in 0..depth {
        body.push_str(&format!("split(X) grid.blocks at 2 {{ l{i} => {{ "));
    }
    for _ in 0..depth {
        body.push_str("}, r => { } }");
    }
    check_program("40 nested split", &format!("{KERNEL_HEAD}{body}\n}}\n"), true);
    let depth = 20;
    let mut body = String::new();
    for i in 0..depth {
        body.push_str(&format!("split(X) grid.blocks at {} {{ l{i} => {{ sched(X) b{i} in l{i} {{ ", 64 - i));
    }
    for _ in 0..depth {
        body.push_str("} }, r => { } }");
    }
    check_program("20 nested split/sched", &format!("{KERNEL_HEAD}{body}\n}}\n"), true);
    // Beyond the parser's nesting limit: the parser reports the nesting, and the checker must
    // still cope with the tree it recovered.
    for (name, open, close) in [
        ("200 nested sched", "sched(X) b in grid.blocks { ", "}"),
        ("200 nested split", "split(X) grid.blocks at 2 { l => { ", "}, r => { } }"),
        ("200 nested unsafe", "unsafe { ", "}"),
        ("200 nested for", "for i in 0..2 { ", "}"),
    ] {
        let src = format!("{KERNEL_HEAD}{}{}\n}}\n", open.repeat(200), close.repeat(200));
        check_program(name, &src, false);
    }
}

#[test]
fn odd_but_parseable_programs() {
    for (name, src) in [
        ("empty", ""),
        ("kernel without body", "fn k() -[grid: gpu.grid<X<0>, X<0>>]-> ();\n"),
        (
            "zero-sized grid",
            "fn k(a: &uniq gpu.global [f32; 0]) -[grid: gpu.grid<X<0>, X<0>>]-> () {\n    \
             sched(X) b in grid.blocks { sched(X) t in b.threads { a[[t]] = 1.0; } }\n}\n",
        ),
        (
            "sync everywhere",
            "fn k(a: &uniq gpu.global [f32; 1024]) -[grid: gpu.grid<X<4>, X<256>>]-> () {\n    \
             sync; sync(grid);\n    sched(X) b in grid.blocks { sync; sync(b); sync(grid); \
             sched(X) t in b.threads { sync; sync(t); sync(b); } }\n}\n",
        ),
        (
            "select by the function's resource and undefined names",
            "fn k(a: &uniq gpu.global [f32; 1024]) -[grid: gpu.grid<X<4>, X<256>>]-> () {\n    \
             a[[grid]] = 1.0; a[[nope]] = 2.0; nope[[grid]] = 3.0; *a = *a;\n}\n",
        ),
        (
            "every memory space dereferenced on the CPU",
            "fn main(a: &uniq gpu.shared f32, b: &uniq gpu.local f32, c: &uniq gpu.global f32, \
             d: &uniq cpu.mem f32) -[t: cpu.thread]-> () {\n    *a = *b; *c = *d; *d = *a;\n}\n",
        ),
    ] {
        check_program(name, src, true);
    }
}
