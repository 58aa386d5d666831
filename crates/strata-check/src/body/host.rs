//! Host ownership (I9 of docs/soundness.md): borrows bound in host code and their
//! non-lexical lifetimes.

use super::*;

impl FnCx<'_> {
    /// The host borrow made by the `let` initialiser at `span` in the current block is dead.
    pub(super) fn end_borrow(&mut self, span: Span) {
        if self.pinned_borrows.contains(&span) {
            return;
        }
        let depth = self.scopes.len();
        self.live_borrows.retain(|b| !(b.2 == span && b.3 == depth));
    }

    /// Host borrows written in `e` whose result may be stored in a variable declared at scope
    /// `depth`: they stay live until that scope ends (a conservative, lexical lifetime).
    pub(super) fn track_stored_borrows(&mut self, e: &ast::Expr, depth: usize) {
        if self.level() != Level::Cpu {
            return;
        }
        let mut borrows = Vec::new();
        crate::liveness::borrows_in(e, &mut borrows);
        for b in borrows {
            let ExprKind::Borrow { own, place, .. } = &b.kind else { continue };
            if let Some(info) = self.place_quiet(place) {
                if !info.via_alias {
                    self.live_borrows.push((info.place, *own, b.span, depth));
                }
            }
        }
    }

    /// Whether two places with the same root may overlap (for borrows and loans): they do unless a
    /// step tells them apart — different fields, indices the facts prove different (`h[m]` and
    /// `h[0]` may be the same element), or views proven disjoint (`take_left::<k>` against
    /// `take_right::<m>` with `k <= m`, runs of them whose ranges are apart). Any other difference
    /// (`h.reverse` against `h.take_left::<4>`, a view against an index) overlaps. A selection
    /// `[[e]]` against any other step is left to the conflict rule of GPU accesses, which decides
    /// it per thread.
    pub(super) fn steps_may_overlap(&self, a: &[PStep], b: &[PStep]) -> bool {
        for (k, (x, y)) in a.iter().zip(b).enumerate() {
            if x == y {
                continue;
            }
            return match (x, y) {
                (PStep::Index(Some(i)), PStep::Index(Some(j))) => {
                    self.facts.lt(i, j) != Truth::Proven && self.facts.lt(j, i) != Truth::Proven
                }
                (PStep::Index(_), PStep::Index(_)) => true,
                (PStep::Select(..), _) | (_, PStep::Select(..)) => false,
                _ => {
                    !(crate::place::disjoint(x, y, &self.facts)
                        || crate::place::take_ranges_apart(&a[k..], &b[k..], &self.facts))
                }
            };
        }
        true
    }

    /// Host (CPU) borrows follow Rust: no unique borrow while another borrow is live.
    pub(super) fn check_host_borrow(&mut self, place: &Place, own: Ownership, span: Span) {
        let clash = self.live_borrows.iter().find(|(p, o, _, _)| {
            p.root == place.root
                && (own == Ownership::Uniq || *o == Ownership::Uniq)
                && self.steps_may_overlap(&p.steps, &place.steps)
        });
        if let Some((_, o, at, _)) = clash {
            let name = self.vars[place.root].name.clone();
            let (o, at) = (*o, *at);
            self.report(
                Diagnostic::error(
                    codes::BORROW_CONFLICT,
                    format!(
                        "cannot borrow `{name}` as {} because it is also borrowed as {}",
                        own.keyword(),
                        o.keyword()
                    ),
                    span,
                    "borrowed here",
                )
                .with_label(at, "first borrow, still in use"),
            );
        }
    }
}
