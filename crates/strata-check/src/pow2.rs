//! Power-of-two reasoning for sizes such as `256 / 2^k`, the shape of every tree algorithm
//! (reductions, scans, sorting networks).
//!
//! A size has a *power-of-two form* `o * 2^e` when `o` is an odd constant and `e` a nat
//! expression: constants, `2^e`, products of those, and `x / y` when `y`'s odd part divides `x`'s
//! and `y`'s exponent is provably at most `x`'s — then the division is exact, so the form is
//! exact too. Divisibility and equality of two such sizes reduce to facts about exponents,
//! which [`Facts`] decides. Everything here is a sufficient condition: `false` means "not
//! shown", never "false".

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
            Atom::Pow(base, e) if base.as_const() == Some(2) => Pow2Form { odd: 1, exp: Nat::clone(e) },
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
