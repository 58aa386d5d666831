//! The Strata IR ([`ir`]) and the lowering from checked syntax.

pub mod ir;
pub mod lower;
pub mod validate;

pub use lower::lower;
