//! Checked reads at run-time indices (docs/language.md, "Run-time indices"): `x[col[e]]`, a
//! lookup table, a gather. A place whose index the type checker cannot bound may be *read*
//! (its value read, or borrowed `shrd`) outside `unsafe`; the index is then checked against the
//! indexed array's length when it runs (E0903 on every device). Such a read cannot race because
//! it is recorded in the access environment like every other read of shared memory: its index is
//! a run-time one, which no step tells apart from any other, so it conflicts with every write
//! to the same array in the same barrier interval, before or after it (`crate::place::conflicts`).
//! Writes and `uniq` borrows at a run-time index stay E0302 outside `unsafe`, except into an
//! array that only the executing thread can reach ([`FnCx::own_private_array`]).

use super::*;

impl FnCx<'_> {
    /// Types the place `e` as [`FnCx::place`] does; `read_only` says whether the place is only
    /// read (a read of its value, a `shrd` borrow), where a run-time index is allowed. The flag
    /// is restored afterwards (an index expression inside a written place is itself only read).
    pub(super) fn place_read_only(&mut self, e: &ast::Expr, read_only: bool) -> Option<PlaceInfo> {
        let saved = std::mem::replace(&mut self.rt_index_read, read_only);
        let info = self.place(e);
        self.rt_index_read = saved;
        info
    }

    /// E0302 for a run-time index in a place that is written or borrowed `uniq` outside
    /// `unsafe`.
    pub(super) fn run_time_index_written(&mut self, span: Span) {
        self.error(
            codes::INDEX_OUT_OF_BOUNDS,
            span,
            "cannot prove that this index is in bounds",
            "a run-time index: only a place that is read (or borrowed `shrd`) may have one outside `unsafe`; a write or a `uniq` borrow needs an index the type checker can bound",
        );
    }

    /// Whether every place of `infos` is part of a plain `let` array of the executing thread (a
    /// thread's or lane's local in GPU code, a local of host code) or of host heap memory the
    /// host code owns (`CpuHeap`, dereferenced once), reached without a reference, a selection or
    /// a view (a tuple holding an array too: `p.0[j]`): no other thread can reach it, so a write at a run-time index cannot race and only
    /// its bound is in question, which is checked when it runs as a read's is (CUDA's
    /// `int cnt[4]; cnt[key]++`). Shared memory and a block's or warp's variables are not.
    pub(super) fn own_private_array(&self, infos: &[PlaceInfo]) -> bool {
        let private = |info: &PlaceInfo| {
            let Some(var) = self.vars.get(info.place.root) else { return false };
            let steps = &info.place.steps;
            let (plain, rest) = match (&var.ty, var.level, info.mem.as_ref()) {
                (Ty::Array(..) | Ty::Tuple(..), Level::Thread | Level::Cpu, None) => (true, &steps[..]),
                (Ty::At(_, Mem::CpuMem), Level::Cpu, Some(Mem::CpuMem)) => {
                    (steps.first() == Some(&PStep::Deref), steps.get(1..).unwrap_or(&[]))
                }
                _ => (false, &steps[..]),
            };
            plain
                && !info.via_alias
                && matches!(var.owner, Owner::Chain(_))
                && var.nat.is_none()
                && rest.iter().all(|s| matches!(s, PStep::Index(_) | PStep::Field(_)))
        };
        !infos.is_empty() && infos.iter().all(|i| private(i) && i.alts.iter().all(private))
    }

    /// [`FnCx::read_uni`] of a place read here: where the place is written out in the expression
    /// (not reached through a reference variable's loans), its run-time indices were typed as
    /// part of it and their uniformity is already in `self.varies`, so a run-time index adds
    /// nothing of its own (the memory it reads is not written in the interval, so threads that
    /// agree on the index read the same value). Through an alias the index is not known here:
    /// a run-time index is thread-level.
    pub(super) fn read_uni_here(&self, info: &PlaceInfo) -> Uni {
        if info.via_alias || !info.place.steps.iter().any(|s| matches!(s, PStep::Index(None))) {
            return self.read_uni(info);
        }
        let mut direct = info.clone();
        direct.place.steps.retain(|s| !matches!(s, PStep::Index(None)));
        self.read_uni(&direct)
    }
}
