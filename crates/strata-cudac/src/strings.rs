//! C strings on the host: `argc`/`argv`, string literals and `char` arrays as `char *` values,
//! `printf("%s")` of any string, `atoi`.
//!
//! A string is a buffer of `char`s (an IR `i32` each, [`ScalarTy::I8`]) ending in a 0, like C's:
//! `argv[i]` is a new host buffer holding program argument `i` (read byte by byte with
//! [`Builtin::ArgByte`]), a string literal used as a pointer a new host buffer holding its bytes.
//! So every access to a string is bounds-checked as any other memory: reading past its 0 is
//! E0903. `printf("%s", p)` prints the characters up to the 0 (a loop in the IR), and the
//! strings whose value the front end knows — a literal, `c ? "a" : "b"`, `cudaGetErrorString(e)`
//! — are printed as text, chosen at run time where the choice depends on a value.

use super::*;

/// A string whose possible values are literals (`Lit`), chosen by conditions; or a `char`
/// pointer (`Ptr`), printed up to its 0.
pub(crate) enum StrE {
    Lit(String),
    Cond(Expr, Box<StrE>, Box<StrE>),
    Ptr(Expr),
}

/// The text `cudaGetErrorString` and `cudaGetErrorName` give for `cudaSuccess`; on `sim` every
/// failing CUDA call stops the program, so no other status reaches them from the runtime.
const NO_ERROR: (&str, &str) = ("no error", "cudaSuccess");

impl Lx {
    /// `argv[i]` of `main(int argc, char **argv)`: a new host buffer holding argument `i` and
    /// its 0 (`argv[0]`, with a constant index, is the program's name, `a.out`).
    pub(crate) fn argv_string(&mut self, index: Node, span: Span, src: &Src) -> R<ptr::PtrE> {
        if self.f.gpu {
            return Err(self.unsupported(index, src, "`argv` in GPU code"));
        }
        if self.constant(index, src).ok() == Some(0) {
            return Ok(self.literal_buffer("a.out", span));
        }
        let i = self.offset(index, src)?;
        let u64t = ScalarTy::U64;
        let local = |lx: &mut Self, name: &str, t: ScalarTy| lx.new_local(name, Ty::Scalar(t.ir()), Level::Host);
        let load = |l: LocalId| Expr::Load(Place::local(l, span));
        // (C's index: `ArgByte` of 0 is refused, the name being a constant.)
        let a = local(self, "argv index", u64t);
        let arg = cast(i, ScalarTy::I64, u64t);
        let len = local(self, "argv length", u64t);
        let k = local(self, "argv byte", u64t);
        let byte = |at: Expr| Expr::Builtin(Builtin::ArgByte, vec![load(a), at], span);
        let inc = |l: LocalId| Stmt::Store {
            place: Place::local(l, span),
            value: Expr::Binary(BinOp::Add, Box::new(load(l)), Box::new(int(1, u64t))),
        };
        let buf = self.new_local("argv[i]", self.elem_ptr(Elem::S(ScalarTy::I8), Mem::Cpu, true), Level::Host);
        let size = Expr::Binary(BinOp::Add, Box::new(load(len)), Box::new(int(1, u64t)));
        let p = ptr::PtrE::at(buf, Elem::S(ScalarTy::I8));
        let at_k =
            self.ptr_place(ptr::PtrE::at(buf, Elem::S(ScalarTy::I8)), Some(cast(load(k), u64t, ScalarTy::I64)), span);
        let pre = vec![
            Stmt::Let { local: a, init: Some(arg), span },
            Stmt::Let { local: len, init: Some(int(0, u64t)), span },
            Stmt::While {
                cond: Expr::Binary(BinOp::Ne, Box::new(byte(load(len))), Box::new(int(0, ScalarTy::I32))),
                body: vec![inc(len)],
                span,
            },
            Stmt::Let {
                local: buf,
                init: Some(Expr::Builtin(
                    Builtin::HeapNew,
                    vec![Expr::ArrayRepeat(Box::new(int(0, ScalarTy::I32)), IExpr::Value(Box::new(size)))],
                    span,
                )),
                span,
            },
            Stmt::Let { local: k, init: Some(int(0, u64t)), span },
            Stmt::While {
                cond: Expr::Binary(BinOp::Lt, Box::new(load(k)), Box::new(load(len))),
                body: vec![Stmt::Store { place: at_k, value: byte(load(k)) }, inc(k)],
                span,
            },
        ];
        self.f.pre.extend(pre);
        Ok(p)
    }

    /// A new host buffer holding `text` and its 0 (a string literal used as a `char *`).
    pub(crate) fn literal_buffer(&mut self, text: &str, span: Span) -> ptr::PtrE {
        // (A byte past 127 is a negative `char`, as on x86: the literal's low 32 bits.)
        let bytes = text.bytes().chain([0]).map(|b| int(u128::from(b as i8 as i32 as u32), ScalarTy::I32)).collect();
        let shown: String = text.chars().take(24).flat_map(char::escape_default).collect();
        let name = format!("\"{shown}\"");
        let buf = self.new_local(&name, self.elem_ptr(Elem::S(ScalarTy::I8), Mem::Cpu, true), Level::Host);
        let init = Expr::Builtin(Builtin::HeapNew, vec![Expr::ArrayList(bytes)], span);
        self.f.pre.push(Stmt::Let { local: buf, init: Some(init), span });
        ptr::PtrE::at(buf, Elem::S(ScalarTy::I8))
    }

    /// Whether `n` names `main`'s `argv` (not hidden by a local of that name).
    pub(crate) fn is_argv(&self, n: Node, src: &Src) -> bool {
        let n = self.strip_parens(n);
        n.kind() == "identifier"
            && self.f.argv.as_deref() == Some(self.text(n, src))
            && self.lookup(self.text(n, src)).is_none()
    }

    /// A string argument (`%s` of `printf`, a format string): its possible values.
    pub(crate) fn string_expr(&mut self, n: Node, src: &Src) -> R<StrE> {
        let n = self.strip_parens(n);
        match n.kind() {
            "string_literal" => return Ok(StrE::Lit(self.string_text(n, src)?)),
            "concatenated_string" => {
                let mut text = String::new();
                let mut c = n.walk();
                for part in n.named_children(&mut c) {
                    if part.kind() != "string_literal" {
                        return Err(self.unsupported(part, src, "this part of a string"));
                    }
                    text.push_str(&self.string_text(part, src)?);
                }
                return Ok(StrE::Lit(text));
            }
            "conditional_expression" => {
                let cond = self.cond(self.child(n, "condition", src)?, src)?;
                let a = self.string_expr(self.child(n, "consequence", src)?, src)?;
                let b = self.string_expr(self.child(n, "alternative", src)?, src)?;
                return Ok(StrE::Cond(cond, Box::new(a), Box::new(b)));
            }
            // `__FILE__`: the path of the file (or header) as shown; `__func__`: the function.
            "identifier" if self.text(n, src) == "__FILE__" && self.lookup("__FILE__").is_none() => {
                return match self.file_names.get(&self.file).filter(|f| !f.is_empty()) {
                    Some(f) => Ok(StrE::Lit(f.clone())),
                    None => Err(self.unsupported(n, src, "`__FILE__` where the file's name is not known")),
                };
            }
            "identifier" if matches!(self.text(n, src), "__func__" | "__FUNCTION__") => {
                return Ok(StrE::Lit(self.f.name.clone()));
            }
            "call_expression" => {
                let f = self.text(self.child(n, "function", src)?, src);
                if let Some(which) = ["cudaGetErrorString", "cudaGetErrorName"].iter().position(|x| *x == f) {
                    let args = self.args(n, src)?;
                    let [e] = args[..] else {
                        return Err(self.unsupported(n, src, format!("`{f}` of this many arguments")));
                    };
                    let (v, t) = self.rvalue(e, src)?;
                    let v = self.convert(v, t, CTy::S(ScalarTy::I32), e, src)?;
                    let ok = Expr::Binary(BinOp::Eq, Box::new(v.clone()), Box::new(int(0, ScalarTy::I32)));
                    let text = if which == 0 { NO_ERROR.0 } else { NO_ERROR.1 };
                    let other = if which == 0 { "unrecognized error code" } else { "cudaErrorUnknown" };
                    // 101, `cudaErrorInvalidDevice`: `cudaSetDevice` of another device than 0.
                    let invalid = Expr::Binary(BinOp::Eq, Box::new(v), Box::new(int(101, ScalarTy::I32)));
                    let device = if which == 0 { "invalid device ordinal" } else { "cudaErrorInvalidDevice" };
                    let rest =
                        StrE::Cond(invalid, Box::new(StrE::Lit(device.into())), Box::new(StrE::Lit(other.into())));
                    return Ok(StrE::Cond(ok, Box::new(StrE::Lit(text.into())), Box::new(rest)));
                }
            }
            _ => {}
        }
        let (e, t) = self.rvalue(n, src)?;
        match t {
            CTy::Ptr(Elem::S(ScalarTy::I8 | ScalarTy::U8)) if !self.f.gpu => Ok(StrE::Ptr(e)),
            CTy::Ptr(Elem::S(ScalarTy::I8 | ScalarTy::U8)) => {
                Err(self.unsupported(n, src, "`%s` of a `char` pointer in GPU code"))
            }
            _ => Err(self.unsupported(n, src, "this value as a string (`%s` takes a `char *`)")),
        }
    }

    /// Statements printing the string `s` (`%s`, or `%-8s`/`%8s`/`%.3s` of a literal: `spec`
    /// is the conversion's flags, width and precision).
    pub(crate) fn print_string(&mut self, s: StrE, spec: &str, n: Node, span: Span, src: &Src) -> R<Vec<Stmt>> {
        let print =
            |text: String| Stmt::Eval(Expr::Builtin(Builtin::PrintInline, vec![Expr::Lit(Lit::Str(text))], span));
        Ok(match s {
            StrE::Lit(text) => {
                let text = pad(&text, spec);
                if text.is_empty() {
                    Vec::new()
                } else {
                    vec![print(text)]
                }
            }
            StrE::Cond(c, a, b) => {
                let then = self.print_string(*a, spec, n, span, src)?;
                let els = self.print_string(*b, spec, n, span, src)?;
                vec![Stmt::If { cond: c, then, els, span }]
            }
            StrE::Ptr(p) => {
                if !spec.is_empty() {
                    return Err(self.unsupported(n, src, format!("`%{spec}s` of a string that is not a literal")));
                }
                // `for (q = p; *q; q++) putchar(*q)`, every read checked.
                let q =
                    self.new_local("%s pointer", self.elem_ptr(Elem::S(ScalarTy::I8), Mem::Cpu, false), Level::Host);
                let ch = Expr::Load(self.ptr_place(ptr::PtrE::at(q, Elem::S(ScalarTy::I8)), None, span));
                let next = self.ptr_step(q, Elem::S(ScalarTy::I8), int(1, ScalarTy::I64), false, span);
                let out =
                    Expr::Builtin(Builtin::PrintFormatted, vec![Expr::Lit(Lit::Str("%c".into())), ch.clone()], span);
                vec![
                    Stmt::Let { local: q, init: Some(p), span },
                    Stmt::While {
                        cond: Expr::Binary(BinOp::Ne, Box::new(ch), Box::new(int(0, ScalarTy::I32))),
                        body: vec![Stmt::Eval(out), next],
                        span,
                    },
                ]
            }
        })
    }

    /// `atoi(p)`, `atol(p)`, `atoll(p)`, `strtol(p, NULL, 10)` of a `char` pointer: C's parse
    /// (leading blanks, a sign, the digits up to the first other character; 0 without digits),
    /// as a loop in the IR over the checked buffer. Overflow wraps (C leaves it undefined).
    pub(crate) fn atoi(&mut self, n: Node, arg: Node, t: ScalarTy, src: &Src) -> R<(Expr, CTy)> {
        if self.f.gpu {
            return Err(self.unsupported(n, src, "`atoi` in GPU code"));
        }
        let span = self.span(n, src);
        let (p, pt) = self.rvalue(arg, src)?;
        if !matches!(pt, CTy::Ptr(Elem::S(ScalarTy::I8 | ScalarTy::U8))) {
            return Err(self.unsupported(arg, src, "`atoi` of anything but a `char *`"));
        }
        let c8 = Elem::S(ScalarTy::I8);
        let q = self.new_local("atoi pointer", self.elem_ptr(c8, Mem::Cpu, false), Level::Host);
        let v = self.new_local("atoi value", Ty::Scalar(t.ir()), Level::Host);
        let neg = self.new_local("atoi sign", Ty::Scalar(ir::ScalarTy::Bool), Level::Host);
        let here = self.ptr_place(ptr::PtrE::at(q, c8), None, span);
        let ch = || Expr::Load(here.clone());
        let is = |e: Expr, c: u8| Expr::Binary(BinOp::Eq, Box::new(e), Box::new(int(c.into(), ScalarTy::I32)));
        let or = |a: Expr, b: Expr| Expr::Binary(BinOp::Or, Box::new(a), Box::new(b));
        let and = |a: Expr, b: Expr| Expr::Binary(BinOp::And, Box::new(a), Box::new(b));
        let step_stmt = self.ptr_step(q, c8, int(1, ScalarTy::I64), false, span);
        let step = || step_stmt.clone();
        let blank = [b'\t', b'\n', b'\r', 11, 12].iter().fold(is(ch(), b' '), |acc, &c| or(acc, is(ch(), c)));
        let digit = and(
            Expr::Binary(BinOp::Ge, Box::new(ch()), Box::new(int(u128::from(b'0'), ScalarTy::I32))),
            Expr::Binary(BinOp::Le, Box::new(ch()), Box::new(int(u128::from(b'9'), ScalarTy::I32))),
        );
        let d = cast(
            Expr::Binary(BinOp::Sub, Box::new(ch()), Box::new(int(u128::from(b'0'), ScalarTy::I32))),
            ScalarTy::I32,
            t,
        );
        let ten = cast(int(10, ScalarTy::I32), ScalarTy::I32, t);
        let load = |l: LocalId| Expr::Load(Place::local(l, span));
        let acc =
            Expr::Binary(BinOp::Add, Box::new(Expr::Binary(BinOp::Mul, Box::new(load(v)), Box::new(ten))), Box::new(d));
        let result = Expr::Binary(BinOp::Sub, Box::new(zero(t)), Box::new(load(v)));
        let pre = vec![
            Stmt::Let { local: q, init: Some(p), span },
            Stmt::Let { local: v, init: Some(zero(t)), span },
            Stmt::Let { local: neg, init: Some(Expr::Lit(Lit::Bool(false))), span },
            Stmt::While { cond: blank, body: vec![step()], span },
            Stmt::If {
                cond: or(is(ch(), b'-'), is(ch(), b'+')),
                then: vec![Stmt::Store { place: Place::local(neg, span), value: is(ch(), b'-') }, step()],
                els: Vec::new(),
                span,
            },
            Stmt::While {
                cond: digit,
                body: vec![Stmt::Store { place: Place::local(v, span), value: acc }, step()],
                span,
            },
            Stmt::If {
                cond: load(neg),
                then: vec![Stmt::Store { place: Place::local(v, span), value: result }],
                els: Vec::new(),
                span,
            },
        ];
        self.f.pre.extend(pre);
        Ok((load(v), CTy::S(t)))
    }
}

impl Lx {
    /// `strlen(s)` (a `size_t`) and `strcmp(a, b)` (the difference of the first bytes that
    /// differ, as `unsigned char`s: its sign is C's) of strings on the host, loops in the IR over
    /// the checked buffers.
    pub(crate) fn str_fn(&mut self, n: Node, name: &str, args: &[Node], src: &Src) -> R<(Expr, CTy)> {
        let want = if name == "strlen" { 1 } else { 2 };
        if self.f.gpu || args.len() != want {
            return Err(self.unsupported(n, src, format!("`{name}` here (host code, {want} argument(s))")));
        }
        let span = self.span(n, src);
        let c8 = Elem::S(ScalarTy::I8);
        let mut ptrs = Vec::new();
        for a in args {
            let (p, pt) = self.rvalue(*a, src)?;
            if !matches!(pt, CTy::Ptr(Elem::S(ScalarTy::I8 | ScalarTy::U8))) {
                return Err(self.unsupported(*a, src, format!("`{name}` of anything but a `char *`")));
            }
            let q = self.new_local(&format!("{name} pointer"), self.elem_ptr(c8, Mem::Cpu, false), Level::Host);
            self.f.pre.push(Stmt::Let { local: q, init: Some(p), span });
            ptrs.push(q);
        }
        let ch = |lx: &Self, q: LocalId| Expr::Load(lx.ptr_place(ptr::PtrE::at(q, c8), None, span));
        let bin = |op: BinOp, a: Expr, b: Expr| Expr::Binary(op, Box::new(a), Box::new(b));
        let mut body: Vec<Stmt> =
            ptrs.iter().map(|&q| self.ptr_step(q, c8, int(1, ScalarTy::I64), false, span)).collect();
        let not_end = bin(BinOp::Ne, ch(self, ptrs[0]), int(0, ScalarTy::I32));
        if name == "strlen" {
            let len = self.new_local("strlen value", Ty::Scalar(ir::ScalarTy::U64), Level::Host);
            let at = Place::local(len, span);
            body.push(Stmt::Store {
                place: at.clone(),
                value: bin(BinOp::Add, Expr::Load(at.clone()), int(1, ScalarTy::U64)),
            });
            self.f.pre.push(Stmt::Let { local: len, init: Some(int(0, ScalarTy::U64)), span });
            self.f.pre.push(Stmt::While { cond: not_end, body, span });
            return Ok((Expr::Load(at), CTy::S(ScalarTy::U64)));
        }
        let same = bin(BinOp::Eq, ch(self, ptrs[0]), ch(self, ptrs[1]));
        self.f.pre.push(Stmt::While { cond: bin(BinOp::And, not_end, same), body, span });
        let byte = |lx: &Self, q: LocalId| cast(ch(lx, q), ScalarTy::I32, ScalarTy::U8);
        Ok((bin(BinOp::Sub, byte(self, ptrs[0]), byte(self, ptrs[1])), CTy::S(ScalarTy::I32)))
    }
}

/// `text` as `%{spec}s` prints it: at most the precision's characters, padded to the width
/// (on the right with the `-` flag).
pub(crate) fn pad(text: &str, spec: &str) -> String {
    let left = spec.contains('-');
    let spec = spec.trim_start_matches(['-', '+', ' ', '0', '#']);
    let (w, p) = match spec.split_once('.') {
        Some((w, p)) => (w, Some(p.parse::<usize>().unwrap_or(0))),
        None => (spec, None),
    };
    let mut t: String = match p {
        Some(p) => text.chars().take(p).collect(),
        None => text.to_string(),
    };
    let w = w.parse::<usize>().unwrap_or(0);
    let fill = " ".repeat(w.saturating_sub(t.chars().count()));
    if left {
        t.push_str(&fill);
        t
    } else {
        fill + &t
    }
}
