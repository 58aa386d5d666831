//! Sizes bound at run time: `let n: nat = e;` in host code makes the value of `e` (a `u64` or
//! `u32`, e.g. the length of a loaded `.npy` file) a size variable for the rest of the block.
//!
//! The checker knows nothing about `n` but what the program proves, exactly as for a function's
//! `n: nat` parameter: facts come from conditions (`if n % 256 == 0 { … }`), loop ranges and
//! the `where` clauses of the functions it is passed to. Three rules keep that sound:
//!
//! - only host code binds sizes: a size is one value for every thread of a launch;
//! - a size name is never rebound while it is in scope, and every type, access and loan that
//!   mentions it is renamed apart when its scope ends, so a later binding of the same name (a
//!   sibling block, the next iteration of a loop) is a different, unrelated size;
//! - no type that mentions `n` leaves its scope (the value of the block that binds it), since
//!   outside the scope nothing says which value `n` had.

use super::*;

impl FnCx<'_> {
    /// Whether `l` is `let n: nat = …` (and `nat` is not a type parameter of the function).
    pub(super) fn is_size_binding(&self, l: &ast::LetStmt) -> bool {
        matches!(&l.ty, Some(ast::Ty { kind: ast::TyKind::Var(id), .. })
            if id.name == "nat" && !self.generics.contains_key("nat"))
    }

    /// Whether `name` is a size here: a generic, a constant, a loop counter or a bound size.
    pub(super) fn is_size_name(&self, name: &str) -> bool {
        self.generics.contains_key(name)
            || self.prog.consts.contains_key(name)
            || self.loop_nats.iter().any(|n| n == name)
            || self.bound_sizes.iter().any(|(n, _)| n == name)
    }

    pub(super) fn size_let(&mut self, l: &ast::LetStmt) {
        let name = &l.name;
        if self.level() != Level::Cpu {
            self.error(
                codes::WRONG_EXEC,
                name.span,
                format!("the size `{}` is bound by {}", name.name, self.level().describe()),
                "sizes are bound by host code (`-[t: cpu.thread]->`), so that every thread of a launch sees one value; pass it to the kernel as a size argument",
            );
            return;
        }
        if l.mutable || l.exec.is_some() {
            self.error(
                codes::ASSIGN_IMMUTABLE,
                name.span,
                format!("the size `{}` cannot be `mut`", name.name),
                "a size keeps its value; bind a new one with another name",
            );
        }
        if self.is_size_name(&name.name) {
            self.error(
                codes::DUPLICATE_DEFINITION,
                name.span,
                format!("`{}` shadows a size of the same name", name.name),
                "sizes cannot be shadowed; choose another name",
            );
            return;
        }
        let Some(init) = &l.init else {
            self.error(
                codes::UNINITIALISED,
                name.span,
                format!("the size `{}` is declared without a value", name.name),
                "give it a value: `let n: nat = e;` with `e` a `u64` or `u32`",
            );
            return;
        };
        let u64_ty = Ty::Scalar(ScalarTy::U64);
        let t = self.expr(init, Some(&u64_ty));
        match t {
            Ty::IntLit => self.retype_literals(init, &u64_ty),
            Ty::Nat | Ty::Error | Ty::Scalar(ScalarTy::U64 | ScalarTy::U32) => {}
            other => {
                self.error(
                    codes::MISMATCHED_TYPES,
                    init.span,
                    "mismatched types",
                    format!(
                        "a size is a natural number: bind it from a `u64` or `u32`, found `{other}` (convert a signed value with `as u64` after checking it is not negative)"
                    ),
                );
            }
        }
        self.types.lets.insert(name.span, Ty::Nat);
        self.holds_ref_at.insert(name.span, false);
        let depth = self.scopes.len();
        self.declare(Var {
            name: name.name.clone(),
            ty: Ty::Nat,
            owner: Owner::Chain(self.chain().len()),
            level: Level::Cpu,
            mutable: false,
            moved: None,
            loans: Vec::new(),
            nat: Some(Nat::var(&name.name)),
            span: name.span,
            depth,
            varies: Uni::Uniform,
            tracked: false,
            arms: 0,
        });
        self.bound_sizes.push((name.name.clone(), depth));
    }

    /// `ty`, the value of a block, may not mention the sizes the block binds.
    pub(super) fn check_no_escaping_size(&mut self, ty: &Ty, span: Span) {
        let depth = self.scopes.len();
        let escaping: Vec<String> = self
            .bound_sizes
            .iter()
            .filter(|(n, d)| *d == depth && ty_mentions(ty, n))
            .map(|(n, _)| n.clone())
            .collect();
        for n in escaping {
            self.error(
                codes::SIZE_ESCAPES,
                span,
                format!("the size `{n}` escapes the block that binds it"),
                format!(
                    "this value has type `{ty}`, but `{n}` means nothing after the block: bind `{n}` before the block, or use the value inside it"
                ),
            );
        }
    }

    /// The end of the scope at `depth`: its sizes are renamed apart everywhere they are still
    /// mentioned (accesses, loans, borrows), so that a later size of the same name is another.
    pub(super) fn end_bound_sizes(&mut self, depth: usize) {
        while let Some((name, d)) = self.bound_sizes.last() {
            if *d != depth {
                break;
            }
            let name = name.clone();
            self.bound_sizes.pop();
            let gone = Nat::var(&format!("{name}\u{5}{}", self.vars.len()));
            self.rename_nat_everywhere(&name, &gone);
        }
    }

    /// Replaces the size variable `name` by `to` in everything recorded so far that may outlive
    /// the variable's current value: accesses, the loans variables hold, live host borrows and
    /// the loans of the value being typed. Used when a size goes out of scope and, for a `for`
    /// counter, between the passes over a loop body (the previous iteration's `i` is another
    /// value than the current one).
    pub(super) fn rename_nat_everywhere(&mut self, name: &str, to: &Nat) {
        for a in &mut self.accesses {
            crate::place::rename_access_nat(a, name, to);
        }
        for v in &mut self.vars {
            for loan in &mut v.loans {
                crate::place::rename_nat(&mut loan.place, name, to);
            }
        }
        for b in &mut self.live_borrows {
            crate::place::rename_nat(&mut b.0, name, to);
        }
        for loan in &mut self.val_loans {
            crate::place::rename_nat(&mut loan.place, name, to);
        }
        // Work pending on a stream from an earlier iteration used that iteration's value.
        for p in &mut self.pending {
            crate::place::rename_nat(&mut p.place, name, to);
        }
    }
}

/// Whether the size variable `name` occurs in `ty`.
pub(super) fn ty_mentions(ty: &Ty, name: &str) -> bool {
    match ty {
        Ty::Array(t, n) | Ty::ViewArray(t, n) => n.mentions(name) || ty_mentions(t, name),
        Ty::Tuple(ts) => ts.iter().any(|t| ty_mentions(t, name)),
        Ty::Ref { ty, .. } | Ty::At(ty, _) => ty_mentions(ty, name),
        Ty::Scalar(_) | Ty::Var(_) | Ty::IntLit | Ty::FloatLit | Ty::Nat | Ty::Stream | Ty::Error => false,
    }
}
