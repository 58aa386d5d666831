//! The Strata type checker (section 4 of the Descend paper).
//!
//! [`check_module`] checks a parsed module against the prelude: names and kinds, symbolic sizes
//! ([`nat`]), data types ([`ty`]), execution resources ([`exec`]), views and selections, and the
//! extended borrow checker — narrowing and the access environment ([`place`]) — in [`body`].

mod body;
pub mod exec;
mod liveness;
pub mod nat;
pub mod npy;
pub mod place;
pub mod pow2;
pub mod program;
pub mod query;
pub mod target;
pub mod ty;

use strata_diag::{Diagnostic, FileId};
use strata_syntax::ast;

pub use body::TypeTable;
pub use target::TargetProfile;

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
/// The GPU limits are those of [`target::DEFAULT_ARCH`]; see [`check_module_for`].
pub fn check_module(module: &ast::Module, prelude_file: FileId, defines: &[(String, u64)]) -> Vec<Diagnostic> {
    check_program(module, prelude_file, defines).diagnostics
}

/// Like [`check_module`], also returning the inferred types.
pub fn check_program(module: &ast::Module, prelude_file: FileId, defines: &[(String, u64)]) -> Checked {
    check_program_for(module, prelude_file, defines, TargetProfile::default_profile())
}

/// [`check_module`] for the limits of the GPU architecture `profile` (`--arch`).
pub fn check_module_for(
    module: &ast::Module,
    prelude_file: FileId,
    defines: &[(String, u64)],
    profile: &TargetProfile,
) -> Vec<Diagnostic> {
    check_program_for(module, prelude_file, defines, profile).diagnostics
}

/// [`check_program`] for the limits of the GPU architecture `profile` (`--arch`).
pub fn check_program_for(
    module: &ast::Module,
    prelude_file: FileId,
    defines: &[(String, u64)],
    profile: &TargetProfile,
) -> Checked {
    check(module, prelude_file, defines, profile, false)
}

/// [`check_program_for`], also recording what tools may ask about positions in the program
/// (`types.query`, see [`query`]). The diagnostics are the same.
pub fn check_program_recording(
    module: &ast::Module,
    prelude_file: FileId,
    defines: &[(String, u64)],
    profile: &TargetProfile,
) -> Checked {
    check(module, prelude_file, defines, profile, true)
}

fn check(
    module: &ast::Module,
    prelude_file: FileId,
    defines: &[(String, u64)],
    profile: &TargetProfile,
    recording: bool,
) -> Checked {
    let prelude = program::parse_prelude(prelude_file);
    let mut diags = Vec::new();
    let prog = program::Program::collect(&prelude, module, defines, &mut diags);
    let mut types = TypeTable::default();
    let mut summaries = body::Summaries::new();
    let mut shared_uses = target::SharedUses::new();
    let fns: Vec<&ast::FnDecl> = module
        .items
        .iter()
        .filter_map(|item| match item {
            ast::Item::Fn(f) if f.body.is_some() => Some(f),
            _ => None,
        })
        .collect();
    // Callees first, so that a call can use its callee's summary (a recursive call cannot: it
    // is then checked without one).
    for f in callees_first(&fns) {
        if let Some(sig) = prog.fns.get(&f.name.name) {
            if sig.span != f.name.span {
                continue; // a duplicate, already reported
            }
            let (d, t, summary, shared) =
                body::FnCx::new(&prog, sig, &summaries).for_target(profile, &shared_uses).recording(recording).check(f);
            if let Some(s) = summary {
                summaries.insert(f.name.name.clone(), s);
            }
            diags.extend(d);
            let found = body::check_signature_limits(profile, f, sig, &shared, &diags);
            diags.extend(found);
            shared_uses.insert(f.name.name.clone(), shared);
            types.lets.extend(t.lets);
            types.literals.extend(t.literals);
            types.call_nats.extend(t.call_nats);
            types.call_types.extend(t.call_types);
            types.shuffle_types.extend(t.shuffle_types);
            types.npy_types.extend(t.npy_types);
            types.async_copy_types.extend(t.async_copy_types);
            types.value_types.extend(t.value_types);
            types.selections.extend(t.selections);
            types.warp_syncs.extend(t.warp_syncs);
            types.call_fns.extend(t.call_fns);
            types.call_dtys.extend(t.call_dtys);
            types.query.extend(t.query);
        }
    }
    // Kernels declared without a body have a type too: their grids, blocks and shared-memory
    // parameters are checked against the target all the same.
    for item in &module.items {
        if let ast::Item::Fn(f) = item {
            if let Some(sig) = prog.fns.get(&f.name.name).filter(|s| s.span == f.name.span && f.body.is_none()) {
                let shared = body::params_shared_use(sig);
                let found = body::check_signature_limits(profile, f, sig, &shared, &diags);
                diags.extend(found);
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

/// The functions in an order where every function comes after the functions it calls, except
/// along a cycle of calls.
fn callees_first<'a>(fns: &[&'a ast::FnDecl]) -> Vec<&'a ast::FnDecl> {
    fn calls_in_block(b: &ast::Block, out: &mut Vec<String>) {
        for s in &b.stmts {
            match s {
                ast::Stmt::Let(l) => {
                    if let Some(x) = &l.init {
                        calls(x, out);
                    }
                }
                ast::Stmt::Expr { expr, .. } => calls(expr, out),
            }
        }
    }
    fn calls(e: &ast::Expr, out: &mut Vec<String>) {
        use ast::ExprKind as K;
        let block = calls_in_block;
        match &e.kind {
            K::Call { func, args, .. } => {
                if func.len() == 1 {
                    out.push(func[0].name.clone());
                }
                args.iter().for_each(|a| calls(a, out));
            }
            K::Lit(_) | K::Path(_) | K::Sync(_) | K::Error | K::Return(None) | K::Break | K::Continue => {}
            K::Unary(_, x)
            | K::Cast(x, _)
            | K::Field(x, _)
            | K::Deref(x)
            | K::Select(x, _)
            | K::View(x, _)
            | K::Paren(x)
            | K::Unsafe(x)
            | K::ArrayRepeat(x, _)
            | K::Return(Some(x))
            | K::Borrow { place: x, .. } => calls(x, out),
            K::Binary(_, a, b) | K::Index(a, b) | K::Assign(a, b) | K::CompoundAssign(_, a, b) => {
                calls(a, out);
                calls(b, out);
            }
            K::Tuple(xs) | K::ArrayList(xs) => xs.iter().for_each(|x| calls(x, out)),
            K::Block(b) | K::For { body: b, .. } | K::Sched { body: b, .. } => block(b, out),
            K::While { cond, body } => {
                calls(cond, out);
                block(body, out);
            }
            K::If { cond, then, els } => {
                calls(cond, out);
                block(then, out);
                if let Some(x) = els {
                    calls(x, out);
                }
            }
            K::Split { arms, .. } => arms.iter().for_each(|a| calls(&a.body, out)),
        }
    }
    fn visit<'a>(
        i: usize,
        fns: &[&'a ast::FnDecl],
        callees: &[Vec<usize>],
        state: &mut [u8],
        out: &mut Vec<&'a ast::FnDecl>,
    ) {
        if state[i] != 0 {
            return; // done, or on the current path (a cycle)
        }
        state[i] = 1;
        for &j in &callees[i] {
            visit(j, fns, callees, state, out);
        }
        state[i] = 2;
        out.push(fns[i]);
    }
    let index: std::collections::HashMap<&str, usize> =
        fns.iter().enumerate().map(|(i, f)| (f.name.name.as_str(), i)).collect();
    let callees: Vec<Vec<usize>> = fns
        .iter()
        .map(|f| {
            let mut names = Vec::new();
            if let Some(b) = &f.body {
                calls_in_block(b, &mut names);
            }
            names.iter().filter_map(|n| index.get(n.as_str()).copied()).collect()
        })
        .collect();
    let mut state = vec![0u8; fns.len()];
    let mut out = Vec::with_capacity(fns.len());
    for i in 0..fns.len() {
        visit(i, fns, &callees, &mut state, &mut out);
    }
    out
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
