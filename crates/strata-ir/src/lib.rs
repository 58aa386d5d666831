//! The Strata IR ([`ir`]) and the lowering from checked syntax.

pub mod ir;
pub mod lower;

pub use lower::lower;
