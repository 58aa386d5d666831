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
