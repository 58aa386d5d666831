//! Run-time indices checked in one compare (docs/language.md, "Run-time indices"). A place read
//! at an index the checker could not bound carries the check `index < bound` ([`Place::checks`]).
//! Its run-time index is emitted once, where the offset uses it, as
//! `strata_index((uint64_t)(int64_t)(i), bound, at)`: one unsigned compare, which also catches a
//! negative index (it converts to a number above any bound), and a trap at the access's source
//! position (E0903). Where the index's own value is provably below the bound (`x % 16` of an
//! unsigned `x` into an array of 16), the check is dropped. `sim` keeps every check: it is the
//! reference the devices agree with.
//!
//! Strata's integer arithmetic ([`Expr::Checked`]) is emitted here too: each operation through a
//! runtime helper of its type (`strata_add_i32(a, b, at)`, …) that is the operation plus one
//! branch to a cold report (E0913 at the operator).

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
        let unsigned = matches!(self.expr_ty(cx, e), Ty::Scalar(s) if s.is_unsigned_int());
        if !unsigned {
            return None;
        }
        let lit = |x: &Expr| match x {
            Expr::Lit(Lit::Int(c, s)) if s.is_unsigned_int() => u64::try_from(*c).ok(),
            _ => None,
        };
        match e {
            Expr::Lit(_) => lit(e),
            Expr::Binary(BinOp::Rem, _, c) => lit(c).filter(|c| *c > 0).map(|c| c - 1),
            Expr::Binary(BinOp::BitAnd, a, b) => match (self.value_max(cx, a), self.value_max(cx, b)) {
                (Some(x), Some(y)) => Some(x.min(y)),
                (x, y) => x.or(y),
            },
            Expr::Cast(x, s) if s.is_unsigned_int() => {
                // A narrowing conversion keeps the low bits: at most the type's maximum.
                let max = s.int_range().map_or(u64::MAX, |(_, hi)| hi as u64);
                Some(self.value_max(cx, x).map_or(max, |m| m.min(max)))
            }
            // `%` of a literal is checked for a zero divisor only: its value is below the literal.
            Expr::Checked(x, _) if matches!(**x, Expr::Binary(BinOp::Rem | BinOp::BitAnd, ..)) => self.value_max(cx, x),
            // Any other value of an 8- or 16-bit type: its type's maximum (a byte indexes 256
            // elements without a check).
            _ => match self.expr_ty(cx, e) {
                Ty::Scalar(s) if s.is_small_int() => s.int_range().map(|(_, hi)| hi as u64),
                _ => None,
            },
        }
    }

    /// Whether the run-time index `i` is provably below the length `len` (the element index of
    /// an atomic operation): [`Emitter::value_max`] against the length's smallest value.
    pub(super) fn value_below(&self, cx: &Cx, i: &Expr, len: &IExpr) -> bool {
        match (self.value_max(cx, i), cx.env.range(len)) {
            (Some(max), Some(b)) => max < b.lo,
            _ => false,
        }
    }

    /// The C of checked integer arithmetic `inner` (a `Binary` or `Unary`) at `span`; on floats
    /// (and with `STRATA_ARITH_CHECKS=0`) the plain operation.
    pub(super) fn checked_arith(&self, cx: &Cx, inner: &Expr, span: Span) -> Result<String, E> {
        // The helper suffix of an integer type; `nat` values are `uint64_t`.
        let int = |t: &Ty| match t {
            Ty::Scalar(s) if s.is_int() => Some(scalar_suffix(*s)),
            Ty::Nat => Some("u64"),
            _ => None,
        };
        if !self.arith_checks {
            return self.expr(cx, inner);
        }
        let at = self.at(span);
        match inner {
            Expr::Unary(UnOp::Neg, x) => match int(&self.expr_ty(cx, x)) {
                Some(t) => Ok(format!("strata_neg_{t}({}, {at})", self.expr(cx, x)?)),
                None => self.expr(cx, inner),
            },
            Expr::Binary(op, a, b) => {
                let (ta, tb) = (self.expr_ty(cx, a), self.expr_ty(cx, b));
                let (Some(sa), Some(sb)) = (int(&ta), int(&tb)) else { return self.expr(cx, inner) };
                let shift = matches!(op, BinOp::Shl | BinOp::Shr);
                let message = overflow_message(*op);
                // A `nat` operand takes the other side's type (for a shift: the left one only),
                // checked unless its range proves that it fits.
                let operand = |x: &Expr, t: &Ty, other: &Ty| -> Result<String, E> {
                    let v = self.expr(cx, x)?;
                    let (Ty::Nat, Ty::Scalar(s)) = (t, other) else { return Ok(v) };
                    if *s == ScalarTy::U64 {
                        return Ok(v);
                    }
                    if let Expr::Nat(i) = x {
                        // Every range proven is within `0..=i32::MAX`: within the type's unless
                        // the type is narrower (`u8`).
                        let max = s.int_range().map_or(0, |(_, hi)| hi);
                        if cx.env.range(i).is_some_and(|r| i128::from(r.hi) <= max) {
                            return Ok(format!("(({}){v})", scalar_c(*s)));
                        }
                    }
                    Ok(format!("strata_n2{}({v}, {at}, \"{message}\")", scalar_suffix(*s)))
                };
                if shift {
                    let x = operand(a, &ta, &tb)?;
                    let t = if ta == Ty::Nat { sb } else { sa };
                    let y = self.expr(cx, b)?;
                    let amount = if matches!(tb, Ty::Scalar(s) if s.is_signed_int()) {
                        format!("(uint64_t)(int64_t)({y})")
                    } else {
                        format!("(uint64_t)({y})")
                    };
                    let f = if *op == BinOp::Shl { "shl" } else { "shr" };
                    return Ok(format!("strata_{f}_{t}({x}, {amount}, {at})"));
                }
                let t = if ta == Ty::Nat { sb } else { sa };
                if matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul) {
                    // Operands whose ranges rule out overflow (a counter times a literal): plain.
                    let fits = self.arith_range(cx, *op, a, b).is_some_and(|r| int_fits(r, t));
                    if fits {
                        return self.expr(cx, inner);
                    }
                }
                let (x, y) = (operand(a, &ta, &tb)?, operand(b, &tb, &ta)?);
                if let Some(d) = self.deferred.borrow_mut().as_mut().filter(|d| d.span == span && d.used.is_none()) {
                    // Checked once after the thread loop ([`deferred`]).
                    // The runtime's deferred helpers exist for the 32- and 64-bit integers; an
                    // 8- or 16-bit operation is checked in place.
                    let wide = matches!(t.to_string().as_str(), "i32" | "u32" | "i64" | "u64");
                    let f = match op {
                        BinOp::Add if wide => Some("add"),
                        BinOp::Sub if wide => Some("sub"),
                        BinOp::Mul if wide => Some("mul"),
                        _ => None,
                    };
                    if let Some(f) = f {
                        d.used = Some((at, message));
                        return Ok(format!("strata_d{f}_{t}({x}, {y}, &{})", d.flag));
                    }
                }
                let f = match op {
                    BinOp::Add => "add",
                    BinOp::Sub => "sub",
                    BinOp::Mul => "mul",
                    BinOp::Div => "div",
                    BinOp::Rem => "rem",
                    _ => return self.expr(cx, inner),
                };
                Ok(format!("strata_{f}_{t}({x}, {y}, {at})"))
            }
            _ => self.expr(cx, inner),
        }
    }
}

impl Emitter<'_> {
    /// The values an integer expression can take where its form bounds them: literals, `nat`
    /// values whose range [`Env::range`] proves (loop counters, coordinates), conversions that
    /// keep those, and `+ - *` of such (exactly: a checked operation either gives its exact value
    /// or stops the program).
    fn value_range(&self, cx: &Cx, e: &Expr) -> Option<(i128, i128)> {
        match e {
            Expr::Lit(Lit::Int(v, s)) if s.is_int() => {
                let v = i128::try_from(*v).ok()?;
                Some((v, v))
            }
            Expr::Nat(i) => cx.env.range(i).map(|r| (i128::from(r.lo), i128::from(r.hi))),
            Expr::Cast(x, s) if s.is_int() => {
                let r = self.value_range(cx, x)?;
                int_fits(r, scalar_suffix(*s)).then_some(r)
            }
            Expr::Unary(UnOp::Neg, x) => {
                let (lo, hi) = self.value_range(cx, x)?;
                Some((-hi, -lo))
            }
            Expr::Checked(inner, _) => match &**inner {
                Expr::Unary(UnOp::Neg, _) => self.value_range(cx, inner),
                Expr::Binary(op, a, b) => self.arith_range(cx, *op, a, b),
                _ => None,
            },
            _ => None,
        }
    }

    /// The exact values of `a op b` (`+ - *`) for the values [`Emitter::value_range`] gives
    /// its operands.
    fn arith_range(&self, cx: &Cx, op: BinOp, a: &Expr, b: &Expr) -> Option<(i128, i128)> {
        let ((al, ah), (bl, bh)) = (self.value_range(cx, a)?, self.value_range(cx, b)?);
        match op {
            BinOp::Add => Some((al.checked_add(bl)?, ah.checked_add(bh)?)),
            BinOp::Sub => Some((al.checked_sub(bh)?, ah.checked_sub(bl)?)),
            BinOp::Mul => {
                let ps = [al.checked_mul(bl)?, al.checked_mul(bh)?, ah.checked_mul(bl)?, ah.checked_mul(bh)?];
                Some((*ps.iter().min()?, *ps.iter().max()?))
            }
            _ => None,
        }
    }
}

/// Whether every value of `r` fits the integer type with helper suffix `t`.
fn int_fits((lo, hi): (i128, i128), t: &str) -> bool {
    let (min, max): (i128, i128) = match t {
        "i8" => (i128::from(i8::MIN), i128::from(i8::MAX)),
        "u8" => (0, i128::from(u8::MAX)),
        "i16" => (i128::from(i16::MIN), i128::from(i16::MAX)),
        "u16" => (0, i128::from(u16::MAX)),
        "i32" => (i128::from(i32::MIN), i128::from(i32::MAX)),
        "i64" => (i128::from(i64::MIN), i128::from(i64::MAX)),
        "u32" => (0, i128::from(u32::MAX)),
        _ => (0, i128::from(u64::MAX)),
    };
    lo >= min && hi <= max
}

/// The words of an overflow of `op` (those of `sim` too).
fn overflow_message(op: BinOp) -> &'static str {
    match op {
        BinOp::Add => "attempt to add with overflow",
        BinOp::Sub => "attempt to subtract with overflow",
        BinOp::Mul => "attempt to multiply with overflow",
        BinOp::Div => "attempt to divide with overflow",
        BinOp::Rem => "attempt to calculate the remainder with overflow",
        BinOp::Shl => "attempt to shift left with overflow",
        _ => "attempt to shift right with overflow",
    }
}
