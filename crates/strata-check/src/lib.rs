//! The Strata type checker (section 4 of the Descend paper).
//!
//! [`check_module`] checks a parsed module against the prelude: names and kinds, symbolic sizes
//! ([`nat`]), data types ([`ty`]), execution resources ([`exec`]), views and selections, and the
//! extended borrow checker — narrowing and the access environment ([`place`]) — in [`body`].

mod body;
pub mod exec;
pub mod nat;
pub mod place;
pub mod pow2;
pub mod program;
pub mod ty;

use strata_diag::{Diagnostic, FileId};
use strata_syntax::ast;

/// Checks `module` and returns every error found, in source order.
///
/// `prelude_file` is the [`FileId`] under which the caller registered [`program::PRELUDE`], so
/// diagnostics that point into the prelude can be rendered. `defines` override `const` items.
pub fn check_module(module: &ast::Module, prelude_file: FileId, defines: &[(String, u64)]) -> Vec<Diagnostic> {
    let prelude = program::parse_prelude(prelude_file);
    let mut diags = Vec::new();
    let prog = program::Program::collect(&prelude, module, defines, &mut diags);
    for item in &module.items {
        if let ast::Item::Fn(f) = item {
            if f.body.is_none() {
                continue;
            }
            if let Some(sig) = prog.fns.get(&f.name.name) {
                if sig.span != f.name.span {
                    continue; // a duplicate, already reported
                }
                diags.extend(body::FnCx::new(&prog, sig).check(f));
            }
        }
    }
    diags.sort_by_key(|d| (d.primary.span.file, d.primary.span.lo));
    diags
}

#[cfg(test)]
mod tests {
    #[test]
    fn prelude_parses_cleanly() {
        let parsed = strata_syntax::parse(strata_diag::FileId(0), crate::program::PRELUDE);
        assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
    }
}
