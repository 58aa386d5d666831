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
            Expr::Unary(_, x) | Expr::Cast(x, _) | Expr::Checked(x, _) => self.expr(x),
            Expr::Binary(_, a, b) => self.expr(a) && self.expr(b),
            Expr::Builtin(
                Builtin::Math(..)
                | Builtin::Sqrt(_)
                | Builtin::IntMath(..)
                | Builtin::Powi(_)
                | Builtin::IsNan(_)
                | Builtin::IsFinite(_),
                xs,
                _,
            ) => xs.iter().all(|x| self.expr(x)),
            // Memory, atomics, collectives, calls (which may read `threadIdx` or memory).
            Expr::Builtin(..) | Expr::Call { .. } | Expr::Tuple(_) | Expr::ArrayList(_) | Expr::ArrayRepeat(..) => {
                false
            }
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
                if !place.path.contains(&PathStep::Deref) && (varying || !place.path.is_empty() || !self.expr(value)) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{BinOp, DimName, FnKind, Level, Lit, Local, Mem, ScalarTy, Ty};
    use strata_diag::Span;

    const S: LocalId = 0; // a stride
    const T: LocalId = 1; // a per-thread value
    const P: LocalId = 2; // a pointer parameter

    fn load(l: LocalId) -> Expr {
        Expr::Load(Place::local(l, Span::DUMMY))
    }

    fn set(l: LocalId, e: Expr) -> Stmt {
        Stmt::Let { local: l, init: Some(e), span: Span::DUMMY }
    }

    fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
        Expr::Binary(op, Box::new(a), Box::new(b))
    }

    fn int(v: u128) -> Expr {
        Expr::Lit(Lit::Int(v, ScalarTy::U32))
    }

    fn tid() -> Expr {
        Expr::Nat(IExpr::ThreadIdx(DimName::X))
    }

    /// A kernel whose one thread region runs `body` (locals `s`, `t`: `u32`; `p`: a pointer).
    fn kernel(body: Vec<Stmt>) -> Function {
        let arr = Ty::Array { elem: Box::new(Ty::Scalar(ScalarTy::U32)), len: IExpr::Const(0) };
        let local = |name: &str, ty: Ty, level| Local { name: name.into(), ty, level };
        let one = || [IExpr::Const(1), IExpr::Const(1), IExpr::Const(1)];
        Function {
            name: "k".into(),
            kind: FnKind::Kernel { grid: one(), block: one(), shared: Vec::new(), ordered: false },
            nat_params: Vec::new(),
            nat_max: Default::default(),
            params: vec![P],
            locals: vec![
                local("s", Ty::Scalar(ScalarTy::U32), Level::Thread),
                local("t", Ty::Scalar(ScalarTy::U32), Level::Thread),
                local("p", Ty::Ref(Box::new(arr), Mem::GpuGlobal), Level::Block),
            ],
            body: vec![Stmt::Threads { set: Vec::new(), body }],
            ret: Ty::Scalar(ScalarTy::Unit),
            span: Span::DUMMY,
            shrd_params: Vec::new(),
        }
    }

    /// `s = blockDim.x / 2; while (s > 0) { if (t < s) …; sync; s = s >> 1; }` with `t` from
    /// `threadIdx.x`, and what `extra` adds before the loop.
    fn tree_reduction(extra: Vec<Stmt>) -> Function {
        let half = Expr::Cast(Box::new(Expr::Nat(IExpr::BlockDim(DimName::X) / IExpr::Const(2))), ScalarTy::U32);
        let mut body = vec![set(T, Expr::Cast(Box::new(tid()), ScalarTy::U32)), set(S, half)];
        body.extend(extra);
        body.push(Stmt::While {
            cond: bin(BinOp::Gt, load(S), int(0)),
            body: vec![
                Stmt::If {
                    cond: bin(BinOp::Lt, load(T), load(S)),
                    then: Vec::new(),
                    els: Vec::new(),
                    span: Span::DUMMY,
                },
                Stmt::Sync { warp: false, span: Span::DUMMY },
                set(S, bin(BinOp::Shr, load(S), int(1))),
            ],
            span: Span::DUMMY,
        });
        kernel(body)
    }

    #[test]
    fn a_stride_computed_from_the_block_shape_is_uniform() {
        let u = Uniformity::of(&tree_reduction(Vec::new()));
        assert!(u.local(S) && u.local(P));
        assert!(!u.local(T));
        assert!(u.expr(&bin(BinOp::Gt, load(S), int(0))));
        assert!(!u.expr(&bin(BinOp::Lt, load(T), load(S))));
    }

    #[test]
    fn a_value_from_the_thread_or_memory_or_under_a_thread_condition_is_not() {
        let from_thread = vec![set(S, bin(BinOp::Add, load(S), load(T)))];
        let elem = Place {
            root: P,
            path: vec![PathStep::Deref, PathStep::Elem(IExpr::Const(0))],
            checks: Vec::new(),
            span: Span::DUMMY,
        };
        let from_memory = vec![set(S, Expr::Load(elem))];
        let under_condition = vec![Stmt::If {
            cond: bin(BinOp::Eq, load(T), int(0)),
            then: vec![set(S, int(1))],
            els: Vec::new(),
            span: Span::DUMMY,
        }];
        let referenced = vec![set(T, Expr::Ref(Place::local(S, Span::DUMMY)))];
        for extra in [from_thread, from_memory, under_condition, referenced] {
            let u = Uniformity::of(&tree_reduction(extra.clone()));
            assert!(!u.local(S), "{extra:?}");
            assert!(!u.expr(&bin(BinOp::Gt, load(S), int(0))), "{extra:?}");
        }
    }

    #[test]
    fn a_loop_counter_is_uniform_when_its_bounds_are() {
        let body = |hi: IExpr| {
            kernel(vec![Stmt::For {
                counter: S,
                lo: IExpr::Const(0),
                hi,
                body: vec![Stmt::Sync { warp: false, span: Span::DUMMY }],
                exit: None,
                span: Span::DUMMY,
            }])
        };
        assert!(Uniformity::of(&body(IExpr::GridDim(DimName::X) * IExpr::BlockIdx(DimName::Y))).local(S));
        assert!(!Uniformity::of(&body(IExpr::ThreadIdx(DimName::Y))).local(S));
    }
}
