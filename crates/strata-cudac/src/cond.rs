//! Conditional compilation: `#if`, `#ifdef`, `#ifndef`, `#elif`, `#else`, `#endif`, with
//! `defined(X)` / `defined X` and the values of object-like `#define`s seen so far.
//!
//! This runs on the text before tree-sitter parses it: every directive line of a conditional and
//! every line of a group that is not taken becomes spaces (newlines kept), so the text keeps its
//! length and every span of what remains points at the `.cu` file unchanged. `#define`s inside a
//! group that is not taken are dropped with it; valueless `#define NAME` lines (flags for
//! `#ifdef`) are blanked too, after they are recorded, and so are `#pragma`s (`unroll`: hints). An `#if` expression is C's: integers
//! (`i64`), `+ - * / % << >> < <= > >= == != & ^ | && || ! ~ ?:`, names not defined are 0.
//! Anything else in one (a function-like macro, a string) is E0801 at the directive.

use std::collections::HashMap;
use strata_diag::{codes, Diagnostic, FileId, Span};

type R<T> = Result<T, Box<Diagnostic>>;

/// One conditional in progress: whether its current group is taken, whether any group of it was,
/// whether the whole conditional sits in a taken group, and whether `#else` was seen.
struct Level {
    taken: bool,
    done: bool,
    outer: bool,
    seen_else: bool,
    at: Span,
}

/// The macros nvcc's host pass defines (`__CUDA_ARCH__`, which only its device pass defines, is
/// refused in conditions: the two sides would need different code), with their values; usable in
/// conditions and as values.
pub(crate) const PREDEFINED: &[(&str, u64)] = &[
    ("__CUDACC__", 1),
    ("__NVCC__", 1),
    ("__cplusplus", 201703),
    // The CUDA the project's nvcc comes from (scripts/setup-nvcc.sh).
    ("CUDART_VERSION", 13000),
    ("CUDA_VERSION", 13000),
    ("__CUDACC_VER_MAJOR__", 13),
    ("__CUDACC_VER_MINOR__", 0),
];

/// `text` with the attributes and hints that change nothing about what a program computes blanked
/// out (same length, so every span still points into the file): `__attribute__((…))`,
/// `__align__(n)`, `__launch_bounds__(…)`, `__forceinline__`, `__noinline__`, `__inline__`,
/// `__restrict__`. Not inside comments, strings or character literals.
pub(crate) fn blank_attributes(text: &str) -> String {
    const WITH_ARGS: &[&str] = &["__attribute__", "__align__", "__launch_bounds__", "__declspec"];
    const WORDS: &[&str] = &["__forceinline__", "__noinline__", "__inline__", "__restrict__", "__restrict"];
    if !WITH_ARGS.iter().chain(WORDS).any(|w| text.contains(w)) {
        return text.to_string();
    }
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                i = text[i..].find('\n').map_or(b.len(), |e| i + e);
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = text[i + 2..].find("*/").map_or(b.len(), |e| i + e + 4);
                continue;
            }
            q @ (b'"' | b'\'') => {
                i += 1;
                while i < b.len() && b[i] != q && b[i] != b'\n' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
                continue;
            }
            c if ident(c) && (i == 0 || !ident(b[i - 1])) => {
                let end = (i..b.len()).find(|&k| !ident(b[k])).unwrap_or(b.len());
                let word = &text[i..end];
                let mut stop = end;
                if WITH_ARGS.contains(&word) {
                    // The balanced parentheses after it.
                    let open = (end..b.len()).find(|&k| !b[k].is_ascii_whitespace());
                    if let Some(open) = open.filter(|&k| b[k] == b'(') {
                        let mut depth = 0;
                        for (k, &c) in b.iter().enumerate().skip(open) {
                            depth += i32::from(c == b'(') - i32::from(c == b')');
                            if depth == 0 {
                                stop = k + 1;
                                break;
                            }
                        }
                    }
                } else if !WORDS.contains(&word) {
                    i = end;
                    continue;
                }
                for c in &mut out[i..stop] {
                    if *c != b'\n' {
                        *c = b' ';
                    }
                }
                i = stop;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_string())
}

/// `text` with its conditional directives resolved (same length; lines not compiled blanked).
pub(crate) fn resolve(file: FileId, text: &str) -> R<String> {
    if !text.lines().any(|l| directive(l).is_some_and(|(d, _)| is_conditional(d) || d == "define" || d == "pragma")) {
        return Ok(text.to_string());
    }
    let mut out = text.as_bytes().to_vec();
    let mut defs: HashMap<String, Option<String>> =
        PREDEFINED.iter().map(|(k, v)| (k.to_string(), Some(v.to_string()))).collect();
    let mut stack: Vec<Level> = Vec::new();
    let mut in_comment = false;
    let mut pos = 0;
    while pos < text.len() {
        // One logical line: physical lines joined by a final `\`.
        let mut end = pos;
        loop {
            let e = text[end..].find('\n').map_or(text.len(), |i| end + i);
            let cont = text[end..e].trim_end().ends_with('\\');
            end = e;
            if !cont || end >= text.len() {
                break;
            }
            end += 1;
        }
        let line = &text[pos..end];
        let span = Span::new(file, pos as u32, end as u32);
        let active = stack.last().is_none_or(|l| l.taken && l.outer);
        let starts_in_comment = in_comment;
        in_comment = comment_state(line, in_comment);
        let mut blank = !active;
        if let Some((d, rest)) = directive(line).filter(|_| !starts_in_comment) {
            let rest = strip_comments(rest);
            match d {
                "if" | "ifdef" | "ifndef" => {
                    let v = if active { eval_directive(d, &rest, &defs, span)? } else { false };
                    stack.push(Level { taken: v, done: v, outer: active, seen_else: false, at: span });
                    blank = true;
                }
                "elif" | "else" => {
                    let Some(l) = stack.last_mut() else {
                        return Err(unsupported(span, format!("`#{d}` without `#if`")));
                    };
                    if l.seen_else {
                        return Err(unsupported(span, format!("`#{d}` after `#else`")));
                    }
                    l.seen_else = d == "else";
                    let v = !l.done && l.outer && (d == "else" || eval_directive("if", &rest, &defs, span)?);
                    l.taken = v;
                    l.done |= v;
                    blank = true;
                }
                "endif" => {
                    if stack.pop().is_none() {
                        return Err(unsupported(span, "`#endif` without `#if`"));
                    }
                    blank = true;
                }
                // `#pragma unroll` and the like: hints that change nothing `sim` checks.
                "pragma" => blank = true,
                "define" if active => {
                    let (name, value) = split_define(&rest);
                    if !name.is_empty() {
                        let function_like = rest.trim_start()[name.len()..].starts_with('(');
                        defs.insert(name.to_string(), (!function_like).then(|| value.to_string()));
                        // A flag (`#define DEBUG`) only matters to conditionals.
                        blank |= value.is_empty() && !function_like;
                    }
                }
                _ => {}
            }
        }
        if blank {
            for b in &mut out[pos..end] {
                if *b != b'\n' {
                    *b = b' ';
                }
            }
        }
        pos = end + 1;
    }
    if let Some(l) = stack.last() {
        return Err(unsupported(l.at, "`#if` without `#endif`"));
    }
    // Only ASCII bytes were replaced by spaces, and whole lines: still UTF-8.
    String::from_utf8(out).map_err(|_| unsupported(Span::new(file, 0, 0), "this file's text"))
}

fn is_conditional(d: &str) -> bool {
    matches!(d, "if" | "ifdef" | "ifndef" | "elif" | "else" | "endif")
}

/// `(directive, rest)` of a preprocessor line (`#  ifdef X` gives `("ifdef", " X")`).
fn directive(line: &str) -> Option<(&str, &str)> {
    let t = line.trim_start().strip_prefix('#')?.trim_start();
    let n = t.bytes().take_while(|b| b.is_ascii_alphabetic()).count();
    Some((&t[..n], &t[n..]))
}

fn unsupported(span: Span, what: impl Into<String>) -> Box<Diagnostic> {
    Box::new(
        Diagnostic::error(
            codes::UNSUPPORTED,
            format!("not supported in CUDA-C yet: {}", what.into()),
            span,
            "this directive",
        )
        .with_note("docs/cuda-c.md lists the CUDA-C subset that `strata run` accepts"),
    )
}

/// Whether a `/* … */` comment is open at the end of `line`, given whether one was at its start
/// (strings and `//` comments respected).
fn comment_state(line: &str, mut open: bool) -> bool {
    let b = line.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if open {
            if b[i..].starts_with(b"*/") {
                open = false;
                i += 2;
                continue;
            }
        } else if b[i..].starts_with(b"/*") {
            open = true;
            i += 2;
            continue;
        } else if b[i..].starts_with(b"//") {
            break;
        } else if b[i] == b'"' || b[i] == b'\'' {
            let q = b[i];
            i += 1;
            while i < b.len() && b[i] != q {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
        }
        i += 1;
    }
    open
}

/// A directive's text without comments and line continuations.
fn strip_comments(s: &str) -> String {
    let s = s.replace("\\\n", " ").replace("\\\r\n", " ");
    let mut out = String::new();
    let mut rest = s.as_str();
    loop {
        match (rest.find("//"), rest.find("/*")) {
            (Some(a), b) if b.is_none_or(|b| a < b) => {
                out.push_str(&rest[..a]);
                break;
            }
            (_, Some(b)) => {
                out.push_str(&rest[..b]);
                out.push(' ');
                match rest[b + 2..].find("*/") {
                    Some(e) => rest = &rest[b + 2 + e + 2..],
                    None => break,
                }
            }
            _ => {
                out.push_str(rest);
                break;
            }
        }
    }
    out
}

/// `NAME value` of a `#define`'s rest (the value of a function-like one starts at its `(`).
fn split_define(rest: &str) -> (&str, &str) {
    let t = rest.trim_start();
    let n = t.bytes().take_while(|b| b.is_ascii_alphanumeric() || *b == b'_').count();
    (&t[..n], t[n..].trim())
}

fn eval_directive(d: &str, rest: &str, defs: &HashMap<String, Option<String>>, span: Span) -> R<bool> {
    match d {
        "ifdef" | "ifndef" => {
            let name = rest.trim();
            if name == "__CUDA_ARCH__" {
                return Err(unsupported(span, "`__CUDA_ARCH__` in a conditional (host and device code would differ)"));
            }
            if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
                return Err(unsupported(span, format!("`#{d}` of `{name}`")));
            }
            Ok(defs.contains_key(name) == (d == "ifdef"))
        }
        _ => {
            let toks = expand(&tokens(rest, span)?, defs, span, 0)?;
            let mut p = Eval { toks: &toks, i: 0, span };
            let v = p.ternary()?;
            if p.i != toks.len() {
                return Err(unsupported(span, format!("this `#{d}` expression")));
            }
            Ok(v != 0)
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Num(i64),
    Name(String),
    Op(&'static str),
}

const OPS: [&str; 24] = [
    "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+", "-", "*", "/", "%", "<", ">", "&", "^", "|", "!", "~", "?",
    ":", "(", ")",
];

fn tokens(s: &str, span: Span) -> R<Vec<Tok>> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let st = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Name(s[st..i].to_string()));
        } else if c.is_ascii_digit() {
            let st = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.') {
                i += 1;
            }
            let t = s[st..i].trim_end_matches(['u', 'U', 'l', 'L']).to_ascii_lowercase();
            let v = if let Some(h) = t.strip_prefix("0x") {
                u64::from_str_radix(h, 16).ok()
            } else if t.len() > 1 && t.starts_with('0') {
                u64::from_str_radix(&t[1..], 8).ok()
            } else {
                t.parse().ok()
            };
            let Some(v) = v else { return Err(unsupported(span, format!("the number `{}` here", &s[st..i]))) };
            out.push(Tok::Num(v as i64));
        } else if let Some(op) = OPS.iter().find(|o| s[i..].starts_with(**o)) {
            out.push(Tok::Op(op));
            i += op.len();
        } else {
            return Err(unsupported(span, format!("`{}` in a conditional", &s[i..].chars().next().unwrap_or(' '))));
        }
    }
    Ok(out)
}

/// Replaces `defined X` / `defined(X)` by 1 or 0 and macro names by their values, recursively;
/// names left are 0, as in C.
fn expand(toks: &[Tok], defs: &HashMap<String, Option<String>>, span: Span, depth: u32) -> R<Vec<Tok>> {
    if depth > 32 {
        return Err(unsupported(span, "macros nested this deep in a conditional"));
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        match &toks[i] {
            Tok::Name(n) if n == "__CUDA_ARCH__" => {
                return Err(unsupported(span, "`__CUDA_ARCH__` in a conditional (host and device code would differ)"));
            }
            Tok::Name(n) if n == "defined" => {
                let (name, used) = match (toks.get(i + 1), toks.get(i + 2), toks.get(i + 3)) {
                    (Some(Tok::Op("(")), Some(Tok::Name(x)), Some(Tok::Op(")"))) => (x, 4),
                    (Some(Tok::Name(x)), _, _) => (x, 2),
                    _ => return Err(unsupported(span, "this use of `defined`")),
                };
                out.push(Tok::Num(defs.contains_key(name) as i64));
                i += used;
            }
            Tok::Name(n) => {
                match defs.get(n) {
                    Some(Some(v)) => out.extend(expand(&tokens(&strip_comments(v), span)?, defs, span, depth + 1)?),
                    Some(None) => {
                        return Err(unsupported(span, format!("the function-like macro `{n}` in a conditional")))
                    }
                    None => out.push(Tok::Num(0)),
                }
                i += 1;
            }
            t => {
                out.push(t.clone());
                i += 1;
            }
        }
    }
    Ok(out)
}

/// A precedence-climbing evaluator of C's integer constant expressions.
struct Eval<'a> {
    toks: &'a [Tok],
    i: usize,
    span: Span,
}

const BINARY: [(&str, u8); 18] = [
    ("||", 1),
    ("&&", 2),
    ("|", 3),
    ("^", 4),
    ("&", 5),
    ("==", 6),
    ("!=", 6),
    ("<", 7),
    ("<=", 7),
    (">", 7),
    (">=", 7),
    ("<<", 8),
    (">>", 8),
    ("+", 9),
    ("-", 9),
    ("*", 10),
    ("/", 10),
    ("%", 10),
];

impl Eval<'_> {
    fn bad(&self) -> Box<Diagnostic> {
        unsupported(self.span, "this conditional expression")
    }

    fn eat(&mut self, op: &str) -> bool {
        if matches!(self.toks.get(self.i), Some(Tok::Op(o)) if *o == op) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn ternary(&mut self) -> R<i64> {
        let c = self.binary(1)?;
        if self.eat("?") {
            let a = self.ternary()?;
            if !self.eat(":") {
                return Err(self.bad());
            }
            let b = self.ternary()?;
            return Ok(if c != 0 { a } else { b });
        }
        Ok(c)
    }

    fn binary(&mut self, min: u8) -> R<i64> {
        let mut a = self.unary()?;
        while let Some(Tok::Op(op)) = self.toks.get(self.i) {
            let Some(&(op, prec)) = BINARY.iter().find(|b| b.0 == *op) else { break };
            if prec < min {
                break;
            }
            self.i += 1;
            let b = self.binary(prec + 1)?;
            a = match op {
                "||" => (a != 0 || b != 0) as i64,
                "&&" => (a != 0 && b != 0) as i64,
                "|" => a | b,
                "^" => a ^ b,
                "&" => a & b,
                "==" => (a == b) as i64,
                "!=" => (a != b) as i64,
                "<" => (a < b) as i64,
                "<=" => (a <= b) as i64,
                ">" => (a > b) as i64,
                ">=" => (a >= b) as i64,
                "<<" => a.wrapping_shl(b as u32),
                ">>" => a.wrapping_shr(b as u32),
                "+" => a.wrapping_add(b),
                "-" => a.wrapping_sub(b),
                "*" => a.wrapping_mul(b),
                "/" | "%" if b == 0 => return Err(unsupported(self.span, "division by zero in a conditional")),
                "/" => a.wrapping_div(b),
                _ => a.wrapping_rem(b),
            };
        }
        Ok(a)
    }

    fn unary(&mut self) -> R<i64> {
        let t = self.toks.get(self.i).cloned().ok_or_else(|| self.bad())?;
        self.i += 1;
        match t {
            Tok::Num(v) => Ok(v),
            Tok::Op("!") => Ok((self.unary()? == 0) as i64),
            Tok::Op("~") => Ok(!self.unary()?),
            Tok::Op("-") => Ok(self.unary()?.wrapping_neg()),
            Tok::Op("+") => self.unary(),
            Tok::Op("(") => {
                let v = self.ternary()?;
                if !self.eat(")") {
                    return Err(self.bad());
                }
                Ok(v)
            }
            _ => Err(self.bad()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str) -> String {
        resolve(FileId(0), text).map_err(|d| d.message.clone()).unwrap()
    }

    #[test]
    fn groups_taken_and_blanked_keep_offsets() {
        let text = "#define N 4\n#if N > 2 && defined(N)\nint a;\n#else\nint b;\n#endif\nint c;\n";
        let out = run(text);
        assert_eq!(out.len(), text.len());
        assert!(out.contains("int a;") && !out.contains("int b;") && out.contains("int c;"));
        assert_eq!(out.find("int c;"), text.find("int c;"));
    }

    #[test]
    fn ifdef_ifndef_elif_nested() {
        let text = "#define DEBUG\n#ifndef DEBUG\nA\n#elif 0\nB\n#elif (1 ? 2 : 0) == 2\nC\n#if 0\nD\n#endif\n#else\nE\n#endif\n";
        let out = run(text);
        assert!(!out.contains('A') && !out.contains('B') && out.contains('C') && !out.contains('D'));
        assert!(!out.contains('E') && !out.contains("DEBUG"));
    }

    #[test]
    fn defines_in_untaken_groups_do_not_count() {
        let out = run("#if 0\n#define X 1\n#endif\n#ifdef X\nyes\n#endif\n#if X + 1 == 1 /* X is 0 */\nzero\n#endif\n");
        assert!(!out.contains("yes") && out.contains("zero"));
    }

    #[test]
    fn commented_directives_are_text() {
        let out = run("/*\n#if 0\n*/\nkeep\n");
        assert!(out.contains("keep") && out.contains("#if 0"));
    }

    #[test]
    fn errors() {
        for bad in [
            "#if 1\n",
            "#endif\n",
            "#if F(1)\n#endif\n",
            "#define F(x) x\n#if F(1)\n#endif\n",
            "#if 1/0\n#endif\n",
            "#else\n",
        ] {
            assert!(resolve(FileId(0), bad).is_err(), "{bad}");
        }
    }
}
