//! Run-time indices checked in one compare (docs/language.md, "Run-time indices"). A place read
//! at an index the checker could not bound carries the check `index < bound` ([`Place::checks`]).
//! Its run-time index is emitted once, where the offset uses it, as
//! `strata_index((uint64_t)(int64_t)(i), bound, at)`: one unsigned compare, which also catches a
//! negative index (it converts to a number above any bound), and a trap at the access's source
//! position (E0903). Where the index's own value is provably below the bound (`x % 16` of an
//! unsigned `x` into an array of 16), the check is dropped. `sim` keeps every check: it is the
//! reference the devices agree with.

use super::*;

/// A run-time index of a place being emitted, with the C of its bound: the offset's use of the
/// index is emitted checked (see [`Emitter::checked_value`]).
pub(super) struct CheckedIndex {
    index: IExpr,
    /// The bound's C, or `None` where the index is provably below it (no check).
    bound: Option<String>,
    at: String,
    used: bool,
}

impl Emitter<'_> {
    /// The C of the element offset `e` of the place `p`, whose run-time checks not yet emitted
    /// are `pending` (indices into `p.checks`). Each pending check whose index occurs in `e` is
    /// emitted there, checked; the others stay pending, unless `last` (no element step follows),
    /// where they wrap the offset as `strata_chk(off, i, bound, at)`.
    pub(super) fn checked_offset(
        &self,
        cx: &Cx,
        p: &Place,
        e: &IExpr,
        pending: &mut Vec<usize>,
        last: bool,
    ) -> Result<String, E> {
        if pending.is_empty() {
            return self.index(cx, e);
        }
        let at = self.at(p.span);
        let base = self.checked.borrow().len();
        for &k in pending.iter() {
            let Some((i, b)) = p.checks.get(k) else { continue };
            let bound = if self.index_below(cx, i, b) { None } else { Some(self.iexpr(cx, b)?) };
            self.checked.borrow_mut().push(CheckedIndex { index: i.clone(), bound, at: at.clone(), used: false });
        }
        let off = self.index(cx, e);
        let mine = self.checked.borrow_mut().split_off(base);
        let mut off = off?;
        let mut left = Vec::new();
        for (&k, c) in pending.iter().zip(&mine) {
            if !c.used {
                left.push(k);
            }
        }
        *pending = left;
        if last {
            for k in std::mem::take(pending) {
                let Some((i, b)) = p.checks.get(k) else { continue };
                off = format!("strata_chk({off}, {}, {}, {at})", self.iexpr(cx, i)?, self.iexpr(cx, b)?);
            }
        }
        Ok(off)
    }

    /// The C of the run-time index `i` (`IExpr::Value(v)`, `v` emitted as `s`) where it is the
    /// index of a check of the place being emitted (the innermost place first): checked against
    /// its bound in one compare, or plain where provably in range. `None` where no check is
    /// pending for it.
    pub(super) fn checked_value(&self, i: &IExpr, s: &str) -> Option<String> {
        let mut checked = self.checked.borrow_mut();
        let c = checked.iter_mut().rev().find(|c| !c.used && c.index == *i)?;
        c.used = true;
        Some(match &c.bound {
            Some(b) => format!("strata_index((uint64_t)(int64_t)({s}), {b}, {})", c.at),
            None => format!("((uint64_t)({s}))"),
        })
    }

    /// Whether the run-time index `i` is provably below `bound`: `i` is an unsigned value whose
    /// largest value [`Emitter::value_max`] bounds, and `bound` is at least one more.
    fn index_below(&self, cx: &Cx, i: &IExpr, bound: &IExpr) -> bool {
        let IExpr::Value(v) = i else { return false };
        match (self.value_max(cx, v), cx.env.range(bound)) {
            (Some(max), Some(b)) => max < b.lo,
            _ => false,
        }
    }

    /// The largest value an unsigned integer expression can take, where its form says: a
    /// literal, `x % c` and `x & c` with a literal `c`, and `a & b` of bounded operands.
    fn value_max(&self, cx: &Cx, e: &Expr) -> Option<u64> {
        let unsigned = matches!(self.expr_ty(cx, e), Ty::Scalar(ScalarTy::U32 | ScalarTy::U64));
        if !unsigned {
            return None;
        }
        let lit = |x: &Expr| match x {
            Expr::Lit(Lit::Int(c, ScalarTy::U32 | ScalarTy::U64)) => u64::try_from(*c).ok(),
            _ => None,
        };
        match e {
            Expr::Lit(_) => lit(e),
            Expr::Binary(BinOp::Rem, _, c) => lit(c).filter(|c| *c > 0).map(|c| c - 1),
            Expr::Binary(BinOp::BitAnd, a, b) => match (self.value_max(cx, a), self.value_max(cx, b)) {
                (Some(x), Some(y)) => Some(x.min(y)),
                (x, y) => x.or(y),
            },
            Expr::Cast(x, ScalarTy::U32 | ScalarTy::U64) => self.value_max(cx, x),
            _ => None,
        }
    }
}
