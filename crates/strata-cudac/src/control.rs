//! Control flow the IR does not have: `break`, `continue`, `do … while`, `switch`, `?:` and the
//! short-circuit `&&`/`||`.
//!
//! * Expressions that need statements (`c ? a : b`, `a && b` whose right side may fail or needs
//!   statements itself) put them in [`FnState::pre`]: a temporary local set by an `if`. Each
//!   statement's own `pre` goes right before it ([`Lx::stmt`]); a loop condition with `pre` is
//!   evaluated where the loop tests it (the loop's general form below).
//! * `break` and `continue` set flags (`Bool` locals); the statements after one that may set a
//!   flag run only while no flag is set ([`guard`]). A loop with either, a `do … while`, or a
//!   condition with `pre` takes the general form
//!
//!   ```text
//!   brk = false; [pre] go = cond;            (do-while: go = true)
//!   while (go) { cont = false; body…; if (!brk) { update; [pre] go = cond } else { go = false } }
//!   ```
//!
//!   so a thread that leaves a loop early skips the barriers after the `break` (a barrier
//!   divergence when other threads reach them, as on a GPU).
//! * `switch` is a chain of `if (matched || value == K) { matched = true; … }` in order, each
//!   case's statements falling through into the next until a `break`; `default` must be last.

use super::*;

/// The flags of an enclosing loop or `switch`.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Jump {
    pub(crate) brk: LocalId,
    /// `None` for a `switch` (`continue` goes to the loop around it).
    pub(crate) cont: Option<LocalId>,
}

impl Lx {
    /// Runs `f` with an empty `pre`; returns the statements it left there and its result.
    pub(crate) fn with_pre<T>(&mut self, f: impl FnOnce(&mut Self) -> R<T>) -> R<(Vec<Stmt>, T)> {
        let saved = std::mem::take(&mut self.f.pre);
        let r = f(self);
        let pre = std::mem::replace(&mut self.f.pre, saved);
        Ok((pre, r?))
    }

    /// Moves the pending `pre` statements to `out`.
    pub(crate) fn flush(&mut self, out: &mut Vec<Stmt>) {
        out.append(&mut self.f.pre);
    }

    fn flag(&mut self, name: &str) -> LocalId {
        let level = self.level();
        self.new_local(name, Ty::Scalar(ir::ScalarTy::Bool), level)
    }

    /// `c ? a : b`.
    pub(crate) fn conditional(&mut self, n: Node, src: &Src) -> R<(Expr, CTy)> {
        let span = self.span(n, src);
        let c = self.cond(self.child(n, "condition", src)?, src)?;
        let (an, bn) = (self.child(n, "consequence", src)?, self.child(n, "alternative", src)?);
        let (pa, (a, ta)) = self.with_pre(|lx| lx.rvalue(an, src))?;
        let (pb, (b, tb)) = self.with_pre(|lx| lx.rvalue(bn, src))?;
        let t = match (ta, tb) {
            (CTy::S(ScalarTy::Bool), CTy::S(ScalarTy::Bool)) => CTy::S(ScalarTy::Bool),
            (CTy::S(x), CTy::S(y)) => CTy::S(arith(x, y)),
            (CTy::Ptr(x), CTy::Ptr(y)) if x == y => CTy::Ptr(x),
            (CTy::Ptr(x), CTy::Null) | (CTy::Null, CTy::Ptr(x)) => CTy::Ptr(x),
            _ => return Err(self.unsupported(n, src, "`?:` with branches of different kinds")),
        };
        let ty = match t {
            CTy::S(s) => Ty::Scalar(s.ir()),
            CTy::Ptr(x) => self.elem_ptr(x, if self.f.gpu { Mem::GpuGlobal } else { Mem::Cpu }, false),
            _ => return Err(self.unsupported(n, src, "this `?:`")),
        };
        let level = self.level();
        let tmp = self.new_local("?: value", ty, level);
        let a = self.convert(a, ta, t, an, src)?;
        let b = self.convert(b, tb, t, bn, src)?;
        let set = |v: Expr| Stmt::Let { local: tmp, init: Some(v), span };
        let (mut then, mut els) = (pa, pb);
        then.push(set(a));
        els.push(set(b));
        self.f.pre.push(Stmt::Let { local: tmp, init: None, span });
        self.f.pre.push(Stmt::If { cond: c, then, els, span });
        Ok((Expr::Load(Place::local(tmp, span)), t))
    }

    /// `a && b` / `a || b` (`and`): the right side is evaluated only where C evaluates it.
    pub(crate) fn short_circuit(&mut self, n: Node, and: bool, src: &Src) -> R<Expr> {
        let span = self.span(n, src);
        let a = self.cond(self.child(n, "left", src)?, src)?;
        let right = self.child(n, "right", src)?;
        let (pb, b) = self.with_pre(|lx| lx.cond(right, src))?;
        let op = if and { BinOp::And } else { BinOp::Or };
        if pb.is_empty() && cannot_fail(&b) {
            return Ok(Expr::Binary(op, Box::new(a), Box::new(b)));
        }
        let tmp = self.flag(if and { "&& value" } else { "|| value" });
        let load = Expr::Load(Place::local(tmp, span));
        let test = if and { load.clone() } else { Expr::Unary(UnOp::Not, Box::new(load.clone())) };
        let mut then = pb;
        then.push(Stmt::Store { place: Place::local(tmp, span), value: b });
        self.f.pre.push(Stmt::Let { local: tmp, init: Some(a), span });
        self.f.pre.push(Stmt::If { cond: test, then, els: Vec::new(), span });
        Ok(load)
    }

    /// `while`, `for` and `do … while` loops (the caller has lowered a `for`'s initialiser).
    /// `(cond, body, update, do_while)`: a `do … while` runs its body before the first test.
    pub(crate) fn lower_loop(
        &mut self,
        n: Node,
        (cond, body, update, do_while): (Option<Node>, Node, Option<Node>, bool),
        src: &Src,
        out: &mut Vec<Stmt>,
    ) -> R<()> {
        let span = self.span(n, src);
        let (cond_pre, cond) = match cond {
            Some(c) => self.with_pre(|lx| lx.cond(c, src))?,
            None => (Vec::new(), Expr::Lit(Lit::Bool(true))),
        };
        let mut upd = Vec::new();
        if let Some(u) = update {
            let (pre, ()) = self.with_pre(|lx| lx.expr_stmt(u, src, &mut upd))?;
            upd.splice(0..0, pre);
        }
        if !do_while && cond_pre.is_empty() && !has_jump(body) {
            let mut b = Vec::new();
            self.scoped(body, src, &mut b)?;
            b.extend(upd);
            out.push(Stmt::While { cond, body: b, span });
            return Ok(());
        }
        let (go, brk, cont) = (self.flag("loop condition"), self.flag("break"), self.flag("continue"));
        self.f.jumps.push(Jump { brk, cont: Some(cont) });
        let mut b = Vec::new();
        let r = self.scoped(body, src, &mut b);
        self.f.jumps.pop();
        r?;
        let set = |l: LocalId, v: Expr| Stmt::Store { place: Place::local(l, span), value: v };
        let mut body = vec![Stmt::Let { local: cont, init: Some(Expr::Lit(Lit::Bool(false))), span }];
        body.extend(guard(b, &[brk, cont]));
        let mut next = upd;
        next.extend(cond_pre.iter().cloned());
        next.push(set(go, cond.clone()));
        let not_brk = Expr::Unary(UnOp::Not, Box::new(Expr::Load(Place::local(brk, span))));
        body.push(Stmt::If { cond: not_brk, then: next, els: vec![set(go, Expr::Lit(Lit::Bool(false)))], span });
        out.push(Stmt::Let { local: brk, init: Some(Expr::Lit(Lit::Bool(false))), span });
        if do_while {
            out.push(Stmt::Let { local: go, init: Some(Expr::Lit(Lit::Bool(true))), span });
        } else {
            out.extend(cond_pre);
            out.push(Stmt::Let { local: go, init: Some(cond), span });
        }
        out.push(Stmt::While { cond: Expr::Load(Place::local(go, span)), body, span });
        Ok(())
    }

    /// `break;` or `continue;`.
    pub(crate) fn jump(&mut self, n: Node, src: &Src, out: &mut Vec<Stmt>) -> R<()> {
        let span = self.span(n, src);
        let flag = if n.kind() == "break_statement" {
            self.f.jumps.last().map(|j| j.brk)
        } else {
            self.f.jumps.iter().rev().find_map(|j| j.cont)
        };
        let Some(flag) = flag else {
            return Err(self.unsupported(n, src, "`break` or `continue` outside a loop or `switch`"));
        };
        out.push(Stmt::Store { place: Place::local(flag, span), value: Expr::Lit(Lit::Bool(true)) });
        Ok(())
    }

    /// `switch (v) { case K: … default: … }`.
    pub(crate) fn switch(&mut self, n: Node, src: &Src, out: &mut Vec<Stmt>) -> R<()> {
        let span = self.span(n, src);
        let vnode = self.child(self.child(n, "condition", src)?, "value", src)?;
        let (v, vt) = self.rvalue(vnode, src)?;
        let t = match vt {
            CTy::S(s) if !matches!(s, ScalarTy::F32 | ScalarTy::F64) => s,
            _ => return Err(self.unsupported(vnode, src, "a `switch` on a value that is not an integer")),
        };
        self.flush(out);
        let level = self.level();
        let value = self.new_local("switch value", Ty::Scalar(t.ir()), level);
        let matched = self.flag("switch matched");
        let brk = self.flag("break");
        let cont = self.f.jumps.iter().rev().find_map(|j| j.cont);
        let body = self.child(n, "body", src)?;
        let mut c = body.walk();
        let cases: Vec<Node> = body.named_children(&mut c).filter(|x| x.kind() != "comment").collect();
        self.f.jumps.push(Jump { brk, cont: None });
        self.f.scopes.push(HashMap::new());
        let r = self.switch_cases(&cases, (value, matched, t), src);
        self.f.scopes.pop();
        self.f.jumps.pop();
        let chain = r?;
        let flags: Vec<LocalId> = std::iter::once(brk).chain(cont).collect();
        out.push(Stmt::Let { local: value, init: Some(v), span });
        out.push(Stmt::Let { local: matched, init: Some(Expr::Lit(Lit::Bool(false))), span });
        out.push(Stmt::Let { local: brk, init: Some(Expr::Lit(Lit::Bool(false))), span });
        out.extend(guard(chain, &flags));
        Ok(())
    }

    fn switch_cases(
        &mut self,
        cases: &[Node],
        (value, matched, t): (LocalId, LocalId, ScalarTy),
        src: &Src,
    ) -> R<Vec<Stmt>> {
        let mut chain = Vec::new();
        for (k, case) in cases.iter().enumerate() {
            if case.kind() != "case_statement" {
                return Err(self.unsupported(*case, src, "a statement in a `switch` outside its cases"));
            }
            let span = self.span(*case, src);
            let label = case.child_by_field_name("value");
            let test = match label {
                None if k + 1 == cases.len() => Expr::Lit(Lit::Bool(true)),
                None => return Err(self.unsupported(*case, src, "`default` other than as the last case")),
                Some(l) => {
                    let (pre, (e, et)) = self.with_pre(|lx| lx.rvalue(l, src))?;
                    if !pre.is_empty() || !matches!(et, CTy::S(s) if !matches!(s, ScalarTy::F32 | ScalarTy::F64)) {
                        return Err(self.unsupported(l, src, "this `case` label"));
                    }
                    let e = self.convert(e, et, CTy::S(t), l, src)?;
                    let eq = Expr::Binary(BinOp::Eq, Box::new(Expr::Load(Place::local(value, span))), Box::new(e));
                    Expr::Binary(BinOp::Or, Box::new(Expr::Load(Place::local(matched, span))), Box::new(eq))
                }
            };
            let mut body = vec![Stmt::Store { place: Place::local(matched, span), value: Expr::Lit(Lit::Bool(true)) }];
            let mut c = case.walk();
            for s in case.named_children(&mut c) {
                if Some(s) == label || s.kind() == "comment" {
                    continue;
                }
                self.stmt(s, src, &mut body)?;
            }
            chain.push(Stmt::If { cond: test, then: body, els: Vec::new(), span });
        }
        Ok(chain)
    }
}

impl Lx {
    /// The label of a function's outermost block (one at most), its flag set to false first.
    pub(crate) fn declare_label(&mut self, stmts: &[Node], src: &Src, out: &mut Vec<Stmt>) -> R<()> {
        let labels: Vec<&Node> = stmts.iter().filter(|s| s.kind() == "labeled_statement").collect();
        let Some(first) = labels.first() else { return Ok(()) };
        if let Some(second) = labels.get(1) {
            return Err(self.unsupported(**second, src, "a second label in a function (one is supported)"));
        }
        let name = self.text(self.child(**first, "label", src)?, src).to_string();
        let flag = self.flag(&format!("goto {name}"));
        let span = self.span(**first, src);
        out.push(Stmt::Let { local: flag, init: Some(Expr::Lit(Lit::Bool(false))), span });
        self.f.label = Some((name, flag, span));
        Ok(())
    }

    /// `goto L;` forward to the label of the function's outermost block: its flag set, and the
    /// `break` flag of every loop and `switch` around it, so that each ends and the statements
    /// after it up to the label are skipped ([`guard`]).
    pub(crate) fn goto(&mut self, n: Node, src: &Src, out: &mut Vec<Stmt>) -> R<()> {
        let span = self.span(n, src);
        let label = self.text(self.child(n, "label", src)?, src);
        let Some((_, flag, at)) = self.f.label.clone().filter(|(l, _, _)| l == label) else {
            return Err(self.unsupported(n, src, "`goto` to other than a label in the function's outermost block"));
        };
        if at.file != span.file || at.lo < span.lo {
            return Err(self.unsupported(n, src, "`goto` backwards (to a label before it)"));
        }
        let set = |l: LocalId| Stmt::Store { place: Place::local(l, span), value: Expr::Lit(Lit::Bool(true)) };
        out.push(set(flag));
        for j in self.f.jumps.clone() {
            out.push(set(j.brk));
        }
        Ok(())
    }
}

/// Whether the loop body `n` contains a `break` or `continue` (of its own or of a nested loop or
/// `switch`: the general form is only slower, never wrong).
fn has_jump(n: Node) -> bool {
    if matches!(n.kind(), "break_statement" | "continue_statement" | "goto_statement") {
        return true;
    }
    let mut c = n.walk();
    let found = n.children(&mut c).any(has_jump);
    found
}

/// `stmts` with everything after a statement that may set one of `flags` run only while none is
/// set (recursively inside `if`s).
pub(crate) fn guard(stmts: Vec<Stmt>, flags: &[LocalId]) -> Vec<Stmt> {
    let mut out = Vec::new();
    let mut it = stmts.into_iter();
    while let Some(s) = it.next() {
        let s = match s {
            Stmt::If { cond, then, els, span } => {
                Stmt::If { cond, then: guard(then, flags), els: guard(els, flags), span }
            }
            s => s,
        };
        let sets = sets_flag(&s, flags);
        out.push(s);
        if sets {
            let rest = guard(it.collect(), flags);
            if !rest.is_empty() {
                let any = flags
                    .iter()
                    .map(|f| Expr::Load(Place::local(*f, Span::DUMMY)))
                    .reduce(|a, b| Expr::Binary(BinOp::Or, Box::new(a), Box::new(b)))
                    .unwrap_or(Expr::Lit(Lit::Bool(false)));
                let none = Expr::Unary(UnOp::Not, Box::new(any));
                out.push(Stmt::If { cond: none, then: rest, els: Vec::new(), span: Span::DUMMY });
            }
            break;
        }
    }
    out
}

/// Whether `s` stores to one of the locals `flags` anywhere inside it.
fn sets_flag(s: &Stmt, flags: &[LocalId]) -> bool {
    match s {
        Stmt::Store { place, .. } => place.path.is_empty() && flags.contains(&place.root),
        Stmt::If { then, els, .. } => then.iter().chain(els).any(|x| sets_flag(x, flags)),
        Stmt::While { body, .. } | Stmt::For { body, .. } | Stmt::Threads { body, .. } => {
            body.iter().any(|x| sets_flag(x, flags))
        }
        _ => false,
    }
}
