//! Power-of-two forms of sizes (`strata_check::pow2`).

use strata_check::nat::{Facts, Nat};
use strata_check::pow2::*;

fn k_below(bound: u64) -> Facts {
    let mut f = Facts::new();
    f.add_lt(&Nat::var("k"), &Nat::lit(bound)).unwrap();
    f
}

fn pow2k() -> Nat {
    Nat::lit(2).pow(&Nat::var("k")).unwrap()
}

#[test]
fn halving_sizes_stay_even_while_the_exponent_allows() {
    let facts = k_below(8);
    let n = Nat::lit(256).div(&pow2k()).unwrap();
    assert!(divides(&facts, &Nat::lit(2), &n)); // k <= 7
    assert!(positive(&facts, &Nat::lit(128).div(&pow2k()).unwrap()));
    assert!(divides(&facts, &Nat::lit(128).div(&pow2k()).unwrap(), &n));
    let loose = k_below(9);
    assert!(!divides(&loose, &Nat::lit(2), &n)); // k = 8 gives 1
}

#[test]
fn quotients_of_powers_simplify() {
    let facts = k_below(8);
    let a = Nat::lit(256).div(&pow2k()).unwrap();
    let b = Nat::lit(128).div(&pow2k()).unwrap();
    assert_eq!(simplify(&a.div(&b).unwrap(), &facts), Nat::lit(2));
    assert!(equal(&facts, &Nat::lit(2).mul(&b).unwrap(), &a));
}

#[test]
fn no_form_means_no_claim() {
    let facts = Facts::new();
    let n = Nat::var("n");
    assert!(!divides(&facts, &Nat::lit(2), &n));
    assert!(!divides(&facts, &Nat::lit(3), &Nat::lit(256)));
    assert!(form(&Nat::lit(6).add(&n).unwrap(), &facts).is_none());
}

#[test]
fn a_power_needs_a_natural_exponent() {
    // 2^(k - 1) for k ranging from 0 is not a power of two in the first iteration: no form, so
    // neither "at least 1" nor "divides 256" is claimed.
    let mut from0 = Facts::new();
    from0.add_le(&Nat::lit(0), &Nat::var("k")).unwrap();
    from0.add_lt(&Nat::var("k"), &Nat::lit(9)).unwrap();
    let km1 = Nat::var("k").sub(&Nat::lit(1)).unwrap();
    let p = Nat::lit(2).pow(&km1).unwrap();
    assert!(form(&p, &from0).is_none());
    assert!(!positive(&from0, &p));
    assert!(!divides(&from0, &p, &Nat::lit(256)));
    let mut from1 = Facts::new();
    from1.add_le(&Nat::lit(1), &Nat::var("k")).unwrap();
    from1.add_lt(&Nat::var("k"), &Nat::lit(9)).unwrap();
    assert!(positive(&from1, &p));
    assert!(divides(&from1, &p, &Nat::lit(256)));
}

#[test]
fn powers_of_four_are_powers_of_two() {
    let facts = k_below(4);
    let four_k = Nat::lit(4).pow(&Nat::var("k")).unwrap();
    let f = form(&four_k, &facts).unwrap();
    assert_eq!((f.odd, f.exp.to_string()), (1, "2*k".to_string()));
    assert!(divides(&facts, &four_k, &Nat::lit(64)));
}

#[test]
fn ordering_by_exponents() {
    let facts = k_below(8);
    let p = pow2k();
    let half = Nat::lit(128).div(&p).unwrap();
    let whole = Nat::lit(256).div(&p).unwrap();
    assert!(le(&facts, &half, &whole)); // exponents 7 - k and 8 - k
    assert!(!le(&facts, &whole, &half));
    assert!(le(&facts, &p, &Nat::lit(128))); // 2^k against 2^7, k <= 7
    assert!(!le(&facts, &p, &Nat::lit(64)));
    assert!(le(&facts, &Nat::lit(3).mul(&half).unwrap(), &Nat::lit(2).mul(&whole).unwrap()));
    // the difference of two powers: 0 <= 2^8 - 2^k
    assert!(le(&facts, &Nat::zero(), &Nat::lit(256).sub(&p).unwrap()));
}

#[test]
fn canonical_shares_one_atom() {
    let facts = k_below(8);
    let p = pow2k();
    let half = Nat::lit(128).div(&p).unwrap();
    let whole = Nat::lit(256).div(&p).unwrap();
    let c = canonical(&whole.sub(&half).unwrap(), &facts);
    assert_eq!(c.to_string(), "2^(-k + 7)");
    assert_eq!(canonical(&half, &facts), c);
    // without a bound on k the quotients are not exact: nothing changes
    let none = Facts::new();
    assert_eq!(canonical(&whole, &none), whole);
}
