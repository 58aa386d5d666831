//! Threads as SIMD lanes on the cpu device (issue 27). A thread region becomes a loop over the
//! block's threads around the region's code, so a thread's own `for` loop runs inside the thread
//! loop. Where that loop walks memory with a stride (the column of B in a matrix product with one
//! thread per element of C), the region is emitted the other way round: the `for` loop runs once
//! at block level and the loop over the threads is the innermost loop, one thread per SIMD lane
//! (`#pragma omp simd`), which makes the accesses contiguous in `tx`. The region is split at the
//! interchanged loop exactly as at a barrier, so the locals that live across it become
//! per-thread arrays (the emitter's existing machinery).
//!
//! **Legal** where the threads of the region cannot observe each other's order: the region has no
//! barrier, every thread runs the loop alike (bounds that are the same in every thread: no
//! coordinate, no thread's local), and it has no atomics, calls, prints, returns or warp
//! collectives; its memory accesses are race-free (the checker proves it for safe code, `sim`
//! checks it for `unsafe` code), so no thread reads what another writes in the region. A run-time
//! check in the kernel would report a different first failure if threads were interleaved, so a
//! kernel whose emitted body has any is emitted again without interchange (`Cx::lanes_refused`).
//!
//! **Cost model** (per innermost thread-level `for` loop, counted over its body's loads and
//! stores of arrays): an access is *strided* along a variable unless its flat offset is the same
//! for every value of it or grows by exactly one element per step. The loop is interchanged (with
//! the `for` loops around it in the region) when fewer accesses are strided along `tx` (the
//! lanes) than along the loop's own counter, and the cache lines its strided accesses touch in
//! one thread's run of the loop (trip count × 64 bytes each; unknown trip counts count as many)
//! do not fit in a 32 KiB L1, where the next threads would find them. Ties keep the thread loop
//! outside: the per-thread arrays then cost memory traffic for nothing. `strata emit --target c` says which was chosen
//! in a comment at each such loop. `STRATA_LANES=all` skips the cost model (every legal loop is
//! interchanged: for tests). The emitter tiles the outermost interchanged loop by rows of
//! threads where the block's shape allows (`c.rs`, `lane_tile_rows`).

use super::*;

/// The level-1 data cache the cost model assumes (32 KiB: x86-64 and most ARM cores).
const L1_BYTES: u64 = 32 * 1024;

/// The decisions for the loops of a kernel: counters and the comments saying why.
#[derive(Default)]
pub(super) struct Lanes {
    /// Counters of thread-level loops run at block level around thread loops.
    pub(super) interchanged: HashMap<LocalId, String>,
    /// Counters of thread-level loops considered and kept inside the thread loop.
    pub(super) kept: HashMap<LocalId, String>,
}

/// The loops of kernel `f` to interchange with its thread loops (see the module comment).
/// With `force` (`STRATA_LANES=all`, for tests) every legal loop is interchanged, whatever the
/// cost model says.
pub(super) fn choose(f: &Function, force: bool) -> Lanes {
    let mut out = Lanes::default();
    let FnKind::Kernel { block, .. } = &f.kind else { return out };
    // The lanes are the `tx` loop: a fixed extent below 4 gives no vector to fill.
    if matches!(block[0], IExpr::Const(c) if c < 4) {
        return out;
    }
    // Kernels with a thread `return` or warp-level code keep the emitter's plain scheme.
    if f.body
        .iter()
        .any(|s| stmt_any(s, &|x| matches!(x, Stmt::Return(_) | Stmt::Sync { warp: true, .. } | Stmt::Launch { .. })))
    {
        return out;
    }
    regions(f, &f.body, force, &mut out);
    out
}

fn regions(f: &Function, body: &[Stmt], force: bool, out: &mut Lanes) {
    for s in body {
        match s {
            Stmt::Threads { body, .. } => {
                // Nested selections (`sched(Y) … sched(X)`) are one region of their innermost set.
                if let [inner @ Stmt::Threads { .. }] = body.as_slice() {
                    regions(f, std::slice::from_ref(inner), force, out);
                } else if body.iter().all(|s| safe_stmt(s) && !stmt_any(s, &|x| matches!(x, Stmt::Threads { .. }))) {
                    for s in body {
                        chain(f, s, &[], force, out);
                    }
                }
            }
            Stmt::For { body, .. } | Stmt::While { body, .. } => regions(f, body, force, out),
            Stmt::If { then, els, .. } => {
                regions(f, then, force, out);
                regions(f, els, force, out);
            }
            _ => {}
        }
    }
}

/// Follows the uniform `for` loops from the top of a region down to the innermost ones and
/// decides each innermost loop (with the loops around it, `outer`).
fn chain(f: &Function, s: &Stmt, outer: &[LocalId], force: bool, out: &mut Lanes) {
    // A loop that `break` leaves stops per thread: it stays inside the thread loop.
    let Stmt::For { counter, lo, hi, body, exit: None, .. } = s else { return };
    let inside: Vec<LocalId> = outer.iter().copied().chain([*counter]).collect();
    if !uniform_bound(f, lo, &inside) || !uniform_bound(f, hi, &inside) {
        return;
    }
    let loops: Vec<&Stmt> = body.iter().filter(|x| matches!(x, Stmt::For { .. })).collect();
    if !loops.is_empty() {
        for l in loops {
            chain(f, l, &inside, force, out);
        }
        return;
    }
    if body.iter().any(|x| stmt_any(x, &|y| matches!(y, Stmt::For { .. } | Stmt::While { .. }))) {
        return;
    }
    let (mut along_loop, mut along_lanes, mut n) = (0, 0, 0);
    for st in body {
        accesses(st, &mut |p| {
            if p.path.iter().any(|s| matches!(s, PathStep::Elem(_))) {
                n += 1;
                along_loop += strided(p, &Var::Counter(*counter)) as usize;
                along_lanes += strided(p, &Var::Tx) as usize;
            }
        });
    }
    let name = &f.locals[*counter].name;
    // The cache lines one thread's loop walks: where they fit in L1 the next threads find them
    // there, and the thread loop outside costs nothing (measured: Obsidian's red5, 8 per thread).
    let trip = match (lo, hi) {
        (IExpr::Const(l), IExpr::Const(h)) => Some(h.saturating_sub(*l)),
        _ => None,
    };
    let bytes = trip.map(|t| t.saturating_mul(64).saturating_mul(along_loop as u64));
    if force {
        let why = format!("threads as SIMD lanes: `for {name}` runs at block level (forced: STRATA_LANES=all)");
        for l in &inside {
            out.interchanged.insert(*l, why.clone());
        }
    } else if let Some(b) = bytes.filter(|b| *b < L1_BYTES) {
        let why = format!(
            "thread loop outside `for {name}`: its {along_loop} strided accesses touch {} KiB, \
             which stay in L1 for the next threads",
            b / 1024
        );
        out.kept.insert(*counter, why);
    } else if along_lanes < along_loop {
        let why = format!(
            "threads as SIMD lanes: `for {name}` runs at block level, the thread loop inside it \
             (of {n} array accesses, {along_loop} strided along `{name}`, {along_lanes} along `tx`)"
        );
        for l in &inside {
            out.interchanged.insert(*l, why.clone());
        }
    } else {
        let why = format!(
            "thread loop outside `for {name}` (of {n} array accesses, {along_loop} strided along \
             `{name}`, {along_lanes} along `tx`)"
        );
        out.kept.insert(*counter, why);
    }
}

/// A loop bound every thread computes alike: constants, sizes, block coordinates, block-level
/// locals and the counters of the interchanged loops around it.
fn uniform_bound(f: &Function, e: &IExpr, outer: &[LocalId]) -> bool {
    match e {
        IExpr::ThreadIdx(_) | IExpr::Value(_) => false,
        IExpr::Counter(l) => outer.contains(l) || f.locals.get(*l).is_some_and(|x| x.level != Level::Thread),
        IExpr::Add(a, b)
        | IExpr::Sub(a, b)
        | IExpr::Mul(a, b)
        | IExpr::Div(a, b)
        | IExpr::Rem(a, b)
        | IExpr::Pow(a, b) => uniform_bound(f, a, outer) && uniform_bound(f, b, outer),
        IExpr::Const(_) | IExpr::Param(_) | IExpr::BlockIdx(_) | IExpr::BlockDim(_) | IExpr::GridDim(_) => true,
    }
}

/// Statements whose threads may run in any interleaving (given race freedom): no barriers,
/// atomics, calls, prints, returns, launches or collectives.
fn safe_stmt(s: &Stmt) -> bool {
    let mut ok =
        !stmt_any(s, &|x| matches!(x, Stmt::Sync { .. } | Stmt::Return(_) | Stmt::Launch { .. } | Stmt::Free { .. }));
    s.visit_exprs(&mut |e| {
        ok &= match e {
            Expr::Call { .. } | Expr::Tuple(_) | Expr::ArrayList(_) => false,
            Expr::Builtin(b, ..) => matches!(
                b,
                Builtin::Sqrt(_)
                    | Builtin::Math(..)
                    | Builtin::IntMath(..)
                    | Builtin::Powi(_)
                    | Builtin::IsNan(_)
                    | Builtin::IsFinite(_)
            ),
            _ => true,
        }
    });
    ok
}

/// Calls `f` on every place `s` loads or stores.
fn accesses(s: &Stmt, f: &mut dyn FnMut(&Place)) {
    if let Stmt::Store { place, .. } = s {
        f(place);
    }
    s.visit_exprs(&mut |e| {
        if let Expr::Load(p) = e {
            f(p)
        }
    });
}

pub(super) enum Var {
    Counter(LocalId),
    Tx,
}

/// Whether consecutive values of `v` make `p` jump (see the module comment); unknown offsets
/// (run-time values, products of sizes) count as strided.
pub(super) fn strided(p: &Place, v: &Var) -> bool {
    let steps: Vec<Option<i128>> =
        p.path.iter().filter_map(|s| if let PathStep::Elem(i) = s { Some(coef(i, v)) } else { None }).collect();
    let moving: Vec<&Option<i128>> = steps.iter().filter(|c| **c != Some(0)).collect();
    match moving.as_slice() {
        [] => false,
        [Some(1)] => !matches!(steps.last(), Some(Some(1))),
        _ => true,
    }
}

/// The coefficient of `v` in the offset `e` where `e` is affine in `v` with a constant
/// coefficient; `None` otherwise.
fn coef(e: &IExpr, v: &Var) -> Option<i128> {
    match e {
        IExpr::Counter(l) => Some(matches!(v, Var::Counter(x) if x == l) as i128),
        IExpr::ThreadIdx(d) => Some((matches!(v, Var::Tx) && *d == DimName::X) as i128),
        IExpr::Const(_) | IExpr::Param(_) | IExpr::BlockIdx(_) | IExpr::BlockDim(_) | IExpr::GridDim(_) => Some(0),
        IExpr::Add(a, b) => coef(a, v)?.checked_add(coef(b, v)?),
        IExpr::Sub(a, b) => coef(a, v)?.checked_sub(coef(b, v)?),
        IExpr::Mul(a, b) => match (coef(a, v)?, coef(b, v)?) {
            (0, 0) => Some(0),
            (0, c) => konst(a)?.checked_mul(c),
            (c, 0) => konst(b)?.checked_mul(c),
            _ => None,
        },
        IExpr::Div(a, b) | IExpr::Rem(a, b) | IExpr::Pow(a, b) => (coef(a, v)? == 0 && coef(b, v)? == 0).then_some(0),
        // A run-time value may be anything, unless it reads no local at all.
        IExpr::Value(x) => {
            let mut locals = false;
            x.visit(&mut |y| locals |= matches!(y, Expr::Load(_) | Expr::Ref(_)));
            (!locals).then_some(0)
        }
    }
}

fn konst(e: &IExpr) -> Option<i128> {
    match e {
        IExpr::Const(c) => Some(*c as i128),
        _ => None,
    }
}
