//! Symbolic sizes (`strata_check::nat`): normal forms, arithmetic and the decision procedures.

use proptest::prelude::*;
use strata_check::nat::*;

fn v(name: &str) -> Nat {
    Nat::var(name)
}
fn l(x: u64) -> Nat {
    Nat::lit(x)
}
fn add(a: &Nat, b: &Nat) -> Nat {
    a.add(b).unwrap()
}
fn sub(a: &Nat, b: &Nat) -> Nat {
    a.sub(b).unwrap()
}
fn mul(a: &Nat, b: &Nat) -> Nat {
    a.mul(b).unwrap()
}
fn div(a: &Nat, b: &Nat) -> Nat {
    a.div(b).unwrap()
}
fn rem(a: &Nat, b: &Nat) -> Nat {
    a.rem(b).unwrap()
}
fn pow(a: &Nat, b: &Nat) -> Nat {
    a.pow(b).unwrap()
}
fn env<'a>(pairs: &'a [(&'a str, u64)]) -> impl Fn(&str) -> Option<u64> + 'a {
    move |x| pairs.iter().find(|(n, _)| *n == x).map(|(_, v)| *v)
}
fn s(n: &Nat) -> String {
    n.to_string()
}

// ----- normalisation --------------------------------------------------------------------

#[test]
fn polynomials_are_canonical() {
    let n = v("n");
    let m = v("m");
    assert_eq!(add(&n, &n), mul(&l(2), &n));
    assert_eq!(add(&add(&n, &m), &l(1)), add(&l(1), &add(&m, &n)));
    let sq = mul(&add(&n, &l(1)), &add(&n, &l(1)));
    let expanded = add(&add(&mul(&n, &n), &mul(&l(2), &n)), &l(1));
    assert_eq!(sq, expanded);
    assert_eq!(sub(&n, &n), Nat::zero());
    assert!(sub(&n, &n).is_zero());
    assert_eq!(mul(&n, &m), mul(&m, &n));
    assert_eq!(mul(&l(0), &n), Nat::zero());
    assert_eq!(sub(&add(&n, &l(3)), &l(3)), n);
}

#[test]
fn constant_folding() {
    assert_eq!(div(&l(6), &l(4)), l(1));
    assert_eq!(rem(&l(7), &l(4)), l(3));
    assert_eq!(pow(&l(2), &l(5)), l(32));
    assert_eq!(add(&l(2), &l(3)), l(5));
    assert_eq!(mul(&l(6), &l(7)), l(42));
    assert_eq!(l(5).as_const(), Some(5));
    assert_eq!(sub(&l(1), &l(3)).as_const(), Some(-2));
}

#[test]
fn division_rules() {
    let n = v("n");
    let a = add(&mul(&l(3), &n), &v("m"));
    // (a*k)/k = a
    assert_eq!(div(&mul(&a, &l(32)), &l(32)), a);
    assert_eq!(div(&n, &l(1)), n);
    assert_eq!(rem(&n, &l(1)), Nat::zero());
    // (k*a) % k = 0
    assert_eq!(rem(&mul(&l(32), &a), &l(32)), Nat::zero());
    // (n + 32)/32 = n/32 + 1
    assert_eq!(div(&add(&n, &l(32)), &l(32)), add(&div(&n, &l(32)), &l(1)));
    // (2n)/4 = n/2
    assert_eq!(div(&mul(&l(2), &n), &l(4)), div(&n, &l(2)));
    // (2n+1)/2 = n
    assert_eq!(div(&add(&mul(&l(2), &n), &l(1)), &l(2)), n);
    // (n/2)/4 = n/8
    assert_eq!(div(&div(&n, &l(2)), &l(4)), div(&n, &l(8)));
    // (n%4)/4 = 0
    assert_eq!(div(&rem(&n, &l(4)), &l(4)), Nat::zero());
    // (n + 5) % 4 = (n + 1) % 4
    assert_eq!(rem(&add(&n, &l(5)), &l(4)), rem(&add(&n, &l(1)), &l(4)));
    // (2n) % 4 = 2*(n % 2)
    assert_eq!(rem(&mul(&l(2), &n), &l(4)), mul(&l(2), &rem(&n, &l(2))));
    // (n%8)%4 = n%4 ; (n%4)%8 = n%4
    assert_eq!(rem(&rem(&n, &l(8)), &l(4)), rem(&n, &l(4)));
    assert_eq!(rem(&rem(&n, &l(4)), &l(8)), rem(&n, &l(4)));
    // symbolic divisors
    let m = v("m");
    assert_eq!(div(&mul(&n, &m), &m), n);
    assert_eq!(rem(&mul(&n, &m), &m), Nat::zero());
    assert_eq!(div(&Nat::zero(), &m), Nat::zero());
    assert_eq!(div(&div(&n, &m), &v("k")), div(&n, &mul(&m, &v("k"))));
    assert_eq!(s(&div(&n, &m)), "n/m");
    let two_m = mul(&l(2), &m);
    assert_eq!(div(&mul(&l(4), &n), &two_m), div(&mul(&l(2), &n), &m));
    assert_eq!(rem(&mul(&l(4), &n), &two_m), mul(&l(2), &rem(&mul(&l(2), &n), &m)));
}

#[test]
fn division_errors() {
    let n = v("n");
    assert_eq!(n.div(&l(0)), Err(NatError::DivisionByZero));
    assert_eq!(n.rem(&l(0)), Err(NatError::DivisionByZero));
    assert_eq!(l(3).div(&l(0)), Err(NatError::DivisionByZero));
    assert_eq!(sub(&l(1), &l(3)).div(&l(2)), Err(NatError::Negative));
}

#[test]
fn power_rules() {
    let n = v("n");
    let k = v("k");
    assert_eq!(pow(&n, &l(0)), l(1));
    assert_eq!(pow(&n, &l(1)), n);
    assert_eq!(pow(&n, &l(3)), mul(&n, &mul(&n, &n)));
    assert_eq!(s(&pow(&n, &l(3))), "n^3");
    let e = add(&n, &l(1));
    let p = pow(&l(2), &e);
    assert_eq!(p, mul(&l(2), &pow(&l(2), &n)));
    assert_eq!(s(&p), "2*2^n");
    assert!(matches!(pow(&l(2), &n).as_atom(), Some(Atom::Pow(..))));
    assert_eq!(div(&p, &l(2)), pow(&l(2), &n));
    let q = pow(&l(2), &sub(&n, &l(1)));
    assert!(matches!(q.as_atom(), Some(Atom::Pow(..))));
    assert_eq!(s(&q), "2^(n - 1)");
    assert_eq!(pow(&l(2), &mul(&l(2), &k)), pow(&pow(&l(2), &k), &l(2)));
    assert_eq!(s(&pow(&l(2), &mul(&l(2), &k))), "(2^k)^2");
    assert_eq!(pow(&l(0), &add(&k, &l(1))), Nat::zero());
    assert_eq!(pow(&n, &add(&k, &l(1))), mul(&n, &pow(&n, &k)));
    assert_eq!(s(&pow(&l(2), &add(&n, &k))), "2^n*2^k");
    assert_eq!(pow(&l(1), &k), l(1));
    assert_eq!(pow(&pow(&l(2), &k), &n), pow(&l(2), &mul(&k, &n)));
    assert_eq!(pow(&add(&n, &l(1)), &l(2)), add(&add(&mul(&n, &n), &mul(&l(2), &n)), &l(1)));
}

#[test]
fn overflow_is_an_error() {
    let big = Nat::lit(u64::MAX);
    assert_eq!(big.mul(&big), Err(NatError::Overflow)); // 2^128 > i128::MAX
    let half = Nat::lit(u64::from(u32::MAX));
    assert!(half.mul(&half).is_ok());
    assert_eq!(l(2).pow(&l(200)), Err(NatError::Overflow));
    assert_eq!(v("n").pow(&l(u64::MAX)), Err(NatError::Overflow));
    let e = v("n");
    assert_eq!(e.eval(&|_| Some(u64::MAX)), Ok(u64::MAX));
    assert_eq!(add(&e, &l(1)).eval(&|_| Some(u64::MAX)), Err(NatError::Overflow));
    // normal forms may have larger intermediate values than the original; they are
    // evaluated in i128, and a zero factor makes a term zero without computing the rest
    let k = 194_176_253_407_468_965u64;
    let q = div(&sub(&l(95), &v("m")), &l(k)); // -m + ((k-1)*m + 95)/k
    assert_eq!(q.eval(&env(&[("m", 99)])), Err(NatError::Negative));
    assert_eq!(q.eval(&env(&[("m", 95)])), Ok(0));
    let z = pow(&mul(&div(&v("m"), &l(7)), &v("n")), &l(2));
    assert_eq!(z.eval(&env(&[("m", 3), ("n", u64::MAX)])), Ok(0));
    // huge expansions are refused, not computed
    let sum = add(&add(&v("a"), &v("b")), &add(&v("c"), &v("d")));
    assert_eq!(sum.pow(&l(30)), Err(NatError::TooLarge));
}

#[test]
fn display() {
    let n = v("n");
    let m = v("m");
    assert_eq!(s(&add(&mul(&l(2), &n), &l(1))), "2*n + 1");
    assert_eq!(s(&div(&n, &l(32))), "n/32");
    assert_eq!(s(&mul(&n, &n)), "n^2");
    assert_eq!(s(&sub(&n, &l(1))), "n - 1");
    assert_eq!(s(&sub(&l(1), &n)), "-n + 1");
    assert_eq!(s(&Nat::zero()), "0");
    assert_eq!(s(&mul(&div(&n, &l(32)), &l(32))), "32*(n/32)");
    assert_eq!(s(&div(&add(&n, &l(1)), &l(2))), "(n + 1)/2");
    assert_eq!(s(&rem(&n, &l(32))), "n%32");
    assert_eq!(s(&mul(&n, &m)), "m*n");
    assert_eq!(s(&div(&n, &mul(&l(2), &m))), "n/(2*m)");
    assert_eq!(s(&pow(&div(&n, &l(2)), &l(2))), "(n/2)^2");
    assert_eq!(s(&pow(&n, &m)), "n^m");
    assert_eq!(s(&Nat::call("len", vec![n.clone(), l(2)])), "len(n, 2)");
    assert_eq!(s(&add(&add(&mul(&n, &n), &mul(&mul(&l(3), &n), &m)), &l(7))), "3*m*n + n^2 + 7");
}

#[test]
fn subst_and_eval() {
    let n = v("n");
    let e = add(&div(&n, &l(2)), &mul(&l(3), &n));
    let e2 = e.subst("n", &mul(&l(2), &v("m"))).unwrap();
    assert_eq!(e2, mul(&l(7), &v("m")));
    assert_eq!(e.eval(&env(&[("n", 7)])), Ok(24));
    assert_eq!(e.eval(&env(&[])), Err(NatError::Unbound("n".into())));
    let d = sub(&n, &l(3));
    assert_eq!(d.eval(&env(&[("n", 2)])), Err(NatError::Negative));
    let q = div(&l(5), &n);
    assert_eq!(q.eval(&env(&[("n", 0)])), Err(NatError::DivisionByZero));
    assert_eq!(q.subst("n", &l(0)), Err(NatError::DivisionByZero));
    let inner_neg = div(&sub(&n, &l(3)), &l(2));
    assert_eq!(inner_neg.eval(&env(&[("n", 1)])), Err(NatError::Negative));
    assert!(matches!(Nat::call("f", vec![]).eval(&env(&[])), Err(NatError::UnknownCall(_))));
    let p = pow(&l(2), &n);
    assert_eq!(p.eval(&env(&[("n", 10)])), Ok(1024));
    assert_eq!(p.subst("n", &l(3)).unwrap(), l(8));
    assert_eq!(n.vars().len(), 1);
    assert!(e.mentions("n"));
    assert!(!e.mentions("m"));
}

// ----- decisions ------------------------------------------------------------------------

fn facts_ge1(name: &str) -> Facts {
    let mut f = Facts::new();
    f.add_ge(&v(name), &l(1)).unwrap();
    f
}

#[test]
fn equal_basic() {
    let f = Facts::new();
    let n = v("n");
    assert_eq!(f.equal(&add(&n, &n), &mul(&l(2), &n)), Truth::Proven);
    assert_eq!(f.equal(&add(&n, &l(1)), &n), Truth::Disproven);
    assert_eq!(f.equal(&n, &v("m")), Truth::Unknown);
    // x/k*k + x%k == x always
    let x = add(&mul(&div(&n, &l(32)), &l(32)), &rem(&n, &l(32)));
    assert_eq!(f.equal(&x, &n), Truth::Proven);
}

#[test]
fn equal_needs_divisibility() {
    let n = v("n");
    let f = Facts::new();
    let back = mul(&div(&n, &l(2)), &l(2));
    assert_eq!(f.equal(&back, &n), Truth::Unknown);
    let mut f2 = Facts::new();
    f2.add_divides(&l(2), &n).unwrap();
    assert_eq!(f2.equal(&back, &n), Truth::Proven);
}

#[test]
fn equal_with_divisibility_fact() {
    let n = v("n");
    let mut f = Facts::new();
    f.add_divides(&l(32), &n).unwrap();
    let back = mul(&div(&n, &l(32)), &l(32));
    assert_eq!(f.equal(&back, &n), Truth::Proven);
    assert_eq!(f.equal(&rem(&n, &l(32)), &l(0)), Truth::Proven);
    assert_eq!(f.equal(&rem(&n, &l(16)), &l(0)), Truth::Proven);
    assert_eq!(f.equal(&rem(&n, &l(64)), &l(0)), Truth::Unknown);
    // stated as `n % 32 == 0`
    let mut g = Facts::new();
    g.add_eq(&rem(&n, &l(32)), &l(0)).unwrap();
    assert_eq!(g.equal(&back, &n), Truth::Proven);
}

#[test]
fn equal_with_equation_fact() {
    let n = v("n");
    let m = v("m");
    let mut f = Facts::new();
    f.add_eq(&n, &mul(&l(64), &m)).unwrap();
    assert_eq!(f.equal(&rem(&n, &l(32)), &l(0)), Truth::Proven);
    assert_eq!(f.divides(&l(32), &n), Truth::Proven);
    assert_eq!(f.equal(&mul(&div(&n, &l(32)), &l(32)), &n), Truth::Proven);
    assert_eq!(f.equal(&div(&n, &l(2)), &mul(&l(32), &m)), Truth::Proven);
    assert_eq!(f.equal(&n, &add(&m, &l(1))), Truth::Unknown);
    // after n := 32*q, `n == 64*m` reads 32*q == 64*m, i.e. q := 2*m
    let mut g = Facts::new();
    g.add_divides(&l(32), &n).unwrap();
    g.add_eq(&n, &mul(&l(64), &m)).unwrap();
    assert_eq!(g.divides(&l(64), &n), Truth::Proven);
    assert_eq!(g.equal(&div(&n, &l(64)), &m), Truth::Proven);
    // 2*n == m + 1 gives m := 2*n - 1, which also says n >= 1
    let mut h = Facts::new();
    h.add_eq(&mul(&l(2), &n), &add(&m, &l(1))).unwrap();
    assert_eq!(h.le(&l(1), &n), Truth::Proven);
    assert_eq!(h.divides(&l(2), &m), Truth::Disproven);
}

#[test]
fn group_round_trip() {
    // group::<32> on [T; n] gives [[T; 32]; n/32]; total elements n/32 * 32 == n.
    let n = v("n");
    let mut f = Facts::new();
    f.add_divides(&l(32), &n).unwrap();
    let total = mul(&l(32), &div(&n, &l(32)));
    assert_eq!(f.equal(&total, &n), Truth::Proven);
    // and grouping again by 4 needs 128 | n
    let again = mul(&l(4), &div(&div(&n, &l(32)), &l(4)));
    assert_eq!(f.equal(&again, &div(&n, &l(32))), Truth::Unknown);
    let mut g = Facts::new();
    g.add_divides(&l(128), &n).unwrap();
    assert_eq!(g.equal(&again, &div(&n, &l(32))), Truth::Proven);
}

#[test]
fn divisibility_residual_fact() {
    // 32 | n*m cannot be solved for a variable; it is matched instead.
    let nm = mul(&v("n"), &v("m"));
    let mut f = Facts::new();
    f.add_divides(&l(32), &nm).unwrap();
    assert_eq!(f.divides(&l(32), &nm), Truth::Proven);
    assert_eq!(f.divides(&l(8), &nm), Truth::Proven);
    assert_eq!(f.divides(&l(64), &mul(&l(2), &nm)), Truth::Proven);
    assert_eq!(f.equal(&rem(&nm, &l(32)), &l(0)), Truth::Proven);
    assert_eq!(f.equal(&mul(&div(&nm, &l(32)), &l(32)), &nm), Truth::Proven);
    assert_eq!(f.divides(&l(64), &nm), Truth::Unknown);
}

#[test]
fn divides_rules() {
    let f = Facts::new();
    let n = v("n");
    let m = v("m");
    assert_eq!(f.divides(&l(4), &mul(&l(8), &n)), Truth::Proven);
    assert_eq!(f.divides(&l(4), &add(&mul(&l(8), &n), &l(2))), Truth::Disproven);
    assert_eq!(f.divides(&l(4), &n), Truth::Unknown);
    assert_eq!(f.divides(&l(3), &l(9)), Truth::Proven);
    assert_eq!(f.divides(&l(3), &l(10)), Truth::Disproven);
    assert_eq!(f.divides(&n, &mul(&n, &m)), Truth::Proven);
    assert_eq!(f.divides(&n, &add(&mul(&n, &m), &mul(&l(3), &n))), Truth::Proven);
    assert_eq!(f.divides(&add(&n, &l(1)), &add(&mul(&n, &n), &n)), Truth::Proven);
    assert_eq!(f.divides(&n, &m), Truth::Unknown);
    assert_eq!(f.divides(&n, &add(&n, &l(1))), Truth::Unknown);
    assert_eq!(f.divides(&l(2), &sub(&n, &rem(&n, &l(2)))), Truth::Proven);
    let mut g = Facts::new();
    g.add_divides(&l(6), &n).unwrap();
    assert_eq!(g.divides(&l(3), &n), Truth::Proven);
    assert_eq!(g.divides(&l(3), &add(&n, &l(1))), Truth::Disproven);
    let mut h = Facts::new();
    h.add_divides(&n, &m).unwrap();
    assert_eq!(h.divides(&n, &m), Truth::Proven);
    assert_eq!(h.divides(&n, &mul(&l(3), &m)), Truth::Proven);
    // m := n*q makes m/n and m%n exact
    assert_eq!(h.equal(&mul(&div(&m, &n), &n), &m), Truth::Proven);
    assert_eq!(h.equal(&rem(&m, &n), &l(0)), Truth::Proven);
    assert_eq!(h.divides(&n, &add(&m, &l(1))), Truth::Unknown);
    // 2^k | n
    let p2 = pow(&l(2), &v("k"));
    let mut p = Facts::new();
    p.add_divides(&p2, &n).unwrap();
    p.add_le(&n, &l(1024)).unwrap();
    assert_eq!(p.equal(&mul(&div(&n, &p2), &p2), &n), Truth::Proven);
    assert_eq!(p.le(&n, &l(2048)), Truth::Proven);
    // a residual symbolic fact: n | m*k + 1 cannot be solved for a variable
    let mut r = Facts::new();
    let mk1 = add(&mul(&m, &v("k")), &l(1));
    r.add_divides(&n, &mk1).unwrap();
    assert_eq!(r.divides(&n, &mk1), Truth::Proven);
    assert_eq!(r.divides(&n, &mul(&l(2), &mk1)), Truth::Proven);
}

#[test]
fn le_basic() {
    let f = Facts::new();
    let n = v("n");
    assert_eq!(f.le(&n, &add(&n, &l(1))), Truth::Proven);
    assert_eq!(f.le(&add(&n, &l(1)), &n), Truth::Disproven);
    assert_eq!(f.le(&l(3), &l(4)), Truth::Proven);
    assert_eq!(f.le(&l(5), &l(4)), Truth::Disproven);
    assert_eq!(f.le(&n, &mul(&n, &n)), Truth::Unknown); // true, but nonlinear
    assert_eq!(f.le(&l(0), &n), Truth::Proven);
    assert_eq!(f.lt(&n, &n), Truth::Disproven);
    assert_eq!(f.le(&div(&n, &l(2)), &n), Truth::Proven);
    assert_eq!(f.le(&rem(&n, &l(32)), &l(31)), Truth::Proven);
    assert_eq!(f.lt(&rem(&n, &l(32)), &l(32)), Truth::Proven);
    assert_eq!(f.le(&rem(&n, &l(32)), &n), Truth::Proven);
    assert_eq!(f.le(&l(32), &rem(&n, &l(32))), Truth::Disproven);
    assert_eq!(f.le(&l(1), &pow(&l(2), &n)), Truth::Proven);
    assert_eq!(f.lt(&n, &pow(&l(2), &n)), Truth::Proven);
    assert_eq!(f.le(&mul(&l(32), &div(&n, &l(32))), &n), Truth::Proven);
}

#[test]
fn le_negatives_are_unknown() {
    let f = Facts::new();
    let n = v("n");
    // n - 1 >= 0 needs n >= 1
    assert_eq!(f.ge(&sub(&n, &l(1)), &l(0)), Truth::Unknown);
    assert_eq!(f.lt(&div(&n, &l(2)), &n), Truth::Unknown);
    assert_eq!(f.le(&n, &v("k")), Truth::Unknown);
    assert_eq!(f.le(&add(&mul(&l(2), &v("k")), &l(1)), &mul(&l(4), &v("k"))), Truth::Unknown);
    assert_eq!(f.le(&n, &mul(&l(32), &div(&n, &l(32)))), Truth::Unknown);
}

#[test]
fn le_with_lower_bounds() {
    let n = v("n");
    let f = facts_ge1("n");
    assert_eq!(f.ge(&sub(&n, &l(1)), &l(0)), Truth::Proven);
    assert_eq!(f.lt(&div(&n, &l(2)), &n), Truth::Proven);
    assert_eq!(f.lt(&l(0), &n), Truth::Proven);
    assert_eq!(f.le(&l(2), &n), Truth::Unknown);
    let k = v("k");
    let g = facts_ge1("k");
    assert_eq!(g.le(&add(&mul(&l(2), &k), &l(1)), &mul(&l(4), &k)), Truth::Proven);
    assert_eq!(g.lt(&add(&mul(&l(2), &k), &l(1)), &mul(&l(4), &k)), Truth::Proven);
    assert_eq!(g.lt(&add(&mul(&l(2), &k), &l(3)), &mul(&l(4), &k)), Truth::Unknown);
    assert_eq!(g.le(&k, &mul(&k, &k)), Truth::Proven);
    assert_eq!(g.lt(&div(&k, &l(4)), &k), Truth::Proven);
    assert_eq!(g.le(&l(1), &mul(&k, &k)), Truth::Proven);
}

#[test]
fn le_from_facts() {
    let n = v("n");
    let k = v("k");
    let m = v("m");
    let mut f = Facts::new();
    f.add_le(&k, &n).unwrap();
    assert_eq!(f.le(&k, &n), Truth::Proven);
    assert_eq!(f.le(&k, &add(&n, &l(2))), Truth::Proven);
    assert_eq!(f.le(&mul(&l(2), &k), &mul(&l(2), &n)), Truth::Proven);
    assert_eq!(f.le(&n, &k), Truth::Unknown);
    assert_eq!(f.lt(&n, &k), Truth::Disproven);
    assert_eq!(f.le(&div(&k, &l(2)), &n), Truth::Proven);
    assert_eq!(f.le(&sub(&n, &k), &n), Truth::Proven);
    f.add_le(&n, &m).unwrap();
    assert_eq!(f.le(&k, &m), Truth::Proven); // transitivity
    assert_eq!(f.le(&add(&k, &n), &mul(&l(2), &m)), Truth::Proven);
}

#[test]
fn loop_variable() {
    // for i in 0..n: facts 0 <= i, i <= n - 1
    let n = v("n");
    let i = v("i");
    let mut f = Facts::new();
    f.add_le(&l(0), &i).unwrap();
    f.add_le(&i, &sub(&n, &l(1))).unwrap();
    assert_eq!(f.lt(&i, &n), Truth::Proven);
    assert_eq!(f.le(&add(&i, &l(1)), &n), Truth::Proven);
    assert_eq!(f.lt(&add(&i, &l(1)), &n), Truth::Unknown);
    assert_eq!(f.le(&l(1), &n), Truth::Proven);
    assert_eq!(f.le(&n, &i), Truth::Disproven);
    // an index into a grouped array: i*32 + j < n given j < 32, i < n/32, 32 | n
    let j = v("j");
    let mut g = Facts::new();
    g.add_divides(&l(32), &n).unwrap();
    g.add_lt(&i, &div(&n, &l(32))).unwrap();
    g.add_lt(&j, &l(32)).unwrap();
    let idx = add(&mul(&i, &l(32)), &j);
    assert_eq!(g.lt(&idx, &n), Truth::Proven);
}

#[test]
fn checker_shaped_goals() {
    let n = v("n");
    let m = v("m");
    let i = v("i");
    let j = v("j");
    let k = v("k");
    // row-major index into [[T; m]; n]
    let mut f = Facts::new();
    f.add_lt(&i, &n).unwrap();
    f.add_lt(&j, &m).unwrap();
    assert_eq!(f.lt(&add(&mul(&i, &m), &j), &mul(&n, &m)), Truth::Proven);
    assert_eq!(f.lt(&add(&mul(&i, &m), &j), &mul(&n, &j)), Truth::Unknown);
    // pairs: 2*i + 1 < n given i < n/2
    let mut g = Facts::new();
    g.add_lt(&i, &div(&n, &l(2))).unwrap();
    assert_eq!(g.lt(&add(&mul(&l(2), &i), &l(1)), &n), Truth::Proven);
    assert_eq!(g.lt(&add(&mul(&l(2), &i), &l(2)), &n), Truth::Unknown);
    // the last element of a 32-wide chunk, with and without 32 | n
    let mut c = Facts::new();
    c.add_lt(&i, &div(&n, &l(32))).unwrap();
    let last = add(&mul(&i, &l(32)), &l(31));
    assert_eq!(c.lt(&last, &n), Truth::Proven);
    assert_eq!(c.lt(&add(&last, &l(1)), &n), Truth::Unknown);
    c.add_divides(&l(32), &n).unwrap();
    assert_eq!(c.lt(&last, &n), Truth::Proven);
    assert_eq!(c.le(&add(&last, &l(1)), &n), Truth::Proven);
    // monotonicity of division, halves
    let e = Facts::new();
    assert_eq!(e.le(&div(&n, &l(32)), &div(&n, &l(16))), Truth::Proven);
    assert_eq!(e.le(&add(&div(&n, &l(2)), &div(&n, &l(2))), &n), Truth::Proven);
    assert_eq!(e.le(&n, &add(&mul(&l(32), &div(&n, &l(32))), &l(31))), Truth::Proven);
    assert_eq!(facts_ge1("n").le(&div(&add(&n, &l(1)), &l(2)), &n), Truth::Proven);
    assert_eq!(e.le(&div(&add(&n, &l(1)), &l(2)), &n), Truth::Proven); // n = 0: 0 <= 0
    assert_eq!(e.le(&div(&add(&n, &l(2)), &l(2)), &n), Truth::Unknown); // false at n = 0
                                                                        // powers of two
    assert_eq!(e.equal(&pow(&l(2), &add(&k, &l(1))), &mul(&l(2), &pow(&l(2), &k))), Truth::Proven);
    assert_eq!(e.lt(&k, &pow(&l(2), &k)), Truth::Proven);
    assert_eq!(e.le(&pow(&l(2), &k), &pow(&l(2), &add(&k, &l(1)))), Truth::Proven);
    // transpose keeps the element count
    assert_eq!(e.equal(&mul(&m, &n), &mul(&n, &m)), Truth::Proven);
    // take_left::<k> / take_right of [T; n] given k <= n
    let mut t = Facts::new();
    t.add_le(&k, &n).unwrap();
    assert_eq!(t.equal(&add(&k, &sub(&n, &k)), &n), Truth::Proven);
    assert_eq!(t.le(&l(0), &sub(&n, &k)), Truth::Proven);
    assert_eq!(e.le(&l(0), &sub(&n, &k)), Truth::Unknown);
    // instantiation: concrete values are substituted, then evaluated
    let size = div(&n, &l(32));
    let inst = size.subst("n", &l(1024)).unwrap();
    assert_eq!(inst, l(32));
    assert_eq!(size.eval(&env(&[("n", 1024)])), Ok(32));
}

#[test]
fn facts_display() {
    let mut f = Facts::new();
    assert_eq!(f.to_string(), "");
    f.add_ge(&v("n"), &l(1)).unwrap();
    f.add_lt(&v("k"), &v("n")).unwrap();
    f.add_divides(&l(32), &v("n")).unwrap();
    f.add_divides(&mul(&l(2), &v("m")), &v("n")).unwrap();
    f.add_eq(&v("m"), &add(&v("k"), &l(1))).unwrap();
    f.add_gt(&v("n"), &v("m")).unwrap();
    assert_eq!(f.to_string(), "n >= 1, k < n, 32 | n, (2*m) | n, m == k + 1, n > m");
    assert_eq!(f.lt(&v("m"), &v("n")), Truth::Proven);
    assert_eq!(f.le(&add(&v("k"), &l(2)), &v("n")), Truth::Proven);
}

#[test]
fn equal_by_two_inequalities() {
    let n = v("n");
    let k = v("k");
    let mut f = Facts::new();
    f.add_le(&k, &n).unwrap();
    f.add_le(&n, &k).unwrap();
    assert_eq!(f.equal(&n, &k), Truth::Proven);
    let mut g = Facts::new();
    g.add_lt(&k, &n).unwrap();
    assert_eq!(g.equal(&n, &k), Truth::Disproven);
}

#[test]
fn equality_fact_substitutes() {
    let n = v("n");
    let m = v("m");
    let mut f = Facts::new();
    f.add_eq(&add(&n, &l(1)), &m).unwrap();
    assert_eq!(f.equal(&n, &sub(&m, &l(1))), Truth::Proven);
    assert_eq!(f.lt(&n, &m), Truth::Proven);
    // n + 1 == m implies m >= 1
    assert_eq!(f.le(&l(1), &m), Truth::Proven);
    // nonlinear equalities are kept as two inequalities
    let mut g = Facts::new();
    g.add_eq(&mul(&n, &n), &mul(&l(2), &m)).unwrap();
    assert_eq!(g.le(&mul(&l(2), &m), &mul(&n, &n)), Truth::Proven);
    assert_eq!(g.equal(&mul(&n, &n), &mul(&l(2), &m)), Truth::Proven);
}

#[test]
fn bounded_cost() {
    // Big constants do not make anything slower: no enumeration.
    let n = v("n");
    let mut f = Facts::new();
    f.add_ge(&n, &l(1_000_000_000_000)).unwrap();
    assert_eq!(f.le(&l(999_999_999_999), &n), Truth::Proven);
    assert_eq!(f.lt(&div(&n, &l(1 << 40)), &n), Truth::Proven);
    // Many unrelated facts still answer quickly.
    let mut g = Facts::new();
    for i in 0..30 {
        let a = v(&format!("a{i}"));
        let b = v(&format!("a{}", i + 1));
        g.add_le(&a, &b).unwrap();
    }
    assert_eq!(g.le(&v("a0"), &v("a5")), Truth::Proven);
    assert_eq!(g.le(&v("a0"), &v("a29")), Truth::Unknown); // beyond the search depth
    assert_eq!(g.le(&v("a5"), &v("a0")), Truth::Unknown);
}

// ----- well-formed sizes and constant ranges --------------------------------------------

/// The facts of `for name in lo..hi`.
fn loop_facts(f: &mut Facts, name: &str, lo: &Nat, hi: &Nat) {
    f.add_le(lo, &v(name)).unwrap();
    f.add_lt(&v(name), hi).unwrap();
}

#[test]
fn subtraction_needs_its_bound() {
    let k = v("k");
    let mut f = Facts::new();
    loop_facts(&mut f, "k", &l(0), &v("n"));
    let e = f.well_formed(SizeOp::Sub, &k, &l(1)).unwrap_err();
    assert_eq!(e.truth, Truth::Unknown);
    assert_eq!(e.goal, "k - 1 >= 0");
    assert_eq!(e.context, "k ranges over 0..n");
    // the exponent of 2^(k - 1) is fine once the loop starts at 1
    let mut g = Facts::new();
    loop_facts(&mut g, "k", &l(1), &v("n"));
    assert!(g.well_formed(SizeOp::Sub, &k, &l(1)).is_ok());
    // a constant difference is decided
    let e = Facts::new().well_formed(SizeOp::Sub, &l(3), &l(4)).unwrap_err();
    assert_eq!((e.truth, e.goal.as_str()), (Truth::Disproven, "3 - 4 >= 0"));
    // a `where` bound, and the range of a power
    let mut w = Facts::new();
    w.add_ge(&v("n"), &l(1)).unwrap();
    assert!(w.well_formed(SizeOp::Sub, &v("n"), &l(1)).is_ok());
    let mut p = Facts::new();
    loop_facts(&mut p, "k", &l(0), &l(8));
    let two_k = pow(&l(2), &k);
    assert!(p.well_formed(SizeOp::Sub, &l(128), &two_k).is_ok());
    let e = p.well_formed(SizeOp::Sub, &l(64), &two_k).unwrap_err();
    assert_eq!((e.truth, e.goal.as_str()), (Truth::Unknown, "2^k <= 64"));
    // nested loops: j - i for j in i..8
    let mut nested = Facts::new();
    loop_facts(&mut nested, "i", &l(0), &l(8));
    loop_facts(&mut nested, "j", &v("i"), &l(8));
    assert!(nested.well_formed(SizeOp::Sub, &v("j"), &v("i")).is_ok());
    let e = nested.well_formed(SizeOp::Sub, &v("i"), &v("j")).unwrap_err();
    assert_eq!(e.context, "i ranges over 0..8, j ranges over i..8");
}

#[test]
fn division_needs_a_positive_divisor() {
    let d = v("d");
    let mut f = Facts::new();
    loop_facts(&mut f, "d", &l(0), &l(4));
    for op in [SizeOp::Div, SizeOp::Rem] {
        let e = f.well_formed(op, &l(64), &d).unwrap_err();
        assert_eq!(e.goal, "d >= 1");
    }
    let mut g = Facts::new();
    loop_facts(&mut g, "d", &l(1), &l(4));
    // floor division: 64 / 3 is a natural number
    assert!(g.well_formed(SizeOp::Div, &l(64), &d).is_ok());
    assert!(g.well_formed(SizeOp::Rem, &l(64), &d).is_ok());
    let e = Facts::new().well_formed(SizeOp::Div, &l(4), &l(0)).unwrap_err();
    assert_eq!(e.truth, Truth::Disproven);
    // powers of two are at least 1
    assert!(Facts::new().well_formed(SizeOp::Div, &l(256), &pow(&l(2), &v("k"))).is_ok());
}

#[test]
fn ranges_of_powers_and_quotients() {
    let k = v("k");
    let mut f = Facts::new();
    loop_facts(&mut f, "k", &l(0), &l(8));
    assert_eq!(f.range(&k), (Some(0), Some(7)));
    assert_eq!(f.range(&pow(&l(2), &k)), (Some(1), Some(128)));
    assert_eq!(f.range(&div(&l(256), &pow(&l(2), &k))), (Some(2), Some(256)));
    assert_eq!(f.range(&sub(&l(64), &pow(&l(2), &k))), (Some(-64), Some(63)));
    // through a symbolic bound: k < n, n <= 8
    let mut g = Facts::new();
    loop_facts(&mut g, "k", &l(0), &v("n"));
    g.add_le(&v("n"), &l(8)).unwrap();
    assert_eq!(g.range(&k).1, Some(7));
    assert_eq!(Facts::new().range(&k), (Some(0), None));
}

#[test]
fn bounds_from_exponent_ranges() {
    let j = v("j");
    let mut f = Facts::new();
    loop_facts(&mut f, "j", &l(0), &l(2));
    // split at 2^(2*j) of 16 threads, j < 2
    let q = pow(&l(2), &mul(&l(2), &j));
    assert_eq!(f.le(&q, &l(16)), Truth::Proven);
    assert_eq!(f.le(&q, &l(4)), Truth::Proven);
    assert_eq!(f.le(&q, &l(3)), Truth::Unknown);
    // the tree-reduction shape: 128 / 2^k <= 256 / 2^k, and their difference
    let k = v("k");
    let mut t = Facts::new();
    loop_facts(&mut t, "k", &l(0), &l(8));
    let p = pow(&l(2), &k);
    let (half, whole) = (div(&l(128), &p), div(&l(256), &p));
    assert_eq!(t.le(&half, &whole), Truth::Proven);
    assert_eq!(t.le(&l(1), &half), Truth::Proven);
    assert_eq!(t.equal(&sub(&whole, &half), &half), Truth::Proven);
    assert_eq!(t.le(&whole, &half), Truth::Disproven);
    // 2^i <= 2^j from i <= j, and 2^k <= 2^n from k < n
    let mut o = Facts::new();
    loop_facts(&mut o, "i", &l(0), &l(6));
    loop_facts(&mut o, "j", &v("i"), &l(6));
    let (pi, pj) = (pow(&l(2), &v("i")), pow(&l(2), &v("j")));
    assert_eq!(o.le(&pi, &pj), Truth::Proven);
    assert_eq!(o.le(&l(0), &sub(&pj, &pi)), Truth::Proven);
    assert_eq!(o.le(&pj, &pi), Truth::Unknown);
    let mut g = Facts::new();
    loop_facts(&mut g, "k", &l(0), &v("n"));
    assert_eq!(g.le(&p, &pow(&l(2), &v("n"))), Truth::Proven);
}

// ----- exhaustive soundness on a grid ---------------------------------------------------

type FactSpec = fn(&mut Facts);

fn check_grid(setup: FactSpec, holds: &dyn Fn(u64, u64, u64) -> bool, goals: &[(Nat, Nat)]) {
    let mut f = Facts::new();
    setup(&mut f);
    for (a, b) in goals {
        let eq = f.equal(a, b);
        let le = f.le(a, b);
        let lt = f.lt(a, b);
        for n in 0..10u64 {
            for m in 0..10u64 {
                for k in 0..10u64 {
                    if !holds(n, m, k) {
                        continue;
                    }
                    let pairs = [("n", n), ("m", m), ("k", k)];
                    let e = env(&pairs);
                    let (Ok(x), Ok(y)) = (a.eval(&e), b.eval(&e)) else {
                        continue;
                    };
                    let ctx = format!("{a} vs {b} at n={n} m={m} k={k}");
                    match eq {
                        Truth::Proven => assert_eq!(x, y, "eq {ctx}"),
                        Truth::Disproven => assert_ne!(x, y, "eq {ctx}"),
                        Truth::Unknown => {}
                    }
                    match le {
                        Truth::Proven => assert!(x <= y, "le {ctx}"),
                        Truth::Disproven => assert!(x > y, "le {ctx}"),
                        Truth::Unknown => {}
                    }
                    match lt {
                        Truth::Proven => assert!(x < y, "lt {ctx}"),
                        Truth::Disproven => assert!(x >= y, "lt {ctx}"),
                        Truth::Unknown => {}
                    }
                }
            }
        }
    }
}

fn grid_goals() -> Vec<(Nat, Nat)> {
    let n = v("n");
    let m = v("m");
    let k = v("k");
    let mut out = Vec::new();
    let exprs = [
        n.clone(),
        m.clone(),
        k.clone(),
        l(0),
        l(1),
        l(4),
        sub(&n, &l(1)),
        div(&n, &l(2)),
        div(&n, &l(4)),
        mul(&l(4), &div(&n, &l(4))),
        rem(&n, &l(4)),
        add(&mul(&l(2), &k), &l(1)),
        mul(&l(4), &k),
        add(&k, &m),
        mul(&n, &m),
        sub(&n, &k),
        div(&n, &m),
        mul(&m, &div(&n, &m)),
        add(&mul(&k, &l(4)), &m),
    ];
    for a in &exprs {
        for b in &exprs {
            out.push((a.clone(), b.clone()));
        }
    }
    out
}

#[test]
fn grid_no_facts() {
    check_grid(|_| {}, &|_, _, _| true, &grid_goals());
}

#[test]
fn grid_bounds() {
    check_grid(
        |f| {
            f.add_ge(&v("n"), &l(1)).unwrap();
            f.add_le(&v("k"), &v("n")).unwrap();
            f.add_lt(&v("m"), &l(4)).unwrap();
        },
        &|n, m, k| n >= 1 && k <= n && m < 4,
        &grid_goals(),
    );
}

#[test]
fn grid_divisibility() {
    check_grid(
        |f| {
            f.add_divides(&l(4), &v("n")).unwrap();
            f.add_eq(&v("m"), &add(&v("k"), &l(2))).unwrap();
        },
        &|n, m, k| n % 4 == 0 && m == k + 2,
        &grid_goals(),
    );
}

#[test]
fn grid_loop() {
    check_grid(
        |f| {
            f.add_lt(&v("k"), &div(&v("n"), &l(4))).unwrap();
            f.add_lt(&v("m"), &l(4)).unwrap();
        },
        &|n, m, k| k < n / 4 && m < 4,
        &grid_goals(),
    );
}

// ----- property tests -------------------------------------------------------------------

#[derive(Clone, Debug)]
enum Tree {
    Lit(u64),
    Var(usize),
    Add(Box<Tree>, Box<Tree>),
    Sub(Box<Tree>, Box<Tree>),
    Mul(Box<Tree>, Box<Tree>),
    DivK(Box<Tree>, u64),
    RemK(Box<Tree>, u64),
    PowK(Box<Tree>, u32),
    Div(Box<Tree>, Box<Tree>),
    Rem(Box<Tree>, Box<Tree>),
    Pow2(Box<Tree>),
}

const VARS: [&str; 3] = ["n", "m", "k"];

fn tree() -> impl Strategy<Value = Tree> {
    let leaf = prop_oneof![(0u64..6).prop_map(Tree::Lit), (0usize..3).prop_map(Tree::Var)];
    leaf.prop_recursive(4, 24, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Tree::Add(Box::new(a), Box::new(b))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Tree::Sub(Box::new(a), Box::new(b))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Tree::Mul(Box::new(a), Box::new(b))),
            (inner.clone(), 0u64..9).prop_map(|(a, k)| Tree::DivK(Box::new(a), k)),
            (inner.clone(), 0u64..9).prop_map(|(a, k)| Tree::RemK(Box::new(a), k)),
            (inner.clone(), 0u32..4).prop_map(|(a, k)| Tree::PowK(Box::new(a), k)),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Tree::Div(Box::new(a), Box::new(b))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Tree::Rem(Box::new(a), Box::new(b))),
            inner.prop_map(|a| Tree::Pow2(Box::new(a))),
        ]
    })
}

impl Tree {
    /// Naive natural-number evaluation of the unnormalised tree.
    fn eval(&self, vals: &[u64; 3]) -> Option<u64> {
        Some(match self {
            Tree::Lit(x) => *x,
            Tree::Var(i) => vals[*i],
            Tree::Add(a, b) => a.eval(vals)?.checked_add(b.eval(vals)?)?,
            Tree::Sub(a, b) => a.eval(vals)?.checked_sub(b.eval(vals)?)?,
            Tree::Mul(a, b) => a.eval(vals)?.checked_mul(b.eval(vals)?)?,
            Tree::DivK(a, k) => a.eval(vals)?.checked_div(*k)?,
            Tree::RemK(a, k) => a.eval(vals)?.checked_rem(*k)?,
            Tree::PowK(a, k) => a.eval(vals)?.checked_pow(*k)?,
            Tree::Div(a, b) => a.eval(vals)?.checked_div(b.eval(vals)?)?,
            Tree::Rem(a, b) => a.eval(vals)?.checked_rem(b.eval(vals)?)?,
            Tree::Pow2(a) => 2u64.checked_pow(u32::try_from(a.eval(vals)?).ok()?)?,
        })
    }

    fn to_nat(&self) -> Result<Nat, NatError> {
        match self {
            Tree::Lit(x) => Ok(Nat::lit(*x)),
            Tree::Var(i) => Ok(Nat::var(VARS[*i])),
            Tree::Add(a, b) => a.to_nat()?.add(&b.to_nat()?),
            Tree::Sub(a, b) => a.to_nat()?.sub(&b.to_nat()?),
            Tree::Mul(a, b) => a.to_nat()?.mul(&b.to_nat()?),
            Tree::DivK(a, k) => a.to_nat()?.div(&Nat::lit(*k)),
            Tree::RemK(a, k) => a.to_nat()?.rem(&Nat::lit(*k)),
            Tree::PowK(a, k) => a.to_nat()?.pow(&Nat::lit(u64::from(*k))),
            Tree::Div(a, b) => a.to_nat()?.div(&b.to_nat()?),
            Tree::Rem(a, b) => a.to_nat()?.rem(&b.to_nat()?),
            Tree::Pow2(a) => Nat::lit(2).pow(&a.to_nat()?),
        }
    }
}

fn eval_at(n: &Nat, vals: &[u64; 3]) -> Result<u64, NatError> {
    n.eval(&|x| VARS.iter().position(|v| *v == x).map(|i| vals[i]))
}

fn vals() -> impl Strategy<Value = [u64; 3]> {
    [0u64..9, 0u64..9, 0u64..9]
}

/// Facts true at `vals`, built from random choices.
#[derive(Clone, Debug)]
enum FactChoice {
    Lower(usize, u64),
    Upper(usize, u64),
    Order(usize, usize, u64),
    Offset(usize, usize),
    Div(usize, u64),
    SymDiv(usize, usize, u64),
    TreeLe(Tree, Tree),
}

fn fact_choice() -> impl Strategy<Value = FactChoice> {
    prop_oneof![
        (0usize..3, 0u64..9).prop_map(|(i, c)| FactChoice::Lower(i, c)),
        (0usize..3, 0u64..9).prop_map(|(i, c)| FactChoice::Upper(i, c)),
        (0usize..3, 0usize..3, 0u64..3).prop_map(|(i, j, c)| FactChoice::Order(i, j, c)),
        (0usize..3, 0usize..3).prop_map(|(i, j)| FactChoice::Offset(i, j)),
        (0usize..3, 2u64..5).prop_map(|(i, k)| FactChoice::Div(i, k)),
        (0usize..3, 0usize..3, 0u64..3).prop_map(|(i, j, c)| FactChoice::SymDiv(i, j, c)),
        (tree(), tree()).prop_map(|(a, b)| FactChoice::TreeLe(a, b)),
    ]
}

fn build_facts(choices: &[FactChoice], vals: &[u64; 3]) -> Facts {
    let mut f = Facts::new();
    let var = |i: usize| Nat::var(VARS[i]);
    for c in choices {
        let _ = match c {
            FactChoice::Lower(i, c) => f.add_ge(&var(*i), &Nat::lit((*c).min(vals[*i]))),
            FactChoice::Upper(i, c) => f.add_le(&var(*i), &Nat::lit((*c).max(vals[*i]))),
            FactChoice::Order(i, j, c) => {
                // var(i) + c' <= var(j) or the reverse, whichever holds
                let (lo, hi) = if vals[*i] <= vals[*j] { (*i, *j) } else { (*j, *i) };
                let c = (*c).min(vals[hi] - vals[lo]);
                f.add_le(&var(lo).add(&Nat::lit(c)).unwrap(), &var(hi))
            }
            FactChoice::Offset(i, j) if i != j && vals[*i] >= vals[*j] => {
                f.add_eq(&var(*i), &var(*j).add(&Nat::lit(vals[*i] - vals[*j])).unwrap())
            }
            FactChoice::Offset(..) => Ok(()),
            FactChoice::Div(i, k) => {
                let k = if vals[*i].checked_rem(*k) == Some(0) { *k } else { 1 };
                f.add_divides(&Nat::lit(k), &var(*i))
            }
            FactChoice::SymDiv(i, j, c) => {
                // var(j) | var(i) + c, when it holds
                let x = vals[*i] + c;
                let ok = x.checked_rem(vals[*j]).map_or(x == 0, |r| r == 0);
                if ok && i != j {
                    f.add_divides(&var(*j), &var(*i).add(&Nat::lit(*c)).unwrap())
                } else {
                    Ok(())
                }
            }
            FactChoice::TreeLe(a, b) => match (a.eval(vals), b.eval(vals), a.to_nat(), b.to_nat()) {
                (Some(x), Some(y), Ok(an), Ok(bn)) => {
                    if x <= y {
                        f.add_le(&an, &bn)
                    } else {
                        f.add_le(&bn, &an)
                    }
                }
                _ => Ok(()),
            },
        };
    }
    f
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn normal_form_evaluates_like_the_tree(t in tree(), vs in vals()) {
        if let Some(x) = t.eval(&vs) {
            let n = t.to_nat();
            prop_assert!(n.is_ok(), "{:?} failed to build: {:?}", t, n);
            let n = n.unwrap();
            prop_assert_eq!(eval_at(&n, &vs), Ok(x), "{:?} normalised to {}", t, n);
        }
    }

    #[test]
    fn normal_form_is_stable(t in tree(), vs in vals()) {
        // substituting the values and re-normalising gives the same constant
        if let (Some(x), Ok(n)) = (t.eval(&vs), t.to_nat()) {
            let mut c = n.clone();
            for (i, v) in VARS.iter().enumerate() {
                c = c.subst(v, &Nat::lit(vs[i])).unwrap();
            }
            prop_assert_eq!(c.as_const(), Some(i128::from(x)));
        }
    }

    #[test]
    fn display_is_deterministic(t in tree()) {
        if let Ok(n) = t.to_nat() {
            let again = t.to_nat().unwrap();
            prop_assert_eq!(n.to_string(), again.to_string());
        }
    }

    #[test]
    fn equal_proven_means_equal(a in tree(), b in tree(), vs in vals(), same in any::<bool>()) {
        // half of the time compare a with a rearranged copy of itself
        let b = if same { Tree::Sub(Box::new(Tree::Add(Box::new(b.clone()), Box::new(a.clone()))), Box::new(b)) } else { b };
        let (Ok(an), Ok(bn)) = (a.to_nat(), b.to_nat()) else { return Ok(()) };
        let f = Facts::new();
        let eq = f.equal(&an, &bn);
        if same && b.eval(&vs).is_some() {
            prop_assert_eq!(eq, Truth::Proven);
        }
        if let (Ok(x), Ok(y)) = (eval_at(&an, &vs), eval_at(&bn, &vs)) {
            match eq {
                Truth::Proven => prop_assert_eq!(x, y),
                Truth::Disproven => prop_assert_ne!(x, y),
                Truth::Unknown => {}
            }
        }
    }

    #[test]
    fn decisions_are_sound_under_facts(
        vs in vals(),
        choices in prop::collection::vec(fact_choice(), 0..5),
        a in tree(),
        b in tree(),
        k in 1u64..6,
    ) {
        let f = build_facts(&choices, &vs);
        let (Ok(an), Ok(bn)) = (a.to_nat(), b.to_nat()) else { return Ok(()) };
        let (Ok(x), Ok(y)) = (eval_at(&an, &vs), eval_at(&bn, &vs)) else { return Ok(()) };
        let ctx = format!("{an} vs {bn} at {vs:?} with {f:?}");
        match f.le(&an, &bn) {
            Truth::Proven => prop_assert!(x <= y, "le {}", ctx),
            Truth::Disproven => prop_assert!(x > y, "le {}", ctx),
            Truth::Unknown => {}
        }
        match f.lt(&an, &bn) {
            Truth::Proven => prop_assert!(x < y, "lt {}", ctx),
            Truth::Disproven => prop_assert!(x >= y, "lt {}", ctx),
            Truth::Unknown => {}
        }
        match f.equal(&an, &bn) {
            Truth::Proven => prop_assert_eq!(x, y, "eq {}", ctx),
            Truth::Disproven => prop_assert_ne!(x, y, "eq {}", ctx),
            Truth::Unknown => {}
        }
        match f.divides(&Nat::lit(k), &an) {
            Truth::Proven => prop_assert!(x % k == 0, "div {}", ctx),
            Truth::Disproven => prop_assert!(x % k != 0, "div {}", ctx),
            Truth::Unknown => {}
        }
        if y != 0 {
            match f.divides(&bn, &an) {
                Truth::Proven => prop_assert!(x % y == 0, "sdiv {}", ctx),
                Truth::Disproven => prop_assert!(x % y != 0, "sdiv {}", ctx),
                Truth::Unknown => {}
            }
        }
    }

    #[test]
    fn well_formed_means_natural(
        vs in vals(),
        choices in prop::collection::vec(fact_choice(), 0..5),
        a in tree(),
        b in tree(),
    ) {
        let f = build_facts(&choices, &vs);
        let (Some(x), Some(y)) = (a.eval(&vs), b.eval(&vs)) else { return Ok(()) };
        let (Ok(an), Ok(bn)) = (a.to_nat(), b.to_nat()) else { return Ok(()) };
        let ctx = format!("{an} vs {bn} at {vs:?} with {f:?}");
        if f.well_formed(SizeOp::Sub, &an, &bn).is_ok() {
            prop_assert!(y <= x, "sub {}", ctx);
        }
        if f.well_formed(SizeOp::Div, &an, &bn).is_ok() {
            prop_assert!(y >= 1, "div {}", ctx);
        }
        let (lo, hi) = f.range(&an);
        prop_assert!(lo.is_none_or(|lo| lo <= i128::from(x)), "range lo {} {:?}", ctx, (lo, hi));
        prop_assert!(hi.is_none_or(|hi| i128::from(x) <= hi), "range hi {} {:?}", ctx, (lo, hi));
        let c = strata_check::pow2::canonical(&an, &f);
        if c != an {
            prop_assert_eq!(eval_at(&c, &vs), Ok(x), "canonical {} of {}", c, ctx);
        }
    }

    #[test]
    fn decisions_with_fact_derived_goals(
        vs in vals(),
        choices in prop::collection::vec(fact_choice(), 1..5),
        i in 0usize..3,
        j in 0usize..3,
        c in 0u64..4,
        d in 1u64..5,
    ) {
        // goals shaped like the facts, so that Proven actually happens
        let f = build_facts(&choices, &vs);
        let var = |i: usize| Nat::var(VARS[i]);
        let goals = [
            (var(i).add(&Nat::lit(c)).unwrap(), var(j)),
            (var(i).div(&Nat::lit(d)).unwrap(), var(j)),
            (var(i).mul(&Nat::lit(d)).unwrap().add(&Nat::lit(c)).unwrap(), var(j).mul(&Nat::lit(d + 1)).unwrap()),
            (var(i).div(&Nat::lit(d)).unwrap().mul(&Nat::lit(d)).unwrap(), var(i)),
            (Nat::lit(c), var(i)),
            (var(i), Nat::lit(c + d)),
        ];
        for (a, b) in &goals {
            let (Ok(x), Ok(y)) = (eval_at(a, &vs), eval_at(b, &vs)) else { continue };
            let ctx = format!("{a} vs {b} at {vs:?} with {f:?}");
            match f.le(a, b) {
                Truth::Proven => prop_assert!(x <= y, "le {}", ctx),
                Truth::Disproven => prop_assert!(x > y, "le {}", ctx),
                Truth::Unknown => {}
            }
            match f.lt(a, b) {
                Truth::Proven => prop_assert!(x < y, "lt {}", ctx),
                Truth::Disproven => prop_assert!(x >= y, "lt {}", ctx),
                Truth::Unknown => {}
            }
            match f.equal(a, b) {
                Truth::Proven => prop_assert_eq!(x, y, "eq {}", ctx),
                Truth::Disproven => prop_assert_ne!(x, y, "eq {}", ctx),
                Truth::Unknown => {}
            }
            match f.divides(&Nat::lit(d), a) {
                Truth::Proven => prop_assert!(x % d == 0, "div {}", ctx),
                Truth::Disproven => prop_assert!(x % d != 0, "div {}", ctx),
                Truth::Unknown => {}
            }
        }
    }
}

#[test]
fn simultaneous_substitution_swaps_without_capture() {
    let (a, b) = (Nat::var("a"), Nat::var("b"));
    let e = a.mul(&Nat::lit(2)).unwrap().add(&b).unwrap(); // 2a + b
    let swapped = e
        .subst_all(&|v| match v {
            "a" => Some(Nat::var("b")),
            "b" => Some(Nat::var("a")),
            _ => None,
        })
        .unwrap();
    assert_eq!(swapped, b.mul(&Nat::lit(2)).unwrap().add(&a).unwrap()); // 2b + a
                                                                        // The identity substitution returns the expression unchanged.
    assert_eq!(e.subst_all(&|v| Some(Nat::var(v))).unwrap(), e);
}
