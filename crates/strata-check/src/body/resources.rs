//! Execution resources: resolving resource expressions, `sched`, `split` and `sync` (T-SCHED,
//! T-SYNC).

use super::*;

impl FnCx<'_> {
    /// Resolves an execution-resource expression to its canonical form.
    pub(super) fn resolve_exec(&mut self, e: &ast::ExecExpr) -> Option<Exec> {
        let mut ex = match &e.base {
            ast::ExecBase::Var(id) => {
                match self.binders.iter().rev().find(|b| b.name == id.name && self.binder_in_scope(b)) {
                    Some(b) => b.exec.clone(),
                    None => {
                        self.unknown_name(
                            id.span,
                            &id.name,
                            format!("cannot find execution resource `{}` in this scope", id.name),
                            NameKind::Resource,
                        );
                        return None;
                    }
                }
            }
            ast::ExecBase::CpuThread => Exec::new("cpu.thread", Root::CpuThread),
            ast::ExecBase::Grid(b, t) => {
                let mut lower = self.lower();
                let root = Root::Grid { blocks: lower.shape(b), threads: lower.shape(t) };
                Exec::new("gpu.grid", root)
            }
        };
        for step in &e.path {
            let s = match step {
                ast::ExecStep::Blocks => Step::Blocks,
                ast::ExecStep::Threads => Step::Threads,
                ast::ExecStep::Warps | ast::ExecStep::ToWarps => Step::Warps,
                ast::ExecStep::Lanes => Step::Lanes,
                ast::ExecStep::ToThreads => Step::ToThreads,
                ast::ExecStep::Forall(d) => Step::Forall(*d),
                ast::ExecStep::Range(a, b, d) => {
                    let a = self.lower_nat(a)?;
                    let b = self.lower_nat(b)?;
                    Step::Range(a, b, *d)
                }
                ast::ExecStep::Dim(d) => {
                    self.error(
                        codes::INVALID_SCHED,
                        e.span,
                        format!("`.{}` is not an execution resource", d.letter()),
                        format!("a dimension only narrows a selection: `p[[b.{}]]`", d.letter()),
                    );
                    return None;
                }
            };
            ex = ex.with(s);
        }
        if let Err(err) = ex.shape() {
            self.error(codes::INVALID_SCHED, e.span, "invalid execution resource", err.to_string());
            return None;
        }
        if e.path.iter().any(|s| matches!(s, ast::ExecStep::Warps | ast::ExecStep::ToWarps)) {
            let threads = ex.shape().ok().and_then(|s| s.block).and_then(|b| crate::exec::shape_size(&b).ok());
            if let Some(n) = threads {
                if self.facts.divides(&Nat::lit(32), &n) != Truth::Proven {
                    self.error(
                        codes::SIZE_NOT_PROVEN,
                        e.span,
                        "a block of warps must have a multiple of 32 threads",
                        format!("cannot prove that 32 divides {n}"),
                    );
                    return None;
                }
            }
        }
        Some(ex)
    }

    pub(super) fn binder_in_scope(&self, b: &Binder) -> bool {
        // The function's resource is always in scope; others while their frame is active.
        if std::ptr::eq(b, &self.binders[0]) {
            return true;
        }
        self.frames.iter().any(|f| match f {
            Frame::Sched(i) | Frame::Arm { binder: i, .. } => std::ptr::eq(&self.binders[*i], b),
            Frame::Cond { .. } => false,
        })
    }

    pub(super) fn binder_named(&self, name: &str) -> Option<usize> {
        (0..self.binders.len()).rev().find(|&i| self.binders[i].name == name && self.binder_in_scope(&self.binders[i]))
    }

    /// The span of the innermost `sched` binder, for "executed by" labels.
    pub(super) fn executed_by_label(&self) -> Option<(Span, String)> {
        let b = self.chain().last().copied()?;
        let b = &self.binders[b];
        Some((b.span, format!("executed by {}", self.level().describe())))
    }

    pub(super) fn sched(
        &mut self,
        dims: &[DimName],
        var: &ast::Ident,
        exec: &ast::ExecExpr,
        body: &ast::Block,
        span: Span,
    ) {
        if !self.on_gpu() {
            self.error(
                codes::WRONG_EXEC,
                span,
                "`sched` outside of GPU code",
                "executed by `cpu.thread`, which has no sub-resources",
            );
            return;
        }
        let Some(ex) = self.resolve_sub_resource(exec, "schedule over", "; schedule over its sub-resources") else {
            return;
        };
        let domain = match ex.sched_domain().and_then(|d| d.shape().map(|s| (d, s))) {
            Ok(x) => x,
            Err(err) => {
                self.error(codes::INVALID_SCHED, exec.span, "invalid schedule", err.to_string());
                return;
            }
        };
        let (domain, shape) = domain;
        if !shape.level.is_collection() {
            self.error(
                codes::INVALID_SCHED,
                exec.span,
                "invalid schedule",
                format!("{} has nothing to schedule over", shape.level.describe()),
            );
            return;
        }
        let mut out = domain.clone();
        let mut bdims = Vec::new();
        for d in dims {
            match shape.dims.iter().find(|(n, _)| n == d) {
                Some((_, size)) if !bdims.iter().any(|(n, _): &(DimName, Nat)| n == d) => {
                    bdims.push((*d, size.clone()));
                    out = out.with(Step::Forall(*d));
                }
                _ => {
                    let have: Vec<String> = shape.dims.iter().map(|(n, _)| n.letter().to_string()).collect();
                    self.error(
                        codes::INVALID_SCHED,
                        exec.span,
                        format!("cannot schedule over dimension `{}`", d.letter()),
                        format!("{} has unscheduled dimensions {{{}}}", shape.level.describe(), have.join(", ")),
                    );
                    return;
                }
            }
        }
        out.name = var.name.clone();
        let b = self.binders.len();
        let key = collection_key(&domain);
        self.binders.push(Binder {
            name: var.name.clone(),
            exec: out.clone(),
            dims: bdims,
            distributing: true,
            span: var.span,
            key,
        });
        self.frames.push(Frame::Sched(b));
        let saved = std::mem::replace(&mut self.current, out);
        self.block(body, Some(&Ty::UNIT));
        self.current = saved;
        self.frames.pop();
    }

    /// The resource `exec` names, which `sched` and `split` need to be a part of the executing
    /// one (E0401 otherwise: "cannot {verb} `…` here").
    pub(super) fn resolve_sub_resource(&mut self, exec: &ast::ExecExpr, verb: &str, hint: &str) -> Option<Exec> {
        let ex = self.resolve_exec(exec)?;
        if !ex.within(&self.current) {
            let here = self.current.to_string();
            self.error(
                codes::WRONG_EXEC,
                exec.span,
                format!("cannot {verb} `{ex}` here"),
                format!("this code is executed by `{here}`{hint}"),
            );
            return None;
        }
        Some(ex)
    }

    pub(super) fn split(
        &mut self,
        dim: DimName,
        exec: &ast::ExecExpr,
        at: &ast::Nat,
        arms: &[ast::SplitArm; 2],
        span: Span,
    ) {
        if !self.on_gpu() {
            self.error(codes::WRONG_EXEC, span, "`split` outside of GPU code", "executed by `cpu.thread`");
            return;
        }
        let Some(ex) = self.resolve_sub_resource(exec, "split", "") else { return };
        let Ok((domain, shape)) = ex.sched_domain().and_then(|d| d.shape().map(|s| (d, s))) else {
            self.error(codes::INVALID_SCHED, exec.span, "invalid split", "not an execution resource that can be split");
            return;
        };
        let Some((_, size)) = shape.dims.iter().find(|(n, _)| *n == dim).cloned() else {
            self.error(
                codes::INVALID_SCHED,
                exec.span,
                format!("cannot split along `{}`", dim.letter()),
                format!("{} has no unscheduled dimension `{}`", shape.level.describe(), dim.letter()),
            );
            return;
        };
        let Some(pos) = self.lower_nat(at) else { return };
        let truth = self.facts.le(&pos, &size);
        if truth != Truth::Proven {
            let units = match shape.level {
                crate::exec::Level::Blocks => "blocks",
                crate::exec::Level::Warps => "warps",
                crate::exec::Level::Lanes => "lanes",
                _ => "threads",
            };
            let (resource, d) = (exec_text(exec), dim.letter());
            let split = self.take_out_of_bounds(
                truth,
                (&pos, &size),
                at.span,
                format!("`{resource}` has {size} {units} along {d}: a split at {pos} is past them"),
                format!("the position {pos} {{}} the {size} {units} of `{resource}` along {d}"),
            );
            self.report(split.with_note(format!(
                "help: split at a position of at most {size} (the first arm gets the {units} before it, the \
                 second the rest), tighten the range of the variables it depends on, or state the bound with `where`"
            )));
            return;
        }
        let split_span = Span { hi: exec.span.hi, ..span };
        let what = exec_text(exec);
        for (i, arm) in arms.iter().enumerate() {
            let range = if i == 0 {
                Step::Range(Nat::lit(0), pos.clone(), dim)
            } else {
                Step::Range(pos.clone(), size.clone(), dim)
            };
            let mut arm_exec = domain.with(range);
            arm_exec.name = arm.name.name.clone();
            let b = self.binders.len();
            self.binders.push(Binder {
                name: arm.name.name.clone(),
                exec: arm_exec.clone(),
                dims: Vec::new(),
                distributing: false,
                span: arm.name.span,
                key: collection_key(&domain),
            });
            let uni = Uni::of_level(shape.level);
            self.frames.push(Frame::Arm { binder: b, span: split_span, what: what.clone(), uni });
            let saved = std::mem::replace(&mut self.current, arm_exec);
            self.expr(&arm.body, Some(&Ty::UNIT));
            self.current = saved;
            self.frames.pop();
        }
    }

    pub(super) fn sync(&mut self, target: Option<&ast::ExecExpr>, span: Span) {
        if !self.on_gpu() {
            self.error(
                codes::INVALID_SYNC_TARGET,
                span,
                "`sync` outside of GPU code",
                "the CPU thread has nothing to synchronize with",
            );
            return;
        }
        // `sync` alone synchronizes the innermost block (or warp).
        let target_binder = match target {
            Some(t) => match (&t.base, t.path.is_empty()) {
                (ast::ExecBase::Var(id), true) => match self.binder_named(&id.name) {
                    Some(b) => b,
                    None => {
                        self.resolve_exec(t);
                        return;
                    }
                },
                _ => {
                    let text = exec_text(t);
                    self.error(
                        codes::INVALID_SYNC_TARGET,
                        t.span,
                        format!("cannot synchronize `{text}`"),
                        "only a whole block or warp can be synchronized",
                    );
                    return;
                }
            },
            None => {
                let found = (0..self.binders.len()).rev().find(|&i| {
                    self.binder_in_scope(&self.binders[i])
                        && matches!(self.binders[i].exec.shape().map(|s| s.level), Ok(Level::Block | Level::Warp))
                });
                match found {
                    Some(b) => b,
                    None => {
                        self.error(
                            codes::INVALID_SYNC_TARGET,
                            span,
                            "nothing to synchronize",
                            "`sync` must be inside a block or warp",
                        );
                        return;
                    }
                }
            }
        };
        let tb = self.binders[target_binder].clone();
        let level = tb.exec.shape().map(|s| s.level).unwrap_or(Level::Any);
        if level == Level::Warp {
            self.types.warp_syncs.insert(span);
        }
        if !matches!(level, Level::Block | Level::Warp) {
            self.error(
                codes::INVALID_SYNC_TARGET,
                target.map_or(span, |t| t.span),
                format!("cannot synchronize `{}`", tb.name),
                format!("`{}` is {}; only a whole block or warp can be synchronized", tb.name, level.describe()),
            );
            return;
        }
        if !self.current.within(&tb.exec) {
            self.error(
                codes::WRONG_EXEC,
                span,
                format!("cannot synchronize `{}` from here", tb.name),
                "this code is not executed by its threads",
            );
            return;
        }
        if !self.in_unsafe() {
            // T-SYNC: every thread of the target must reach the barrier.
            let start = self
                .frames
                .iter()
                .position(|f| matches!(f, Frame::Sched(b) if *b == target_binder))
                .map_or(0, |i| i + 1);
            if let Some((at, why)) = self.divergence(start, Uni::barrier(level), "thread") {
                self.report(
                    Diagnostic::error(
                        codes::BARRIER_NOT_ALLOWED,
                        "barrier not allowed here",
                        span,
                        format!("`sync` not performed by all threads in the {}", level_noun(level)),
                    )
                    .with_label(at, why),
                );
                return;
            }
            if self.current.steps.iter().skip(tb.exec.steps.len()).any(|s| matches!(s, Step::Range(..))) {
                self.error(
                    codes::BARRIER_NOT_ALLOWED,
                    span,
                    "barrier not allowed here",
                    "only part of the block executes this",
                );
                return;
            }
        }
        self.release(&tb, target_binder);
    }

    /// Memory declared for each member of a resource (`let [e] x: T;`, a parameter `[e] x`) is
    /// shared memory the launch allocates once per *block*: every device has one buffer per
    /// block, so an owner below the block (each warp, lane or thread, a split arm's threads)
    /// would give all of a block's warps the same buffer while the checker counted one each
    /// (I2/I3). Such declarations are refused with the per-block form that says what CUDA's
    /// `__shared__ T s[WARPS][32]` says; so is a declaration for a resource of anything but
    /// shared memory (a local array exists per thread, not per block).
    pub(super) fn check_memory_owner(&mut self, owner: &Exec, span: Span, name: &str, ty: &Ty) {
        let shared = matches!(ty, Ty::At(_, Mem::GpuShared) | Ty::Error | Ty::Ref { mem: Mem::GpuShared, .. });
        if !shared {
            self.report(
                Diagnostic::error(
                    codes::NARROWING_VIOLATED,
                    "narrowing violated",
                    span,
                    format!("`{name}` is declared for each member of `{owner}`, but it is not shared memory"),
                )
                .with_note(
                    "only `@ gpu.shared` memory is declared for a resource; a plain local is private to each thread that runs its declaration: declare it without the `[…]`",
                ),
            );
            return;
        }
        let Ok(shape) = owner.shape() else { return };
        if shape.level == Level::Block {
            return;
        }
        let (noun, sel) = match shape.level {
            Level::Warp | Level::Warps => ("warp", "warp"),
            Level::Lanes | Level::Thread | Level::Threads => ("thread", "thread"),
            _ => {
                self.report(
                    Diagnostic::error(
                        codes::NARROWING_VIOLATED,
                        "narrowing violated",
                        span,
                        format!("shared memory exists once per block, but `{name}` is declared for a group of blocks"),
                    )
                    .with_note(
                        "declare it for each block: `[grid.blocks.forall(X)]` (one `forall` per dimension of the grid)",
                    ),
                );
                return;
            }
        };
        self.report(
            Diagnostic::error(
                codes::NARROWING_VIOLATED,
                "narrowing violated",
                span,
                format!("shared memory exists once per block, but `{name}` is declared for each {noun}"),
            )
            .with_note(format!(
                "every {noun} of a block would use the same buffer; declare one buffer for the block with a part per {noun} (`let {name}: [[T; 32]; N] @ gpu.shared;` in block-level code, or a parameter `[grid.blocks.forall(X)] {name}: &uniq gpu.shared [[T; 32]; N]`) and select the part with `{name}[[{sel}]]`, as CUDA's `__shared__ T {name}[N][32]` does"
            )),
        );
    }

    /// `r.idx`, `r.idx_x` … `r.global_idx_z` where `r` names an execution resource (not a
    /// variable): a coordinate of the resource as a value (see [`FnCx::coordinate`]).
    pub(super) fn is_coordinate(&self, base: &ast::Expr, v: &ast::ViewRef) -> bool {
        let ExprKind::Path(segs) = &base.kind else { return false };
        segs.len() == 1
            && crate::exec::COORDINATES.contains(&v.name.name.as_str())
            && self.lookup(&segs[0].name).is_none()
            && self.binders.iter().any(|b| b.name == segs[0].name && self.binder_in_scope(b))
    }

    /// A coordinate of a resource scheduled by `sched` (Prism's `id()`): `idx` its index in the
    /// collection it was scheduled from (a 1-D one), `idx_x`/`idx_y`/`idx_z` per dimension, both
    /// `u32`; for a thread, `global_idx` (`_x`, `_y`, `_z`) its index among all threads of the
    /// grid along the dimension (`blockIdx * blockDim + threadIdx`), a `u64` that never wraps. A
    /// read-only value: writes still go through selections. It varies at the level of the
    /// resource (a block's index is the same for the block's threads), so a warp's index may
    /// guard `sync(warp)` but not `sync(block)` (I4).
    pub(super) fn coordinate(&mut self, base: &ast::Expr, v: &ast::ViewRef, span: Span) -> Ty {
        let ExprKind::Path(segs) = &base.kind else { return Ty::Error };
        let name = segs[0].name.clone();
        let Some(bi) = self.binders.iter().rposition(|b| b.name == name && self.binder_in_scope(b)) else {
            return Ty::Error;
        };
        let what = v.name.name.as_str();
        if !v.nat_args.is_empty() || !v.view_args.is_empty() {
            self.error(
                codes::UNKNOWN_VIEW,
                v.span,
                format!("`{what}` takes no arguments"),
                format!("write `{name}.{what}`"),
            );
            return Ty::Error;
        }
        let b = &self.binders[bi];
        let level = b.exec.shape().map(|s| s.level).unwrap_or(Level::Any);
        let single = matches!(level, Level::Block | Level::Warp | Level::Thread);
        if bi == 0 || !b.distributing || !single {
            let why = if bi == 0 {
                format!("`{name}` is the resource executing this function; where it stands in the grid is not known here: pass the index as an argument")
            } else {
                format!("`{name}` is {}, not one resource scheduled by `sched`", level.describe())
            };
            self.report(
                Diagnostic::error(
                    codes::WRONG_EXEC,
                    format!("`{name}.{what}` has no value here"),
                    span,
                    "only a block, warp, thread or lane scheduled by `sched` has coordinates",
                )
                .with_note(why),
            );
            return Ty::Error;
        }
        let global = what.starts_with("global_");
        if global && level != Level::Thread {
            self.error(
                codes::WRONG_EXEC,
                span,
                format!("`{name}.{what}` has no value here"),
                format!("a global index is a thread's; `{name}` is {}: use `{name}.idx`", level.describe()),
            );
            return Ty::Error;
        }
        let dims: Vec<DimName> = b.dims.iter().map(|(d, _)| *d).collect();
        let dim = match what.rsplit_once('_').map(|(_, d)| d) {
            Some("x") => Some(DimName::X),
            Some("y") => Some(DimName::Y),
            Some("z") => Some(DimName::Z),
            _ => None,
        };
        match dim {
            Some(d) if !dims.contains(&d) && !global => {
                self.error(
                    codes::WRONG_EXEC,
                    span,
                    format!("`{name}` has no index along {}", d.letter()),
                    format!("`{name}` was scheduled along {}", dims.iter().map(|d| d.letter()).collect::<String>()),
                );
                return Ty::Error;
            }
            None if dims.len() != 1 => {
                let per = dims
                    .iter()
                    .map(|d| format!("`{name}.{what}_{}`", d.letter().to_ascii_lowercase()))
                    .collect::<Vec<_>>();
                self.error(
                    codes::WRONG_EXEC,
                    span,
                    format!("`{name}.{what}` is ambiguous"),
                    format!("`{name}` was scheduled along several dimensions: write {}", per.join(" or ")),
                );
                return Ty::Error;
            }
            _ => {}
        }
        self.varies = self.varies.max(if global { Uni::Thread } else { Uni::of_level(level) });
        Ty::Scalar(if global { ScalarTy::U64 } else { ScalarTy::U32 })
    }
}
