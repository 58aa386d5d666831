//! Power-of-two reasoning for sizes such as `256 / 2^k`, the shape of every tree algorithm
//! (reductions, scans, sorting networks).
//!
//! A size has a *power-of-two form* `o * 2^e` when `o` is an odd constant and `e` a nat
//! expression: constants, `2^e`, products of those, and `x / y` when `y`'s odd part divides `x`'s
//! and `y`'s exponent is provably at most `x`'s — then the division is exact, so the form is
//! exact too; `2^e` (or `4^e`, …) has a form only when `e` is provably a natural number.
//! Divisibility, equality and order of two such sizes reduce to facts about exponents, which
//! [`Facts`] decides ([`le`] also uses the facts' constant ranges of the exponents'
//! difference); [`canonical`] rewrites the powers of a sum so that powers whose exponents
//! differ by a constant share one atom. [`Facts::le`], [`Facts::equal`] and
//! [`Facts::divides`] fall back to this module. Everything here is a sufficient condition:
//! `false` means "not shown", never "false".

use crate::nat::{Atom, Facts, Nat, Truth};

/// `odd * 2^exp`.
#[derive(Clone, Debug)]
pub struct Pow2Form {
    pub odd: i128,
    pub exp: Nat,
}

fn split_const(c: i128) -> Option<Pow2Form> {
    if c <= 0 {
        return None;
    }
    let twos = c.trailing_zeros();
    Some(Pow2Form { odd: c >> twos, exp: Nat::lit(u64::from(twos)) })
}

/// The power-of-two form of `n`, if it has one under `facts`.
pub fn form(n: &Nat, facts: &Facts) -> Option<Pow2Form> {
    if let Some(c) = n.as_const() {
        return split_const(c);
    }
    let mut terms = n.terms();
    let (Some((mono, coeff)), None) = (terms.next(), terms.next()) else { return None };
    let mut acc = split_const(coeff)?;
    for (atom, power) in mono.factors() {
        let f = match atom {
            Atom::Pow(base, e) => {
                // (2^t)^e = 2^(t*e), for an exponent that is a natural number here (`2^(k - 1)`
                // is not one for k = 0: no form, so no claim).
                let b = base.as_const().filter(|b| *b >= 2 && b.count_ones() == 1)?;
                if !e.terms().all(|(_, c)| c >= 0) && facts.le(&Nat::zero(), e) != Truth::Proven {
                    return None;
                }
                Pow2Form { odd: 1, exp: e.mul(&Nat::lit(u64::from(b.trailing_zeros()))).ok()? }
            }
            Atom::Div(x, y) => {
                let (fx, fy) = (form(x, facts)?, form(y, facts)?);
                if fx.odd % fy.odd != 0 || facts.le(&fy.exp, &fx.exp) != Truth::Proven {
                    return None;
                }
                Pow2Form { odd: fx.odd / fy.odd, exp: fx.exp.sub(&fy.exp).ok()? }
            }
            _ => return None,
        };
        for _ in 0..power {
            acc = Pow2Form { odd: acc.odd.checked_mul(f.odd)?, exp: acc.exp.add(&f.exp).ok()? };
        }
    }
    Some(acc)
}

/// `a` divides `b` for every assignment satisfying `facts`.
pub fn divides(facts: &Facts, a: &Nat, b: &Nat) -> bool {
    match (form(a, facts), form(b, facts)) {
        (Some(fa), Some(fb)) => fb.odd % fa.odd == 0 && facts.le(&fa.exp, &fb.exp) == Truth::Proven,
        _ => false,
    }
}

/// `a <= b` for every assignment satisfying `facts`: with `d = eb - ea` at least a constant
/// `t` (the facts' [`Facts::range`] of `d`, or 0 when `ea <= eb` is proven), `oa * 2^ea <= ob * 2^eb` follows from
/// `oa <= ob * 2^t` (`t >= 0`) or `oa * 2^-t <= ob` (`t < 0`), as `2^ea >= 1`. So
/// `128 / 2^k <= 256 / 2^k` (`d = 1`) and `2^j <= 2^n` when `j <= n`.
pub fn le(facts: &Facts, a: &Nat, b: &Nat) -> bool {
    if le_forms(facts, a, b) {
        return true;
    }
    // `0 <= 2^j - 2^i` is `2^i <= 2^j`: the negative terms of `b - a` against its positive ones.
    let Ok(d) = b.sub(a) else { return false };
    let (mut pos, mut neg) = (Nat::zero(), Nat::zero());
    for (m, c) in d.terms() {
        let Ok(abs) = u64::try_from(c.unsigned_abs()) else { return false };
        let Some(t) = m
            .factors()
            .try_fold(Nat::lit(abs), |t, (x, e)| (0..e).try_fold(t, |t, _| t.mul(&Nat::from_atom(x.clone())).ok()))
        else {
            return false;
        };
        let side = if c > 0 { &mut pos } else { &mut neg };
        match side.add(&t) {
            Ok(s) => *side = s,
            Err(_) => return false,
        }
    }
    (neg != *a || pos != *b) && le_forms(facts, &neg, &pos)
}

fn le_forms(facts: &Facts, a: &Nat, b: &Nat) -> bool {
    let (Some(fa), Some(fb)) = (form(a, facts), form(b, facts)) else { return false };
    let Ok(d) = fb.exp.sub(&fa.exp) else { return false };
    let t = match d.as_const() {
        Some(t) => t,
        None => {
            // Interval arithmetic forgets how the exponents are related (`i <= j`), which the
            // polynomial engine knows.
            let lo = facts.range(&d).0;
            if facts.le(&fa.exp, &fb.exp) == Truth::Proven {
                lo.unwrap_or(0).max(0)
            } else if let Some(lo) = lo {
                lo
            } else {
                return false;
            }
        }
    };
    let shift = |o: i128, t: i128| u32::try_from(t).ok().filter(|t| *t < 120).and_then(|t| o.checked_mul(1i128 << t));
    if t >= 0 {
        // ob * 2^t, capped: beyond 2^119 any odd constant is exceeded.
        shift(fb.odd, t.min(119)).is_some_and(|r| fa.odd <= r)
    } else {
        shift(fa.odd, -t).is_some_and(|l| l <= fb.odd)
    }
}

/// `n >= 1` for every assignment: an exact `odd * 2^e` is at least 1.
pub fn positive(facts: &Facts, n: &Nat) -> bool {
    form(n, facts).is_some()
}

/// `a == b` for every assignment satisfying `facts`.
pub fn equal(facts: &Facts, a: &Nat, b: &Nat) -> bool {
    match (form(a, facts), form(b, facts)) {
        (Some(fa), Some(fb)) => fa.odd == fb.odd && facts.equal(&fa.exp, &fb.exp) == Truth::Proven,
        _ => false,
    }
}

/// Rewrites `n` into `odd * 2^exp` (a constant when the exponent is) if it has a form, so that
/// sizes computed by views come out in one canonical shape.
pub fn simplify(n: &Nat, facts: &Facts) -> Nat {
    let Some(f) = form(n, facts) else { return n.clone() };
    let pow = match f.exp.as_const() {
        Some(e) if (0..63).contains(&e) => Nat::lit(1u64 << e),
        _ => match Nat::lit(2).pow(&f.exp) {
            Ok(p) => p,
            Err(_) => return n.clone(),
        },
    };
    match u64::try_from(f.odd).ok().and_then(|o| Nat::lit(o).mul(&pow).ok()) {
        Some(v) => v,
        None => n.clone(),
    }
}

/// `n` with every power-of-two factor (`2^e`, `4^e`, an exact quotient `x / y` of such) written
/// `2^c * 2^(r + s)`, where `e = c0 + r` (`c0` its constant term), `s` the least shift that makes
/// `r + s` provably at least 0 by the facts' ranges ([`Facts::range`]) and `c = c0 - s`. Powers
/// whose exponents differ by a constant then share one atom, so sums of them compare as
/// polynomials: `256 / 2^k - 128 / 2^k` is `2*2^(7 - k) - 2^(7 - k) = 2^(7 - k)` when `k <= 7`.
/// Equal in value to `n` under the facts; `n` itself where nothing applies.
pub fn canonical(n: &Nat, facts: &Facts) -> Nat {
    let mut out = Nat::zero();
    for (mono, coeff) in n.terms() {
        let Ok(abs) = u64::try_from(coeff.unsigned_abs()) else { return n.clone() };
        let mut term = if coeff < 0 { Nat::zero().sub(&Nat::lit(abs)).ok() } else { Some(Nat::lit(abs)) };
        for (atom, power) in mono.factors() {
            let a = Nat::from_atom(atom.clone());
            let c = match atom {
                Atom::Pow(..) | Atom::Div(..) => canonical_atom(&a, facts).unwrap_or(a),
                _ => a,
            };
            term = term.and_then(|t| (0..power).try_fold(t, |t, _| t.mul(&c).ok()));
        }
        match term.and_then(|t| out.add(&t).ok()) {
            Some(o) => out = o,
            None => return n.clone(),
        }
    }
    out
}

fn canonical_atom(a: &Nat, facts: &Facts) -> Option<Nat> {
    let f = form(a, facts)?;
    let c0 = f.exp.terms().find(|(m, _)| m.degree() == 0).map_or(0, |(_, c)| c);
    let rest = f.exp.sub(&Nat::lit(u64::try_from(c0.max(0)).ok()?)).ok()?;
    if c0 < 0 {
        return None;
    }
    let shift = if rest.terms().all(|(_, c)| c >= 0) { 0 } else { facts.range(&rest).0?.min(0).checked_neg()? };
    if shift > c0 {
        return None;
    }
    let shift_n = Nat::lit(u64::try_from(shift).ok()?);
    let pow = Nat::lit(2).pow(&rest.add(&shift_n).ok()?).ok()?;
    let scale = u32::try_from(c0 - shift).ok().filter(|e| *e < 63).map(|e| 1u64 << e)?;
    let odd = u64::try_from(f.odd).ok()?;
    Nat::lit(odd).mul(&Nat::lit(scale)).ok()?.mul(&pow).ok()
}
