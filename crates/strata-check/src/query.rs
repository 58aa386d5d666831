//! What the checker knows about positions in a program, for tools (the language server's hover
//! and go to definition): read-only facts recorded while checking, only when asked for
//! ([`crate::check_program_recording`]); checking without them records nothing.
//!
//! Facts are keyed by the span of the expression or name they describe. A loop body is checked
//! more than once; the last pass (the one with the loop's loans stable) wins.

use crate::exec::Level;
use crate::ty::{Mem, Ty};
use std::collections::HashMap;
use strata_diag::{FileId, Span};

/// What the checker found about one typed expression.
#[derive(Clone, Debug)]
pub struct ExprFact {
    /// Its type.
    pub ty: Ty,
    /// The execution resource evaluating it (`t`, `block`, a `sched` binder's name) and its
    /// level.
    pub exec: String,
    pub level: Level,
    /// On the GPU: how far its value may differ between threads (`uniform`, `block`, `warp`,
    /// `thread`: the finest level whose members may disagree on it).
    pub uniformity: Option<&'static str>,
    /// The memory space it is read from, for a read through a reference.
    pub mem: Option<Mem>,
}

/// A variable declaration (a parameter, a `let`, a loop counter).
#[derive(Clone, Debug)]
pub struct DeclFact {
    pub name: String,
    pub ty: Ty,
    /// The level of the resource that declared it.
    pub level: Level,
    pub mutable: bool,
}

/// Every fact recorded while checking a module.
#[derive(Clone, Debug, Default)]
pub struct Recorded {
    /// Typed expressions, by span.
    pub exprs: HashMap<Span, ExprFact>,
    /// Variable declarations, by the span of the name.
    pub decls: HashMap<Span, DeclFact>,
    /// Uses of variables: the span of the use to the span of the declaration's name.
    pub uses: HashMap<Span, Span>,
}

impl Recorded {
    /// Adds the facts of `other` (another function's).
    pub fn extend(&mut self, other: Recorded) {
        self.exprs.extend(other.exprs);
        self.decls.extend(other.decls);
        self.uses.extend(other.uses);
    }

    /// The innermost typed expression of `file` whose span contains byte `offset` (an offset
    /// at the end of a span counts: the cursor right after a name is on it).
    pub fn expr_at(&self, file: FileId, offset: u32) -> Option<(Span, &ExprFact)> {
        innermost(&self.exprs, file, offset)
    }

    /// [`Recorded::expr_at`] among the expressions for which `keep` holds.
    pub fn expr_at_where(
        &self,
        file: FileId,
        offset: u32,
        keep: impl Fn(&ExprFact) -> bool,
    ) -> Option<(Span, &ExprFact)> {
        self.exprs
            .iter()
            .filter(|(s, e)| s.file == file && s.lo <= offset && offset <= s.hi && keep(e))
            .min_by_key(|(s, _)| (s.hi.saturating_sub(s.lo), s.lo))
            .map(|(s, e)| (*s, e))
    }

    /// The declaration whose name contains `offset`.
    pub fn decl_at(&self, file: FileId, offset: u32) -> Option<(Span, &DeclFact)> {
        innermost(&self.decls, file, offset)
    }

    /// The use of a variable at `offset`, and the span of its declaration's name.
    pub fn use_at(&self, file: FileId, offset: u32) -> Option<(Span, Span)> {
        innermost(&self.uses, file, offset).map(|(s, d)| (s, *d))
    }
}

fn innermost<T>(map: &HashMap<Span, T>, file: FileId, offset: u32) -> Option<(Span, &T)> {
    map.iter()
        .filter(|(s, _)| s.file == file && s.lo <= offset && offset <= s.hi)
        .min_by_key(|(s, _)| (s.hi.saturating_sub(s.lo), s.lo))
        .map(|(s, t)| (*s, t))
}
