//! Overflow checks deferred to the end of a thread loop (cpu device). A checked `+ - *`
//! ([`Expr::Checked`], E0913) branches to its report in every thread, which stops GCC from
//! vectorising the loop over the threads (the block reduction measured 1.8x slower). Where it is
//! safe, the operation is emitted instead as its wrapped result plus an overflow flag OR-ed per
//! thread (`strata_dadd_u32(a, b, &ovf)`, `runtime_cpu.h`), and the code after the thread loop
//! tests the flag once and reports the same E0913 at the same operator.
//!
//! **Safe** means that no effect of the threads after the first overflowing one can be seen
//! before the report, and that no other error can come first. A thread loop qualifies when its
//! body is straight-line code (scalar `let`s and stores, no control flow, calls, builtins,
//! prints or atomics) with exactly one checked operation, whose memory accesses are contiguous
//! or the same along `tx` (where they are strided, as in the scan's tree, the loop would not
//! vectorise well and the deferred form measured slower), and its emitted C has no other run-time
//! check (no `STRATA_AT`: no checked index, division, shift or conversion): a wrapped value
//! then only reaches memory and locals, which nothing reads before the report ends the program
//! (every thread's check is the same operator, so the message and position are those `sim`
//! reports for its first thread). Otherwise the checks stay where they are.

use super::*;

/// The one deferred check of the thread loop being emitted.
pub(super) struct Deferred {
    /// The span of the [`Expr::Checked`] that is deferred.
    pub(super) span: Span,
    /// The C name of the flag.
    pub(super) flag: String,
    /// Once emitted: its position (`STRATA_AT(…)`) and message.
    pub(super) used: Option<(String, &'static str)>,
}

/// The span of the one checked `+ - *` of a thread loop's `body` whose check can be deferred to
/// the end of the loop (see the module comment), if it has one.
pub(super) fn deferrable(f: &Function, body: &[&Stmt]) -> Option<Span> {
    let mut ok = true;
    let mut checked = Vec::new();
    for s in body {
        match s {
            Stmt::Store { .. } => {}
            Stmt::Let { local, init: Some(_), .. } => {
                ok &= matches!(f.locals.get(*local).map(|l| &l.ty), Some(Ty::Scalar(_)));
            }
            _ => return None,
        }
        s.visit_exprs(&mut |e| match e {
            Expr::Checked(inner, span) => {
                ok &= matches!(**inner, Expr::Binary(BinOp::Add | BinOp::Sub | BinOp::Mul, ..));
                checked.push(*span);
            }
            Expr::Load(p) | Expr::Ref(p) => ok &= p.checks.is_empty() && !lanes::strided(p, &lanes::Var::Tx),
            Expr::Lit(_) | Expr::Nat(_) | Expr::Unary(..) | Expr::Binary(..) | Expr::Cast(..) => {}
            _ => ok = false,
        });
        if let Stmt::Store { place, .. } = s {
            ok &= place.checks.is_empty() && !lanes::strided(place, &lanes::Var::Tx);
        }
    }
    match checked.as_slice() {
        [span] if ok => Some(*span),
        _ => None,
    }
}
