//! Places and loans (I1, I8 of docs/soundness.md): typing place expressions into every place they
//! may denote, substituting the loans of references held by variables, reads, borrows and
//! assignments, and the lifetime of the loans a value carries.

use super::*;

impl FnCx<'_> {
    /// Types a place without recording accesses or reporting mode errors (used for aliases).
    pub(super) fn place_quiet(&mut self, e: &ast::Expr) -> Option<PlaceInfo> {
        let saved = (self.diags.len(), self.seen.clone());
        let r = self.place(e);
        self.diags.truncate(saved.0);
        self.seen = saved.1;
        r
    }

    /// Types a place expression. When a reference on the way may hold several loans, the result
    /// is the first place it may denote, with the others in [`PlaceInfo::alts`].
    pub(super) fn place(&mut self, e: &ast::Expr) -> Option<PlaceInfo> {
        let mut all = self.place_all(e)?.into_iter();
        let mut first = all.next()?;
        first.alts = all.collect();
        Some(first)
    }

    /// Every place a place expression may denote (one per loan of the references on the way).
    pub(super) fn place_all(&mut self, e: &ast::Expr) -> Option<Vec<PlaceInfo>> {
        match &e.kind {
            ExprKind::Path(segs) if segs.len() == 1 => {
                let id = match self.lookup(&segs[0].name) {
                    Some(id) => id,
                    None => {
                        self.unknown_name(
                            segs[0].span,
                            &segs[0].name,
                            format!("cannot find value `{}` in this scope", segs[0].name),
                            NameKind::Value,
                        );
                        return None;
                    }
                };
                if self.recording {
                    self.types.query.uses.insert(segs[0].span, self.vars[id].span);
                }
                if self.vars[id].nat.is_some() {
                    self.error(
                        codes::INVALID_ASSIGN_TARGET,
                        e.span,
                        format!("`{}` is a natural number, not a place in memory", segs[0].name),
                        "not a place",
                    );
                    return None;
                }
                Some(vec![PlaceInfo {
                    place: Place { root: id, steps: Vec::new() },
                    ty: self.vars[id].ty.clone(),
                    mem: None,
                    via_shared: false,
                    via_alias: false,
                    consumed: Vec::new(),
                    alts: Vec::new(),
                    via_uni: Uni::Uniform,
                }])
            }
            ExprKind::Paren(inner) => self.place_all(inner),
            ExprKind::Deref(inner) => {
                let mut out = Vec::new();
                for info in self.place_all(inner)? {
                    out.extend(self.deref(info, e.span, inner.span, true)?);
                }
                Some(out)
            }
            ExprKind::Field(inner, f) => {
                let infos = self.place_all(inner)?;
                let infos = self.auto_deref(infos, e.span, inner.span)?;
                let idx = match f {
                    ast::Field::Fst => 0,
                    ast::Field::Snd => 1,
                    ast::Field::Index(i) => *i,
                };
                infos.into_iter().map(|info| self.field_step(info, idx, e.span)).collect()
            }
            ExprKind::Index(inner, idx) => {
                let infos = self.place_all(inner)?;
                let infos = self.auto_deref(infos, e.span, inner.span)?;
                // Every place the expression may denote has the same type: type the index once.
                let info = infos.first()?;
                let (elem, len) = match info.ty.as_array() {
                    Some((t, n)) => (t.clone(), n.clone()),
                    None => {
                        self.not_an_array(&info.ty, inner.span, "indexed");
                        return None;
                    }
                };
                let nat = self.expr_to_nat(idx);
                match &nat {
                    Some(i) => {
                        if self.in_unsafe() {
                        } else if let Some((bad, span)) = self.index_ill_formed(idx) {
                            self.report(crate::program::ill_formed_index(&bad, span));
                        } else {
                            self.check_lt(i, &len, idx.span, "index");
                        }
                    }
                    None => {
                        let t = self.expr(idx, None);
                        if !t.is_int() && !t.is_error() {
                            self.mismatch(idx.span, &Ty::Scalar(ScalarTy::U32), &t);
                        }
                        if !self.in_unsafe() && !self.rt_index_read && !self.own_private_array(&infos) {
                            self.run_time_index_written(idx.span);
                        }
                    }
                }
                let out = infos
                    .into_iter()
                    .map(|mut info| {
                        info.ty = elem.clone();
                        info.place.steps.push(PStep::Index(nat.clone()));
                        info
                    })
                    .collect();
                Some(out)
            }
            ExprKind::Select(inner, ex) => {
                let infos = self.place_all(inner)?;
                let infos = self.auto_deref(infos, e.span, inner.span)?;
                infos.into_iter().map(|info| self.select_step(info, e, inner, ex)).collect()
            }
            ExprKind::View(inner, v) => {
                let infos = self.place_all(inner)?;
                let infos = self.auto_deref(infos, e.span, inner.span)?;
                let mut out = Vec::new();
                for mut info in infos {
                    let (ty, apps) = self.apply_view(&info.ty, v, &HashMap::new())?;
                    info.ty = ty;
                    info.place.steps.extend(apps.into_iter().map(PStep::View));
                    out.push(info);
                }
                Some(out)
            }
            _ => {
                self.error(
                    codes::INVALID_ASSIGN_TARGET,
                    e.span,
                    "expected a place expression",
                    "not a place in memory",
                );
                None
            }
        }
    }

    /// A selection `inner[[ex]]` (the expression `e`) applied to one place `inner` may denote.
    pub(super) fn select_step(
        &mut self,
        mut info: PlaceInfo,
        e: &ast::Expr,
        inner: &ast::Expr,
        ex: &ast::ExecExpr,
    ) -> Option<PlaceInfo> {
        // `[[b]]`, or `[[b.X]]` (`.Y`, `.Z`, several allowed) for chosen dimensions only.
        let only: Option<Vec<DimName>> = (!ex.path.is_empty())
            .then(|| ex.path.iter().map(|s| if let ast::ExecStep::Dim(d) = s { Some(*d) } else { None }).collect())
            .flatten();
        let name = match &ex.base {
            ast::ExecBase::Var(id) if ex.path.is_empty() || only.is_some() => id.name.clone(),
            _ => {
                self.error(
                    codes::INVALID_SCHED,
                    ex.span,
                    "a selection must name a scheduled execution resource",
                    "expected the name bound by `sched`, optionally with dimensions: `[[b]]`, `[[b.X]]`",
                );
                return None;
            }
        };
        let Some(b) = self.binder_named(&name) else {
            self.unknown_name(
                ex.span,
                &name,
                format!("cannot find execution resource `{name}` in this scope"),
                NameKind::Resource,
            );
            return None;
        };
        let binder = self.binders[b].clone();
        if !binder.distributing {
            self.error(
                codes::INVALID_SCHED,
                ex.span,
                format!("cannot select with `{name}`"),
                "only resources bound by `sched` distribute memory; schedule over it first",
            );
            return None;
        }
        // `[[b]]` distributes every dimension of b's collection scheduled down to b that
        // earlier selections of this place have not distributed yet.
        let chain = self.chain();
        let Some(pos) = chain.iter().position(|c| *c == b) else {
            self.error(
                codes::INVALID_SCHED,
                ex.span,
                format!("cannot select with `{name}` here"),
                "it is not scheduled around this point",
            );
            return None;
        };
        let dims: Vec<(DimName, Nat)> = chain[..=pos]
            .iter()
            .map(|c| &self.binders[*c])
            .filter(|c| c.key == binder.key)
            .flat_map(|c| c.dims.iter().cloned())
            .filter(|(d, _)| !info.consumed.iter().any(|(k, cd)| *k == binder.key && cd == d))
            .collect();
        if dims.is_empty() {
            self.error(
                codes::INVALID_SCHED,
                ex.span,
                format!("`{name}` selects nothing here"),
                "its dimensions were already selected",
            );
            return None;
        }
        // `[[b.X]]` selects by the named pending dimensions only (`[[block.X]]` for B's
        // column after `sched(Y) row`, `sched(X) block in row`). It gives many threads the
        // same part: they may read it, and narrowing refuses writes and `uniq` borrows.
        let mut partial = false;
        let dims = match &only {
            None => dims,
            Some(names) => {
                let mut chosen = Vec::new();
                for d in names {
                    match dims.iter().find(|(pd, _)| pd == d) {
                        Some(x) if !chosen.contains(x) => chosen.push(x.clone()),
                        _ => {
                            let pending: String = dims.iter().map(|(d, _)| d.letter()).collect();
                            self.error(
                                codes::INVALID_SCHED,
                                ex.span,
                                format!("`{name}` cannot select by `{}` here", d.letter()),
                                format!("the dimensions `{name}` can still select here are `{pending}`, each once"),
                            );
                            return None;
                        }
                    }
                }
                partial = chosen.len() < dims.len();
                chosen
            }
        };
        self.types.selections.insert(e.span, dims.iter().map(|(d, _)| *d).collect());
        let mut ty = info.ty.clone();
        for (d, size) in &dims {
            let Some((elem, len)) = ty.as_array().map(|(t, n)| (t.clone(), n.clone())) else {
                self.not_an_array(&ty, inner.span, "selected");
                return None;
            };
            if !self.nat_eq(&len, size) {
                self.report(
                    Diagnostic::error(
                        codes::SELECT_SIZE_MISMATCH,
                        "selection size does not match the execution resource",
                        e.span,
                        format!(
                            "this dimension has {len} elements, but `{name}` has {size} along `{}`",
                            dim_letter(*d)
                        ),
                    )
                    .with_label(binder.span, format!("`{name}` is scheduled here"))
                    .with_note("every sub-resource must select exactly one element: the sizes must be equal"),
                );
                return None;
            }
            ty = elem;
            info.consumed.push((binder.key.clone(), *d));
        }
        let single = !partial && binder.exec.shape().map(|s| s.level == Level::Thread).unwrap_or(false);
        info.ty = ty;
        let order = dims.iter().map(|(d, _)| *d).collect();
        info.place.steps.push(PStep::Select(binder.exec.clone(), single, order));
        Some(info)
    }

    /// The projection `.idx` applied to one place a place expression may denote.
    pub(super) fn field_step(&mut self, mut info: PlaceInfo, idx: u32, span: Span) -> Option<PlaceInfo> {
        match &info.ty {
            Ty::Tuple(ts) if (idx as usize) < ts.len() => {
                info.ty = ts[idx as usize].clone();
                info.place.steps.push(PStep::Field(idx));
                Some(info)
            }
            Ty::Error => None,
            t => {
                let t = t.clone();
                self.error(codes::NO_SUCH_FIELD, span, format!("no field `{idx}` on type `{t}`"), "unknown projection");
                None
            }
        }
    }

    /// Dereferences through a reference or an owning `@` pointer (memory-space check included).
    /// Dereferences one place; a reference stored in a variable stands for each of its loans.
    pub(super) fn deref(
        &mut self,
        mut info: PlaceInfo,
        span: Span,
        inner_span: Span,
        explicit: bool,
    ) -> Option<Vec<PlaceInfo>> {
        let owning = matches!(info.ty, Ty::At(..));
        let (own, mem, target) = match &info.ty {
            Ty::Ref { own, mem, ty } => (*own, mem.clone(), (**ty).clone()),
            Ty::At(ty, mem) => (Ownership::Uniq, mem.clone(), (**ty).clone()),
            Ty::Error => return None,
            t => {
                if explicit {
                    let t = t.clone();
                    self.error(codes::BAD_DEREF, span, format!("type `{t}` cannot be dereferenced"), "not a reference");
                }
                return None;
            }
        };
        let level = self.level();
        // Code executed by `Any` resource may run on either device: only generic memory is usable.
        // The host may borrow a part of device memory (`&uniq d[1]` to hand to a launch or an
        // asynchronous copy): that computes an address and reads nothing, as long as the pointer
        // followed is itself host memory (not a reference stored in device memory).
        let host_borrow_of_device_part = self.borrowing_place
            && level == Level::Cpu
            && matches!(mem, Mem::GpuGlobal)
            && !matches!(info.mem, Some(Mem::GpuGlobal | Mem::GpuShared | Mem::GpuLocal));
        // Following a reference that is itself stored in device memory reads device memory
        // (reachable on the host only inside a borrow's place: `&shrd d.0[1]`).
        let pointer_in_device_memory =
            level == Level::Cpu && matches!(info.mem, Some(Mem::GpuGlobal | Mem::GpuShared | Mem::GpuLocal));
        let ok = !pointer_in_device_memory
            && match &mem {
                Mem::Var(_) => true,
                Mem::CpuMem => level == Level::Cpu,
                _ => host_borrow_of_device_part || (level != Level::Cpu && level != Level::Any),
            };
        if !ok {
            let text = format!("*{}", self.place_text(&info));
            let mut d = Diagnostic::error(
                codes::BAD_DEREF,
                format!("cannot dereference `{text}` pointing to `{mem}`"),
                inner_span,
                format!("dereferencing pointer in `{mem}` memory"),
            );
            if let Some((s, l)) = self.executed_by_label() {
                d = d.with_label(s, l);
            } else {
                d = d.with_note(format!("this code is executed by {}", level.describe()));
            }
            self.report(d);
            return None;
        }
        info.via_shared |= own == Ownership::Shrd;
        info.mem = Some(mem);
        info.ty = target;
        // A reference held by a variable is replaced by the places it may borrow (the paper
        // resolves aliases by substitution): a use through it is a use of each loan, with the
        // narrowing each loan had, wherever the reference was copied or moved to.
        // An owning pointer's memory is its own: the loans it keeps are those of the references
        // stored in it, not places it stands for.
        let loans = if owning { Vec::new() } else { self.stored_loans(&info.place) };
        let via_uni = info.via_uni.max(self.vars[info.place.root].varies);
        if loans.is_empty() {
            info.place.steps.push(PStep::Deref);
            return Some(vec![info]);
        }
        Some(
            loans
                .into_iter()
                .map(|l| PlaceInfo {
                    place: l.place,
                    ty: info.ty.clone(),
                    mem: info.mem.clone(),
                    via_shared: info.via_shared || l.own == Ownership::Shrd,
                    via_alias: true,
                    consumed: l.consumed,
                    alts: Vec::new(),
                    via_uni,
                })
                .collect(),
        )
    }

    /// The loans a reference read from `place` may hold, when it is stored in a variable (directly
    /// or in a part of it); empty when the reference lives in memory behind a reference or is a
    /// parameter, which is then its own loan.
    pub(super) fn stored_loans(&self, place: &Place) -> Vec<Alias> {
        if place.steps.iter().any(|s| matches!(s, PStep::Deref)) && !self.in_own_cell(place) {
            return Vec::new();
        }
        self.vars[place.root].loans.clone()
    }

    /// Whether `place` is (a part of) the memory its root variable owns: the root is an owning
    /// pointer (`T @ m`) and its one dereference is that pointer's. The references stored there
    /// are the variable's own, so their loans are the variable's.
    pub(super) fn in_own_cell(&self, place: &Place) -> bool {
        matches!(self.vars[place.root].ty, Ty::At(..))
            && matches!(place.steps.first(), Some(PStep::Deref))
            && !place.steps[1..].iter().any(|s| matches!(s, PStep::Deref))
    }

    /// What a reference with `loans` reaches besides them: the loans of the references stored
    /// in the variables it borrows (`&shrd tup` where `tup.0` holds `&shrd a` reaches `a`),
    /// followed transitively. A callee given the reference may read (and return, or store) those
    /// too. What is reached through a `shrd` loan can only be read.
    pub(super) fn reachable_loans(&self, loans: &[Alias]) -> Vec<Alias> {
        let mut out: Vec<Alias> = Vec::new();
        let mut seen = HashSet::new();
        let mut work: Vec<(Alias, bool)> = loans.iter().map(|l| (l.clone(), l.own == Ownership::Shrd)).collect();
        while let Some((l, shrd)) = work.pop() {
            if !seen.insert((l.place.root, shrd)) {
                continue;
            }
            for inner in self.stored_loans(&l.place) {
                let shrd = shrd || inner.own == Ownership::Shrd;
                let mut inner = inner.clone();
                if shrd {
                    inner.own = Ownership::Shrd;
                }
                if !loans.contains(&inner) && !out.contains(&inner) {
                    out.push(inner.clone());
                }
                work.push((inner, shrd));
            }
        }
        out
    }

    /// The loans of a reference value read from `info` (of reference type, own `own`).
    pub(super) fn loans_of_read(&self, info: &PlaceInfo, own: Ownership) -> Vec<Alias> {
        let stored = self.stored_loans(&info.place);
        if !stored.is_empty() {
            return stored;
        }
        let mut place = info.place.clone();
        place.steps.push(PStep::Deref);
        vec![Alias { place, own, consumed: info.consumed.clone() }]
    }

    pub(super) fn auto_deref(&mut self, infos: Vec<PlaceInfo>, span: Span, inner_span: Span) -> Option<Vec<PlaceInfo>> {
        let mut out = Vec::new();
        for info in infos {
            if matches!(info.ty, Ty::Ref { .. } | Ty::At(..)) {
                let next = self.deref(info, span, inner_span, false)?;
                out.extend(self.auto_deref(next, span, inner_span)?);
            } else {
                out.push(info);
            }
        }
        Some(out)
    }

    pub(super) fn place_text(&self, info: &PlaceInfo) -> String {
        self.vars[info.place.root].name.clone()
    }

    /// Reads a place (T-READ-BY-COPY, T-READ-BY-MOVE, T-READ-SHAREDMEM).
    pub(super) fn read_place(&mut self, e: &ast::Expr) -> Ty {
        let info = self.place_read_only(e, true);
        let Some(info) = info else { return Ty::Error };
        let root = info.place.root;
        if self.recording {
            // The memory space read from; `expr_recorded` completes the fact.
            let fact = crate::query::ExprFact {
                ty: info.ty.clone(),
                exec: String::new(),
                level: self.level(),
                uniformity: None,
                mem: info.mem.clone(),
            };
            self.types.query.exprs.insert(e.span, fact);
        }
        if let Some(at) = self.vars[root].moved {
            let name = self.vars[root].name.clone();
            self.report(
                Diagnostic::error(
                    codes::USE_AFTER_MOVE,
                    format!("use of moved value `{name}`"),
                    e.span,
                    "value used here after move",
                )
                .with_label(at, "value moved here"),
            );
            return info.ty;
        }
        if info.ty == Ty::Stream {
            let name = self.vars[root].name.clone();
            self.stream_misuse(
                e.span,
                &format!("the stream `{name}` cannot be moved or copied"),
                &format!("a stream stays in its variable; pass a reference to it: `&{name}`"),
            );
            return Ty::Error;
        }
        let uni = info.targets().map(|t| self.read_uni_here(t)).max().unwrap_or_default();
        self.varies = self.varies.max(uni);
        if !self.copyable(&info.ty) && !info.ty.is_error() {
            if info.place.steps.is_empty() {
                // Printing only reads: a shared borrow may stay live across it.
                let reading = self.reading_only;
                if let Some(b) = self
                    .live_borrows
                    .iter()
                    .find(|b| b.0.root == root && !(reading && b.1 == Ownership::Shrd))
                    .map(|b| b.2)
                {
                    let name = self.vars[root].name.clone();
                    self.report(
                        Diagnostic::error(
                            codes::BORROW_CONFLICT,
                            format!("cannot move out of `{name}` because it is borrowed"),
                            e.span,
                            "move out of borrowed value",
                        )
                        .with_label(b, "borrow of it here"),
                    );
                }
                let reborrow = self.in_call_arg && matches!(info.ty, Ty::Ref { .. });
                if !reborrow {
                    self.check_owning_move(root, &info.ty, e.span);
                    self.vars[root].moved = Some(e.span);
                    self.check_pending(&info.place, PendingUse::Move, e.span, None);
                }
            } else if !matches!(info.ty, Ty::ViewArray(..)) {
                let ty = info.ty.clone();
                self.error(
                    codes::USE_AFTER_MOVE,
                    e.span,
                    format!("cannot move a value of type `{ty}` out of this place"),
                    "borrow it instead (`&shrd`)",
                );
            }
        }
        self.access_all(&info, Mode::Read, e.span);
        if let Ty::Ref { own, .. } = &info.ty {
            let mut loans = Vec::new();
            for t in info.targets() {
                union_loans(&mut loans, self.loans_of_read(t, *own));
            }
            self.val_loans = loans;
        } else if self.holds_ref(&info.ty) {
            // An aggregate holding references (a tuple): the loans of its variable.
            let mut loans = Vec::new();
            for t in info.targets() {
                union_loans(&mut loans, self.stored_loans(&t.place));
            }
            self.val_loans = loans;
        }
        info.ty
    }

    /// GPU code that moves an owning pointer (`T @ gpu.global`, a by-value parameter or shared
    /// memory declared by `let`) out of a variable of an enclosing resource: every sub-resource
    /// running the move gets the same memory, and what it writes through its copy is narrowed
    /// only from the new variable's owner (a thread's own variable needs no selection), so all
    /// threads would write one element. References are followed by their loans instead (I1);
    /// an owning pointer has none, so the move itself is refused (I2).
    fn check_owning_move(&mut self, root: usize, ty: &Ty, span: Span) {
        fn owns_memory(t: &Ty) -> bool {
            match t {
                Ty::At(..) => true,
                Ty::Tuple(ts) => ts.iter().any(owns_memory),
                Ty::Array(t, _) | Ty::ViewArray(t, _) => owns_memory(t),
                _ => false,
            }
        }
        if !self.on_gpu() || self.in_unsafe() || !owns_memory(ty) {
            return;
        }
        let coarser = match self.vars[root].owner {
            Owner::Chain(k) => k < self.chain().len(),
            Owner::Exec(_) => true,
        };
        if coarser {
            let name = self.vars[root].name.clone();
            let here = self.current.to_string();
            self.error(
                codes::NARROWING_VIOLATED,
                span,
                "narrowing violated",
                format!(
                    "`{name}` owns memory of an enclosing resource: moving it here gives every `{here}` the same memory; borrow the part it needs instead"
                ),
            );
        }
    }

    pub(super) fn borrow(&mut self, own: Ownership, place: &ast::Expr, span: Span) -> Ty {
        self.borrowing_place = !self.on_gpu();
        let info = self.place_read_only(place, own == Ownership::Shrd);
        self.borrowing_place = false;
        let Some(info) = info else { return Ty::Error };
        if let Some(at) = self.vars[info.place.root].moved {
            let name = self.vars[info.place.root].name.clone();
            self.report(
                Diagnostic::error(
                    codes::USE_AFTER_MOVE,
                    format!("borrow of moved value `{name}`"),
                    place.span,
                    "value borrowed here after move",
                )
                .with_label(at, "value moved here"),
            );
        }
        if own == Ownership::Uniq {
            for t in info.targets() {
                self.check_mutable(t, place.span, "borrow", "uniquely");
            }
            let v = &self.vars[info.place.root];
            let direct = !info.place.steps.iter().any(|s| matches!(s, PStep::Deref)) && info.mem.is_none();
            let owned_box = matches!(v.ty, Ty::At(..));
            if (direct || owned_box)
                && !v.mutable
                && v.loans.is_empty()
                && !matches!(v.owner, Owner::Exec(_))
                && !v.ty.is_error()
            {
                let (name, vspan) = (v.name.clone(), v.span);
                self.report(
                    Diagnostic::error(
                        codes::ASSIGN_IMMUTABLE,
                        format!("cannot borrow `{name}` uniquely, as it is not declared as mutable"),
                        place.span,
                        "cannot borrow as `uniq`",
                    )
                    .with_label(vspan, "declared here; make it `let mut`"),
                );
            }
        }
        if !info.via_alias {
            self.check_host_borrow(&info.place, own, span);
        }
        // A reference is as varying as the places it points to: `&shrd v[[warp]]` is one
        // pointer per warp, so what a callee reads through it differs between warps (I4).
        if self.on_gpu() {
            let uni = info.targets().map(|t| self.read_uni(t)).max().unwrap_or_default();
            self.varies = self.varies.max(uni);
        }
        if own == Ownership::Uniq && self.on_gpu() {
            // A variable's own memory borrowed `uniq` may be written through the reference, by a
            // callee too (per thread, once narrowed there): its value may differ per thread.
            for t in info.targets() {
                if !t.place.steps.iter().any(|s| matches!(s, PStep::Deref)) {
                    self.vars[t.place.root].varies = Uni::Thread;
                }
            }
        }
        self.access_all(&info, Mode::Borrow(own), span);
        self.val_loans = info.targets().map(|t| t.as_loan(own)).collect();
        // Borrowing an owning pointer `T @ m` borrows the memory it owns.
        let (ty, mem) = match (&info.ty, &info.mem) {
            (Ty::At(t, m), _) => ((**t).clone(), m.clone()),
            (t, Some(m)) => (t.clone(), m.clone()),
            (t, None) => (t.clone(), if self.on_gpu() { Mem::GpuLocal } else { Mem::CpuMem }),
        };
        Ty::Ref { own, mem, ty: Box::new(ty) }
    }

    pub(super) fn check_mutable(&mut self, info: &PlaceInfo, span: Span, verb: &str, how: &str) {
        if info.via_shared {
            self.error(
                codes::WRITE_THROUGH_SHARED,
                span,
                format!("cannot {verb} through a shared reference"),
                format!(
                    "this place is behind a `shrd` reference; it cannot be {}",
                    if verb == "write" { "written".to_string() } else { format!("borrowed {how}") }
                ),
            );
        }
    }

    /// A reference value (whatever expression made it) must not hold a loan of a variable
    /// declared deeper than `target_depth`: it would outlive the variable.
    pub(super) fn check_loans_outlive(&mut self, value: &ast::Expr, loans: &[Alias], target_depth: usize, what: &str) {
        for l in loans {
            let v = &self.vars[l.place.root];
            // A loan of a variable holding references (`&shrd tup`) is a loan of it as much as
            // of any other variable; only a loan *behind* a reference variable (`r.deref`) is of
            // memory that outlives it.
            let behind_ref = matches!(v.ty, Ty::Ref { .. }) && l.place.steps.iter().any(|s| matches!(s, PStep::Deref));
            if v.depth > target_depth && !behind_ref {
                let (name, vspan) = (v.name.clone(), v.span);
                let mut e = value;
                while let ExprKind::Paren(inner) = &e.kind {
                    e = inner;
                }
                self.report(
                    Diagnostic::error(
                        codes::DANGLING_REFERENCE,
                        format!("`{name}` does not live long enough"),
                        e.span,
                        format!("a borrow of `{name}` {what}"),
                    )
                    .with_label(vspan, format!("`{name}` is declared here and freed at the end of its block")),
                );
            }
        }
    }

    /// The variable an assignment's left side names (`h` in `h[0].1 = …`, `*r = …`).
    fn written_var(&self, lhs: &ast::Expr) -> Option<usize> {
        match &lhs.kind {
            ExprKind::Path(segs) if segs.len() == 1 => self.lookup(&segs[0].name),
            ExprKind::Index(x, _)
            | ExprKind::Field(x, _)
            | ExprKind::Select(x, _)
            | ExprKind::View(x, _)
            | ExprKind::Deref(x)
            | ExprKind::Paren(x) => self.written_var(x),
            _ => None,
        }
    }

    pub(super) fn assign(&mut self, lhs: &ast::Expr, rhs: &ast::Expr, op: Option<BinOp>, span: Span) {
        let mut stored_at = None;
        if let ExprKind::Path(segs) = &lhs.kind {
            if let Some(id) = self.lookup(&segs[0].name) {
                let depth = self.vars[id].depth;
                if self.holds_ref(&self.vars[id].ty) {
                    stored_at = Some(depth);
                }
            }
        }
        let info = self.place_read_only(lhs, false);
        let lt = info.as_ref().map_or(Ty::Error, |i| i.ty.clone());
        if let (true, Some(i)) = (self.recording, &info) {
            // The place written: its type, resource and memory space (no value, no uniformity).
            let fact = crate::query::ExprFact {
                ty: i.ty.clone(),
                exec: self.current.name.clone(),
                level: self.level(),
                uniformity: None,
                mem: i.mem.clone(),
            };
            self.types.query.exprs.insert(lhs.span, fact);
        }
        let (rt, value_uni) = self.expr_uni(rhs, Some(&lt));
        if let Some(depth) = stored_at {
            // `r = &shrd h;` (or a call or block giving a reference): the borrows live as long as
            // the variable, like those of a `let` initialiser. They start once the value is made:
            // a borrow is checked against the borrows live before it, not against itself.
            self.track_stored_borrows(rhs, depth);
        }
        let rhs_loans = if self.holds_ref(&rt) { std::mem::take(&mut self.val_loans) } else { Vec::new() };
        if let (Some(info), true) = (&info, self.holds_ref(&rt) && !rt.is_error()) {
            for t in info.targets() {
                // A heap cell the host owns (`cell.0 = r` with `cell: T @ cpu.mem`) stores like a
                // variable; anything else behind a dereference is memory someone else owns.
                let own_cell = !self.on_gpu() && self.in_own_cell(&t.place);
                if t.place.steps.iter().any(|s| matches!(s, PStep::Deref)) && !own_cell {
                    if !self.on_gpu() {
                        // The host's liveness keeps borrows that a callee may store (`pinned`).
                        // The memory behind a reference outlives every local of this function.
                        self.check_loans_outlive(rhs, &rhs_loans, 0, "is stored behind a reference that outlives it");
                        continue;
                    }
                    // Loans are tracked per variable: a reference stored in GPU memory behind a
                    // reference (or in a memory space) would lose them.
                    self.error(
                        codes::UNSUPPORTED,
                        lhs.span,
                        "cannot store a reference here",
                        "a reference can be stored in a variable (or a part of one), not in memory behind a reference",
                    );
                    break;
                }
                // Stored in (a part of) a variable: the borrows must live as long as it.
                let depth = self.vars[t.place.root].depth;
                self.check_loans_outlive(rhs, &rhs_loans, depth, "is stored in a variable that lives longer");
            }
        }
        if matches!(rt, Ty::IntLit | Ty::FloatLit) {
            self.fix_open_var(rhs, &lt);
        }
        self.holds_ref_at.insert(lhs.span, self.holds_ref(&lt));
        let Some(info) = info else { return };
        if let Some(op) = op {
            if self.join_numeric(&lt, &rt).is_none() && !rt.is_error() && !lt.is_error() {
                self.error(
                    codes::BAD_OPERANDS,
                    span,
                    format!("cannot apply `{}=` to `{lt}` and `{rt}`", op.symbol()),
                    "invalid operands",
                );
            }
            self.access_all(&info, Mode::Read, lhs.span);
        } else if !self.compatible(&lt, &rt) {
            self.mismatch_expr(rhs, &lt, &rt);
        }
        let var = &self.vars[info.place.root];
        if info.place.steps.is_empty() && info.mem.is_none() {
            if !var.mutable && !matches!(var.ty, Ty::Error) {
                let name = var.name.clone();
                let vspan = var.span;
                self.report(
                    Diagnostic::error(
                        codes::ASSIGN_IMMUTABLE,
                        format!("cannot assign twice to immutable variable `{name}`"),
                        lhs.span,
                        "cannot assign",
                    )
                    .with_label(vspan, "declared here; make it `let mut`"),
                );
            }
            self.vars[info.place.root].moved = None;
        } else {
            // Writing a part of a moved value writes memory its new owner holds (or has freed:
            // a heap cell moved into a function is released there), as reading it would.
            // (The variable written, not the place its references resolve to: writing through a
            // copy `c` of a moved reference is followed by its loans instead.)
            if let Some((at, name)) =
                self.written_var(lhs).and_then(|id| self.vars[id].moved.map(|at| (at, self.vars[id].name.clone())))
            {
                self.report(
                    Diagnostic::error(
                        codes::USE_AFTER_MOVE,
                        format!("assignment to part of moved value `{name}`"),
                        lhs.span,
                        "value assigned here after move",
                    )
                    .with_label(at, "value moved here"),
                );
            }
            for t in info.targets() {
                self.check_mutable(t, lhs.span, "write", "");
            }
            let v = &self.vars[info.place.root];
            let direct = !info.place.steps.iter().any(|s| matches!(s, PStep::Deref)) && info.mem.is_none();
            if direct && !v.mutable && v.loans.is_empty() && !matches!(v.owner, Owner::Exec(_)) && !v.ty.is_error() {
                let (name, vspan) = (v.name.clone(), v.span);
                self.report(
                    Diagnostic::error(
                        codes::ASSIGN_IMMUTABLE,
                        format!("cannot assign to an element of immutable variable `{name}`"),
                        lhs.span,
                        "cannot assign",
                    )
                    .with_label(vspan, "declared here; make it `let mut`"),
                );
            }
        }
        for t in info.targets().cloned().collect::<Vec<_>>() {
            // `x op= v` also keeps what `x` was.
            let value_uni = if op.is_some() { value_uni.max(self.read_uni(&t)) } else { value_uni };
            self.note_local_write(&t, value_uni);
            // A reference stored in a variable (or a part of it) may hold the loans it held before
            // (on another path, or in another part) and the new ones.
            let own_cell = !self.on_gpu() && self.in_own_cell(&t.place);
            if self.holds_ref(&lt) && (own_cell || !t.place.steps.iter().any(|s| matches!(s, PStep::Deref))) {
                union_loans(&mut self.vars[t.place.root].loans, rhs_loans.iter().cloned());
            }
        }
        self.access_all(&info, Mode::Write, lhs.span);
    }
}
