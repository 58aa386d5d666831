//! The Strata IR ([`ir`]) and the lowering from checked syntax.

mod atomics;
pub mod collectives;
pub mod ir;
pub mod library;
pub mod lower;
mod thread_dep;
pub mod uniform;
pub mod validate;

pub use collectives::expand_warp_collectives;
pub use lower::lower;
