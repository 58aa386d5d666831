//! The Strata type checker.
//!
//! So far this crate holds the symbolic arithmetic engine for natural-number sizes
//! ([`nat`]): normalised polynomials over size variables and opaque terms, and the
//! three-valued decision procedures (`==`, `<=`, `<`, divisibility) the checker uses to
//! prove side conditions from the facts a function signature states.

pub mod nat;
