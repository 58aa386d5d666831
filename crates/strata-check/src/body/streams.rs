//! Streams (I10 of docs/soundness.md): work issued on a stream (a launch `k::<<<g, b, s>>>(…)`,
//! an asynchronous copy) runs later, concurrently with the host and with other streams, so the
//! loans it takes on its arguments stay live until the stream is synchronised.
//!
//! The checker models a stream like a variable that holds the references its pending work was
//! given: each argument's loans become [`StreamLoan`]s of the stream, and `stream_sync(&s)` (or
//! `device_sync()`) ends them. While a loan is pending, a `uniq` one forbids every other use of
//! its memory and a `shrd` one every write, unique borrow, move and free, by the host, by work on
//! the default stream and by work on any other stream. Work on the same stream is ordered after
//! it, so it may use the same memory in any way (the pipelined pattern: copy in, kernel, copy out
//! on one stream with one `uniq` buffer). A stream may not go out of scope, nor a function
//! return, with work pending: the program must synchronise it first.

use super::*;

/// One loan held by work pending on a stream.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct StreamLoan {
    /// The variable of the stream (a `Stream`, or a `&Stream` parameter).
    pub stream: usize,
    pub place: Place,
    pub own: Ownership,
    /// The operation that took the loan (the launch or the copy).
    pub op: Span,
    /// The argument of that operation.
    pub arg: Span,
}

/// How the current code uses memory that pending work may hold.
#[derive(Copy, Clone, PartialEq, Eq)]
pub(super) enum PendingUse {
    Read,
    Write,
    Borrow(Ownership),
    Move,
    Free,
}

impl From<Mode> for PendingUse {
    fn from(m: Mode) -> PendingUse {
        match m {
            Mode::Read => PendingUse::Read,
            Mode::Write => PendingUse::Write,
            Mode::Borrow(o) => PendingUse::Borrow(o),
        }
    }
}

/// Adds the pending loans of `more` that `into` does not hold yet (the join of two paths).
pub(super) fn union_pending(into: &mut Vec<StreamLoan>, more: impl IntoIterator<Item = StreamLoan>) {
    for l in more {
        if !into.contains(&l) {
            into.push(l);
        }
    }
}

/// The prelude functions that issue work on the stream given as their last argument.
pub(super) const ASYNC_COPIES: &[&str] = &["copy_mem_to_gpu_async", "copy_mem_to_host_async"];

impl FnCx<'_> {
    /// The streams an expression of type `Stream` or `&Stream` may denote, as variables: `&s`,
    /// `r` (a reference that may hold several loans), a `&Stream` parameter (its own stream).
    /// `None` when it is no stream.
    pub(super) fn stream_keys(&mut self, e: &ast::Expr) -> Option<Vec<usize>> {
        let mut e = e;
        while let ExprKind::Paren(inner) = &e.kind {
            e = inner;
        }
        let (info, borrowed) = match &e.kind {
            ExprKind::Borrow { place, .. } => (self.place_quiet(place)?, true),
            _ => (self.place_quiet(e)?, false),
        };
        let mut keys = Vec::new();
        for t in info.targets() {
            match &t.ty {
                Ty::Stream => {
                    // A stream reached through a reference parameter is that parameter's stream.
                    let k = t.place.root;
                    if !keys.contains(&k) {
                        keys.push(k);
                    }
                }
                Ty::Ref { ty, .. } if !borrowed && **ty == Ty::Stream => {
                    for l in self.loans_of_read(t, Ownership::Shrd) {
                        if !keys.contains(&l.place.root) {
                            keys.push(l.place.root);
                        }
                    }
                }
                _ => return None,
            }
        }
        (!keys.is_empty()).then_some(keys)
    }

    fn stream_names(&self, keys: &[usize]) -> String {
        keys.iter().map(|k| format!("`{}`", self.vars[*k].name)).collect::<Vec<_>>().join(" or ")
    }

    /// Whether pending loan `p` and a use of `place` may touch the same memory. A use of a
    /// reference variable itself (copying it, re-pointing it) is no use of what it points to.
    fn pending_overlaps(&self, p: &Place, place: &Place) -> bool {
        if p.root != place.root {
            return false;
        }
        // (An owning pointer `T @ m` is dereferenced the same way, but freeing or moving it is a
        // use of its memory: only a variable of reference type is exempt.)
        if place.steps.is_empty()
            && matches!(p.steps.first(), Some(PStep::Deref))
            && matches!(self.vars[place.root].ty, Ty::Ref { .. })
        {
            return false;
        }
        for (x, y) in p.steps.iter().zip(&place.steps) {
            if x == y {
                continue;
            }
            return match (x, y) {
                (PStep::Field(a), PStep::Field(b)) => a == b,
                (PStep::Index(Some(i)), PStep::Index(Some(j))) => {
                    self.facts.lt(i, j) != Truth::Proven && self.facts.lt(j, i) != Truth::Proven
                }
                // Views and selections: not decided here, so they may overlap.
                _ => true,
            };
        }
        true
    }

    /// Host code uses `place` (`how`) at `span`: an error if work pending on a stream may still
    /// use it in a conflicting way. Work on the streams `exempt` (the one being issued) is
    /// ordered before the use.
    pub(super) fn check_pending(&mut self, place: &Place, how: PendingUse, span: Span, exempt: Option<&[usize]>) {
        if self.pending.is_empty() || self.on_gpu() {
            return;
        }
        let same = |k: usize| matches!(exempt, Some([only]) if *only == k);
        let clash = self
            .pending
            .iter()
            .find(|p| {
                !same(p.stream)
                    && self.pending_overlaps(&p.place, place)
                    && (p.own == Ownership::Uniq
                        || !matches!(how, PendingUse::Read | PendingUse::Borrow(Ownership::Shrd)))
            })
            .cloned();
        let Some(p) = clash else { return };
        let name = self.vars[place.root].name.clone();
        let stream = self.vars[p.stream].name.clone();
        let (message, label) = match how {
            PendingUse::Read => ("use", "used here"),
            PendingUse::Write => ("assign to", "assigned here"),
            PendingUse::Borrow(Ownership::Uniq) => ("borrow uniquely", "borrowed here"),
            PendingUse::Borrow(Ownership::Shrd) => ("borrow", "borrowed here"),
            PendingUse::Move => ("move", "moved here"),
            PendingUse::Free => ("free", "freed here, at the end of its block"),
        };
        let by = match exempt {
            Some(keys) => format!(" by work on {}", self.stream_names(keys)),
            None => String::new(),
        };
        self.report(
            Diagnostic::error(
                codes::STREAM_PENDING,
                format!("cannot {message} `{name}` while work pending on stream `{stream}` may use it"),
                span,
                format!("{label}{by}"),
            )
            .with_label(
                p.arg,
                format!("borrowed as {} by this work on `{stream}`, until `{stream}` is synchronised", p.own.keyword()),
            )
            .with_label(p.op, format!("issued on `{stream}` here"))
            .with_note(format!(
                "help: wait for the stream first: `stream_sync(&{stream});` (or `device_sync();`), or issue this on `{stream}` too"
            )),
        );
    }

    /// Work issued on the streams `keys` at `op` takes the loans of its arguments: checked
    /// against the work pending elsewhere, then pending until the stream is synchronised.
    pub(super) fn issue_on_stream(&mut self, keys: &[usize], loans: Vec<(Place, Ownership, Span)>, op: Span) {
        for (place, own, arg) in loans {
            for &stream in keys {
                let l = StreamLoan { stream, place: place.clone(), own, op, arg };
                if !self.pending.contains(&l) {
                    self.pending.push(l);
                }
            }
        }
    }

    /// `stream_sync(s)`: the work of `s` is done (only when `s` is known: a reference that may
    /// denote several streams synchronises none of them for sure).
    pub(super) fn sync_streams(&mut self, keys: &[usize]) {
        if let [k] = keys {
            self.pending.retain(|p| p.stream != *k);
        }
    }

    /// The end of the block of the variables `scope`: a stream among them must have no pending
    /// work, and no work may still use one of them (it is freed here).
    pub(super) fn end_scope_streams(&mut self, scope: &[usize], end: Span) {
        if self.pending.is_empty() {
            return;
        }
        let dropped: Vec<StreamLoan> = self.pending.iter().filter(|p| scope.contains(&p.stream)).cloned().collect();
        if let Some(p) = dropped.first() {
            let stream = self.vars[p.stream].name.clone();
            self.report(
                Diagnostic::error(
                    codes::STREAM_NOT_SYNCED,
                    format!("stream `{stream}` goes out of scope with work pending"),
                    end,
                    format!("`{stream}` ends here"),
                )
                .with_label(p.op, format!("work issued on `{stream}` here, never synchronised"))
                .with_note(format!("help: wait for it before its block ends: `stream_sync(&{stream});`")),
            );
        }
        self.pending.retain(|p| !scope.contains(&p.stream));
        for &v in scope {
            let place = Place { root: v, steps: Vec::new() };
            if matches!(self.vars[v].ty, Ty::Ref { .. }) {
                continue;
            }
            self.check_pending(&place, PendingUse::Free, end, None);
            self.pending.retain(|p| p.place.root != v);
        }
    }

    /// A `return` or the end of a function body: no work may be pending on any stream (the
    /// function's memory is freed, and the caller does not know of the work).
    pub(super) fn check_no_pending(&mut self, span: Span) {
        if let Some(p) = self.pending.first().cloned() {
            let stream = self.vars[p.stream].name.clone();
            self.report(
                Diagnostic::error(
                    codes::STREAM_NOT_SYNCED,
                    format!("the function returns while work on stream `{stream}` is pending"),
                    span,
                    "returns here",
                )
                .with_label(p.op, format!("work issued on `{stream}` here, never synchronised"))
                .with_note(format!("help: wait for it first: `stream_sync(&{stream});` (or `device_sync();`)")),
            );
            self.pending.clear();
        }
    }

    /// E0509: a stream used as a value, or where only a `let` may make one.
    pub(super) fn stream_misuse(&mut self, span: Span, message: &str, label: &str) {
        self.error(codes::STREAM_MISUSE, span, message.to_string(), label.to_string());
    }
}
