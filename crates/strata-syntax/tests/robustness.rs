//! Robustness of the front end: the lexer and parser must never panic, hang or overflow the stack,
//! whatever the input.
//!
//! Two parts:
//! * a bounded, deterministic mutation test seeded with every `.strata` file of the repository
//!   (plus built-in snippets), parsing each mutant on a thread with the default 2 MiB test stack;
//! * explicit adversarial inputs: extreme nesting, long chains, unterminated constructs.
//!
//! The coverage-guided counterpart is the cargo-fuzz target in `fuzz/` (see `docs/testing.md`).

use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use strata_diag::{codes, render_plain, FileId, SourceMap};
use strata_syntax::{parse, MAX_DEPTH};

/// The default stack of a Rust test thread; the parser must fit in it whatever the input.
const TEST_STACK: usize = 2 * 1024 * 1024;
/// Above this, parsing one input counts as a hang (debug build; a hang detector, not a benchmark).
const PER_INPUT_LIMIT: Duration = Duration::from_secs(2);
/// The watchdog gives up on an input that has not finished after this long.
const WATCHDOG: Duration = Duration::from_secs(30);
const MUTANTS_PER_SEED: usize = 200;
const MAX_MUTANTS: usize = 12_000;
/// Inputs up to this size have all their diagnostics rendered.
const RENDER_ALL_UP_TO: usize = 64 * 1024;

// ------------------------------------------------------------------------------------------------
// A small deterministic PRNG (SplitMix64).

struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0; the tiny modulo bias does not matter here).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

// ------------------------------------------------------------------------------------------------
// Seeds

const BUILTIN_SEEDS: &[&str] = &[
    "fn main() -[t: cpu.thread]-> () {}",
    r#"fn scale_vec(v: &uniq gpu.global [f64; 64]) -[grid: gpu.grid<X<1>, X<64>>]-> () {
    sched(X) block in grid.blocks {
        sched(X) thread in block.threads {
            let x = &uniq (*v).group::<64>[[block]][[thread]];
            *x = *x * 3.0;
        }
    }
}"#,
    r#"fn rev<n: nat>(a: &uniq gpu.global [i32; n]) -[grid: gpu.grid<X<4>, X<32>>]-> () where n == 128 {
    sched(X) block in grid.blocks {
        let tmp = alloc::<gpu.shared, [i32; 32]>();
        split(X) block.threads at 16 {
            fst => { sync; },
            snd => { sync(block); },
        };
        for i in 0..n { unsafe { a[i] = tmp[0] as i32 << 2 >> 1; } }
    }
}
fn host() -[t: cpu.thread]-> () {
    let mut h = [0; 128];
    let d = gpu_alloc_copy(&uniq h);
    rev::<<<X<4>, X<32>>>>(&uniq d);
    copy_to_host(&shrd d, &uniq h);
    if h[0] == 1 { return; } else if h[1] != 2 { while true { h[2] += 1; } } else { }
}"#,
    "const N: nat = 2 ^ 3 * (4 + 1);\nview v<n: nat> = group::<n>.map(transpose).reverse;",
    "// only a comment\n/* and /* a nested */ block */",
    "fn f(x: (i32, [[f64; 4]], &'a shrd gpu.shared [[f32; 2]; 8])) -> bool { x.0.fst; x.1.snd; }",
];

/// Every `.strata` file under `tests/` and `examples/` of the repository, sorted (determinism).
fn repository_seeds() -> Vec<(PathBuf, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    for dir in ["tests", "examples"] {
        collect_strata(&root.join(dir), &mut files);
    }
    files.sort();
    files
        .into_iter()
        .filter_map(|p| {
            let bytes = std::fs::read(&p).ok()?;
            Some((p, String::from_utf8_lossy(&bytes).into_owned()))
        })
        .collect()
}

fn collect_strata(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_strata(&path, out);
        } else if path.extension().is_some_and(|e| e == "strata") {
            out.push(path);
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Mutations

const TOKENS: &[&str] = &[
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    "[[",
    "]]",
    "<<<",
    ">>>",
    "<",
    ">",
    ">=",
    "sched",
    "split",
    "at",
    "sync",
    "unsafe",
    "&",
    "uniq",
    "shrd",
    "::",
    "::<",
    ";",
    ",",
    ".",
    "..",
    "-[",
    "]->",
    "->",
    "=>",
    "=",
    "+",
    "-",
    "*",
    "@",
    "fn",
    "let",
    "if",
    "else",
    "for",
    "in",
    "while",
    "view",
    "const",
    "where",
    "as",
    "fst",
    "snd",
    "X",
    "XY",
    "_X",
    "gpu.global",
    "cpu.thread",
    "gpu.grid",
    "'a",
    "\"",
    "/*",
    "*/",
    "//",
    "0",
    "1.5",
    "99999999999999999999999999999999999999999",
    "x",
    "\0",
    "\u{fffd}",
    "é",
    "\n",
];

/// Openers that nest when repeated: `(((`, `[[[`, `{{{`, `- - -`, `&uniq &uniq`, `* * *`, …
const NESTERS: &[&str] =
    &["(", "[", "{", "[[", "-", "!", "&uniq ", "*", "a[", "if x {", "&[", "a.", "<<<X<", "sched(X) b in g {"];

/// Applies one random mutation to `buf` (bytes; the result is decoded lossily, so cut UTF-8
/// sequences become replacement characters).
fn mutate(rng: &mut SplitMix64, buf: &mut Vec<u8>) {
    let len = buf.len();
    let range = |rng: &mut SplitMix64, max: usize| -> (usize, usize) {
        let lo = rng.below(len + 1);
        let n = rng.below(max.min(len - lo) + 1);
        (lo, lo + n)
    };
    match rng.below(9) {
        // Delete a range.
        0 => {
            let (lo, hi) = range(rng, 64);
            buf.drain(lo..hi);
        }
        // Duplicate a range in place.
        1 => {
            let (lo, hi) = range(rng, 256);
            let copy = buf[lo..hi].to_vec();
            buf.splice(hi..hi, copy);
        }
        // Swap two ranges.
        2 => {
            let (a_lo, a_hi) = range(rng, 64);
            let (b_lo, b_hi) = range(rng, 64);
            let (first, second) =
                if a_lo <= b_lo { ((a_lo, a_hi), (b_lo, b_hi)) } else { ((b_lo, b_hi), (a_lo, a_hi)) };
            if first.1 <= second.0 {
                let a = buf[first.0..first.1].to_vec();
                let b = buf[second.0..second.1].to_vec();
                buf.splice(second.0..second.1, a);
                buf.splice(first.0..first.1, b);
            }
        }
        // Insert a few tokens.
        3 | 4 => {
            for _ in 0..=rng.below(4) {
                let at = rng.below(buf.len() + 1);
                let tok = rng.pick(TOKENS).as_bytes().to_vec();
                buf.splice(at..at, tok);
            }
        }
        // Truncate.
        5 => {
            let at = rng.below(len + 1);
            buf.truncate(at);
        }
        // Insert deep nesting (deeper than MAX_DEPTH half of the time).
        6 => {
            let at = rng.below(len + 1);
            let nester = rng.pick(NESTERS);
            let count =
                if rng.below(2) == 0 { rng.below(MAX_DEPTH as usize) } else { MAX_DEPTH as usize + rng.below(400) };
            buf.splice(at..at, nester.repeat(count).into_bytes());
        }
        // Overwrite one byte with anything (NUL, a stray UTF-8 continuation byte, …).
        7 => {
            if len > 0 {
                let at = rng.below(len);
                buf[at] = rng.next() as u8;
            }
        }
        // Replace a range with a range taken from elsewhere in the file.
        _ => {
            let (lo, hi) = range(rng, 32);
            let (src_lo, src_hi) = range(rng, 32);
            let copy = buf[src_lo..src_hi].to_vec();
            buf.splice(lo..hi, copy);
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Running the parser under guard

/// Parses `src` and renders its diagnostics; panics become `Err` with the panic message. The
/// time returned is that of lexing and parsing alone.
fn parse_guarded(src: &str) -> Result<(Vec<String>, Duration), String> {
    let mut elapsed = Duration::ZERO;
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        let mut sources = SourceMap::new();
        let file = sources.add("mutant.strata", src);
        let start = Instant::now();
        let parsed = parse(file, src);
        elapsed = start.elapsed();
        // The renderer prints each diagnostic's whole source line, so rendering thousands of
        // diagnostics on one huge line is quadratic (a renderer limitation, not a parser hang):
        // render everything for ordinary inputs, and only the first few for huge ones.
        let shown = if src.len() <= RENDER_ALL_UP_TO { parsed.diagnostics.len() } else { 5 };
        let shown = &parsed.diagnostics[..shown.min(parsed.diagnostics.len())];
        let rendered = render_plain(shown, &sources);
        assert_eq!(rendered.is_empty(), shown.is_empty());
        parsed.diagnostics.iter().map(|d| d.code.as_str().to_string()).collect::<Vec<_>>()
    }));
    result.map(|codes| (codes, elapsed)).map_err(|e| {
        e.downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "<non-string panic>".into())
    })
}

fn excerpt(src: &str) -> String {
    let mut s: String = src.chars().take(300).collect();
    if s.len() < src.len() {
        s.push_str(&format!("… ({} bytes in all)", src.len()));
    }
    s
}

/// Runs `check` over `inputs` on one thread with a 2 MiB stack, with a watchdog against hangs.
/// Returns the failures: (label, excerpt of the input, what went wrong).
fn run_on_small_stack<F>(inputs: Vec<(String, String)>, mut check: F) -> Vec<(String, String, String)>
where
    F: FnMut(&str, &str) -> Option<String> + Send + 'static,
{
    let current = Arc::new(Mutex::new(None::<(String, String)>));
    let (tx, rx) = mpsc::channel::<Option<(String, String, String)>>();
    let worker_current = Arc::clone(&current);
    let worker = std::thread::Builder::new()
        .name("robustness".into())
        .stack_size(TEST_STACK)
        .spawn(move || {
            let verbose = std::env::var_os("ROBUSTNESS_VERBOSE").is_some();
            for (label, src) in inputs {
                if verbose {
                    eprintln!("parsing {label} ({} bytes)", src.len());
                }
                *worker_current.lock().unwrap_or_else(|e| e.into_inner()) = Some((label.clone(), excerpt(&src)));
                let failure = check(&label, &src).map(|why| (label, excerpt(&src), why));
                if tx.send(failure).is_err() {
                    return;
                }
            }
        })
        .expect("spawn the robustness thread");
    let mut failures = Vec::new();
    loop {
        match rx.recv_timeout(WATCHDOG) {
            Ok(Some(f)) => failures.push(f),
            Ok(None) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let cur = current.lock().unwrap_or_else(|e| e.into_inner()).clone();
                panic!("parser hung for more than {WATCHDOG:?} on {cur:?}");
            }
        }
    }
    worker.join().expect("robustness thread died");
    failures
}

fn report(failures: &[(String, String, String)]) {
    for (label, src, why) in failures.iter().take(20) {
        eprintln!("FAILED {label}: {why}\n    input: {src:?}");
    }
    assert!(failures.is_empty(), "{} inputs failed", failures.len());
}

// ------------------------------------------------------------------------------------------------
// The mutation test

#[test]
fn mutants_never_panic_or_hang() {
    let mut seeds: Vec<(String, String)> =
        repository_seeds().into_iter().map(|(p, s)| (p.display().to_string(), s)).collect();
    let from_repository = seeds.len();
    for (i, s) in BUILTIN_SEEDS.iter().enumerate() {
        seeds.push((format!("builtin#{i}"), s.to_string()));
    }

    let mut rng = SplitMix64(0x5354_5241_5441_2021);
    let per_seed = MUTANTS_PER_SEED.min(MAX_MUTANTS / seeds.len().max(1));
    let mut inputs = Vec::new();
    for (name, seed) in &seeds {
        inputs.push((name.clone(), seed.clone()));
        for m in 0..per_seed {
            let mut buf = seed.clone().into_bytes();
            for _ in 0..=rng.below(4) {
                mutate(&mut rng, &mut buf);
            }
            let text = String::from_utf8_lossy(&buf).into_owned();
            inputs.push((format!("{name} mutant #{m}"), text));
        }
    }
    let total = inputs.len();
    let bytes: usize = inputs.iter().map(|(_, s)| s.len()).sum();

    let start = Instant::now();
    let slowest = Arc::new(Mutex::new((Duration::ZERO, String::new())));
    let slowest_w = Arc::clone(&slowest);
    let mut count = 0usize;
    let failures = run_on_small_stack(inputs, move |label, src| {
        count += 1;
        match parse_guarded(src) {
            Err(panic) => Some(format!("panicked: {panic}")),
            Ok((_, t)) if t > PER_INPUT_LIMIT => Some(format!("took {t:?} (limit {PER_INPUT_LIMIT:?})")),
            Ok((codes, t)) => {
                let mut s = slowest_w.lock().unwrap_or_else(|e| e.into_inner());
                if t > s.0 {
                    *s = (t, label.to_string());
                }
                // Every 4th input (to keep the test fast): the erased parse must agree.
                count.is_multiple_of(4).then(|| erased_disagrees(src, codes)).flatten()
            }
        }
    });
    let slowest = slowest.lock().unwrap_or_else(|e| e.into_inner()).clone();
    println!(
        "robustness: {total} inputs ({} seeds: {from_repository} from the repository, {} built in; \
         {per_seed} mutants each; {bytes} bytes) parsed in {:?}; slowest {:?} ({})",
        seeds.len(),
        BUILTIN_SEEDS.len(),
        start.elapsed(),
        slowest.0,
        slowest.1
    );
    report(&failures);
}

/// `parse_erased` must report the same diagnostics as `parse` (only spans may differ): the
/// formatter's round-trip tests compare erased trees. `codes` are those of the normal parse.
fn erased_disagrees(src: &str, mut codes: Vec<String>) -> Option<String> {
    let erased = panic::catch_unwind(AssertUnwindSafe(|| strata_syntax::parse_erased(src)));
    let Ok(erased) = erased else {
        return Some("parse_erased panicked".into());
    };
    let mut erased_codes: Vec<String> = erased.diagnostics.iter().map(|d| d.code.as_str().to_string()).collect();
    codes.sort();
    erased_codes.sort();
    (codes != erased_codes).then(|| format!("parse reports {codes:?} but parse_erased {erased_codes:?}"))
}

/// Found by the fuzzer: on a statement missing its `;` with more on the same line, the erased
/// parse did not skip the rest of the statement and reported one error per remaining token.
#[test]
fn erased_parse_recovers_like_the_normal_parse() {
    for src in [
        "fn f() { a b c }",
        "//@ \nfn main() -[t: cpu.thread]-> () {\n    let mut x = 5;&uniq\n    \n1 =~ E 2   let mut x = 06\n}\n",
    ] {
        let (codes, _) = parse_guarded(src).expect("no panic");
        assert_eq!(erased_disagrees(src, codes), None, "on {src:?}");
    }
}

// ------------------------------------------------------------------------------------------------
// Explicit adversarial inputs

const DEEP: usize = 100_000;

/// Must parse with diagnostics, without panicking, and report E0012.
fn deep_cases() -> Vec<(String, String)> {
    let in_fn = |body: String| format!("fn f() -[t: cpu.thread]-> () {{ let x = {body}; }}");
    let mut cases = Vec::new();
    for (name, open, atom, close) in [
        ("parens", "(", "1", ")"),
        ("brackets", "[", "1", "]"),
        ("braces", "{", "1", "}"),
        ("double brackets", "[[", "1", "]]"),
        ("indexing", "a[", "0", "]"),
        ("negation", "-", "1", ""),
        ("not", "!", "x", ""),
        ("uniq borrows", "&uniq ", "x", ""),
        ("shrd borrows", "&shrd ", "x", ""),
        ("derefs", "*", "x", ""),
        ("unsafe", "unsafe ", "x", ""),
        ("if conditions", "if ", "x", " {}"),
        ("calls", "f(", "x", ")"),
        ("tuples", "(1, ", "2", ")"),
        ("blocks with lets", "{ let y = ", "1", "; y }"),
    ] {
        let body = format!("{}{atom}{}", open.repeat(DEEP), close.repeat(DEEP));
        cases.push((format!("{DEEP} nested {name}"), in_fn(body)));
        let unclosed = format!("{}{atom}", open.repeat(DEEP));
        cases.push((format!("{DEEP} unclosed {name}"), in_fn(unclosed)));
    }
    // Types.
    for (name, open, close) in [
        ("reference types", "&uniq ", ""),
        ("array types", "[", "; 2]"),
        ("view array types", "[[", "; 2]]"),
        ("tuple types", "(i32, ", ")"),
        ("paren types", "(", ")"),
    ] {
        let ty = format!("{}i32{}", open.repeat(DEEP), close.repeat(DEEP));
        cases.push((format!("{DEEP} nested {name}"), format!("fn f(x: {ty}) -[t: cpu.thread]-> () {{}}")));
    }
    // Natural numbers, views and execution resources.
    cases.push((
        format!("{DEEP} nested nat parens"),
        format!("const N: nat = {}1{};", "(".repeat(DEEP), ")".repeat(DEEP)),
    ));
    cases.push((format!("{DEEP}-term nat sum"), format!("const N: nat = 1{};", " + 1".repeat(DEEP))));
    cases.push((format!("{DEEP}-term nat power tower"), format!("const N: nat = 2{};", " ^ 2".repeat(DEEP))));
    cases.push((
        format!("{DEEP} nested view arguments"),
        format!("view v = {}a{};", "map(".repeat(DEEP), ")".repeat(DEEP)),
    ));
    // Chains: left-deep trees are deep too.
    for (name, head, link) in [
        ("`+` chain", "1", " + 1"),
        ("`*` chain", "1", " * 1"),
        ("`<<` chain", "1", " << 1"),
        ("`&&` chain", "a", " && a"),
        ("cast chain", "1", " as i32"),
        ("field chain", "a", ".transpose"),
        ("tuple field chain", "a", ".0"),
        ("index chain", "a", "[0]"),
        ("selection chain", "a", "[[b]]"),
        ("view chain", "a", ".map(f)"),
        ("generic call chain", "f::<1>(x)", ".g"),
        ("assignment chain", "a", " = a"),
    ] {
        let body = format!("{head}{}", link.repeat(DEEP));
        cases.push((format!("{DEEP}-long {name}"), in_fn(body)));
    }
    let mut chain = String::from("if a { 1 }");
    for _ in 0..10_000 {
        chain.push_str(" else if a { 1 }");
    }
    chain.push_str(" else { 2 }");
    cases.push(("10000-long else-if chain".into(), in_fn(chain)));
    cases
}

#[test]
fn deep_nesting_reports_e0012() {
    let cases = deep_cases();
    println!("deep nesting: {} cases", cases.len());
    let failures = run_on_small_stack(cases, |_, src| {
        let start = Instant::now();
        let parsed = panic::catch_unwind(AssertUnwindSafe(|| parse(FileId(0), src)));
        let t = start.elapsed();
        let Ok(parsed) = parsed else {
            return Some("panicked".into());
        };
        if t > PER_INPUT_LIMIT {
            return Some(format!("took {t:?}"));
        }
        let codes: Vec<_> = parsed.diagnostics.iter().map(|d| d.code).collect();
        (!codes.contains(&codes::NESTING_TOO_DEEP))
            .then(|| format!("no E0012 among {codes:?}", codes = &codes[..codes.len().min(8)]))
    });
    report(&failures);
}

#[test]
fn degenerate_inputs_are_handled() {
    let long_line = "x".repeat(200_000);
    let cases: Vec<(&str, String, bool)> = vec![
        // (label, source, expect diagnostics?)
        ("empty file", String::new(), false),
        ("only whitespace", " \n\t\r\n".repeat(1000), false),
        ("only comments", "// a\n/* b /* c */ d */\n// e".into(), false),
        ("comment without newline", "// end".into(), false),
        ("100000 line comments", "// c\n".repeat(100_000), false),
        ("deeply nested block comment", format!("{}{}", "/*".repeat(100_000), "*/".repeat(100_000)), false),
        ("unterminated nested comment", "/*".repeat(100_000), true),
        ("unterminated comment", "fn f() {} /* never closed".into(), true),
        ("unterminated string", "fn f() { \"never closed".into(), true),
        ("string ending in backslash", "fn f() { \"\\".into(), true),
        ("string with escaped quote only", "fn f() { \"\\\"".into(), true),
        ("lone quote", "'".into(), true),
        ("lone lifetime", "'a".into(), true),
        ("unterminated everything", "fn f<n: nat(x: [[&uniq (i32, [f64; {\"/*".into(), true),
        ("unclosed fn", "fn f(".into(), true),
        ("unclosed params", "fn f(x: i32, ".into(), true),
        ("unclosed body", "fn f() -[t: cpu.thread]-> () {".into(), true),
        ("unclosed exec", "fn f() -[t: gpu.grid<X<1>, X<".into(), true),
        ("unclosed sched", "fn f() { sched(X".into(), true),
        ("unclosed split", "fn f() { split(X) b at 4 { fst => {".into(), true),
        ("unclosed launch", "fn f() { k::<<<X<1>, X<32>".into(), true),
        ("unclosed select", "fn f() { a[[b".into(), true),
        ("unclosed generics", "fn f() { k::<i32, ".into(), true),
        ("unclosed view", "view v = group::<".into(), true),
        ("unclosed const", "const N: nat = (".into(), true),
        ("NUL bytes", "\0".repeat(1000), true),
        ("NUL inside tokens", "fn\0f(\0) {\0}".into(), true),
        ("replacement characters", "fn f() { \u{fffd}\u{fffd} }".into(), true),
        ("non-ASCII identifiers", "fn fé() { let ü = 1; }".into(), true),
        ("BOM", "\u{feff}fn f() {}".into(), false),
        ("stray closers", ")]}>".repeat(10_000), true),
        ("only operators", "+-*/%^&|!@<>=".repeat(10_000), true),
        ("huge integer", format!("const N: nat = {};", "9".repeat(10_000)), true),
        ("huge suffixed float", format!("fn f() {{ {}.5e-99999f32; }}", "1".repeat(10_000)), false),
        ("one long identifier", long_line.clone(), true),
        ("many items", "fn f() {}\n".repeat(20_000), false),
        ("many bad items", "x ".repeat(100_000), true),
        ("many bad statements", format!("fn f() {{ {} }}", ") ; ".repeat(50_000)), true),
        ("many unclosed launches", "fn f() { k<<<X<1>, ".repeat(10_000), true),
        ("many unclosed exec ranges", "fn f([a[ ".repeat(10_000), true),
        ("many unclosed syncs", "fn f() { sync(a[ ( ".repeat(10_000), true),
        ("many `>=` splits", format!("fn f() {{ {} }}", "k::<1>=".repeat(10_000)), true),
    ];
    println!("degenerate inputs: {} cases", cases.len());
    let inputs = cases.iter().map(|(label, src, diag)| (format!("{label}|{diag}"), src.clone())).collect();
    let failures = run_on_small_stack(inputs, |label, src| {
        let expect_diags = label.ends_with("|true");
        match parse_guarded(src) {
            Err(panic) => Some(format!("panicked: {panic}")),
            Ok((_, t)) if t > PER_INPUT_LIMIT => Some(format!("took {t:?}")),
            Ok((codes, _)) if codes.is_empty() == expect_diags => {
                Some(format!("expected {} diagnostics, got {codes:?}", if expect_diags { "some" } else { "no" }))
            }
            Ok(_) => None,
        }
    });
    report(&failures);
}
