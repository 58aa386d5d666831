//! Warp collectives for devices without warp hardware (`sim` and `cpu`).
//!
//! [`expand_warp_collectives`] rewrites every warp shuffle and ballot of a kernel into an exchange
//! through a per-block scratch array in shared memory, between two warp barriers:
//!
//! ```text
//! scratch[tid] = value;  sync(warp);  result = scratch[source lane];  sync(warp);
//! ```
//!
//! The first barrier makes every lane's value visible before anyone reads; the second keeps the
//! next exchange's writes from overtaking this one's reads. The rewrite keeps the semantics the
//! checker relies on: a lane that does not reach the collective makes the warp barrier diverge,
//! which `sim` reports. The `cuda` target does not use this pass: it emits the `__shfl_*_sync` and
//! `__ballot_sync` intrinsics for the unexpanded builtins.

use crate::ir::{
    BinOp, Builtin, DimName, Expr, FnKind, IExpr, Level, Lit, Local, LocalId, PathStep, Place, Program, ScalarTy,
    ShuffleOp, Stmt, Ty,
};
use std::collections::HashMap;
use strata_diag::{codes, Diagnostic, Span};

const WARP: u64 = 32;

/// Rewrites the warp collectives of every kernel into shared-memory exchanges (see the module
/// documentation). A collective outside a kernel's body (in a function called by one thread)
/// is reported: without the kernel's block shape there is no scratch array to exchange through.
pub fn expand_warp_collectives(p: &mut Program) -> Result<(), Box<Diagnostic>> {
    for f in &mut p.functions {
        let FnKind::Kernel { block, shared, .. } = &mut f.kind else {
            if let Some(span) = f.body.iter().find_map(stmt_collective) {
                return Err(unsupported(span, "a warp collective in a function called by one thread"));
            }
            continue;
        };
        let mut x = Expand { locals: &mut f.locals, block: block.clone(), scratch: HashMap::new() };
        let body = std::mem::take(&mut f.body);
        f.body = x.stmts(body)?;
        let mut added: Vec<(ScalarTy, LocalId)> = x.scratch.into_iter().collect();
        added.sort_by_key(|(_, l)| *l);
        let threads = block[0].clone() * block[1].clone() * block[2].clone();
        for (t, l) in added {
            shared.push((l, t, threads.clone()));
        }
    }
    Ok(())
}

fn unsupported(span: Span, what: &str) -> Box<Diagnostic> {
    Box::new(Diagnostic::error(
        codes::UNSUPPORTED,
        format!("not supported by the IR yet: {what}"),
        span,
        "cannot be lowered yet",
    ))
}

struct Expand<'f> {
    locals: &'f mut Vec<Local>,
    block: [IExpr; 3],
    /// One scratch array per exchanged scalar type.
    scratch: HashMap<ScalarTy, LocalId>,
}

impl Expand<'_> {
    fn new_local(&mut self, name: &str, ty: Ty, level: Level) -> LocalId {
        self.locals.push(Local { name: name.to_string(), ty, level });
        self.locals.len() - 1
    }

    fn scratch(&mut self, t: ScalarTy) -> LocalId {
        if let Some(l) = self.scratch.get(&t) {
            return *l;
        }
        let len = self.block[0].clone() * self.block[1].clone() * self.block[2].clone();
        let ty = Ty::Ref(Box::new(Ty::Array { elem: Box::new(Ty::Scalar(t)), len }), crate::ir::Mem::GpuShared);
        let l = self.new_local(&format!("warp_exchange_{}", t.name()), ty, Level::Block);
        self.scratch.insert(t, l);
        l
    }

    /// The thread's linear index in its block, as CUDA numbers lanes (x fastest).
    fn tid(&self) -> IExpr {
        let [bx, by, bz] = &self.block;
        if matches!((by, bz), (IExpr::Const(1), IExpr::Const(1))) {
            return IExpr::ThreadIdx(DimName::X);
        }
        IExpr::ThreadIdx(DimName::X)
            + bx.clone() * (IExpr::ThreadIdx(DimName::Y) + by.clone() * IExpr::ThreadIdx(DimName::Z))
    }

    fn stmts(&mut self, body: Vec<Stmt>) -> Result<Vec<Stmt>, Box<Diagnostic>> {
        let mut out = Vec::with_capacity(body.len());
        for s in body {
            match s {
                Stmt::Threads { set, body } => out.push(Stmt::Threads { set, body: self.stmts(body)? }),
                Stmt::For { counter, lo, hi, body, exit, span } => {
                    if iexpr_collective(&lo).or(iexpr_collective(&hi)).is_some() {
                        return Err(unsupported(span, "a warp collective in the bounds of a `for` loop"));
                    }
                    out.push(Stmt::For { counter, lo, hi, body: self.stmts(body)?, exit, span });
                }
                Stmt::While { cond, body, span } => {
                    if let Some(at) = expr_collective(&cond) {
                        return Err(unsupported(at, "a warp collective in the condition of a `while` loop"));
                    }
                    out.push(Stmt::While { cond, body: self.stmts(body)?, span });
                }
                Stmt::If { mut cond, then, els, span } => {
                    self.hoist(&mut cond, &mut out);
                    out.push(Stmt::If { cond, then: self.stmts(then)?, els: self.stmts(els)?, span });
                }
                Stmt::Let { local, mut init, span } => {
                    if let Some(e) = &mut init {
                        self.hoist(e, &mut out);
                    }
                    out.push(Stmt::Let { local, init, span });
                }
                Stmt::Store { mut place, mut value } => {
                    self.hoist(&mut value, &mut out);
                    self.hoist_place(&mut place, &mut out);
                    out.push(Stmt::Store { place, value });
                }
                Stmt::Eval(mut e) => {
                    self.hoist(&mut e, &mut out);
                    out.push(Stmt::Eval(e));
                }
                Stmt::Return(Some(mut e)) => {
                    self.hoist(&mut e, &mut out);
                    out.push(Stmt::Return(Some(e)));
                }
                other => out.push(other),
            }
        }
        Ok(out)
    }

    fn hoist_place(&mut self, p: &mut Place, pre: &mut Vec<Stmt>) {
        for step in &mut p.path {
            if let PathStep::Elem(i) = step {
                self.hoist_iexpr(i, pre);
            }
        }
        for (i, b) in &mut p.checks {
            self.hoist_iexpr(i, pre);
            self.hoist_iexpr(b, pre);
        }
    }

    fn hoist_iexpr(&mut self, e: &mut IExpr, pre: &mut Vec<Stmt>) {
        if let IExpr::Value(v) = e {
            self.hoist(v, pre);
        } else if let Some((a, b)) = e.operands_mut() {
            self.hoist_iexpr(a, pre);
            self.hoist_iexpr(b, pre);
        }
    }

    /// Replaces every collective in `e` (innermost first, left to right) by a local that the
    /// exchange statements pushed onto `pre` compute.
    fn hoist(&mut self, e: &mut Expr, pre: &mut Vec<Stmt>) {
        match e {
            Expr::Load(p) | Expr::Ref(p) => self.hoist_place(p, pre),
            Expr::Nat(i) => self.hoist_iexpr(i, pre),
            Expr::ArrayRepeat(x, i) => {
                self.hoist(x, pre);
                self.hoist_iexpr(i, pre);
            }
            Expr::Unary(_, x) | Expr::Cast(x, _) | Expr::Checked(x, _) => self.hoist(x, pre),
            Expr::Binary(_, a, b) => {
                self.hoist(a, pre);
                self.hoist(b, pre);
            }
            Expr::Tuple(xs) | Expr::ArrayList(xs) | Expr::Call { args: xs, .. } => {
                for x in xs {
                    self.hoist(x, pre);
                }
            }
            Expr::Builtin(b, args, span) => {
                for x in args.iter_mut() {
                    self.hoist(x, pre);
                }
                let (b, span) = (*b, *span);
                let mut args = std::mem::take(args);
                let result = match b {
                    Builtin::Shuffle(op, t) if args.len() == 2 => {
                        let arg = args.pop().unwrap_or(Expr::Lit(Lit::Unit));
                        let value = args.pop().unwrap_or(Expr::Lit(Lit::Unit));
                        self.shuffle(op, t, value, arg, span, pre)
                    }
                    Builtin::Ballot if args.len() == 1 => {
                        let pred = args.pop().unwrap_or(Expr::Lit(Lit::Unit));
                        self.ballot(pred, span, pre)
                    }
                    _ => {
                        *e = Expr::Builtin(b, args, span);
                        return;
                    }
                };
                *e = Expr::Load(Place::local(result, span));
            }
            Expr::Lit(_) => {}
        }
    }

    /// `value` from the lane `op` selects with `arg`; returns the local holding the result.
    fn shuffle(
        &mut self,
        op: ShuffleOp,
        t: ScalarTy,
        value: Expr,
        arg: Expr,
        span: Span,
        pre: &mut Vec<Stmt>,
    ) -> LocalId {
        let scratch = self.scratch(t);
        let (tid, lane, base) = self.coordinates();
        let a = self.new_local("shuffle_arg", Ty::Scalar(ScalarTy::U32), Level::Thread);
        let result = self.new_local("shuffle", Ty::Scalar(t), Level::Thread);
        pre.push(Stmt::Let { local: a, init: Some(arg), span });
        pre.push(Stmt::Store { place: elem(scratch, tid.clone(), span), value });
        pre.push(Stmt::Sync { warp: true, span });
        let arg = || Expr::Load(Place::local(a, span));
        let lane_u32 = Expr::Cast(Box::new(Expr::Nat(lane.clone())), ScalarTy::U32);
        let read =
            |at: IExpr| Stmt::Store { place: Place::local(result, span), value: Expr::Load(elem(scratch, at, span)) };
        let value_at = |x: Expr| IExpr::Value(Box::new(x));
        // (condition under which the source lane is inside the warp, source thread index)
        let (inside, source) = match op {
            ShuffleOp::Down => (
                Some(bin(BinOp::Lt, arg(), Expr::Cast(Box::new(Expr::Nat(IExpr::Const(WARP) - lane)), ScalarTy::U32))),
                tid.clone() + value_at(arg()),
            ),
            ShuffleOp::Up => (Some(bin(BinOp::Le, arg(), lane_u32)), tid.clone() - value_at(arg())),
            ShuffleOp::Xor => {
                (Some(bin(BinOp::Lt, arg(), u32_lit(WARP))), base + value_at(bin(BinOp::BitXor, lane_u32, arg())))
            }
            ShuffleOp::Idx => (None, base + value_at(bin(BinOp::Rem, arg(), u32_lit(WARP)))),
        };
        pre.push(Stmt::Let { local: result, init: None, span });
        match inside {
            Some(cond) => pre.push(Stmt::If { cond, then: vec![read(source)], els: vec![read(tid)], span }),
            None => pre.push(read(source)),
        }
        pre.push(Stmt::Sync { warp: true, span });
        result
    }

    /// The warp's predicates as the bits of a `u32`; returns the local holding it.
    fn ballot(&mut self, pred: Expr, span: Span, pre: &mut Vec<Stmt>) -> LocalId {
        let scratch = self.scratch(ScalarTy::U32);
        let (tid, _, base) = self.coordinates();
        let result = self.new_local("ballot", Ty::Scalar(ScalarTy::U32), Level::Thread);
        let k = self.new_local("ballot_lane", Ty::Nat, Level::Thread);
        pre.push(Stmt::Store { place: elem(scratch, tid, span), value: Expr::Cast(Box::new(pred), ScalarTy::U32) });
        pre.push(Stmt::Sync { warp: true, span });
        pre.push(Stmt::Let { local: result, init: Some(u32_lit(0)), span });
        let bit =
            bin(BinOp::Shl, Expr::Load(elem(scratch, base + IExpr::Counter(k), span)), Expr::Nat(IExpr::Counter(k)));
        let accumulate = Stmt::Store {
            place: Place::local(result, span),
            value: bin(BinOp::BitOr, Expr::Load(Place::local(result, span)), bit),
        };
        pre.push(Stmt::For {
            counter: k,
            lo: IExpr::Const(0),
            hi: IExpr::Const(WARP),
            body: vec![accumulate],
            exit: None,
            span,
        });
        pre.push(Stmt::Sync { warp: true, span });
        result
    }

    /// (thread index in the block, lane in the warp, thread index of the warp's lane 0).
    fn coordinates(&self) -> (IExpr, IExpr, IExpr) {
        let tid = self.tid();
        let lane = tid.clone() % IExpr::Const(WARP);
        let base = tid.clone() / IExpr::Const(WARP) * IExpr::Const(WARP);
        (tid, lane, base)
    }
}

fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
    Expr::Binary(op, Box::new(a), Box::new(b))
}

fn u32_lit(v: u64) -> Expr {
    Expr::Lit(Lit::Int(u128::from(v), ScalarTy::U32))
}

fn elem(scratch: LocalId, at: IExpr, span: Span) -> Place {
    Place { root: scratch, path: vec![PathStep::Deref, PathStep::Elem(at)], checks: Vec::new(), span }
}

/// The span of the first warp collective in a statement, if any.
fn stmt_collective(s: &Stmt) -> Option<Span> {
    let mut found = None;
    s.visit_exprs(&mut |e| {
        if let (None, Expr::Builtin(Builtin::Shuffle(..) | Builtin::Ballot, _, span)) = (found, e) {
            found = Some(*span);
        }
    });
    found
}

fn expr_collective(e: &Expr) -> Option<Span> {
    stmt_collective(&Stmt::Eval(e.clone()))
}

fn iexpr_collective(e: &IExpr) -> Option<Span> {
    expr_collective(&Expr::Nat(e.clone()))
}
