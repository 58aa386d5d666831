//! Facts from conditions: `if n % 256 == 0 && n >= 1024 { … }` lets the branch where the
//! condition holds use those facts about sizes, exactly as a `where` clause would, so that a
//! program establishes what a view or a launch needs with an ordinary check.
//!
//! Only comparisons between size expressions whose run-time value is exact count (size
//! parameters, `const` items, loop counters, natural literals, `/` and `%` by a non-zero literal;
//! see [`FnCx::size_of_expr`]); a conjunction gives each of its comparisons to the
//! `then` branch, and a single comparison gives its negation to the `else` branch. Anything else
//! in a condition (a run-time value, `||`, `!`) adds nothing — never a wrong fact.

use super::*;
use crate::program::add_clauses;
use ast::CmpOp;

impl FnCx<'_> {
    /// The size that the value expression `e` computes, if it is made of sizes only and its
    /// run-time value is exactly that size. Only forms that cannot wrap or fail at run time
    /// count: a size parameter, `const` item or `for` counter, a natural literal, and `/` or `%`
    /// by a non-zero literal. A sum, difference or product could wrap around 2^64 at run time
    /// (a size may be that large) and then the condition would hold where the fact does not.
    fn size_of_expr(&self, e: &ast::Expr) -> Option<Nat> {
        match &e.kind {
            ExprKind::Lit(ast::Lit::Int(v, None)) => u64::try_from(*v).ok().map(Nat::lit),
            ExprKind::Path(segs) if segs.len() == 1 => match self.lookup(&segs[0].name) {
                Some(id) => self.vars[id].nat.clone(),
                None => self.prog.consts.get(&segs[0].name).map(|v| Nat::lit(*v)),
            },
            // `a - b` where the facts in force prove `b <= a`: it cannot wrap (`i < n - 1` inside
            // `for i in 0..n`, where `n >= 1`).
            ExprKind::Binary(BinOp::Sub, a, b) => {
                let (a, b) = (self.size_of_expr(a)?, self.size_of_expr(b)?);
                (self.facts.le(&b, &a) == Truth::Proven).then(|| a.sub(&b).ok()).flatten()
            }
            ExprKind::Paren(x) => self.size_of_expr(x),
            ExprKind::Binary(op @ (BinOp::Div | BinOp::Rem), a, b) => {
                let ExprKind::Lit(ast::Lit::Int(k, None)) = b.kind else { return None };
                let k = u64::try_from(k).ok().filter(|k| *k >= 1)?;
                let a = self.size_of_expr(a)?;
                match op {
                    BinOp::Div => a.div(&Nat::lit(k)).ok(),
                    _ => a.rem(&Nat::lit(k)).ok(),
                }
            }
            _ => None,
        }
    }

    /// A sum of exact sizes (and their multiples by non-zero literals) whose value the facts in
    /// force prove at most `bound`, an exact size: then no partial sum exceeds a value that fits
    /// in 64 bits, so none wraps (`i + 1 < n` inside `for i in 0..n`).
    fn bounded_size(&self, e: &ast::Expr, bound: &Nat) -> Option<Nat> {
        fn sum(cx: &FnCx<'_>, e: &ast::Expr) -> Option<Nat> {
            match &e.kind {
                ExprKind::Binary(BinOp::Add, a, b) => sum(cx, a)?.add(&sum(cx, b)?).ok(),
                ExprKind::Binary(BinOp::Mul, a, b) => {
                    let lit = |x: &ast::Expr| match x.kind {
                        ExprKind::Lit(ast::Lit::Int(k, None)) => u64::try_from(k).ok().filter(|k| *k >= 1),
                        _ => None,
                    };
                    match (lit(a), lit(b)) {
                        (Some(k), _) => sum(cx, b)?.mul(&Nat::lit(k)).ok(),
                        (_, Some(k)) => sum(cx, a)?.mul(&Nat::lit(k)).ok(),
                        _ => None,
                    }
                }
                ExprKind::Paren(x) => sum(cx, x),
                _ => cx.size_of_expr(e),
            }
        }
        let s = sum(self, e)?;
        (self.facts.le(&s, bound) == Truth::Proven).then_some(s)
    }

    /// `a op b` if `e` compares two sizes.
    fn size_comparison(&self, e: &ast::Expr) -> Option<(Nat, CmpOp, Nat)> {
        let ExprKind::Binary(op, a, b) = &e.kind else { return None };
        let op = match op {
            BinOp::Eq => CmpOp::Eq,
            BinOp::Ne => CmpOp::Ne,
            BinOp::Lt => CmpOp::Lt,
            BinOp::Le => CmpOp::Le,
            BinOp::Gt => CmpOp::Gt,
            BinOp::Ge => CmpOp::Ge,
            _ => return None,
        };
        let (a, b) = match (self.size_of_expr(a), self.size_of_expr(b)) {
            (Some(x), Some(y)) => (x, y),
            (None, Some(y)) => (self.bounded_size(a, &y)?, y),
            (Some(x), None) => {
                let y = self.bounded_size(b, &x)?;
                (x, y)
            }
            (None, None) => return None,
        };
        // A size that is not 0 is at least 1 (facts have no `!=`).
        Some(match op {
            CmpOp::Ne if b == Nat::lit(0) => (a, CmpOp::Ge, Nat::lit(1)),
            CmpOp::Ne if a == Nat::lit(0) => (b, CmpOp::Ge, Nat::lit(1)),
            _ => (a, op, b),
        })
    }

    /// What holds about sizes where `cond` is true.
    fn facts_where_true(&self, cond: &ast::Expr, out: &mut Vec<(Nat, CmpOp, Nat, Span)>) {
        match &cond.kind {
            ExprKind::Binary(BinOp::And, a, b) => {
                self.facts_where_true(a, out);
                self.facts_where_true(b, out);
            }
            _ => {
                if let Some((a, op, b)) = self.size_comparison(cond) {
                    out.push((a, op, b, cond.span));
                }
            }
        }
    }

    /// What holds about sizes where `cond` is false: the negation of a single comparison.
    fn facts_where_false(&self, cond: &ast::Expr) -> Vec<(Nat, CmpOp, Nat, Span)> {
        let Some((a, op, b)) = self.size_comparison(cond) else { return Vec::new() };
        let negated = match op {
            // Not 0: at least 1.
            CmpOp::Eq if b == Nat::lit(0) => return vec![(a, CmpOp::Ge, Nat::lit(1), cond.span)],
            CmpOp::Eq if a == Nat::lit(0) => return vec![(b, CmpOp::Ge, Nat::lit(1), cond.span)],
            CmpOp::Eq => return Vec::new(),
            CmpOp::Ne => CmpOp::Eq,
            CmpOp::Lt => CmpOp::Ge,
            CmpOp::Le => CmpOp::Gt,
            CmpOp::Gt => CmpOp::Le,
            CmpOp::Ge => CmpOp::Lt,
        };
        vec![(a, negated, b, cond.span)]
    }

    /// Adds the facts `cond` gives to the branch where it is `holds`; returns the facts before,
    /// for [`Self::restore_facts`].
    pub(super) fn assume_condition(&mut self, cond: &ast::Expr, holds: bool) -> Facts {
        let saved = self.facts.clone();
        let clauses = if holds {
            let mut out = Vec::new();
            self.facts_where_true(cond, &mut out);
            out
        } else {
            self.facts_where_false(cond)
        };
        add_clauses(&mut self.facts, &clauses);
        saved
    }

    pub(super) fn restore_facts(&mut self, saved: Facts) {
        self.facts = saved;
    }
}
