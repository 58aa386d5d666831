//! Which values of a kernel are *uniform*: the same in every thread of a block that computes them.
//!
//! The C emitter runs a block's threads as loops split at barriers, so a loop or condition that
//! contains a barrier must be decided once for the whole block. Strata's checker only accepts
//! barriers under uniform control flow, but `unsafe` code and CUDA-C do not say so: a CUDA-C tree
//! reduction keeps its stride in a per-thread variable (`for (s = blockDim.x / 2; s > 0; s >>= 1)
//! { …; __syncthreads(); }`) that is in fact the same in every thread. This analysis proves that:
//! a value computed only from constants, size parameters, `blockIdx`, `blockDim`, `gridDim`,
//! block-level locals and locals that are themselves uniform is uniform; a local is uniform when
//! every assignment to it in the kernel assigns a uniform value under uniform control flow (not
//! under a condition, loop or thread set that depends on the thread). `threadIdx`, anything read
//! from memory (through a pointer, an array element or a field), results of calls and of most
//! builtins, and locals a reference is taken to are not. It is a greatest fixpoint: every local
//! starts uniform and loses that when an assignment disproves it.
//!
//! A thread that has returned computes nothing more; the threads still running agree on every
//! uniform value. What it does not prove: that every thread reaches a barrier (a `return` or
//! `break` under a thread-dependent condition before it) — `sim` checks that (E0902).

use crate::ir::{Builtin, Expr, Function, IExpr, LocalId, PathStep, Place, Stmt};
use std::collections::HashSet;

/// The uniform values of one function (see the module's comment).
#[derive(Clone, Debug, Default)]
pub struct Uniformity {
    varying: HashSet<LocalId>,
}

impl Uniformity {
    /// The analysis of `f`'s body.
    pub fn of(f: &Function) -> Uniformity {
        let mut u = Uniformity::default();
        // Locals whose storage a reference points to may change through it.
        for s in &f.body {
            s.visit_exprs(&mut |e| {
                if let Expr::Ref(p) = e {
                    if !p.path.contains(&PathStep::Deref) {
                        u.varying.insert(p.root);
                    }
                }
            });
        }
        loop {
            let before = u.varying.len();
            let mut next = u.varying.clone();
            u.stmts(&f.body, false, &mut next);
            u.varying = next;
            if u.varying.len() == before {
                return u;
            }
        }
    }

    /// Whether local `l` holds the same value in every thread of a block.
    pub fn local(&self, l: LocalId) -> bool {
        !self.varying.contains(&l)
    }

    /// Whether `e` has the same value in every thread of a block that evaluates it.
    pub fn expr(&self, e: &Expr) -> bool {
        match e {
            Expr::Lit(_) => true,
            Expr::Nat(i) => self.iexpr(i),
            Expr::Load(p) => self.place(p),
            // A pointer into memory: the same when its place is (the pointed-to data may differ).
            Expr::Ref(p) => {
                self.local(p.root)
                    && p.path.iter().all(|s| !matches!(s, PathStep::Elem(i) if !self.iexpr(i)))
                    && p.checks.is_empty()
            }
            Expr::Unary(_, x) | Expr::Cast(x, _) => self.expr(x),
            Expr::Binary(_, a, b) => self.expr(a) && self.expr(b),
            Expr::Builtin(Builtin::Math(..) | Builtin::Sqrt(_), xs, _) => xs.iter().all(|x| self.expr(x)),
            // Memory, atomics, collectives, calls (which may read `threadIdx` or memory).
            Expr::Builtin(..) | Expr::Call { .. } | Expr::Tuple(_) | Expr::ArrayList(_) | Expr::ArrayRepeat(..) => false,
        }
    }

    /// Whether index arithmetic `e` has the same value in every thread of a block.
    pub fn iexpr(&self, e: &IExpr) -> bool {
        match e {
            IExpr::ThreadIdx(_) => false,
            IExpr::Counter(l) => self.local(*l),
            IExpr::Value(v) => self.expr(v),
            IExpr::Const(_) | IExpr::Param(_) | IExpr::BlockIdx(_) | IExpr::BlockDim(_) | IExpr::GridDim(_) => true,
            other => other.operands().is_none_or(|(a, b)| self.iexpr(a) && self.iexpr(b)),
        }
    }

    /// A read of a local's own value (not of memory behind it, nor of a part of it).
    fn place(&self, p: &Place) -> bool {
        p.path.is_empty() && self.local(p.root)
    }

    /// Marks in `out` the locals that `body` assigns a varying value or under varying control
    /// (`varying`: the control flow around `body` depends on the thread).
    fn stmts(&self, body: &[Stmt], varying: bool, out: &mut HashSet<LocalId>) {
        for s in body {
            self.stmt(s, varying, out);
        }
    }

    fn stmt(&self, s: &Stmt, varying: bool, out: &mut HashSet<LocalId>) {
        match s {
            Stmt::Let { local, init: Some(e), .. } => {
                if varying || !self.expr(e) {
                    out.insert(*local);
                }
            }
            Stmt::Store { place, value } => {
                // Memory behind a pointer is not a local; a part of a local makes it varying.
                if !place.path.contains(&PathStep::Deref) && (varying || !place.path.is_empty() || !self.expr(value))
                {
                    out.insert(place.root);
                }
            }
            Stmt::For { counter, lo, hi, body, .. } => {
                let v = varying || !self.iexpr(lo) || !self.iexpr(hi);
                if v {
                    out.insert(*counter);
                }
                self.stmts(body, v, out);
            }
            Stmt::While { cond, body, .. } => self.stmts(body, varying || !self.expr(cond), out),
            Stmt::If { cond, then, els, .. } => {
                let v = varying || !self.expr(cond);
                self.stmts(then, v, out);
                self.stmts(els, v, out);
            }
            // A region of some of the block's threads: what it assigns differs from the rest.
            Stmt::Threads { set, body } => self.stmts(body, varying || !set.is_empty(), out),
            Stmt::Let { init: None, .. }
            | Stmt::Eval(_)
            | Stmt::Sync { .. }
            | Stmt::Launch { .. }
            | Stmt::Return(_)
            | Stmt::Free { .. } => {}
        }
    }
}
