//! The access environment and narrowing (I2, I3, I5 of docs/soundness.md): what a write or
//! borrow must select through, conflicts between accesses since the last barrier, and what a
//! barrier releases.

use super::*;

impl FnCx<'_> {
    /// A declaration checked again (a loop body's second pass) declares the same memory as the
    /// first time: shared memory declared in a loop is one buffer for all iterations, so the
    /// accesses left by the previous iteration (and references into it) now concern this one.
    pub(super) fn same_memory_as_earlier_pass(&mut self, id: usize) {
        let span = self.vars[id].span;
        // Found through a map: scanning every earlier variable made a body of n `let`s take
        // time n² (a 5 MB line of `let`s took minutes).
        let Some(old) = self.var_by_span.insert(span, id) else { return };
        for a in &mut self.accesses {
            if a.place.root == old {
                a.place.root = id;
            }
        }
        for v in &mut self.vars {
            for l in &mut v.loans {
                if l.place.root == old {
                    l.place.root = id;
                }
            }
        }
        for p in &mut self.pending {
            if p.place.root == old {
                p.place.root = id;
            }
            if p.stream == old {
                p.stream = id;
            }
        }
    }

    /// Checks an access of every place `info` may denote.
    pub(super) fn access_all(&mut self, info: &PlaceInfo, mode: Mode, span: Span) {
        for t in info.targets().cloned().collect::<Vec<_>>() {
            self.access(&t, mode, span);
        }
    }

    /// Does this place denote memory other threads can reach?
    pub(super) fn is_shared_memory(&self, info: &PlaceInfo) -> bool {
        !info.is_own_memory()
            || match &self.vars[info.place.root].owner {
                Owner::Chain(k) => *k < self.chain().len(),
                Owner::Exec(_) => true,
            }
    }

    /// The `sched` binders a unique access must select through: those between the root's owner
    /// and the current resource. `None` (after reporting) if the root is used outside its owner.
    pub(super) fn required_selects(&mut self, info: &PlaceInfo, span: Span) -> Option<Vec<usize>> {
        let chain = self.chain();
        let root = &self.vars[info.place.root];
        match &root.owner {
            Owner::Chain(k) => Some(chain[(*k).min(chain.len())..].to_vec()),
            Owner::Exec(e) => match chain.iter().position(|b| self.binders[*b].exec.is_instance_of(e)) {
                Some(i) => Some(chain[i + 1..].to_vec()),
                None => {
                    let name = root.name.clone();
                    let e = e.clone();
                    self.report(Diagnostic::error(
                        codes::NARROWING_VIOLATED,
                        "narrowing violated",
                        span,
                        format!("`{name}` belongs to each `{}`; use it inside a `sched` over them", e.path_text()),
                    ));
                    None
                }
            },
        }
    }

    /// For memory declared for each of some resources: the scheduled resource around this point
    /// whose memory it is (see [`Exec::is_instance_of`]).
    pub(super) fn owner_instance(&self, root: usize) -> Option<Exec> {
        let Owner::Exec(e) = &self.vars[root].owner else { return None };
        self.chain().iter().map(|b| &self.binders[*b].exec).find(|x| x.is_instance_of(e)).cloned()
    }

    pub(super) fn access(&mut self, info: &PlaceInfo, mode: Mode, span: Span) {
        if !info.via_alias && !matches!(mode, Mode::Borrow(_)) {
            let write = mode == Mode::Write;
            let clash = self.live_borrows.iter().find(|(p, o, _, _)| {
                p.root == info.place.root
                    && (*o == Ownership::Uniq || write)
                    && self.steps_may_overlap(&p.steps, &info.place.steps)
            });
            if let Some((_, o, at, _)) = clash {
                let (o, at) = (*o, *at);
                let name = self.vars[info.place.root].name.clone();
                let verb = if write { "assign to" } else { "use" };
                self.report(
                    Diagnostic::error(
                        codes::BORROW_CONFLICT,
                        format!("cannot {verb} `{name}` because it is borrowed as {}", o.keyword()),
                        span,
                        format!("{verb} of borrowed `{name}`"),
                    )
                    .with_label(at, "borrow, still in scope"),
                );
            }
        }
        if !self.on_gpu() {
            // A borrow written as an argument of work issued on a stream is ordered after the
            // work already pending on that stream.
            let exempt = match &self.issuing_on {
                Some((keys, at)) if matches!(mode, Mode::Borrow(_)) && at.is_none_or(|a| a == span) => {
                    Some(keys.clone())
                }
                _ => None,
            };
            self.check_pending(&info.place, mode.into(), span, exempt.as_deref());
        }
        if !self.on_gpu() || self.in_unsafe() {
            return;
        }
        let write = matches!(mode, Mode::Write | Mode::Borrow(Ownership::Uniq));
        let shared = self.is_shared_memory(info);
        if !write
            && matches!(self.vars[info.place.root].owner, Owner::Exec(_))
            && self.required_selects(info, span).is_none()
        {
            return;
        }
        if matches!(self.sig.root, Root::Thread) && self.chain().is_empty() {
            // A function executed by one thread: its accesses are ordered; the caller narrowed
            // what it passed to that thread.
            return;
        }
        // A variable's own memory (no reference on the way) is private to each thread on every
        // device (registers in CUDA): what one thread writes there no other thread sees, so only
        // the resource that declared it may write it, however the write is narrowed.
        let own_memory = info.is_own_memory();
        if write {
            if shared && !(own_memory && matches!(self.vars[info.place.root].owner, Owner::Chain(_))) {
                if !self.check_narrowing(info, mode, span) {
                    return;
                }
            } else if let Owner::Chain(k) = self.vars[info.place.root].owner {
                // T-WRITE-LOCAL: only the resource that owns a local writes it.
                let chain = self.chain();
                let arms = self.vars[info.place.root].arms;
                if k == chain.len() && self.arm_count() > arms {
                    // Prism's write-down rule: a `split` arm is part of the declaring resource.
                    // Each thread has its own copy, so a write by the arm's threads leaves the
                    // other threads with the old value, where a reading of the variable as one
                    // value for the resource (`__shared__`) would give them the new one.
                    let name = self.vars[info.place.root].name.clone();
                    let here = self.current.to_string();
                    self.report(
                        Diagnostic::error(
                            codes::NARROWING_VIOLATED,
                            "narrowing violated",
                            span,
                            format!("`{name}` is declared for the whole resource and cannot be written by `{here}`, a `split` arm of it"),
                        )
                        .with_note(format!(
                            "a value declared for a resource is written by the whole resource (write-down rule): after this write the threads of `{here}` would see the new value and the others the old one; declare the variable inside the arm, or compute it before the `split` (`let {name} = if … {{ … }} else {{ … }};`), or exchange it through shared memory"
                        )),
                    );
                    return;
                }
                if k != chain.len() {
                    let name = self.vars[info.place.root].name.clone();
                    let here = self.current.to_string();
                    self.error(
                        codes::NARROWING_VIOLATED,
                        span,
                        "narrowing violated",
                        format!("`{name}` is owned by an enclosing resource and cannot be written by `{here}`"),
                    );
                    if let Some(d) = self.diags.last_mut() {
                        d.notes.push(format!(
                            "a variable is private to each thread that runs its declaration: a write by `{here}` would not be seen by the other threads; use shared memory (`@ gpu.shared`) to exchange values"
                        ));
                    }
                    return;
                }
            }
        }
        if !shared {
            return;
        }
        let instance = self.owner_instance(info.place.root);
        let clash = self.accesses.iter().position(|a| conflicts(&info.place, write, instance.as_ref(), a, &self.facts));
        if let Some(i) = clash {
            let (prior, prior_write, reported) =
                (self.accesses[i].span, self.accesses[i].write, self.accesses[i].reported);
            self.accesses[i].reported = true;
            if !reported {
                let what = if prior_write { "a conflicting prior write" } else { "a conflicting prior read" };
                let why = self.conflict_note(&info.place, &self.accesses[i].place.clone());
                self.report(
                    Diagnostic::error(
                        codes::CONFLICTING_ACCESS,
                        "conflicting memory access",
                        span,
                        "cannot access this memory",
                    )
                    .with_label(prior, format!("cannot select memory because of {what} here"))
                    .with_note(
                        "two threads may touch the same memory between barriers; add a `sync` or select disjoint parts",
                    )
                    .with_note(why)
                    .with_note(
                        "help: the usual rewrites: write the result to a separate output array instead of in place, \
                         reach the memory through the same views in both accesses (each thread keeps to its own \
                         part), or put a `sync` between the accesses",
                    ),
                );
            }
        }
        // A borrow bound to a variable is not an access: the accesses through it are recorded.
        if !(self.binding_alias && matches!(mode, Mode::Borrow(_))) {
            self.accesses.push(Access {
                place: info.place.clone(),
                write,
                span,
                truncated: false,
                reported: false,
                instance,
            });
        }
    }

    /// Why two accesses of E0501 conflict, naming the memory each reaches (their places written
    /// out, references resolved and named views expanded): two parts that may hold the same
    /// element for two different threads, or one part that more than one thread reaches.
    fn conflict_note(&self, now: &Place, prior: &Place) -> String {
        let (a, b) = (self.place_steps_text(now), self.place_steps_text(prior));
        if a != b {
            return format!("`{a}` and `{b}` may be the same element, reached by two different threads");
        }
        if now != prior {
            // The same text, selected by different resources (the arms of a `split`) or in
            // different iterations of a loop.
            return format!(
                "both accesses reach `{a}`, selected by different resources or in different iterations: \
                 they may pick the same element for two different threads"
            );
        }
        if now.steps.iter().any(|s| matches!(s, PStep::Select(_, true, _))) {
            format!("both accesses reach `{a}`, which more than one thread may reach here")
        } else {
            format!(
                "both accesses reach `{a}`, which is not selected down to single threads (`[[thread]]`): \
                 every thread that runs them reaches the same memory"
            )
        }
    }

    /// A place written out in the surface syntax: `arr.reverse[[thread]][i]`.
    pub(super) fn place_steps_text(&self, place: &Place) -> String {
        fn nat_text(n: &Nat) -> String {
            // Loop variables of another pass are renamed `i\u{2}7`: they are another iteration's `i`.
            let text = n.to_string();
            let mut out = String::new();
            let mut chars = text.chars().peekable();
            while let Some(c) = chars.next() {
                if c == '\u{2}' || c == '\u{3}' {
                    while chars.peek().is_some_and(char::is_ascii_digit) {
                        chars.next();
                    }
                    out.push('\'');
                } else {
                    out.push(c);
                }
            }
            out
        }
        fn views(apps: &[crate::place::ViewApp], out: &mut String) {
            for (i, v) in apps.iter().enumerate() {
                if i > 0 {
                    out.push('.');
                }
                out.push_str(v.name);
                if !v.nats.is_empty() {
                    out.push_str(&format!("::<{}>", v.nats.iter().map(nat_text).collect::<Vec<_>>().join(", ")));
                }
                if !v.args.is_empty() {
                    out.push('(');
                    for (j, chain) in v.args.iter().enumerate() {
                        if j > 0 {
                            out.push_str(", ");
                        }
                        views(chain, out);
                    }
                    out.push(')');
                }
            }
        }
        let mut out = self.vars.get(place.root).map_or_else(|| "?".to_string(), |v| v.name.clone());
        for step in &place.steps {
            match step {
                // Dereferences are implicit in the surface syntax (`arr[i]` through a reference).
                PStep::Deref => {}
                PStep::Field(k) => out.push_str(&format!(".{k}")),
                PStep::Index(Some(n)) => out.push_str(&format!("[{}]", nat_text(n))),
                PStep::Index(None) => out.push_str("[_]"),
                // The order of the dimensions is part of what a selection picks (`[[t.X.Y]]`).
                PStep::Select(e, _, dims) if dims.len() > 1 => {
                    let dims: String = dims.iter().map(|d| format!(".{}", d.letter())).collect();
                    out.push_str(&format!("[[{e}{dims}]]"));
                }
                PStep::Select(e, _, _) => out.push_str(&format!("[[{e}]]")),
                PStep::View(v) => {
                    out.push('.');
                    views(std::slice::from_ref(v), &mut out);
                }
            }
        }
        out
    }

    /// Returns false (after reporting) if narrowing is violated.
    pub(super) fn check_narrowing(&mut self, info: &PlaceInfo, mode: Mode, span: Span) -> bool {
        let verb = if mode == Mode::Write { "write to" } else { "borrow uniquely" };
        let level = self.level();
        let Some(required) = self.required_selects(info, span) else { return false };
        let want: Vec<(Exec, DimName)> = required
            .iter()
            .flat_map(|b| {
                let b = &self.binders[*b];
                b.dims.iter().map(|(d, _)| (b.key.clone(), *d)).collect::<Vec<_>>()
            })
            .collect();
        // Each binder's dimensions in any order, the binders in schedule order: selecting by all
        // of a thread's coordinates in another order (`tile[[t.X.Y]]` under `sched(Y, X) t`)
        // still gives each thread its own element. The binders keep their order: a single-thread
        // selection must come last, after those of the enclosing resources, for the conflict
        // rule to take it as "each thread its own part".
        let per_binder: Vec<usize> = required.iter().map(|b| self.binders[*b].dims.len()).collect();
        let follows = info.consumed.len() == want.len() && {
            let mut at = 0;
            per_binder.iter().all(|&n| {
                let (got, need) = (&info.consumed[at..at + n], &want[at..at + n]);
                at += n;
                need.iter().all(|w| got.contains(w))
            })
        };
        if !follows {
            let name = self.vars[info.place.root].name.clone();
            let missing = required
                .iter()
                .map(|b| &self.binders[*b])
                .find(|b| b.dims.iter().any(|(d, _)| !info.consumed.contains(&(b.key.clone(), *d))));
            let label = match missing {
                Some(b) => {
                    format!("`{name}` is not narrowed to `{}`: every `{}` would {verb} the same memory", b.name, b.name)
                }
                None => format!(
                    "the selections of `{name}` do not follow the schedule (expected {} in order)",
                    required.iter().map(|b| format!("[[{}]]", self.binders[*b].name)).collect::<Vec<_>>().join("")
                ),
            };
            let mut d = Diagnostic::error(codes::NARROWING_VIOLATED, "narrowing violated", span, label);
            if let Some(b) = missing {
                d = d.with_label(b.span, format!("`{}` is scheduled here", b.name));
            }
            self.report(d);
            return false;
        }
        if mode == Mode::Write && level != Level::Thread && info.mem.is_some() {
            self.error(
                codes::NARROWING_VIOLATED,
                span,
                "narrowing violated",
                format!(
                    "memory behind a reference can only be written by a single thread, but this is executed by {}",
                    level.describe()
                ),
            );
            return false;
        }
        true
    }

    /// After a barrier of `tb`, accesses made by its threads no longer conflict (removeSelectAfter).
    pub(super) fn release(&mut self, tb: &Binder, tb_id: usize) {
        let chain = self.chain();
        let depth_of_target = chain.iter().position(|b| *b == tb_id).map_or(0, |i| i + 1);
        let vars = &self.vars;
        self.accesses.retain_mut(|a| {
            if let Some(i) = a.place.steps.iter().position(|s| matches!(s, PStep::Select(e, _, _) if *e == tb.exec)) {
                a.place.steps.truncate(i + 1);
                a.truncated = true;
                return true;
            }
            let owned_below = match &vars[a.place.root].owner {
                // A block of a `split` arm is one block of the whole collection: memory owned by
                // that block or its sub-resources is released too.
                // Only the records of this very block (or warp) are ordered by its barrier: the
                // blocks of the other arm of a split have their own copies and did not wait.
                Owner::Exec(e) => {
                    (e.within(&tb.exec)
                        || (!e.steps.iter().any(|s| matches!(s, Step::Range(..)))
                            && tb.exec.without_ranges().is_some_and(|t| e.within(&t))))
                        && a.instance.as_ref().is_none_or(|i| i.within(&tb.exec))
                }
                Owner::Chain(k) => *k >= depth_of_target,
            };
            !owned_below
        });
    }

    /// Accesses after one of several paths: every access any path may have left (a barrier on one
    /// path does not release what another path did, or what was there when no path ran).
    pub(super) fn merge_accesses(&mut self, paths: Vec<Vec<Access>>) {
        let mut merged: Vec<Access> = Vec::new();
        for path in paths {
            for a in path {
                if !merged
                    .iter()
                    .any(|m| m.place == a.place && m.write == a.write && m.span == a.span && m.truncated == a.truncated)
                {
                    merged.push(a);
                }
            }
        }
        self.accesses = merged;
    }
}
