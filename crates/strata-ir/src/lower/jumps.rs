//! `break` and `continue` (docs/language.md, "`break` and `continue`"). The IR has no jumps: a
//! loop with one gets two `Bool` flags, `break` and `continue`, which the jumps set, and the
//! statements after a statement that may set one run only while neither is set ([`guard`]), as
//! the CUDA-C front end lowers C's jumps. A `for` loop keeps its counter (index arithmetic uses
//! it); its body is `if !break { … }`, so the iterations after a `break` do nothing, and the
//! loop names its flag ([`Stmt::For`]'s `exit`) so that every backend stops there instead of
//! counting to its bound. A `while` loop tests its condition only while the flag is clear:
//!
//! ```text
//! brk = false; go = cond;
//! while go { cont = false; body…; if !brk { go = cond } else { go = false } }
//! ```
//!
//! The flags are locals of the loop's code: where the checker accepted a loop with a barrier,
//! every jump before the barrier is under a uniform condition, so the flags are uniform and the
//! backends decide the loop once per block (`crate::uniform`).

use super::*;

/// The flags of an enclosing loop: its `break` and `continue` locals.
#[derive(Copy, Clone)]
pub(super) struct LoopFlags {
    brk: LocalId,
    cont: LocalId,
}

impl FnLower<'_, '_> {
    /// Before lowering a loop's body: its flags, if the body has a `break` or `continue` of its
    /// own (not of a nested loop).
    pub(super) fn enter_loop_jumps(&mut self, body: &ast::Block) -> Option<LoopFlags> {
        if !block_jumps(body) {
            return None;
        }
        let level = self.local_level();
        let brk = self.new_local("break", Ty::Scalar(ScalarTy::Bool), level);
        let cont = self.new_local("continue", Ty::Scalar(ScalarTy::Bool), level);
        let flags = LoopFlags { brk, cont };
        self.jumps.push(flags);
        Some(flags)
    }

    /// `break` or `continue` (`is_break`) at `span`: sets the innermost loop's flag.
    pub(super) fn jump_stmt(&mut self, is_break: bool, span: Span, out: &mut Vec<Stmt>) {
        let Some(flags) = self.jumps.last().copied() else {
            self.err(span, "`break` or `continue` outside a loop");
            return;
        };
        let flag = if is_break { flags.brk } else { flags.cont };
        out.push(Stmt::Store { place: Place::local(flag, span), value: Expr::Lit(Lit::Bool(true)) });
    }

    /// A `for` loop's body with its jumps: `continue = false; if !break { guarded body }`, and
    /// the declaration of `break` before the loop (pushed to `out`); with the `break` flag, the
    /// loop's `exit`. A flag no jump sets is left out.
    pub(super) fn for_body_with_jumps(
        &mut self,
        flags: Option<LoopFlags>,
        body: Vec<Stmt>,
        span: Span,
        out: &mut Vec<Stmt>,
    ) -> (Vec<Stmt>, Option<LocalId>) {
        let Some(flags) = flags else { return (body, None) };
        self.jumps.pop();
        self.no_release_after_jump(&body, span);
        let (brk, cont) = used(&flags, &body);
        let mut b = Vec::new();
        if let Some(c) = cont {
            b.push(declare(c, span));
        }
        let guarded = guard(body, &brk.iter().chain(&cont).copied().collect::<Vec<_>>());
        match brk {
            Some(k) => {
                out.push(declare(k, span));
                let not_brk = Expr::Unary(ast::UnOp::Not, Box::new(load(k, span)));
                b.push(Stmt::If { cond: not_brk, then: guarded, els: Vec::new(), span });
            }
            None => b.extend(guarded),
        }
        (b, brk)
    }

    /// A `while` loop with its jumps, in the form of the module's comment, pushed to `out` (a
    /// loop without a `break` keeps its condition and only guards its body).
    pub(super) fn while_with_jumps(
        &mut self,
        flags: LoopFlags,
        cond: Expr,
        body: Vec<Stmt>,
        span: Span,
        out: &mut Vec<Stmt>,
    ) {
        self.jumps.pop();
        self.no_release_after_jump(&body, span);
        let (brk, cont) = used(&flags, &body);
        let mut b = Vec::new();
        if let Some(c) = cont {
            b.push(declare(c, span));
        }
        b.extend(guard(body, &brk.iter().chain(&cont).copied().collect::<Vec<_>>()));
        let Some(k) = brk else {
            out.push(Stmt::While { cond, body: b, span });
            return;
        };
        let go = self.new_local("loop condition", Ty::Scalar(ScalarTy::Bool), self.local_level());
        let not_brk = Expr::Unary(ast::UnOp::Not, Box::new(load(k, span)));
        let again = Stmt::Store { place: Place::local(go, span), value: cond.clone() };
        b.push(Stmt::If { cond: not_brk, then: vec![again], els: vec![set(go, false, span)], span });
        out.push(declare(k, span));
        out.push(Stmt::Let { local: go, init: Some(cond), span });
        out.push(Stmt::While { cond: load(go, span), body: b, span });
    }

    /// A body whose locals own memory released at its end: a jump would skip the release. Not
    /// supported yet (E0801).
    fn no_release_after_jump(&mut self, body: &[Stmt], span: Span) {
        let mut frees = false;
        for s in body {
            each_stmt(s, &mut |x| frees |= matches!(x, Stmt::Free { .. }));
        }
        if frees {
            self.err(
                span,
                "`break` or `continue` in a loop whose body owns memory (a `CpuHeap` or `GpuGlobal` declared in it)",
            );
        }
    }
}

/// The flags of `flags` that a jump in `body` sets: `(break, continue)`.
fn used(flags: &LoopFlags, body: &[Stmt]) -> (Option<LocalId>, Option<LocalId>) {
    let sets = |l: LocalId| body.iter().any(|s| sets_flag(s, &[l])).then_some(l);
    (sets(flags.brk), sets(flags.cont))
}

/// `let l = false;`: a flag's declaration (the C of the devices declares a local at its `let`).
fn declare(l: LocalId, span: Span) -> Stmt {
    Stmt::Let { local: l, init: Some(Expr::Lit(Lit::Bool(false))), span }
}

fn set(l: LocalId, v: bool, span: Span) -> Stmt {
    Stmt::Store { place: Place::local(l, span), value: Expr::Lit(Lit::Bool(v)) }
}

fn load(l: LocalId, span: Span) -> Expr {
    Expr::Load(Place::local(l, span))
}

/// Whether a loop body has a `break` or `continue` of its own: outside nested loops (and
/// outside `sched` and `split`, which the checker does not let a jump leave).
fn block_jumps(b: &ast::Block) -> bool {
    b.stmts.iter().any(|s| match s {
        ast::Stmt::Let(l) => l.init.as_ref().is_some_and(expr_jumps),
        ast::Stmt::Expr { expr, .. } => expr_jumps(expr),
    })
}

fn expr_jumps(e: &ast::Expr) -> bool {
    match &e.kind {
        ExprKind::Break | ExprKind::Continue => true,
        ExprKind::If { cond, then, els } => {
            expr_jumps(cond) || block_jumps(then) || els.as_deref().is_some_and(expr_jumps)
        }
        ExprKind::Block(b) => block_jumps(b),
        ExprKind::Unsafe(x) | ExprKind::Paren(x) => expr_jumps(x),
        _ => false,
    }
}

/// `stmts` with everything after a statement that may set one of `flags` run only while none is
/// set (recursively inside `if`s).
fn guard(stmts: Vec<Stmt>, flags: &[LocalId]) -> Vec<Stmt> {
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
                    .map(|f| load(*f, Span::DUMMY))
                    .reduce(|a, b| Expr::Binary(ast::BinOp::Or, Box::new(a), Box::new(b)))
                    .unwrap_or(Expr::Lit(Lit::Bool(false)));
                let none = Expr::Unary(ast::UnOp::Not, Box::new(any));
                out.push(Stmt::If { cond: none, then: rest, els: Vec::new(), span: Span::DUMMY });
            }
            break;
        }
    }
    out
}

/// Whether `s` stores to one of the locals `flags` anywhere inside it.
fn sets_flag(s: &Stmt, flags: &[LocalId]) -> bool {
    let mut sets = false;
    each_stmt(s, &mut |x| {
        sets |= matches!(x, Stmt::Store { place, .. } if place.path.is_empty() && flags.contains(&place.root));
    });
    sets
}

/// Calls `f` on `s` and every statement nested in it.
fn each_stmt(s: &Stmt, f: &mut dyn FnMut(&Stmt)) {
    f(s);
    match s {
        Stmt::If { then, els, .. } => then.iter().chain(els).for_each(|x| each_stmt(x, f)),
        Stmt::For { body, .. } | Stmt::While { body, .. } | Stmt::Threads { body, .. } => {
            body.iter().for_each(|x| each_stmt(x, f))
        }
        _ => {}
    }
}
