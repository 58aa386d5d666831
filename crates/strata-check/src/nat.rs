//! Symbolic natural-number sizes: normalised polynomials and the decision procedures the
//! checker uses to prove size side conditions.
//!
//! # Representation and normalisation
//!
//! A [`Nat`] is a polynomial with `i128` coefficients over *atoms*. An atom ([`Atom`]) is
//! a nat variable, or an opaque term `a / b`, `a % b`, `a ^ b` (non-constant exponent) or
//! `f(a, ..)`, whose arguments are themselves normalised `Nat`s. A [`Monomial`] is a
//! product of atoms with positive exponents, kept sorted by atom; a `Nat` is a list of
//! `(monomial, coefficient)` pairs sorted by a graded-lexicographic monomial order
//! (highest degree first, the constant last) with no zero coefficients. Atoms compare
//! structurally, so two polynomials are equal as values of the ring `Z[atoms]` exactly when
//! they are equal as Rust values: `n + n == 2*n`, `(n + 1)*(n + 1) == n^2 + 2*n + 1`.
//!
//! All arithmetic is checked: coefficient overflow, a result of more than
//! [`MAX_TERMS`] terms, a division by a literal zero or an opaque operation applied to a
//! negative constant is an [`NatError`], never a panic or a wrap-around. [`Nat::eval`]
//! has natural-number semantics: a negative value of the expression or of an argument of
//! an opaque term, or a zero divisor, is an error.
//!
//! Opaque operations are simplified when they are built (every rule holds for all
//! assignments under which the original expression is defined, i.e. every divisor is
//! non-zero and every sub-expression is a natural number):
//!
//! * constant folding: `6/4 = 1`, `7%4 = 3`, `2^5 = 32`;
//! * division by a constant `k`: every coefficient is split Euclidean-wise, `c = k*q + r`
//!   with `0 <= r < k`, giving `a/k = Q + R/k` (`(n + 32)/32 = n/32 + 1`); the remainder
//!   part is reduced by `g = gcd(coefficients of R, k)`: `R/k = (R/g)/(k/g)`, so
//!   `(32*a)/32 = a` and `(2*n)/4 = n/2`; `(x/j)/k = x/(j*k)`, `(x%j)/k = 0` when `j <= k`;
//! * remainder by a constant `k`: coefficients are reduced modulo `k` (`(k*a)%k = 0`,
//!   `(n + 5)%4 = (n + 1)%4`), then `R%k = g*((R/g)%(k/g))`, `(x%j)%k = x%j` when `j <= k`
//!   and `x%k` when `k | j`;
//! * `x/1 = x`, `x%1 = 0`, `0/x = 0`, `0%x = 0`, exact polynomial quotients
//!   (`(n*m)/m = n`, `(n*m)%m = 0`), `(x/a)/b = x/(a*b)`, common constant factors
//!   `(g*a)/(g*b) = a/b` and `(g*a)%(g*b) = g*(a%b)`;
//! * powers: `x^0 = 1`, `x^1 = x`, a constant exponent expands to a product (`(n+1)^2`),
//!   `1^e = 1`, `(b^e)^f = b^(e*f)`; a symbolic exponent whose coefficients are all
//!   non-negative is split term by term, `b^(c0 + c1*m1 + ..) = b^c0 * (b^m1)^c1 * ..`,
//!   so `2^(n+1) = 2*2^n` and `2^(2*k) = (2^k)^2`; the atoms that remain are `b^m` for a
//!   monomial `m` (or a whole exponent with a negative coefficient, `2^(n - 1)`).
//!
//! # Decision procedures
//!
//! [`Facts`] holds what a signature states about its nat variables: equalities,
//! inequalities, divisibilities; every variable and every atom is `>= 0` by kind. When a
//! fact is added, all facts are *prepared*:
//!
//! * an equality `e == 0` (divided by the gcd of its coefficients) in which some variable
//!   `v` occurs only as the linear term `±v` becomes a substitution `v := ...` (so
//!   `n == 64*m` rewrites `n` everywhere);
//! * `c * (x % k) == 0` is read as `k | x`;
//! * a divisibility `k | e` is reduced (coefficients modulo `k`, common factors cancelled);
//!   if some variable `v` then occurs only as the linear term `v` (or `-v`), `v` is
//!   replaced by `k*q - rest` with a fresh variable `q` standing for `e/k` (for `32 | n`
//!   that is `n := 32*q`, so `n/32` becomes `q`, `n%32` becomes `0` and `32*(n/32) == n`);
//!   otherwise it is kept for syntactic matching; a symbolic `a | v + rest` (`rest` with
//!   non-negative coefficients, `a` without `v`) likewise becomes `v := a*q - rest`;
//! * each substitution `v := p` also records `p >= 0` (what `v >= 0` said);
//! * every other fact becomes an inequality `f >= 0` (an equality gives two), tightened
//!   over the integers (`2*k - 1 >= 0` becomes `k - 1 >= 0`); from each inequality in
//!   which an atom `x` occurs only linearly, `c*x + r >= 0`, a lower (`c > 0`) or upper
//!   (`c < 0`) bound on `x` is read off.
//!
//! A query first applies the substitutions, then rewrites with divisibility (`x % k`
//! becomes `0` when `k | x` is known; `c*(x/k)` becomes `c/k * x`, scaling the goal by
//! `k` where that is allowed). Then:
//!
//! * [`Facts::equal`]: the difference is `0` ⇒ `Proven`; a non-zero constant ⇒
//!   `Disproven`; after also rewriting `x % k` as `x - k*(x/k)`: zero ⇒ `Proven`; both
//!   `a <= b` and `b <= a` provable ⇒ `Proven`; `a < b` or `b < a` provable ⇒
//!   `Disproven`; otherwise `Unknown`.
//! * [`Facts::le`] / [`Facts::lt`] prove `p = b - a >= 0` (resp. `>= 1`). `p` is
//!   integer-valued, so `p >= 0` is equivalent to `s*p + (s - 1) >= 0` for any `s >= 1`
//!   and to `p/g + floor(c0/g) >= 0` when `g` divides every non-constant coefficient.
//!   `p` is proven non-negative when it is a non-negative constant, when all its
//!   coefficients are non-negative (every atom is `>= 0`), or when `p - f` has that form
//!   for a fact `f >= 0`. Otherwise a bounded best-first search replaces one factor `x`
//!   of one term `c*x*rest` by a bound: an upper bound `s*x <= B` when `c < 0`, a lower
//!   bound `s*x >= B` when `c > 0` (the goal is first scaled by `s`), i.e. it subtracts
//!   `c*rest*(B - s*x)` resp. `c*rest*(s*x - B)`, a non-negative quantity. Each step
//!   yields a goal that implies the previous one, so a success is a proof. Goals with
//!   fewer negative terms are expanded first (substituting a variable's upper bound into
//!   its negative occurrences is what eliminates them; lower bounds of positive terms pay
//!   for a negative constant, as in `2*k - 1 >= 0` from `k >= 1`). Bounds come from the
//!   facts and from the atoms themselves: `k*(a/k) <= a`, `k*(a/k) >= a - (k - 1)`,
//!   `a%k <= k - 1`, `a%k <= a`, `b^e >= e + 1` for a constant `b >= 2`, and the constant
//!   range of a power or quotient ([`Facts::range`]: `2^k <= 128` when `k < 8`). If the
//!   search fails, the same search on `-p - 1 >= 0` may show `Disproven`; otherwise
//!   `Unknown`.
//! * When the polynomial engine answers `Unknown` to an equality, inequality or
//!   divisibility, the power-of-two forms of [`crate::pow2`] are tried (`128/2^k <= 256/2^k`
//!   for `k < 8`), then the same question on both sides rewritten by
//!   [`crate::pow2::canonical`]; these only ever turn `Unknown` into `Proven`.
//! * [`Facts::range`]: a constant interval for an expression by interval arithmetic over
//!   the constant bounds of its atoms — a variable's stated bounds (followed through the
//!   ranges of symbolic bounds, `k < n, n <= 8`), a power's from its exponent's, a
//!   quotient's and a remainder's from their operands' — cut at depth [`RANGE_DEPTH`].
//! * [`Facts::divides`]: `k | a` for a constant `k` is `Proven` when every coefficient of
//!   the rewritten `a` is divisible by `k` or a stated divisibility matches,
//!   `Disproven` when `a` is a constant modulo `k` that is non-zero; `a | b` for a
//!   symbolic `a` is `Proven` when `b` is an exact polynomial multiple of `a`.
//!
//! # Well-formed sizes
//!
//! A polynomial treats `-` as integer subtraction; a size is a natural number. The checker
//! bridges the two with [`Facts::well_formed`], applied to every `-`, `/` and `%` of a size
//! where it is written: `a - b` needs `b <= a`, `a / b` (floor) and `a % b` need `b >= 1`.
//! When every operation of an expression passes, every sub-expression is a natural number and
//! every divisor non-zero, which is the assumption under which the rewrites above and the
//! intrinsic bounds (`b^e >= e + 1`) hold.
//!
//! Decisions are sound for every assignment that satisfies the facts and under which the
//! compared expressions are defined; `Proven` for a false statement would be a bug.
//! Everything else, including nonlinear reasoning the search does not find, products of
//! inequalities, case splits and the meaning of `f(..)` calls, is `Unknown`, which the
//! checker reports as "cannot prove". Nothing is ever decided by enumerating values: the
//! search has a fixed depth ([`SEARCH_DEPTH`]) and expands at most [`SEARCH_BUDGET`] goals
//! (each expansion tries every term × factor × bound once), so the cost depends only on
//! the size of the expressions and facts, never on the values of constants in them.

use std::cmp::Ordering;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashSet};
use std::fmt;
use std::rc::Rc;

/// The most terms a normalised polynomial may have; larger results are [`NatError::TooLarge`].
pub const MAX_TERMS: usize = 512;
/// The most bound substitutions in one proof found by [`Facts::le`] and friends.
pub const SEARCH_DEPTH: u32 = 8;
/// The number of goals the bound-substitution search may expand per query.
pub const SEARCH_BUDGET: usize = 40;
/// How deep [`Facts::range`] follows bounds through atoms and the values of other bounds.
pub const RANGE_DEPTH: u32 = 4;

/// Why a nat operation or evaluation failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NatError {
    /// An intermediate coefficient or value does not fit (`i128`, or `u64` for results).
    Overflow,
    /// Division or remainder by zero.
    DivisionByZero,
    /// A natural-number value would be negative.
    Negative,
    /// A polynomial would have more than [`MAX_TERMS`] terms.
    TooLarge,
    /// Evaluation met a variable the environment does not bind.
    Unbound(String),
    /// Evaluation met an uninterpreted call.
    UnknownCall(String),
}

impl fmt::Display for NatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NatError::Overflow => write!(f, "arithmetic overflow in a size expression"),
            NatError::DivisionByZero => write!(f, "division by zero in a size expression"),
            NatError::Negative => write!(f, "a size expression is negative"),
            NatError::TooLarge => write!(f, "a size expression is too large"),
            NatError::Unbound(v) => write!(f, "size variable `{v}` has no value"),
            NatError::UnknownCall(c) => write!(f, "cannot evaluate call to `{c}`"),
        }
    }
}

impl std::error::Error for NatError {}

/// An operation of a size expression whose result is a natural number only under a side
/// condition (see [`Facts::well_formed`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SizeOp {
    /// `a - b`: needs `b <= a`.
    Sub,
    /// `a / b` (floor division): needs `b >= 1`.
    Div,
    /// `a % b`: needs `b >= 1`.
    Rem,
}

/// Why [`Facts::well_formed`] refused an operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IllFormed {
    pub op: SizeOp,
    /// [`Truth::Disproven`] (false for every assignment) or [`Truth::Unknown`].
    pub truth: Truth,
    /// The side condition that is missing, e.g. `1 <= k`.
    pub goal: String,
    /// The stated facts about its variables, e.g. `k ranges over 0..n` (may be empty).
    pub context: String,
    /// A one-line suggestion of how to make the size well-formed.
    pub help: &'static str,
}

const HELP_SUB: &str = "sizes are natural numbers: state the bound with `where`, start the loop where it holds, or shift the range instead of the size (`2^(k - 1)` over `k in 1..n + 1` rather than `k in 0..n`)";
const HELP_DIVISOR: &str = "a divisor must be at least 1: state it with `where`, or start the loop where it holds";

/// The answer of a decision procedure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Truth {
    /// Holds for every assignment satisfying the facts.
    Proven,
    /// Fails for every assignment satisfying the facts.
    Disproven,
    /// Neither could be shown ("cannot prove").
    Unknown,
}

impl Truth {
    /// `true` only for [`Truth::Proven`].
    pub fn is_proven(self) -> bool {
        self == Truth::Proven
    }
}

/// An indivisible factor of a monomial.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Atom {
    /// A nat variable.
    Var(Rc<str>),
    /// Floor division that could not be simplified away.
    Div(Rc<Nat>, Rc<Nat>),
    /// Remainder that could not be simplified away.
    Rem(Rc<Nat>, Rc<Nat>),
    /// A power with a non-constant exponent.
    Pow(Rc<Nat>, Rc<Nat>),
    /// An uninterpreted nat function applied to normalised arguments.
    Call(Rc<str>, Rc<[Nat]>),
}

impl Atom {
    fn mentions(&self, name: &str) -> bool {
        match self {
            Atom::Var(v) => &**v == name,
            Atom::Div(a, b) | Atom::Rem(a, b) | Atom::Pow(a, b) => a.mentions(name) || b.mentions(name),
            Atom::Call(_, args) => args.iter().any(|a| a.mentions(name)),
        }
    }

    /// Whether `other` occurs in this atom (itself or inside its arguments).
    fn contains(&self, other: &Atom) -> bool {
        if self == other {
            return true;
        }
        match self {
            Atom::Var(_) => false,
            Atom::Div(a, b) | Atom::Rem(a, b) | Atom::Pow(a, b) => a.contains_atom(other) || b.contains_atom(other),
            Atom::Call(_, args) => args.iter().any(|a| a.contains_atom(other)),
        }
    }

    fn collect_vars(&self, out: &mut BTreeSet<Rc<str>>) {
        match self {
            Atom::Var(v) => {
                out.insert(v.clone());
            }
            Atom::Div(a, b) | Atom::Rem(a, b) | Atom::Pow(a, b) => {
                a.collect_vars(out);
                b.collect_vars(out);
            }
            Atom::Call(_, args) => args.iter().for_each(|a| a.collect_vars(out)),
        }
    }

    fn eval(&self, env: &dyn Fn(&str) -> Option<u64>) -> Result<i128, NatError> {
        match self {
            Atom::Var(v) => env(v).map(i128::from).ok_or_else(|| NatError::Unbound(v.to_string())),
            Atom::Div(a, b) => {
                let (a, b) = (a.eval_nat(env)?, b.eval_nat(env)?);
                a.checked_div(b).ok_or(NatError::DivisionByZero)
            }
            Atom::Rem(a, b) => {
                let (a, b) = (a.eval_nat(env)?, b.eval_nat(env)?);
                a.checked_rem(b).ok_or(NatError::DivisionByZero)
            }
            Atom::Pow(a, b) => {
                let (a, b) = (a.eval_nat(env)?, b.eval_nat(env)?);
                let b = u32::try_from(b).map_err(|_| NatError::Overflow)?;
                a.checked_pow(b).ok_or(NatError::Overflow)
            }
            Atom::Call(f, _) => Err(NatError::UnknownCall(f.to_string())),
        }
    }

    /// Rebuilds the atom after mapping atoms inside its arguments, re-simplifying.
    fn rebuild(&self, f: &mut dyn FnMut(&Atom) -> Option<Nat>) -> Result<Nat, NatError> {
        match self {
            Atom::Var(_) => Ok(Nat::from_atom(self.clone())),
            Atom::Div(a, b) => a.map_atoms(f)?.div(&b.map_atoms(f)?),
            Atom::Rem(a, b) => a.map_atoms(f)?.rem(&b.map_atoms(f)?),
            Atom::Pow(a, b) => a.map_atoms(f)?.pow(&b.map_atoms(f)?),
            Atom::Call(name, args) => {
                let args = args.iter().map(|a| a.map_atoms(f)).collect::<Result<Vec<_>, _>>()?;
                Ok(Nat::from_atom(Atom::Call(name.clone(), args.into())))
            }
        }
    }

    /// Constant divisor of a `Div`/`Rem` atom.
    fn const_divisor(b: &Nat) -> Option<i128> {
        b.as_const().filter(|k| *k > 0)
    }
}

/// A product of atoms with positive exponents, sorted by atom.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Monomial(Vec<(Atom, u32)>);

impl Monomial {
    fn one() -> Monomial {
        Monomial(Vec::new())
    }

    fn is_one(&self) -> bool {
        self.0.is_empty()
    }

    /// The atoms and their exponents, in canonical order.
    pub fn factors(&self) -> impl Iterator<Item = (&Atom, u32)> {
        self.0.iter().map(|(a, e)| (a, *e))
    }

    /// Total degree.
    pub fn degree(&self) -> u64 {
        self.0.iter().map(|(_, e)| u64::from(*e)).sum()
    }

    fn single(&self) -> Option<&Atom> {
        match self.0.as_slice() {
            [(a, 1)] => Some(a),
            _ => None,
        }
    }

    fn exponent_of(&self, a: &Atom) -> u32 {
        self.0.iter().find(|(b, _)| b == a).map(|(_, e)| *e).unwrap_or(0)
    }

    fn mul(&self, other: &Monomial) -> Result<Monomial, NatError> {
        let mut out = Vec::with_capacity(self.0.len() + other.0.len());
        let (mut i, mut j) = (0, 0);
        while i < self.0.len() && j < other.0.len() {
            match self.0[i].0.cmp(&other.0[j].0) {
                Ordering::Less => {
                    out.push(self.0[i].clone());
                    i += 1;
                }
                Ordering::Greater => {
                    out.push(other.0[j].clone());
                    j += 1;
                }
                Ordering::Equal => {
                    let e = self.0[i].1.checked_add(other.0[j].1).ok_or(NatError::Overflow)?;
                    out.push((self.0[i].0.clone(), e));
                    i += 1;
                    j += 1;
                }
            }
        }
        out.extend_from_slice(&self.0[i..]);
        out.extend_from_slice(&other.0[j..]);
        Ok(Monomial(out))
    }

    /// `self / other` if `other` divides `self`.
    fn div(&self, other: &Monomial) -> Option<Monomial> {
        let mut out = Vec::new();
        let mut j = 0;
        for (a, e) in &self.0 {
            if j < other.0.len() && other.0[j].0 == *a {
                let f = other.0[j].1;
                if f > *e {
                    return None;
                }
                if f < *e {
                    out.push((a.clone(), e - f));
                }
                j += 1;
            } else {
                if j < other.0.len() && other.0[j].0 < *a {
                    return None;
                }
                out.push((a.clone(), *e));
            }
        }
        if j < other.0.len() {
            return None;
        }
        Some(Monomial(out))
    }

    fn pow(&self, e: u32) -> Result<Monomial, NatError> {
        self.0
            .iter()
            .map(|(a, f)| Ok((a.clone(), f.checked_mul(e).ok_or(NatError::Overflow)?)))
            .collect::<Result<Vec<_>, _>>()
            .map(Monomial)
    }

    fn contains_atom(&self, a: &Atom) -> bool {
        self.0.iter().any(|(b, _)| b.contains(a))
    }
}

impl Ord for Monomial {
    /// Graded lexicographic order: total degree first, then exponents atom by atom.
    fn cmp(&self, other: &Self) -> Ordering {
        self.degree().cmp(&other.degree()).then_with(|| {
            let (mut i, mut j) = (0, 0);
            while i < self.0.len() && j < other.0.len() {
                match self.0[i].0.cmp(&other.0[j].0) {
                    Ordering::Less => return Ordering::Greater,
                    Ordering::Greater => return Ordering::Less,
                    Ordering::Equal => match self.0[i].1.cmp(&other.0[j].1) {
                        Ordering::Equal => {
                            i += 1;
                            j += 1;
                        }
                        o => return o,
                    },
                }
            }
            (self.0.len() - i).cmp(&(other.0.len() - j))
        })
    }
}

impl PartialOrd for Monomial {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A normalised natural-number expression: see the module documentation.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Nat {
    /// Sorted by descending monomial; no zero coefficients.
    terms: Vec<(Monomial, i128)>,
}

fn gcd(a: i128, b: i128) -> i128 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    // Only `i128::MIN` itself has no positive counterpart; 1 means "no common factor".
    i128::try_from(a).unwrap_or(1)
}

fn add_into(map: &mut BTreeMap<Monomial, i128>, m: Monomial, c: i128) -> Result<(), NatError> {
    let slot = map.entry(m).or_insert(0);
    *slot = slot.checked_add(c).ok_or(NatError::Overflow)?;
    Ok(())
}

impl Nat {
    fn from_map(map: BTreeMap<Monomial, i128>) -> Result<Nat, NatError> {
        let terms: Vec<_> = map.into_iter().rev().filter(|(_, c)| *c != 0).collect();
        if terms.len() > MAX_TERMS {
            return Err(NatError::TooLarge);
        }
        Ok(Nat { terms })
    }

    /// The constant 0.
    pub fn zero() -> Nat {
        Nat { terms: Vec::new() }
    }

    /// A literal.
    pub fn lit(v: u64) -> Nat {
        Nat::constant(i128::from(v))
    }

    fn constant(c: i128) -> Nat {
        if c == 0 {
            Nat::zero()
        } else {
            Nat { terms: vec![(Monomial::one(), c)] }
        }
    }

    /// A nat variable.
    pub fn var(name: &str) -> Nat {
        Nat::from_atom(Atom::Var(Rc::from(name)))
    }

    /// An uninterpreted call `name(args..)`.
    pub fn call(name: &str, args: Vec<Nat>) -> Nat {
        Nat::from_atom(Atom::Call(Rc::from(name), args.into()))
    }

    /// The atom alone, as a polynomial.
    pub fn from_atom(a: Atom) -> Nat {
        Nat { terms: vec![(Monomial(vec![(a, 1)]), 1)] }
    }

    fn from_mono(m: Monomial, c: i128) -> Nat {
        if c == 0 {
            Nat::zero()
        } else {
            Nat { terms: vec![(m, c)] }
        }
    }

    /// The value if this is a constant (possibly negative, as an intermediate difference).
    pub fn as_const(&self) -> Option<i128> {
        match self.terms.as_slice() {
            [] => Some(0),
            [(m, c)] if m.is_one() => Some(*c),
            _ => None,
        }
    }

    /// The variable name if this is exactly one variable.
    pub fn as_var(&self) -> Option<&str> {
        match self.as_atom() {
            Some(Atom::Var(v)) => Some(v),
            _ => None,
        }
    }

    /// The atom if this is exactly one atom with coefficient 1.
    pub fn as_atom(&self) -> Option<&Atom> {
        match self.terms.as_slice() {
            [(m, 1)] => m.single(),
            _ => None,
        }
    }

    /// Whether this is the constant 0.
    pub fn is_zero(&self) -> bool {
        self.terms.is_empty()
    }

    /// The terms: monomials with their non-zero coefficients, highest degree first.
    pub fn terms(&self) -> impl Iterator<Item = (&Monomial, i128)> {
        self.terms.iter().map(|(m, c)| (m, *c))
    }

    /// The variables occurring anywhere, including inside opaque terms.
    pub fn vars(&self) -> BTreeSet<Rc<str>> {
        let mut out = BTreeSet::new();
        self.collect_vars(&mut out);
        out
    }

    fn collect_vars(&self, out: &mut BTreeSet<Rc<str>>) {
        for (m, _) in &self.terms {
            for (a, _) in &m.0 {
                a.collect_vars(out);
            }
        }
    }

    /// Whether variable `name` occurs anywhere.
    pub fn mentions(&self, name: &str) -> bool {
        self.terms.iter().any(|(m, _)| m.0.iter().any(|(a, _)| a.mentions(name)))
    }

    fn contains_atom(&self, a: &Atom) -> bool {
        self.terms.iter().any(|(m, _)| m.contains_atom(a))
    }

    fn all_nonneg(&self) -> bool {
        self.terms.iter().all(|(_, c)| *c >= 0)
    }

    /// Whether every coefficient of `self - other` is non-negative (without building it).
    fn dominates(&self, other: &Nat) -> bool {
        let (a, b) = (&self.terms, &other.terms);
        let (mut i, mut j) = (0, 0);
        while i < a.len() || j < b.len() {
            let ord = match (a.get(i), b.get(j)) {
                (Some(x), Some(y)) => x.0.cmp(&y.0),
                (Some(_), None) => Ordering::Greater,
                _ => Ordering::Less,
            };
            match ord {
                Ordering::Greater => {
                    if a[i].1 < 0 {
                        return false;
                    }
                    i += 1;
                }
                Ordering::Less => {
                    if b[j].1 > 0 {
                        return false;
                    }
                    j += 1;
                }
                Ordering::Equal => {
                    if a[i].1 < b[j].1 {
                        return false;
                    }
                    i += 1;
                    j += 1;
                }
            }
        }
        true
    }

    fn constant_term(&self) -> i128 {
        match self.terms.last() {
            Some((m, c)) if m.is_one() => *c,
            _ => 0,
        }
    }

    /// `self + other`.
    pub fn add(&self, other: &Nat) -> Result<Nat, NatError> {
        // Both term lists are sorted (descending): merge them.
        let (a, b) = (&self.terms, &other.terms);
        let mut terms = Vec::with_capacity(a.len() + b.len());
        let (mut i, mut j) = (0, 0);
        while i < a.len() && j < b.len() {
            match a[i].0.cmp(&b[j].0) {
                Ordering::Greater => {
                    terms.push(a[i].clone());
                    i += 1;
                }
                Ordering::Less => {
                    terms.push(b[j].clone());
                    j += 1;
                }
                Ordering::Equal => {
                    let c = a[i].1.checked_add(b[j].1).ok_or(NatError::Overflow)?;
                    if c != 0 {
                        terms.push((a[i].0.clone(), c));
                    }
                    i += 1;
                    j += 1;
                }
            }
        }
        terms.extend_from_slice(&a[i..]);
        terms.extend_from_slice(&b[j..]);
        if terms.len() > MAX_TERMS {
            return Err(NatError::TooLarge);
        }
        Ok(Nat { terms })
    }

    /// `self - other` (an integer polynomial; it may be negative for some assignments).
    pub fn sub(&self, other: &Nat) -> Result<Nat, NatError> {
        self.add(&other.neg()?)
    }

    fn neg(&self) -> Result<Nat, NatError> {
        self.scale(-1)
    }

    fn scale(&self, k: i128) -> Result<Nat, NatError> {
        if k == 0 {
            return Ok(Nat::zero());
        }
        let terms = self
            .terms
            .iter()
            .map(|(m, c)| Ok((m.clone(), c.checked_mul(k).ok_or(NatError::Overflow)?)))
            .collect::<Result<Vec<_>, NatError>>()?;
        let mut n = Nat { terms };
        if k < 0 {
            // Order depends on monomials only, so it is unchanged.
            n.terms.retain(|(_, c)| *c != 0);
        }
        Ok(n)
    }

    fn add_const(&self, k: i128) -> Result<Nat, NatError> {
        self.add(&Nat::constant(k))
    }

    /// `self * other`.
    pub fn mul(&self, other: &Nat) -> Result<Nat, NatError> {
        let mut map: BTreeMap<Monomial, i128> = BTreeMap::new();
        for (m1, c1) in &self.terms {
            for (m2, c2) in &other.terms {
                let c = c1.checked_mul(*c2).ok_or(NatError::Overflow)?;
                add_into(&mut map, m1.mul(m2)?, c)?;
                if map.len() > 4 * MAX_TERMS {
                    return Err(NatError::TooLarge);
                }
            }
        }
        Nat::from_map(map)
    }

    /// Floor division `self / divisor`.
    pub fn div(&self, divisor: &Nat) -> Result<Nat, NatError> {
        match divisor.as_const() {
            Some(0) => Err(NatError::DivisionByZero),
            Some(k) if k < 0 => Err(NatError::Negative),
            Some(k) => self.div_const(k),
            None => {
                if let Some(c) = self.as_const() {
                    if c < 0 {
                        return Err(NatError::Negative);
                    }
                    if c == 0 {
                        return Ok(Nat::zero());
                    }
                }
                if let Some(q) = self.exact_div(divisor) {
                    return Ok(q);
                }
                // floor(g*a / (g*b)) = floor(a / b): cancel a common constant factor, so that
                // 16 / (2 * 2^k) and 8 / 2^k are the same atom.
                let g = self.terms.iter().chain(&divisor.terms).fold(0, |g, (_, c)| gcd(g, *c));
                if g > 1 {
                    return self.exact_scale_down(g).div(&divisor.exact_scale_down(g));
                }
                if let Some(Atom::Div(x, a)) = self.as_atom() {
                    return x.div(&a.mul(divisor)?);
                }
                Ok(Nat::from_atom(Atom::Div(Rc::new(self.clone()), Rc::new(divisor.clone()))))
            }
        }
    }

    fn div_const(&self, k: i128) -> Result<Nat, NatError> {
        if k == 1 {
            return Ok(self.clone());
        }
        if let Some(c) = self.as_const() {
            if c < 0 {
                return Err(NatError::Negative);
            }
            return Ok(Nat::constant(c / k));
        }
        let mut q = Vec::new();
        let mut r = Vec::new();
        for (m, c) in &self.terms {
            let (qc, rc) = (c.div_euclid(k), c.rem_euclid(k));
            if qc != 0 {
                q.push((m.clone(), qc));
            }
            if rc != 0 {
                r.push((m.clone(), rc));
            }
        }
        let q = Nat { terms: q };
        let r = Nat { terms: r };
        if r.as_const().is_some() {
            // 0 <= r < k
            return Ok(q);
        }
        let g = r.terms.iter().fold(k, |g, (_, c)| gcd(g, *c));
        let r = r.exact_scale_down(g);
        let k = k / g;
        let part = match r.as_atom() {
            Some(Atom::Div(x, j)) if Atom::const_divisor(j).is_some() => {
                let j = Atom::const_divisor(j).unwrap_or(1);
                x.div_const(j.checked_mul(k).ok_or(NatError::Overflow)?)?
            }
            Some(Atom::Rem(_, j)) if Atom::const_divisor(j).is_some_and(|j| j <= k) => Nat::zero(),
            _ => Nat::from_atom(Atom::Div(Rc::new(r), Rc::new(Nat::constant(k)))),
        };
        q.add(&part)
    }

    /// Divides every coefficient by `g`, which must divide all of them.
    fn exact_scale_down(&self, g: i128) -> Nat {
        if g == 1 {
            return self.clone();
        }
        Nat { terms: self.terms.iter().map(|(m, c)| (m.clone(), c / g)).collect() }
    }

    /// Coefficients reduced into `[0, k)` (the same value modulo `k`).
    fn reduce_mod(&self, k: i128) -> Nat {
        Nat { terms: self.terms.iter().map(|(m, c)| (m.clone(), c.rem_euclid(k))).filter(|(_, c)| *c != 0).collect() }
    }

    /// Remainder `self % divisor`.
    pub fn rem(&self, divisor: &Nat) -> Result<Nat, NatError> {
        match divisor.as_const() {
            Some(0) => Err(NatError::DivisionByZero),
            Some(k) if k < 0 => Err(NatError::Negative),
            Some(k) => self.rem_const(k),
            None => {
                if let Some(c) = self.as_const() {
                    if c < 0 {
                        return Err(NatError::Negative);
                    }
                    if c == 0 {
                        return Ok(Nat::zero());
                    }
                }
                if self.exact_div(divisor).is_some() {
                    return Ok(Nat::zero());
                }
                // (g*a) % (g*b) = g*(a % b)
                let g = self.terms.iter().chain(&divisor.terms).fold(0, |g, (_, c)| gcd(g, *c));
                if g > 1 {
                    return self.exact_scale_down(g).rem(&divisor.exact_scale_down(g))?.scale(g);
                }
                if let Some(Atom::Rem(_, d)) = self.as_atom() {
                    if **d == *divisor {
                        return Ok(self.clone());
                    }
                }
                Ok(Nat::from_atom(Atom::Rem(Rc::new(self.clone()), Rc::new(divisor.clone()))))
            }
        }
    }

    fn rem_const(&self, k: i128) -> Result<Nat, NatError> {
        if let Some(c) = self.as_const() {
            if c < 0 {
                return Err(NatError::Negative);
            }
            return Ok(Nat::constant(c % k));
        }
        let r = self.reduce_mod(k);
        if r.as_const().is_some() {
            return Ok(r);
        }
        let g = r.terms.iter().fold(k, |g, (_, c)| gcd(g, *c));
        let r = r.exact_scale_down(g);
        let k = k / g;
        let inner = match r.as_atom() {
            Some(Atom::Rem(x, j)) => match Atom::const_divisor(j) {
                Some(j) if j <= k => r.clone(),
                Some(j) if j % k == 0 => x.rem_const(k)?,
                _ => Nat::from_atom(Atom::Rem(Rc::new(r), Rc::new(Nat::constant(k)))),
            },
            _ => Nat::from_atom(Atom::Rem(Rc::new(r), Rc::new(Nat::constant(k)))),
        };
        inner.scale(g)
    }

    /// `self ^ exponent`.
    pub fn pow(&self, exponent: &Nat) -> Result<Nat, NatError> {
        if let Some(e) = exponent.as_const() {
            if e < 0 {
                return Err(NatError::Negative);
            }
            return self.pow_u32(u32::try_from(e).map_err(|_| NatError::Overflow)?);
        }
        match self.as_const() {
            Some(c) if c < 0 => return Err(NatError::Negative),
            Some(1) => return Ok(Nat::lit(1)),
            _ => {}
        }
        let (base, exponent) = match self.as_atom() {
            Some(Atom::Pow(b, e)) => (Nat::clone(b), e.mul(exponent)?),
            _ => (self.clone(), exponent.clone()),
        };
        if !exponent.all_nonneg() {
            // Splitting could create a negative exponent.
            return Ok(Nat::from_atom(Atom::Pow(Rc::new(base), Rc::new(exponent))));
        }
        // b^(c0 + c1*m1 + ..) = b^c0 * (b^m1)^c1 * ..
        let mut out = Nat::lit(1);
        for (m, c) in &exponent.terms {
            let c = u32::try_from(*c).map_err(|_| NatError::Overflow)?;
            let factor = if m.is_one() {
                base.clone()
            } else {
                Nat::from_atom(Atom::Pow(Rc::new(base.clone()), Rc::new(Nat::from_mono(m.clone(), 1))))
            };
            out = out.mul(&factor.pow_u32(c)?)?;
        }
        Ok(out)
    }

    fn pow_u32(&self, e: u32) -> Result<Nat, NatError> {
        if e == 0 {
            return Ok(Nat::lit(1));
        }
        if let [(m, c)] = self.terms.as_slice() {
            let c = c.checked_pow(e).ok_or(NatError::Overflow)?;
            return Ok(Nat::from_mono(m.pow(e)?, c));
        }
        if self.is_zero() {
            return Ok(Nat::zero());
        }
        let mut result = Nat::lit(1);
        let mut base = self.clone();
        let mut e = e;
        loop {
            if e & 1 == 1 {
                result = result.mul(&base)?;
            }
            e >>= 1;
            if e == 0 {
                return Ok(result);
            }
            base = base.mul(&base)?;
        }
    }

    /// The exact polynomial quotient `self / divisor`, if there is one with integer
    /// coefficients.
    fn exact_div(&self, divisor: &Nat) -> Option<Nat> {
        let (lead_m, lead_c) = divisor.terms.first()?;
        let mut rest = self.clone();
        let mut quotient = Nat::zero();
        for _ in 0..=(4 * MAX_TERMS) {
            let Some((m, c)) = rest.terms.first() else {
                return Some(quotient);
            };
            if c.checked_rem(*lead_c)? != 0 {
                return None;
            }
            let qm = m.div(lead_m)?;
            let t = Nat::from_mono(qm, c.checked_div(*lead_c)?);
            quotient = quotient.add(&t).ok()?;
            rest = rest.sub(&t.mul(divisor).ok()?).ok()?;
        }
        None
    }

    /// Replaces atoms for which `f` answers, at every depth, re-normalising.
    fn map_atoms(&self, f: &mut dyn FnMut(&Atom) -> Option<Nat>) -> Result<Nat, NatError> {
        let mut total = Nat::zero();
        for (m, c) in &self.terms {
            let mut term = Nat::constant(*c);
            for (a, e) in &m.0 {
                let base = match f(a) {
                    Some(n) => n,
                    None => a.rebuild(f)?,
                };
                term = term.mul(&base.pow_u32(*e)?)?;
            }
            total = total.add(&term)?;
        }
        Ok(total)
    }

    /// Replaces atoms at the top level only (not inside other atoms' arguments).
    fn map_top_atoms(&self, f: &mut dyn FnMut(&Atom) -> Option<Nat>) -> Result<Nat, NatError> {
        let mut total = Nat::zero();
        for (m, c) in &self.terms {
            let mut term = Nat::constant(*c);
            for (a, e) in &m.0 {
                let base = f(a).unwrap_or_else(|| Nat::from_atom(a.clone()));
                term = term.mul(&base.pow_u32(*e)?)?;
            }
            total = total.add(&term)?;
        }
        Ok(total)
    }

    /// Substitutes `value` for the variable `name` everywhere and re-normalises.
    pub fn subst(&self, name: &str, value: &Nat) -> Result<Nat, NatError> {
        if !self.mentions(name) {
            return Ok(self.clone());
        }
        self.map_atoms(&mut |a| match a {
            Atom::Var(v) if &**v == name => Some(value.clone()),
            _ => None,
        })
    }

    /// Substitutes every variable `value_of` answers for at once (simultaneously: a value that
    /// mentions another substituted name is not substituted again) and re-normalises: one pass
    /// over the terms however many variables are replaced.
    pub fn subst_all(&self, value_of: &dyn Fn(&str) -> Option<Nat>) -> Result<Nat, NatError> {
        let changes = self.vars().iter().any(|v| value_of(v).is_some_and(|n| n != Nat::var(v)));
        if !changes {
            return Ok(self.clone());
        }
        self.map_atoms(&mut |a| match a {
            Atom::Var(v) => value_of(v),
            _ => None,
        })
    }

    /// Evaluates with natural-number semantics: every variable must be bound, every
    /// divisor non-zero, the value of the whole expression and of every argument of an
    /// opaque term must be a natural number; the result must fit `u64`.
    pub fn eval(&self, env: &dyn Fn(&str) -> Option<u64>) -> Result<u64, NatError> {
        u64::try_from(self.eval_nat(env)?).map_err(|_| NatError::Overflow)
    }

    /// The value as a natural number; intermediate values only need to fit `i128` (the
    /// terms of a normal form can exceed the values of the expression it came from, so an
    /// extreme input may give `Overflow` where the unnormalised expression would not).
    fn eval_nat(&self, env: &dyn Fn(&str) -> Option<u64>) -> Result<i128, NatError> {
        let mut total: i128 = 0;
        for (m, c) in &self.terms {
            let values = m.0.iter().map(|(a, _)| a.eval(env)).collect::<Result<Vec<_>, _>>()?;
            if values.contains(&0) {
                continue;
            }
            let mut t = *c;
            for (v, (_, e)) in values.iter().zip(&m.0) {
                let v = v.checked_pow(*e).ok_or(NatError::Overflow)?;
                t = t.checked_mul(v).ok_or(NatError::Overflow)?;
            }
            total = total.checked_add(t).ok_or(NatError::Overflow)?;
        }
        if total < 0 {
            return Err(NatError::Negative);
        }
        Ok(total)
    }

    /// Integer tightening of `self >= 0`: divides the non-constant part by the gcd `g` of
    /// its coefficients and rounds the constant down. Equivalent for integer values.
    fn tighten(&self) -> Nat {
        let c0 = self.constant_term();
        let g = self.terms.iter().filter(|(m, _)| !m.is_one()).fold(0, |g, (_, c)| gcd(g, *c));
        if g <= 1 {
            return self.clone();
        }
        let mut terms: Vec<_> =
            self.terms.iter().filter(|(m, _)| !m.is_one()).map(|(m, c)| (m.clone(), c / g)).collect();
        let c = c0.div_euclid(g);
        if c != 0 {
            terms.push((Monomial::one(), c));
        }
        Nat { terms }
    }
}

// ---------------------------------------------------------------------------------------
// Display

fn is_nonneg_const(n: &Nat) -> bool {
    n.as_const().is_some_and(|c| c >= 0)
}

/// Needs no parentheses as a power base or exponent, or as a divisor.
fn is_primary(n: &Nat) -> bool {
    is_nonneg_const(n) || matches!(n.as_atom(), Some(Atom::Var(_) | Atom::Call(..)))
}

fn write_operand(f: &mut fmt::Formatter<'_>, n: &Nat, bare: bool) -> fmt::Result {
    if bare {
        write!(f, "{n}")
    } else {
        write!(f, "({n})")
    }
}

impl fmt::Display for Atom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Atom::Var(v) => write!(f, "{v}"),
            Atom::Div(a, b) | Atom::Rem(a, b) => {
                let op = if matches!(self, Atom::Div(..)) { "/" } else { "%" };
                write_operand(f, a, is_nonneg_const(a) || a.as_atom().is_some())?;
                write!(f, "{op}")?;
                let bare = is_primary(b) || matches!(b.as_atom(), Some(Atom::Pow(..)));
                write_operand(f, b, bare)
            }
            Atom::Pow(a, b) => {
                write_operand(f, a, is_primary(a))?;
                write!(f, "^")?;
                write_operand(f, b, is_primary(b))
            }
            Atom::Call(name, args) => {
                write!(f, "{name}(")?;
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{a}")?;
                }
                write!(f, ")")
            }
        }
    }
}

fn write_monomial(f: &mut fmt::Formatter<'_>, m: &Monomial, in_product: bool) -> fmt::Result {
    for (i, (a, e)) in m.0.iter().enumerate() {
        if i > 0 {
            write!(f, "*")?;
        }
        let paren = if *e > 1 {
            !matches!(a, Atom::Var(_) | Atom::Call(..))
        } else {
            in_product && matches!(a, Atom::Div(..) | Atom::Rem(..))
        };
        if paren {
            write!(f, "({a})")?;
        } else {
            write!(f, "{a}")?;
        }
        if *e > 1 {
            write!(f, "^{e}")?;
        }
    }
    Ok(())
}

impl fmt::Display for Nat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.terms.is_empty() {
            return write!(f, "0");
        }
        for (i, (m, c)) in self.terms.iter().enumerate() {
            let abs = c.unsigned_abs();
            match (i, *c < 0) {
                (0, true) => write!(f, "-")?,
                (0, false) => {}
                (_, true) => write!(f, " - ")?,
                (_, false) => write!(f, " + ")?,
            }
            if m.is_one() {
                write!(f, "{abs}")?;
                continue;
            }
            if abs != 1 {
                write!(f, "{abs}*")?;
            }
            write_monomial(f, m, abs != 1 || m.single().is_none())?;
        }
        Ok(())
    }
}

impl fmt::Display for Monomial {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_one() {
            return write!(f, "1");
        }
        write_monomial(f, self, self.single().is_none())
    }
}

// ---------------------------------------------------------------------------------------
// Facts and decisions

#[derive(Clone, Debug)]
enum Fact {
    Eq(Nat, Nat),
    /// `lhs - rhs >= slack` (`<=`: 0, `<`: 1), remembered as written for display.
    Le {
        lhs: Nat,
        rhs: Nat,
        strict: bool,
        flipped: bool,
    },
    Divides(Nat, Nat),
}

/// A bound `scale * x <= value` (upper) or `scale * x >= value` (lower) on an atom `x`.
#[derive(Clone, Debug)]
struct Bound {
    upper: bool,
    scale: i128,
    value: Nat,
}

/// Prepared facts: see the module documentation.
#[derive(Clone, Debug, Default)]
struct Prepared {
    /// Applied in order: later right-hand sides never mention earlier variables, earlier
    /// ones may mention later variables.
    subst: Vec<(Rc<str>, Nat)>,
    /// Each `f >= 0`, substituted and tightened.
    ineqs: Vec<Nat>,
    /// `k | e`, substituted and reduced.
    divs: Vec<(i128, Nat)>,
    /// `a | b` for symbolic `a`.
    sym_divs: Vec<(Nat, Nat)>,
    bounds: BTreeMap<Atom, Vec<Bound>>,
    fresh: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Le,
    Eq,
    Divides,
}

/// A variable in `e` occurring only as one linear term whose coefficient satisfies `ok`.
fn solvable_var(e: &Nat, ok: impl Fn(i128) -> bool) -> Option<(Rc<str>, i128)> {
    for (i, (m, c)) in e.terms.iter().enumerate() {
        if let Some(Atom::Var(v)) = m.single() {
            if ok(*c)
                && e.terms.iter().enumerate().all(|(j, (m2, _))| j == i || !m2.0.iter().any(|(a, _)| a.mentions(v)))
            {
                return Some((v.clone(), *c));
            }
        }
    }
    None
}

impl Prepared {
    fn build(raw: &[Fact]) -> Prepared {
        let mut p = Prepared::default();
        for f in raw {
            // A fact that cannot be prepared (overflow) is dropped: fewer assumptions
            // can only make answers less precise, never unsound.
            let _ = p.add(f);
        }
        p.compute_bounds();
        p
    }

    fn apply(&self, n: &Nat) -> Result<Nat, NatError> {
        let mut n = n.clone();
        for (v, val) in &self.subst {
            n = n.subst(v, val)?;
        }
        Ok(n)
    }

    fn add(&mut self, f: &Fact) -> Result<(), NatError> {
        match f {
            Fact::Eq(l, r) => {
                let e = self.apply(&l.sub(r)?)?;
                self.add_eq(e)
            }
            Fact::Le { lhs, rhs, strict, .. } => {
                let e = self.apply(&rhs.sub(lhs)?.add_const(-i128::from(*strict))?)?;
                self.push_ineq(e);
                Ok(())
            }
            Fact::Divides(k, x) => {
                let k = self.apply(k)?;
                let x = self.apply(x)?;
                match k.as_const() {
                    Some(0) => self.add_eq(x),
                    Some(k) if k > 0 => self.add_div(k, x),
                    Some(_) => Ok(()),
                    None => {
                        // a | v + rest (rest >= 0, a without v): v := a*q - rest, q fresh.
                        if let Some((v, _)) = solvable_var(&x, |c| c == 1) {
                            let rest = x.sub(&Nat::var(&v))?;
                            if rest.all_nonneg() && !k.mentions(&v) {
                                self.fresh += 1;
                                let q = Nat::var(&format!("?{}{}", v, self.fresh));
                                let val = k.mul(&q)?.sub(&rest)?;
                                return self.add_subst(v, val);
                            }
                        }
                        self.sym_divs.push((k, x));
                        Ok(())
                    }
                }
            }
        }
    }

    fn add_eq(&mut self, e: Nat) -> Result<(), NatError> {
        if e.as_const().is_some() {
            // 0 == 0 says nothing; a contradiction is ignored.
            return Ok(());
        }
        // e == 0 iff e/g == 0 for the gcd g of all coefficients.
        let g = e.terms.iter().fold(0, |g, (_, c)| gcd(g, *c));
        let e = if g > 1 { e.exact_scale_down(g) } else { e };
        if let [(m, _)] = e.terms.as_slice() {
            if let Some(Atom::Rem(x, k)) = m.single() {
                if let Some(k) = Atom::const_divisor(k) {
                    return self.add_div(k, Nat::clone(x));
                }
            }
        }
        if let Some((v, c)) = solvable_var(&e, |c| c == 1 || c == -1) {
            let rest = e.sub(&Nat::var(&v).scale(c)?)?;
            let val = if c == 1 { rest.neg()? } else { rest };
            return self.add_subst(v, val);
        }
        self.push_ineq(e.clone());
        self.push_ineq(e.neg()?);
        Ok(())
    }

    fn add_div(&mut self, k: i128, x: Nat) -> Result<(), NatError> {
        let r = x.reduce_mod(k);
        if r.is_zero() {
            return Ok(());
        }
        let g = r.terms.iter().fold(k, |g, (_, c)| gcd(g, *c));
        let r = r.exact_scale_down(g);
        let k = k / g;
        if k == 1 || r.as_const().is_some() {
            return Ok(());
        }
        for cand in [r.clone(), r.neg()?.reduce_mod(k)] {
            if let Some((v, _)) = solvable_var(&cand, |c| c == 1) {
                let rest = cand.sub(&Nat::var(&v))?;
                self.fresh += 1;
                let q = Nat::var(&format!("?{}{}", v, self.fresh));
                let val = q.scale(k)?.sub(&rest)?;
                return self.add_subst(v, val);
            }
        }
        self.divs.push((k, r));
        Ok(())
    }

    fn add_subst(&mut self, v: Rc<str>, val: Nat) -> Result<(), NatError> {
        let ineqs = std::mem::take(&mut self.ineqs);
        for f in ineqs {
            if let Ok(f) = f.subst(&v, &val) {
                self.push_ineq(f);
            }
        }
        let divs = std::mem::take(&mut self.divs);
        for (k, e) in divs {
            if let Ok(e) = e.subst(&v, &val) {
                let e = e.reduce_mod(k);
                if !e.is_zero() {
                    self.divs.push((k, e));
                }
            }
        }
        let sym = std::mem::take(&mut self.sym_divs);
        for (a, b) in sym {
            if let (Ok(a), Ok(b)) = (a.subst(&v, &val), b.subst(&v, &val)) {
                self.sym_divs.push((a, b));
            }
        }
        self.subst.push((v, val.clone()));
        // What `v >= 0` said.
        self.push_ineq(val);
        Ok(())
    }

    fn push_ineq(&mut self, e: Nat) {
        let e = e.tighten();
        if e.all_nonneg() || e.as_const().is_some() || self.ineqs.contains(&e) {
            return;
        }
        self.ineqs.push(e);
    }

    fn compute_bounds(&mut self) {
        let mut bounds: BTreeMap<Atom, Vec<Bound>> = BTreeMap::new();
        for f in &self.ineqs {
            for (i, (m, c)) in f.terms.iter().enumerate() {
                let Some(x) = m.single() else { continue };
                let alone = f.terms.iter().enumerate().all(|(j, (m2, _))| j == i || !m2.contains_atom(x));
                if !alone {
                    continue;
                }
                let rest = Nat {
                    terms: f.terms.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, t)| t.clone()).collect(),
                };
                let bound = if *c > 0 {
                    match rest.neg() {
                        Ok(value) => Bound { upper: false, scale: *c, value },
                        Err(_) => continue,
                    }
                } else {
                    match c.checked_neg() {
                        Some(scale) => Bound { upper: true, scale, value: rest },
                        None => continue,
                    }
                };
                bounds.entry(x.clone()).or_default().push(bound);
            }
        }
        self.bounds = bounds;
    }

    /// A constant interval `[lo, hi]` (`hi` `None`: unbounded above) holding every value of
    /// `n` under the facts, by interval arithmetic over the constant bounds of its atoms. Every
    /// atom is at least 0; a variable's stated bounds whose value is itself bounded count
    /// (`k < n, n <= 8` bounds `k` by 7), as do the exponent of `b^e` (`k <= 7` bounds `2^k`
    /// by 128) and the operands of `/` and `%`. The recursion is cut at `depth`, so cyclic
    /// bounds end; `lo` is `None` only when it cannot be represented.
    fn range(&self, n: &Nat, depth: u32) -> (Option<i128>, Option<i128>) {
        let (mut lo, mut hi) = (Some(0i128), Some(0i128));
        for (m, c) in &n.terms {
            let (mlo, mhi) = self.mono_range(m, depth);
            let (tlo, thi) = if *c > 0 {
                (c.checked_mul(mlo), mhi.and_then(|h| c.checked_mul(h)))
            } else {
                (mhi.and_then(|h| c.checked_mul(h)), c.checked_mul(mlo))
            };
            lo = lo.zip(tlo).and_then(|(a, b)| a.checked_add(b));
            hi = hi.zip(thi).and_then(|(a, b)| a.checked_add(b));
        }
        (lo, hi)
    }

    fn mono_range(&self, m: &Monomial, depth: u32) -> (i128, Option<i128>) {
        let (mut lo, mut hi) = (1i128, Some(1i128));
        for (a, e) in &m.0 {
            let (alo, ahi) = self.atom_range(a, depth);
            // A lower bound that does not fit is replaced by 0, which every monomial satisfies.
            lo = alo.checked_pow(*e).and_then(|x| lo.checked_mul(x)).unwrap_or(0);
            hi = hi.zip(ahi.and_then(|h| h.checked_pow(*e))).and_then(|(a, b)| a.checked_mul(b));
        }
        (lo, hi)
    }

    fn atom_range(&self, x: &Atom, depth: u32) -> (i128, Option<i128>) {
        let (mut lo, mut hi) = (0i128, None::<i128>);
        let mut tighten = |l: Option<i128>, h: Option<i128>| {
            if let Some(l) = l {
                lo = lo.max(l);
            }
            if let Some(h) = h {
                hi = Some(hi.map_or(h, |x| x.min(h)));
            }
        };
        for b in self.bounds.get(x).into_iter().flatten() {
            let value = match b.value.as_const() {
                Some(v) => (Some(v), Some(v)),
                None if depth > 0 => self.range(&b.value, depth - 1),
                None => continue,
            };
            // scale > 0: `scale*x <= hi(value)` or `scale*x >= lo(value)`.
            if b.upper {
                tighten(None, value.1.map(|v| v.div_euclid(b.scale)));
            } else {
                tighten(value.0.map(|v| -((-v).div_euclid(b.scale))), None);
            }
        }
        if depth == 0 {
            return (lo, hi);
        }
        match x {
            Atom::Pow(base, e) => {
                if let Some(b) = base.as_const().filter(|b| *b >= 1) {
                    let (elo, ehi) = self.range(e, depth - 1);
                    let pow = |e: i128| u32::try_from(e.max(0)).ok().and_then(|e| b.checked_pow(e));
                    tighten(elo.and_then(pow), ehi.and_then(pow));
                }
            }
            Atom::Div(a, d) => {
                let (alo, ahi) = self.range(a, depth - 1);
                let (dlo, dhi) = self.range(d, depth - 1);
                // Sizes are defined: the divisor is at least 1.
                let dlo = dlo.unwrap_or(1).max(1);
                tighten(alo.zip(dhi).map(|(a, d)| a.max(0) / d.max(1)), ahi.map(|a| a / dlo));
            }
            Atom::Rem(a, d) => {
                let ahi = self.range(a, depth - 1).1;
                let dhi = self.range(d, depth - 1).1;
                tighten(None, ahi);
                tighten(None, dhi.map(|d| d - 1));
            }
            Atom::Var(_) | Atom::Call(..) => {}
        }
        (lo, hi)
    }

    /// Constant bounds of an opaque atom from [`Prepared::range`] (`2^k <= 128` when `k < 8`),
    /// for the search; variables' own bounds are stated ones.
    fn range_bounds(&self, x: &Atom) -> Vec<Bound> {
        if matches!(x, Atom::Var(_) | Atom::Call(..)) {
            return Vec::new();
        }
        let (lo, hi) = self.atom_range(x, RANGE_DEPTH);
        let mut out = Vec::new();
        if lo > 0 {
            out.push(Bound { upper: false, scale: 1, value: Nat::constant(lo) });
        }
        if let Some(hi) = hi {
            out.push(Bound { upper: true, scale: 1, value: Nat::constant(hi) });
        }
        out
    }

    /// Bounds every value of the atom satisfies, whatever the facts.
    fn intrinsic_bounds(x: &Atom) -> Vec<Bound> {
        let mut out = Vec::new();
        let mut push = |upper, scale, value: Result<Nat, NatError>| {
            if let Ok(value) = value {
                out.push(Bound { upper, scale, value });
            }
        };
        match x {
            Atom::Div(a, d) => match Atom::const_divisor(d) {
                Some(k) => {
                    push(true, k, Ok(Nat::clone(a)));
                    push(false, k, a.add_const(1 - k));
                }
                None => push(true, 1, Ok(Nat::clone(a))),
            },
            Atom::Rem(a, d) => {
                match Atom::const_divisor(d) {
                    Some(k) => push(true, 1, Ok(Nat::constant(k - 1))),
                    None => push(true, 1, d.add_const(-1)),
                }
                push(true, 1, Ok(Nat::clone(a)));
            }
            Atom::Pow(b, e) => {
                if b.as_const().is_some_and(|b| b >= 2) {
                    push(false, 1, e.add_const(1));
                }
            }
            Atom::Var(_) | Atom::Call(..) => {}
        }
        out
    }

    /// `k | x` from coefficients or a stated divisibility (no search).
    fn known_divisible(&self, k: i128, x: &Nat) -> bool {
        let r = x.reduce_mod(k);
        if r.is_zero() {
            return true;
        }
        let g = r.terms.iter().fold(k, |g, (_, c)| gcd(g, *c));
        let r = r.exact_scale_down(g);
        let k = k / g;
        if k == 1 {
            return true;
        }
        self.divs.iter().any(|(kf, ef)| {
            if kf % k != 0 {
                return false;
            }
            let mut lambdas = vec![1];
            if let (Some((_, a)), Some((_, b))) = (r.terms.first(), ef.terms.first()) {
                if let (Some(0), Some(q)) = (a.checked_rem(*b), a.checked_div(*b)) {
                    lambdas.push(q);
                }
            }
            lambdas.into_iter().any(|l| ef.scale(l).and_then(|s| r.sub(&s)).is_ok_and(|d| d.reduce_mod(k).is_zero()))
        })
    }

    /// Substitutions, then divisibility rewriting.
    fn decision_form(&self, n: &Nat, mode: Mode) -> Result<Nat, NatError> {
        let n = self.apply(n)?;
        // x % k: 0 when k | x; x - k*(x/k) for equality and divisibility questions.
        let mut n = n.map_top_atoms(&mut |a| match a {
            Atom::Rem(x, d) => {
                let k = Atom::const_divisor(d)?;
                if self.known_divisible(k, x) {
                    Some(Nat::zero())
                } else if mode != Mode::Le {
                    let q = Nat::from_atom(Atom::Div(x.clone(), d.clone()));
                    q.scale(k).and_then(|q| x.sub(&q)).ok()
                } else {
                    None
                }
            }
            _ => None,
        })?;
        // c*(x/k)*rest with k | x: replace by c*x*rest, scaling the whole goal by k
        // (allowed for (in)equalities with 0), or exactly when k | c.
        let divisible: Vec<(Atom, Nat, i128)> = {
            let mut seen = BTreeSet::new();
            let mut out = Vec::new();
            for (m, _) in &n.terms {
                for (a, _) in &m.0 {
                    if let Atom::Div(x, d) = a {
                        if let Some(k) = Atom::const_divisor(d) {
                            if seen.insert(a.clone()) && self.known_divisible(k, x) {
                                out.push((a.clone(), Nat::clone(x), k));
                            }
                        }
                    }
                }
            }
            out
        };
        for (a, x, k) in divisible {
            let linear = n
                .terms
                .iter()
                .all(|(m, _)| m.exponent_of(&a) <= 1 && !m.0.iter().any(|(b, _)| b != &a && b.contains(&a)));
            if !linear {
                continue;
            }
            let exact = n.terms.iter().all(|(m, c)| m.exponent_of(&a) == 0 || c % k == 0);
            if mode == Mode::Divides && !exact {
                continue;
            }
            let mut out = Nat::zero();
            for (m, c) in &n.terms {
                let t = if m.exponent_of(&a) == 1 {
                    let rest = Monomial(m.0.iter().filter(|(b, _)| b != &a).cloned().collect());
                    let c = if exact { c / k } else { *c };
                    Nat::from_mono(rest, c).mul(&x)?
                } else if exact {
                    Nat::from_mono(m.clone(), *c)
                } else {
                    Nat::from_mono(m.clone(), c.checked_mul(k).ok_or(NatError::Overflow)?)
                };
                out = out.add(&t)?;
            }
            n = out;
        }
        Ok(n)
    }

    /// Whether `p >= 0` follows at once: a non-negative constant, all coefficients
    /// non-negative, or `p - f` so for a fact `f >= 0`.
    fn closed(&self, p: &Nat) -> bool {
        match p.as_const() {
            Some(c) => c >= 0,
            None => p.all_nonneg() || self.ineqs.iter().any(|f| p.dominates(f)),
        }
    }

    /// Searches for a proof of `p >= 0`: best-first over goals obtained by replacing one
    /// factor of one term by a bound, preferring goals with fewer negative terms; at most
    /// [`SEARCH_BUDGET`] goals are expanded, none deeper than [`SEARCH_DEPTH`] steps.
    fn prove_nonneg(&self, p: &Nat) -> bool {
        let p = p.tighten();
        if self.closed(&p) {
            return true;
        }
        if p.as_const().is_some() {
            return false;
        }
        let score = |p: &Nat| {
            let negative = p.terms.iter().filter(|(m, c)| *c < 0 && !m.is_one()).count();
            (negative, p.constant_term() < 0, p.terms.len())
        };
        let mut queue = BinaryHeap::new();
        let mut seen = HashSet::new();
        let mut seq = 0usize;
        queue.push(Reverse((score(&p), seq, 0u32, p.clone())));
        seen.insert(p);
        let mut expanded = 0;
        while let Some(Reverse((_, _, depth, goal))) = queue.pop() {
            if expanded >= SEARCH_BUDGET {
                return false;
            }
            if depth >= SEARCH_DEPTH {
                continue;
            }
            expanded += 1;
            for (m, c) in &goal.terms {
                if m.is_one() {
                    continue;
                }
                let want_upper = *c < 0;
                for (x, _) in &m.0 {
                    let stated = self.bounds.get(x).into_iter().flatten().cloned();
                    for b in stated.chain(Self::intrinsic_bounds(x)).chain(self.range_bounds(x)) {
                        // A lower bound that is never positive cannot help.
                        if b.upper != want_upper || (!b.upper && b.value.terms.iter().all(|(_, c)| *c <= 0)) {
                            continue;
                        }
                        let Ok(next) = Self::replace(&goal, m, *c, x, &b) else {
                            continue;
                        };
                        let next = next.tighten();
                        if self.closed(&next) {
                            return true;
                        }
                        if next.as_const().is_some() || !seen.insert(next.clone()) {
                            continue;
                        }
                        seq += 1;
                        queue.push(Reverse((score(&next), seq, depth + 1, next)));
                    }
                }
            }
        }
        false
    }

    /// `p` has the term `c*x*rest`; with `s*x <= B` (c < 0) or `s*x >= B` (c > 0), returns
    /// `s*p + (s - 1) - c*s*x*rest + c*B*rest`, whose non-negativity implies `p >= 0`.
    fn replace(p: &Nat, m: &Monomial, c: i128, x: &Atom, b: &Bound) -> Result<Nat, NatError> {
        let s = b.scale;
        let base = p.scale(s)?.add_const(s - 1)?;
        let rest = m.div(&Monomial(vec![(x.clone(), 1)])).ok_or(NatError::Overflow)?;
        let cs = c.checked_mul(s).ok_or(NatError::Overflow)?;
        let removed = base.sub(&Nat::from_mono(m.clone(), cs))?;
        removed.add(&Nat::from_mono(rest, c).mul(&b.value)?)
    }

    fn nonneg(&self, p: &Nat) -> Truth {
        if let Some(c) = p.as_const() {
            return if c >= 0 { Truth::Proven } else { Truth::Disproven };
        }
        if self.prove_nonneg(p) {
            return Truth::Proven;
        }
        match p.neg().and_then(|n| n.add_const(-1)) {
            Ok(n) if self.prove_nonneg(&n) => Truth::Disproven,
            _ => Truth::Unknown,
        }
    }
}

/// What a function signature states about its nat variables; answers size questions.
///
/// Every variable is a natural number (`>= 0`) without being told.
#[derive(Clone, Debug, Default)]
pub struct Facts {
    raw: Vec<Fact>,
    prepared: Prepared,
}

impl fmt::Display for Facts {
    /// The facts as stated, e.g. `n >= 1, k <= n, 32 | n` (empty when there are none).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, fact) in self.raw.iter().enumerate() {
            if i > 0 {
                write!(f, ", ")?;
            }
            match fact {
                Fact::Eq(l, r) => write!(f, "{l} == {r}")?,
                Fact::Le { lhs, rhs, strict, flipped } => {
                    let op = match (strict, flipped) {
                        (false, false) => "<=",
                        (true, false) => "<",
                        (false, true) => ">=",
                        (true, true) => ">",
                    };
                    if *flipped {
                        write!(f, "{rhs} {op} {lhs}")?;
                    } else {
                        write!(f, "{lhs} {op} {rhs}")?;
                    }
                }
                Fact::Divides(k, x) => {
                    write_operand(f, k, is_primary(k))?;
                    write!(f, " | ")?;
                    write!(f, "{x}")?;
                }
            }
        }
        Ok(())
    }
}

impl Facts {
    /// No facts beyond `x >= 0` for every variable.
    pub fn new() -> Facts {
        Facts::default()
    }

    fn push(&mut self, f: Fact) {
        self.raw.push(f);
        self.prepared = Prepared::build(&self.raw);
    }

    /// States `lhs == rhs`.
    pub fn add_eq(&mut self, lhs: &Nat, rhs: &Nat) -> Result<(), NatError> {
        lhs.sub(rhs)?;
        self.push(Fact::Eq(lhs.clone(), rhs.clone()));
        Ok(())
    }

    /// States `lhs <= rhs`.
    pub fn add_le(&mut self, lhs: &Nat, rhs: &Nat) -> Result<(), NatError> {
        self.add_cmp(lhs, rhs, false, false)
    }

    /// `lhs <= rhs` or `lhs < rhs`, written the other way round when `flipped`.
    fn add_cmp(&mut self, lhs: &Nat, rhs: &Nat, strict: bool, flipped: bool) -> Result<(), NatError> {
        rhs.sub(lhs)?.add_const(-1)?;
        self.push(Fact::Le { lhs: lhs.clone(), rhs: rhs.clone(), strict, flipped });
        Ok(())
    }

    /// States `lhs < rhs`.
    pub fn add_lt(&mut self, lhs: &Nat, rhs: &Nat) -> Result<(), NatError> {
        self.add_cmp(lhs, rhs, true, false)
    }

    /// States `lhs >= rhs` (e.g. a lower bound `n >= 1`).
    pub fn add_ge(&mut self, lhs: &Nat, rhs: &Nat) -> Result<(), NatError> {
        self.add_cmp(rhs, lhs, false, true)
    }

    /// States `lhs > rhs`.
    pub fn add_gt(&mut self, lhs: &Nat, rhs: &Nat) -> Result<(), NatError> {
        self.add_cmp(rhs, lhs, true, true)
    }

    /// States `divisor | dividend`, i.e. `dividend % divisor == 0`.
    pub fn add_divides(&mut self, divisor: &Nat, dividend: &Nat) -> Result<(), NatError> {
        self.push(Fact::Divides(divisor.clone(), dividend.clone()));
        Ok(())
    }

    /// Is `a == b`? The polynomial engine, then power-of-two forms ([`crate::pow2`]).
    pub fn equal(&self, a: &Nat, b: &Nat) -> Truth {
        match self.equal_poly(a, b) {
            Truth::Unknown if crate::pow2::equal(self, a, b) => Truth::Proven,
            Truth::Unknown => self.on_pow2_canonical(a, b, Facts::equal_poly),
            t => t,
        }
    }

    fn equal_poly(&self, a: &Nat, b: &Nat) -> Truth {
        let p = &self.prepared;
        let Ok(e) = a.sub(b).and_then(|d| p.decision_form(&d, Mode::Eq)) else {
            return Truth::Unknown;
        };
        match e.as_const() {
            Some(0) => return Truth::Proven,
            Some(_) => return Truth::Disproven,
            None => {}
        }
        let Ok(ne) = e.neg() else {
            return Truth::Unknown;
        };
        if p.prove_nonneg(&e) && p.prove_nonneg(&ne) {
            return Truth::Proven;
        }
        let gt = e.add_const(-1).is_ok_and(|d| p.prove_nonneg(&d));
        let lt = ne.add_const(-1).is_ok_and(|d| p.prove_nonneg(&d));
        if gt || lt {
            Truth::Disproven
        } else {
            Truth::Unknown
        }
    }

    /// Is `a <= b`? The polynomial engine, then power-of-two forms ([`crate::pow2::le`]).
    pub fn le(&self, a: &Nat, b: &Nat) -> Truth {
        match self.le_poly(a, b) {
            Truth::Unknown if crate::pow2::le(self, a, b) => Truth::Proven,
            Truth::Unknown => self.on_pow2_canonical(a, b, Facts::le_poly),
            t => t,
        }
    }

    fn le_poly(&self, a: &Nat, b: &Nat) -> Truth {
        let p = &self.prepared;
        match b.sub(a).and_then(|d| p.decision_form(&d, Mode::Le)) {
            Ok(d) => p.nonneg(&d),
            Err(_) => Truth::Unknown,
        }
    }

    /// Is `a < b`?
    pub fn lt(&self, a: &Nat, b: &Nat) -> Truth {
        match a.add(&Nat::lit(1)) {
            Ok(a1) => self.le(&a1, b),
            Err(_) => Truth::Unknown,
        }
    }

    /// Is `a >= b`?
    pub fn ge(&self, a: &Nat, b: &Nat) -> Truth {
        self.le(b, a)
    }

    /// Is `a > b`?
    pub fn gt(&self, a: &Nat, b: &Nat) -> Truth {
        self.lt(b, a)
    }

    /// Does `a` divide `b` (`b % a == 0`) for every valid assignment? The polynomial engine,
    /// then power-of-two forms ([`crate::pow2::divides`]).
    pub fn divides(&self, a: &Nat, b: &Nat) -> Truth {
        match self.divides_poly(a, b) {
            Truth::Unknown if crate::pow2::divides(self, a, b) => Truth::Proven,
            t => t,
        }
    }

    /// Decides `a ? b` with `decide` once more after rewriting both in power-of-two terms
    /// ([`crate::pow2::canonical`]: `256 / 2^k - 128 / 2^k` is `2^(7 - k)` when `k <= 7`);
    /// `Unknown` when neither changes.
    fn on_pow2_canonical(&self, a: &Nat, b: &Nat, decide: fn(&Facts, &Nat, &Nat) -> Truth) -> Truth {
        let (ca, cb) = (crate::pow2::canonical(a, self), crate::pow2::canonical(b, self));
        if ca == *a && cb == *b {
            return Truth::Unknown;
        }
        decide(self, &ca, &cb)
    }

    /// A constant interval `(lo, hi)` holding every value of `n` under the facts (`None`: not
    /// bounded), by interval arithmetic over the constant bounds of its atoms, e.g. `(1, 128)`
    /// for `2^k` when `k < 8`. A sufficient bound, never a tight one.
    pub fn range(&self, n: &Nat) -> (Option<i128>, Option<i128>) {
        match self.prepared.apply(n) {
            Ok(n) => self.prepared.range(&n, RANGE_DEPTH),
            Err(_) => (Some(0), None),
        }
    }

    /// Whether `a op b` is a natural number for every assignment satisfying the facts, given
    /// that `a` and `b` are: `a - b` needs `b <= a`; `a / b` (floor division) and `a % b` need
    /// `b >= 1`. `+`, `*` and `^` of naturals are natural. This is the rule every size
    /// expression is checked with, operation by operation, where it is written; its error says
    /// which fact is missing. Once every operation of a size passes, the polynomial normal
    /// form (integer subtraction) and natural-number semantics agree on it.
    pub fn well_formed(&self, op: SizeOp, a: &Nat, b: &Nat) -> Result<(), IllFormed> {
        let fail = |truth: Truth, goal: String, vars: BTreeSet<Rc<str>>, help: &'static str| {
            Err(IllFormed { op, truth, goal, context: self.describe(&vars), help })
        };
        let mut vars = a.vars();
        vars.extend(b.vars());
        match op {
            SizeOp::Sub => match self.le(b, a) {
                Truth::Proven => Ok(()),
                t => {
                    // `k - 1 >= 0` and `4 - 8 >= 0`, but `2^k <= 64` rather than `-2^k + 64 >= 0`.
                    let goal = match a.sub(b) {
                        Ok(d) if d.as_const().is_some() => format!("{a} - {b} >= 0"),
                        Ok(d) if d.terms().next().is_none_or(|(_, c)| c > 0) => format!("{d} >= 0"),
                        _ => format!("{b} <= {a}"),
                    };
                    fail(t, goal, vars, HELP_SUB)
                }
            },
            SizeOp::Div | SizeOp::Rem => match self.le(&Nat::lit(1), b) {
                Truth::Proven => Ok(()),
                t => fail(t, format!("{b} >= 1"), b.vars(), HELP_DIVISOR),
            },
        }
    }

    /// The stated facts that mention one of `vars`, a `for` range `a <= k, k < b` written
    /// `k ranges over a..b`; empty when none does.
    pub fn describe(&self, vars: &BTreeSet<Rc<str>>) -> String {
        let mentions = |n: &Nat| vars.iter().any(|v| n.mentions(v));
        let mut out: Vec<String> = Vec::new();
        let mut used = vec![false; self.raw.len()];
        for (i, f) in self.raw.iter().enumerate() {
            // `a <= k` followed by `k < b` (how a `for` loop states its range).
            if let (
                Fact::Le { lhs: a, rhs: k, strict: false, flipped: false },
                Some(Fact::Le { lhs: k2, rhs: b, strict: true, flipped: false }),
            ) = (f, self.raw.get(i + 1))
            {
                if k.as_var().is_some() && k == k2 && !used[i] && mentions(k) {
                    out.push(format!("{k} ranges over {a}..{b}"));
                    used[i] = true;
                    used[i + 1] = true;
                    continue;
                }
            }
            if used[i] {
                continue;
            }
            let relevant = match f {
                Fact::Eq(l, r) | Fact::Le { lhs: l, rhs: r, .. } | Fact::Divides(l, r) => mentions(l) || mentions(r),
            };
            if relevant {
                let mut one = Facts::new();
                one.raw.push(f.clone());
                out.push(one.to_string());
            }
        }
        out.join(", ")
    }

    fn divides_poly(&self, a: &Nat, b: &Nat) -> Truth {
        let p = &self.prepared;
        let (Ok(a), Ok(b)) = (p.apply(a), p.decision_form(b, Mode::Divides)) else {
            return Truth::Unknown;
        };
        match a.as_const() {
            Some(0) => self.equal(&b, &Nat::zero()),
            Some(k) if k < 0 => Truth::Unknown,
            Some(k) => {
                if p.known_divisible(k, &b) {
                    return Truth::Proven;
                }
                if b.reduce_mod(k).as_const().is_some() {
                    // A non-zero constant modulo k for every assignment.
                    return Truth::Disproven;
                }
                Truth::Unknown
            }
            None => {
                if b.is_zero() || b.exact_div(&a).is_some() {
                    return Truth::Proven;
                }
                if p.sym_divs.iter().any(|(fa, fb)| *fa == a && (*fb == b || b.exact_div(fb).is_some())) {
                    return Truth::Proven;
                }
                Truth::Unknown
            }
        }
    }
}
