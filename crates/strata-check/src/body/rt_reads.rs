//! Checked reads at run-time indices (docs/language.md, "Run-time indices"): `x[col[e]]`, a
//! lookup table, a gather. A place whose index the type checker cannot bound may be *read*
//! (its value read, or borrowed `shrd`) outside `unsafe`; the index is then checked against the
//! indexed array's length when it runs (E0903 on every device). Such a read cannot race because
//! it is recorded in the access environment like every other read of shared memory: its index is
//! a run-time one, which no step tells apart from any other, so it conflicts with every write
//! to the same array in the same barrier interval, before or after it (`crate::place::conflicts`).
//! Writes and `uniq` borrows at a run-time index stay E0302 outside `unsafe`.

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
