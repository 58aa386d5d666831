//! Block-level locals that thread code writes: per-thread copies.
//!
//! A kernel's block-level code runs uniformly, once for the whole block on `sim` and `cpu`
//! (redundantly by every thread on a GPU). Its locals live in GPU local memory, which is private
//! to each thread: when thread code writes one (an element by each warp, `n = 1` in one arm of a
//! `split` of the block's threads), only the writing threads' copies change, and the variable is
//! thread-dependent from then on (the checker treats it so: no barrier under a condition on it).
//! Block-level code cannot express a value that differs between threads, so this pass makes such
//! locals thread-level and runs every block-level statement that mentions one as a thread region
//! of the whole block: each thread then keeps its own copy on every device, as CUDA does. Locals
//! computed from one at block level are thread-dependent too, and so is everything under a
//! condition on one.

use crate::ir::{Expr, FnKind, Function, IExpr, Level, LocalId, PathStep, Place, Stmt, ThreadSet};
use std::collections::HashSet;
use strata_diag::Span;
use strata_syntax::ast::BinOp;

/// Applies the rewrite to a kernel (other functions have no block-level code of their own).
pub fn per_thread_copies(f: &mut Function) {
    if !matches!(f.kind, FnKind::Kernel { .. }) {
        return;
    }
    loop {
        let mut deps = HashSet::new();
        written_by_threads(&f.body, false, f, &mut deps);
        if deps.is_empty() {
            return;
        }
        // Block-level values computed from thread-dependent ones.
        loop {
            let before = deps.len();
            derived(&f.body, f, &mut deps);
            if deps.len() == before {
                break;
            }
        }
        for l in &deps {
            f.locals[*l].level = Level::Thread;
        }
        let body = std::mem::take(&mut f.body);
        let (body, changed) = wrap(body, &deps);
        set_thread_level(&body, false, f);
        f.body = body;
        if !changed {
            return;
        }
    }
}

fn level(f: &Function, l: LocalId) -> Level {
    f.locals.get(l).map_or(Level::Block, |x| x.level)
}

/// A place in the storage of block-level local `root` itself (not behind a pointer it holds).
fn own_storage(p: &Place, f: &Function) -> bool {
    level(f, p.root) == Level::Block && p.path.first() != Some(&PathStep::Deref)
}

/// Block-level locals that thread code (`region`) stores into or makes a reference to.
fn written_by_threads(body: &[Stmt], region: bool, f: &Function, out: &mut HashSet<LocalId>) {
    for s in body {
        match s {
            Stmt::Threads { body, .. } => written_by_threads(body, true, f, out),
            Stmt::For { body, .. } | Stmt::While { body, .. } => written_by_threads(body, region, f, out),
            Stmt::If { then, els, .. } => {
                written_by_threads(then, region, f, out);
                written_by_threads(els, region, f, out);
            }
            _ => {}
        }
        if !region {
            continue;
        }
        if let Stmt::Store { place, .. } = s {
            if own_storage(place, f) {
                out.insert(place.root);
            }
        }
        if !matches!(s, Stmt::Threads { .. } | Stmt::For { .. } | Stmt::While { .. } | Stmt::If { .. }) {
            s.visit_exprs(&mut |e| {
                if let Expr::Ref(p) = e {
                    if own_storage(p, f) {
                        out.insert(p.root);
                    }
                }
            });
        }
    }
}

/// Adds the block-level locals assigned (by `let` or a store, also under a condition or in a
/// loop whose condition is) from thread-dependent values.
fn derived(body: &[Stmt], f: &Function, deps: &mut HashSet<LocalId>) {
    for s in body {
        match s {
            Stmt::Threads { .. } => {}
            Stmt::Let { local, init: Some(e), .. } if reads(e, deps) => {
                deps.insert(*local);
            }
            Stmt::Store { place, value }
                if level(f, place.root) == Level::Block && (reads(value, deps) || place_reads(place, deps)) =>
            {
                deps.insert(place.root);
            }
            Stmt::If { cond, then, els, .. } => {
                if reads(cond, deps) {
                    assigned(then, f, deps);
                    assigned(els, f, deps);
                }
                derived(then, f, deps);
                derived(els, f, deps);
            }
            Stmt::While { cond, body, .. } => {
                if reads(cond, deps) {
                    assigned(body, f, deps);
                }
                derived(body, f, deps);
            }
            Stmt::For { body, .. } => derived(body, f, deps),
            _ => {}
        }
    }
}

/// Adds every block-level local `body` assigns.
fn assigned(body: &[Stmt], f: &Function, deps: &mut HashSet<LocalId>) {
    for s in body {
        match s {
            Stmt::Let { local, .. } => {
                deps.insert(*local);
            }
            Stmt::Store { place, .. } if level(f, place.root) == Level::Block => {
                deps.insert(place.root);
            }
            Stmt::For { body, .. } | Stmt::While { body, .. } => assigned(body, f, deps),
            Stmt::If { then, els, .. } => {
                assigned(then, f, deps);
                assigned(els, f, deps);
            }
            _ => {}
        }
    }
}

fn reads(e: &Expr, deps: &HashSet<LocalId>) -> bool {
    let mut found = false;
    e.visit(&mut |x| {
        if let Expr::Load(p) | Expr::Ref(p) = x {
            found |= deps.contains(&p.root);
        }
        if let Expr::Nat(i) = x {
            found |= iexpr_reads(i, deps);
        }
    });
    found
}

fn iexpr_reads(i: &IExpr, deps: &HashSet<LocalId>) -> bool {
    match i {
        IExpr::Counter(c) => deps.contains(c),
        IExpr::Value(v) => reads(v, deps),
        other => other.operands().is_some_and(|(a, b)| iexpr_reads(a, deps) || iexpr_reads(b, deps)),
    }
}

fn place_reads(p: &Place, deps: &HashSet<LocalId>) -> bool {
    p.path.iter().any(|s| matches!(s, PathStep::Elem(i) if iexpr_reads(i, deps)))
        || p.checks.iter().any(|(i, b)| iexpr_reads(i, deps) || iexpr_reads(b, deps))
}

/// Whether block-level statement `s` (not a region) mentions a local of `deps`.
fn mentions(s: &Stmt, deps: &HashSet<LocalId>) -> bool {
    let mut found = false;
    let mut visit = |s: &Stmt| {
        match s {
            Stmt::Let { local, .. } => found |= deps.contains(local),
            Stmt::Store { place, .. } => found |= deps.contains(&place.root),
            _ => {}
        }
        s.visit_exprs(&mut |e| {
            if let Expr::Load(p) | Expr::Ref(p) = e {
                found |= deps.contains(&p.root);
            }
        });
    };
    each_stmt(s, &mut visit);
    found
}

fn each_stmt(s: &Stmt, f: &mut dyn FnMut(&Stmt)) {
    f(s);
    match s {
        Stmt::For { body, .. } | Stmt::While { body, .. } | Stmt::Threads { body, .. } => {
            body.iter().for_each(|x| each_stmt(x, f))
        }
        Stmt::If { then, els, .. } => then.iter().chain(els).for_each(|x| each_stmt(x, f)),
        _ => {}
    }
}

/// The block-level statements of `body` that mention a thread-dependent local, each run as a
/// thread region of the whole block (consecutive ones as one region); a loop or condition
/// whose header does not mention one is kept at block level and rewritten inside. Also returns
/// whether anything changed.
fn wrap(body: Vec<Stmt>, deps: &HashSet<LocalId>) -> (Vec<Stmt>, bool) {
    let mut out: Vec<Stmt> = Vec::new();
    let mut changed = false;
    let mut pending: Vec<Stmt> = Vec::new();
    let flush = |pending: &mut Vec<Stmt>, out: &mut Vec<Stmt>| {
        if !pending.is_empty() {
            out.push(Stmt::Threads { set: Vec::new(), body: std::mem::take(pending) });
        }
    };
    for s in body {
        let header = match &s {
            Stmt::If { cond, .. } | Stmt::While { cond, .. } => reads(cond, deps),
            Stmt::For { .. } => false,
            Stmt::Threads { .. } => {
                flush(&mut pending, &mut out);
                out.push(s);
                continue;
            }
            other => mentions(other, deps),
        };
        if header {
            changed = true;
            pending.extend(flatten(s));
            continue;
        }
        match s {
            Stmt::For { counter, lo, hi, body, exit, span } if mentions_inside(&body, deps) => {
                flush(&mut pending, &mut out);
                let (body, _) = wrap(body, deps);
                changed = true;
                out.push(Stmt::For { counter, lo, hi, body, exit, span });
            }
            Stmt::While { cond, body, span } if mentions_inside(&body, deps) => {
                flush(&mut pending, &mut out);
                let (body, _) = wrap(body, deps);
                changed = true;
                out.push(Stmt::While { cond, body, span });
            }
            Stmt::If { cond, then, els, span } if mentions_inside(&then, deps) || mentions_inside(&els, deps) => {
                flush(&mut pending, &mut out);
                let (then, _) = wrap(then, deps);
                let (els, _) = wrap(els, deps);
                changed = true;
                out.push(Stmt::If { cond, then, els, span });
            }
            other => {
                flush(&mut pending, &mut out);
                out.push(other);
            }
        }
    }
    flush(&mut pending, &mut out);
    (out, changed)
}

/// Whether a block-level statement of `body` (outside regions) mentions a local of `deps`.
fn mentions_inside(body: &[Stmt], deps: &HashSet<LocalId>) -> bool {
    body.iter().any(|s| match s {
        Stmt::Threads { .. } => false,
        Stmt::For { body, .. } => mentions_inside(body, deps),
        Stmt::While { cond, body, .. } => reads(cond, deps) || mentions_inside(body, deps),
        Stmt::If { cond, then, els, .. } => {
            reads(cond, deps) || mentions_inside(then, deps) || mentions_inside(els, deps)
        }
        other => mentions(other, deps),
    })
}

/// A block-level statement moved into a thread region: regions inside it become conditions on
/// the thread.
fn flatten(s: Stmt) -> Vec<Stmt> {
    let all = |body: Vec<Stmt>| body.into_iter().flat_map(flatten).collect::<Vec<_>>();
    vec![match s {
        Stmt::Threads { set, body } => match condition(&set) {
            Some(cond) => Stmt::If { cond, then: all(body), els: Vec::new(), span: Span::DUMMY },
            None => return all(body),
        },
        Stmt::For { counter, lo, hi, body, exit, span } => {
            Stmt::For { counter, lo, hi, body: all(body), exit, span }
        }
        Stmt::While { cond, body, span } => Stmt::While { cond, body: all(body), span },
        Stmt::If { cond, then, els, span } => Stmt::If { cond, then: all(then), els: all(els), span },
        other => other,
    }]
}

/// `lo <= on < hi` for every constraint of a thread set (`None` for all threads).
pub(crate) fn condition(set: &ThreadSet) -> Option<Expr> {
    let mut cond: Option<Expr> = None;
    for (on, lo, hi) in set {
        let nat = |e: &IExpr| Box::new(Expr::Nat(e.clone()));
        let mut c = Expr::Binary(BinOp::Lt, nat(on), nat(hi));
        if *lo != IExpr::Const(0) {
            c = Expr::Binary(BinOp::And, Box::new(Expr::Binary(BinOp::Le, nat(lo), nat(on))), Box::new(c));
        }
        cond = Some(match cond {
            Some(prev) => Expr::Binary(BinOp::And, Box::new(prev), Box::new(c)),
            None => c,
        });
    }
    cond
}

/// Every local declared (or counted) inside a thread region is thread-level.
fn set_thread_level(body: &[Stmt], region: bool, f: &mut Function) {
    for s in body {
        match s {
            Stmt::Let { local, .. } if region => {
                if let Some(l) = f.locals.get_mut(*local) {
                    l.level = Level::Thread;
                }
            }
            Stmt::Threads { body, .. } => set_thread_level(body, true, f),
            Stmt::For { counter, body, .. } => {
                if region {
                    if let Some(l) = f.locals.get_mut(*counter) {
                        l.level = Level::Thread;
                    }
                }
                set_thread_level(body, region, f);
            }
            Stmt::While { body, .. } => set_thread_level(body, region, f),
            Stmt::If { then, els, .. } => {
                set_thread_level(then, region, f);
                set_thread_level(els, region, f);
            }
            _ => {}
        }
    }
}
