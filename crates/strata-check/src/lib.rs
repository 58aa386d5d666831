//! The Strata type checker (section 4 of the Descend paper).
//!
//! [`check_module`] checks a parsed module against the prelude: names and kinds, symbolic sizes
//! ([`nat`]), data types ([`ty`]), execution resources ([`exec`]), views and selections, and the
//! extended borrow checker — narrowing and the access environment ([`place`]) — in [`body`].

mod body;
pub mod exec;
mod liveness;
pub mod nat;
pub mod place;
pub mod pow2;
pub mod program;
pub mod ty;

use strata_diag::{Diagnostic, FileId};
use strata_syntax::ast;

pub use body::TypeTable;

/// The result of checking a module.
#[derive(Debug, Default)]
pub struct Checked {
    /// Every error found, in source order.
    pub diagnostics: Vec<Diagnostic>,
    /// What lowering needs to know about the checked program.
    pub types: TypeTable,
}

/// Checks `module` and returns every error found, in source order.
///
/// `prelude_file` is the [`FileId`] under which the caller registered [`program::PRELUDE`], so
/// diagnostics that point into the prelude can be rendered. `defines` override `const` items.
pub fn check_module(module: &ast::Module, prelude_file: FileId, defines: &[(String, u64)]) -> Vec<Diagnostic> {
    check_program(module, prelude_file, defines).diagnostics
}

/// Like [`check_module`], also returning the inferred types.
pub fn check_program(module: &ast::Module, prelude_file: FileId, defines: &[(String, u64)]) -> Checked {
    let prelude = program::parse_prelude(prelude_file);
    let mut diags = Vec::new();
    let prog = program::Program::collect(&prelude, module, defines, &mut diags);
    let mut types = TypeTable::default();
    for item in &module.items {
        if let ast::Item::Fn(f) = item {
            if f.body.is_none() {
                continue;
            }
            if let Some(sig) = prog.fns.get(&f.name.name) {
                if sig.span != f.name.span {
                    continue; // a duplicate, already reported
                }
                let (d, t) = body::FnCx::new(&prog, sig).check(f);
                diags.extend(d);
                types.lets.extend(t.lets);
                types.literals.extend(t.literals);
                types.call_nats.extend(t.call_nats);
                types.shuffle_types.extend(t.shuffle_types);
                types.value_types.extend(t.value_types);
                types.selections.extend(t.selections);
                types.warp_syncs.extend(t.warp_syncs);
            }
        }
    }
    diags.sort_by_key(|d| (d.primary.span.file, d.primary.span.lo));
    // A loop body is checked twice (so one iteration meets the next): an error found while
    // lowering its sizes would be reported twice.
    let mut seen = std::collections::HashSet::new();
    diags.retain(|d| seen.insert((d.code, d.primary.span, d.message.clone(), d.primary.message.clone())));
    Checked { diagnostics: diags, types }
}

/// The checker's program environment (signatures, views, constants) for later phases.
pub fn program_env(module: &ast::Module, prelude: &ast::Module, defines: &[(String, u64)]) -> program::Program {
    let mut diags = Vec::new();
    program::Program::collect(prelude, module, defines, &mut diags)
}

#[cfg(test)]
mod tests {
    #[test]
    fn prelude_parses_cleanly() {
        let parsed = strata_syntax::parse(strata_diag::FileId(0), crate::program::PRELUDE);
        assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
    }
}
