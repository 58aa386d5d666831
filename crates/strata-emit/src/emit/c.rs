//! The C dialect's kernels (the cpu device): a kernel is a C function whose blocks are the
//! iterations of an OpenMP parallel loop; block-level code runs once per block. A thread region
//! becomes loops over the threads of the block, *split at its barriers*: a barrier ends one loop
//! and starts the next, and a `for`/`while`/`if` that contains a barrier is emitted once at block
//! level around the loops of its body. That is valid because the checker only accepts barriers
//! in control flow that is uniform across the block (or, for warp barriers, across the warp);
//! where the emitter cannot prove a condition uniform, every thread evaluates it and all must
//! agree (else E0902 at run time, as on `sim`: possible in `unsafe` code), and control flow
//! around warp barriers only runs one warp at a time. Locals of thread code that live across a
//! barrier are per-thread arrays indexed by `tid_`. Threads as SIMD lanes ([`lanes`], issue 27):
//! a region's loop whose accesses are strided along its counter and contiguous along `tx` is
//! split out like a barrier (run at block level, the thread loop inside), and the thread loops of
//! such a region are `#pragma omp simd`.

use super::*;
use strata_ir::uniform::Uniformity;

impl Emitter<'_> {
    /// The body of kernel `f` on the cpu device: with the loops [`lanes::choose`] picks run
    /// around thread loops (threads as SIMD lanes), unless the kernel then has run-time checks
    /// (whose first failure must be the one `sim` reports), where it is emitted again without.
    pub(super) fn cpu_kernel(&mut self, cx: &mut Cx, f: &Function) -> Result<(), E> {
        // `STRATA_LANES=0`: threads stay outside every loop (to measure what the lanes change);
        // `STRATA_LANES=all`: every legal loop is interchanged (to test the interchange).
        let mode = std::env::var("STRATA_LANES").unwrap_or_default();
        let choice = if mode == "0" { lanes::Lanes::default() } else { lanes::choose(f, mode == "all") };
        if choice.interchanged.is_empty() || cx.predeclared {
            cx.kept = choice.kept;
            return self.cpu_kernel_once(cx, f);
        }
        let (start, labels) = (self.out.len(), self.labels);
        cx.lanes = choice.interchanged;
        cx.kept = choice.kept;
        cx.lane_checks = false;
        if self.cpu_kernel_once(cx, f).is_ok() && !cx.lane_checks {
            return Ok(());
        }
        self.out.truncate(start);
        self.labels = labels;
        cx.lanes.clear();
        cx.kept.clear();
        cx.per_thread.clear();
        cx.simd = false;
        cx.in_threads = false;
        cx.next_thread = None;
        writeln!(self.out, "    /* threads kept outside loops: the kernel has run-time checks */").ok();
        self.cpu_kernel_once(cx, f)
    }

    fn cpu_kernel_once(&mut self, cx: &mut Cx, f: &Function) -> Result<(), E> {
        let FnKind::Kernel { shared, .. } = &f.kind else { return Err(not_a_kernel(f.span)) };
        // Thread-level locals (except counters of hoisted loops) live in per-thread arrays.
        let mut hoisted = HashSet::new();
        collect_hoisted(&f.body, &mut hoisted);
        hoisted.extend(cx.lanes.keys().copied());
        cx.hoisted = hoisted;
        cx.uniform = Uniformity::of(f);
        // Only values that live across a barrier need per-thread storage: a local used in one
        // barrier-free segment only is a plain C local the compiler can keep in a register.
        let mut segments = Vec::new();
        collect_segments(&f.body, &mut segments, false, &cx.lanes);
        let mut seen_in: HashMap<LocalId, usize> = HashMap::new();
        for seg in &segments {
            let mut used = HashSet::new();
            for st in seg {
                locals_in_stmt(st, &mut used);
            }
            for l in used {
                *seen_in.entry(l).or_insert(0) += 1;
            }
        }
        // The conditions and bounds of control flow around barriers are computed apart from
        // every segment (by one thread, `uniform_values`).
        let mut decided = Vec::new();
        collect_barrier_control(&f.body, &mut decided, false);
        for used in decided {
            for l in used {
                *seen_in.entry(l).or_insert(0) += 1;
            }
        }
        // A local a reference is made to may be used through it in another segment.
        let mut referenced = HashSet::new();
        for st in &f.body {
            st.visit_exprs(&mut |e| {
                if let Expr::Ref(p) = e {
                    if !p.path.contains(&PathStep::Deref) {
                        referenced.insert(p.root);
                    }
                }
            });
        }
        for (id, l) in f.locals.iter().enumerate() {
            let across = seen_in.get(&id).copied().unwrap_or(0) >= 2 || referenced.contains(&id);
            if l.level == Level::Thread && !cx.hoisted.contains(&id) && across {
                cx.per_thread.insert(id);
            }
        }
        // One OpenMP team member runs whole blocks one after another, so the block's scratch
        // (shared memory, per-thread values, `done_` flags) is allocated once per member, not
        // once per block. Blocks of a kernel do equal work: a static schedule suffices.
        let FnKind::Kernel { grid, block, ordered, .. } = &f.kind else { return Err(not_a_kernel(f.span)) };
        cx.returns = f.body.iter().any(|s| stmt_any(s, &|x| matches!(x, Stmt::Return(_))));
        let at = self.at(f.span);
        if *ordered {
            // The blocks of an ordered grid take their numbers from this counter as they start.
            writeln!(self.out, "    uint64_t next_block_ = 0;").ok();
        }
        writeln!(self.out, "    #pragma omp parallel\n    {{").ok();
        // Launch shapes the type fixes as constants shadow the parameters, so the C compiler
        // folds the coordinate arithmetic (`tid_ % 256` is a mask, `tid_ / 1` disappears).
        for (name, dim) in ["GX_", "GY_", "GZ_"].iter().zip(grid).chain(["BX_", "BY_", "BZ_"].iter().zip(block)) {
            if let IExpr::Const(c) = dim {
                writeln!(self.out, "        const uint64_t {name} = UINT64_C({c});").ok();
            }
        }
        writeln!(self.out, "        uint64_t nthreads_ = BX_ * BY_ * BZ_;").ok();
        let mut frees = Vec::new();
        if cx.returns {
            writeln!(self.out, "        unsigned char *done_ = (unsigned char *)strata_alloc(nthreads_, 1, {at});")
                .ok();
            frees.push("done_".to_string());
        }
        for (local, s, len) in shared {
            let len = self.iexpr(cx, len)?;
            let name = &cx.names.locals[*local];
            writeln!(
                self.out,
                "        {t} *{name} = ({t} *)strata_alloc({len}, sizeof({t}), {at});",
                t = scalar_c(*s)
            )
            .ok();
            frees.push(name.clone());
        }
        let mut ids: Vec<&LocalId> = cx.per_thread.iter().collect();
        ids.sort();
        for id in ids {
            let ty = &f.locals[*id].ty;
            let name = per_thread_name(cx, *id);
            if let Ty::Array { .. } = ty {
                // A local array: one row of its scalars per thread (`x_pt_[tid_]` is the array).
                let (t, len) = (c_type(leaf(ty), f.span)?, self.flat_len(cx, ty)?);
                writeln!(self.out, "        {t} (*{name})[{len}] = strata_alloc(nthreads_, sizeof(*{name}), {at});")
                    .ok();
            } else if let (false, Some(n)) = (cx.lanes.is_empty(), block_threads(block)) {
                // In a kernel with interchanged loops, a scalar per thread of a small block with
                // a fixed shape is an array of the OpenMP thread's stack: the C compiler then
                // knows that it overlaps no parameter (B's row stays in registers across rows).
                let t = c_type(ty, f.span)?;
                writeln!(self.out, "        _Alignas(64) {t} {name}[{n}];").ok();
                continue;
            } else {
                let t = c_type(ty, f.span)?;
                writeln!(self.out, "        {t} *{name} = ({t} *)strata_alloc(nthreads_, sizeof({t}), {at});").ok();
            }
            frees.push(name);
        }
        // The blocks as three collapsed loops, x innermost: OpenMP divides the linear block
        // number into coordinates once per chunk of blocks, not once per block, which matters
        // where the grid's extent is a run-time size (a 64-bit division per block, where a
        // constant extent makes it a mask).
        if *ordered {
            // An ordered grid: each OpenMP thread takes the next block number when it starts a
            // block, so a block starts only after every lower one started, and one that waits
            // for a lower block waits for a block that is running or done (on any number of
            // OpenMP threads, one included).
            writeln!(self.out, "        for (;;) {{").ok();
            writeln!(
                self.out,
                "            uint64_t lin_ = __atomic_fetch_add(&next_block_, 1, __ATOMIC_RELAXED);\n            \
                 if (lin_ >= GX_ * GY_ * GZ_) break;\n            \
                 uint64_t bx_ = lin_ % GX_, by_ = lin_ / GX_ % GY_, bz_ = lin_ / GX_ / GY_;"
            )
            .ok();
        } else {
            writeln!(self.out, "        #pragma omp for collapse(3) schedule(static)").ok();
            writeln!(self.out, "        for (uint64_t bz_ = 0; bz_ < GZ_; bz_++)").ok();
            writeln!(self.out, "        for (uint64_t by_ = 0; by_ < GY_; by_++)").ok();
            writeln!(self.out, "        for (uint64_t bx_ = 0; bx_ < GX_; bx_++) {{").ok();
        }
        writeln!(self.out, "            (void)bx_; (void)by_; (void)bz_;").ok();
        if cx.returns {
            // `nreturned_` counts the threads marked in `done_`: once it is the whole block, the
            // block has left the kernel and runs nothing more (as on `sim`).
            writeln!(self.out, "            memset(done_, 0, nthreads_);").ok();
            writeln!(self.out, "            uint64_t nreturned_ = 0;").ok();
        }
        // The block's code is a C block of its own, so that the `goto` of a block-level
        // `return` never jumps into the scope of a variable-length array.
        let end = format!("block_end_{}", self.labels);
        self.labels += 1;
        cx.block_end = Some(end.clone());
        writeln!(self.out, "            {{").ok();
        if cx.predeclared {
            // Block-level locals other than parameters and shared memory, once per block.
            let locals: Vec<LocalId> = (0..f.locals.len())
                .filter(|l| {
                    f.locals[*l].level == Level::Block
                        && !f.params.contains(l)
                        && !shared.iter().any(|(s, _, _)| s == l)
                })
                .collect();
            self.declare_locals(cx, &locals, "                ")?;
        }
        let body_start = self.out.len();
        self.block_level(cx, &f.body, 4)?;
        if !cx.lanes.is_empty() && self.out[body_start..].contains("STRATA_AT(") {
            cx.lane_checks = true;
        }
        writeln!(self.out, "            }}").ok();
        writeln!(self.out, "            {end}: ;").ok();
        writeln!(self.out, "        }}").ok();
        for name in frees {
            writeln!(self.out, "        free({name});").ok();
        }
        writeln!(self.out, "    }}").ok();
        Ok(())
    }

    /// A kernel launch in host code: a call of the kernel's C function with the launch shape.
    pub(super) fn c_launch(
        &mut self,
        cx: &Cx,
        kernel: FnId,
        (nats, grid, block): (&[IExpr], &[IExpr; 3], &[IExpr; 3]),
        args: &[Expr],
        ind: usize,
    ) -> Result<(), E> {
        let pad = "    ".repeat(ind);
        let mut a: Vec<String> = Vec::new();
        for n in nats {
            a.push(self.iexpr(cx, n)?);
        }
        for x in args {
            a.push(self.expr(cx, x)?);
        }
        for d in grid.iter().chain(block) {
            a.push(self.iexpr(cx, d)?);
        }
        // With STRATA_TIME=1, every launch reports its duration (kernel only) on stderr.
        let label = c_string(&self.p.functions[kernel].name);
        writeln!(self.out, "{pad}{{").ok();
        writeln!(self.out, "{pad}    const double t0_ = strata_time_begin();").ok();
        writeln!(self.out, "{pad}    {}({});", self.fn_names[kernel], a.join(", ")).ok();
        writeln!(self.out, "{pad}    strata_time_end({label}, t0_);").ok();
        writeln!(self.out, "{pad}    strata_kprint_flush();").ok();
        writeln!(self.out, "{pad}}}").ok();
        Ok(())
    }

    /// Block-level statements of a kernel (thread regions are expanded into thread loops).
    pub(super) fn block_level(&mut self, cx: &mut Cx, body: &[Stmt], ind: usize) -> Result<(), E> {
        for s in body {
            match s {
                Stmt::Threads { set, body } => self.region(cx, set, body, ind)?,
                // Blocks run sequentially here: a block-level barrier orders nothing more.
                Stmt::Sync { .. } => {}
                other => self.stmt(cx, other, ind)?,
            }
        }
        Ok(())
    }

    /// A thread region: segments of barrier-free code become thread loops.
    pub(super) fn region(
        &mut self,
        cx: &mut Cx,
        set: &[(IExpr, IExpr, IExpr)],
        body: &[Stmt],
        ind: usize,
    ) -> Result<(), E> {
        let mut segment: Vec<&Stmt> = Vec::new();
        // Thread loops of a region split at interchanged loops are SIMD loops.
        let simd = cx.simd;
        cx.simd |= body.iter().any(|s| splits_at_lanes(s, &cx.lanes));
        for s in body {
            if !contains_sync(s) && !splits_at_lanes(s, &cx.lanes) {
                segment.push(s);
                continue;
            }
            self.thread_loop(cx, set, &segment, ind)?;
            segment.clear();
            let pad = "    ".repeat(ind);
            if let Stmt::For { counter, .. } = s {
                if let (Some(why), None) = (cx.lanes.get(counter), &cx.lane_tile) {
                    // `STRATA_LANE_TILE=0`: no tiles (to measure what they change).
                    let tile = std::env::var_os("STRATA_LANE_TILE").is_none_or(|v| v != "0");
                    if let (Some(rows), None, true) = (lane_tile_rows(&cx.f.kind), &cx.warp, tile) {
                        // Unroll-and-jam of the rows of threads: the values each thread carries
                        // across the loop's iterations (a running sum) are reused for LANE_TILE
                        // rows at a time, and what the rows share (B's row) once per tile step,
                        // where a pass over the whole block's values per iteration would not.
                        let t = format!("tile{}_", self.labels);
                        self.labels += 1;
                        writeln!(self.out, "{pad}/* {why}; tiled by {LANE_TILE} of the {rows} rows of threads */").ok();
                        writeln!(self.out, "{pad}for (uint64_t {t} = 0; {t} < BY_; {t} += {LANE_TILE}) {{").ok();
                        cx.lane_tile = Some(t);
                        let r = self.region(cx, set, std::slice::from_ref(s), ind + 1);
                        cx.lane_tile = None;
                        r?;
                        writeln!(self.out, "{pad}}}").ok();
                        continue;
                    }
                }
                if let Some(why) = cx.lanes.get(counter).filter(|_| cx.lane_tile.is_none()) {
                    writeln!(self.out, "{pad}/* {why} */").ok();
                }
            }
            // Control flow around warp barriers only (a collective is one) that the block may not
            // take alike (the checker accepts a condition the same in every lane of a warp, as a
            // ballot's result): run it one warp at a time, each warp deciding for its own lanes.
            // Warps between two block barriers are independent, so their order does not matter.
            if cx.warp.is_none() && !self.decided_for_block(cx, s) && only_warp_barriers(s) {
                let w = format!("warp{}_", self.labels);
                self.labels += 1;
                writeln!(self.out, "{pad}for (uint64_t {w} = 0; {w} < (nthreads_ + 31) / 32; {w}++) {{").ok();
                let saved = cx.warp.replace(w);
                self.region(cx, set, std::slice::from_ref(s), ind + 1)?;
                cx.warp = saved;
                writeln!(self.out, "{pad}}}").ok();
                continue;
            }
            match s {
                Stmt::Sync { .. } => {}
                Stmt::For { counter, lo, hi, body, .. }
                    if iexpr_varies(cx, lo, *counter) || iexpr_varies(cx, hi, *counter) =>
                {
                    // Bounds proven the same in every thread are taken from the first one; else
                    // every thread computes them and all must agree (E0902 where not).
                    let check = !(cx.uniform.iexpr(lo) && cx.uniform.iexpr(hi));
                    let at = check.then(|| sync_span(s));
                    let b = self.uniform_values(cx, set, &[Uni::Nat(lo), Uni::Nat(hi)], at, ind)?;
                    let c = &cx.names.locals[*counter];
                    writeln!(self.out, "{pad}for (uint64_t {c} = {}; {c} < {}; {c}++) {{", b[0], b[1]).ok();
                    self.loop_exit(cx, set, s, ind + 1)?;
                    self.region(cx, set, body, ind + 1)?;
                    writeln!(self.out, "{pad}}}").ok();
                }
                Stmt::For { counter, lo, hi, body, .. } => {
                    let (t, lo, hi) = self.loop_head(cx, *counter, lo, hi, true)?;
                    let c = &cx.names.locals[*counter];
                    writeln!(self.out, "{pad}for ({t} {c} = {lo}; {c} < {hi}; {c}++) {{").ok();
                    self.loop_exit(cx, set, s, ind + 1)?;
                    self.region(cx, set, body, ind + 1)?;
                    cx.env.counters.remove(counter);
                    writeln!(self.out, "{pad}}}").ok();
                }
                Stmt::If { cond, then, els, .. } if self.uniform_expr(cx, cond) => {
                    let c = self.expr(cx, cond)?;
                    writeln!(self.out, "{pad}if ({c}) {{").ok();
                    self.region(cx, set, then, ind + 1)?;
                    writeln!(self.out, "{pad}}} else {{").ok();
                    self.region(cx, set, els, ind + 1)?;
                    writeln!(self.out, "{pad}}}").ok();
                }
                Stmt::While { cond, body, .. } if self.uniform_expr(cx, cond) => {
                    let c = self.expr(cx, cond)?;
                    writeln!(self.out, "{pad}while ({c}) {{").ok();
                    self.region(cx, set, body, ind + 1)?;
                    writeln!(self.out, "{pad}}}").ok();
                }
                // Conditions on values each thread holds: decided by the first running thread
                // (before every iteration, for a loop) where [`Uniformity`] proves them equal in
                // all; else every thread evaluates the condition and all must agree, which is
                // what the checker guarantees for safe code (a thread that disagrees would not
                // reach the barrier: E0902, as on `sim`).
                Stmt::If { cond, then, els, .. } => {
                    let at = (!cx.uniform.expr(cond)).then(|| sync_span(s));
                    let c = self.uniform_values(cx, set, &[Uni::Cond(cond)], at, ind)?;
                    writeln!(self.out, "{pad}if ({}) {{", c[0]).ok();
                    self.region(cx, set, then, ind + 1)?;
                    writeln!(self.out, "{pad}}} else {{").ok();
                    self.region(cx, set, els, ind + 1)?;
                    writeln!(self.out, "{pad}}}").ok();
                }
                Stmt::While { cond, body, .. } => {
                    let at = (!cx.uniform.expr(cond)).then(|| sync_span(s));
                    writeln!(self.out, "{pad}for (;;) {{").ok();
                    let c = self.uniform_values(cx, set, &[Uni::Cond(cond)], at, ind + 1)?;
                    writeln!(self.out, "{pad}    if (!{}) break;", c[0]).ok();
                    self.region(cx, set, body, ind + 1)?;
                    writeln!(self.out, "{pad}}}").ok();
                }
                Stmt::Threads { set: inner, body } => {
                    let mut all = set.to_vec();
                    all.extend(inner.iter().cloned());
                    self.region(cx, &all, body, ind)?;
                }
                _ => return Err(thread_dependent(s, "control flow that")),
            }
        }
        self.thread_loop(cx, set, &segment, ind)?;
        cx.simd = simd;
        Ok(())
    }

    fn thread_loop(&mut self, cx: &mut Cx, set: &[(IExpr, IExpr, IExpr)], body: &[&Stmt], ind: usize) -> Result<(), E> {
        if body.is_empty() {
            return Ok(());
        }
        let mut used = HashSet::new();
        body.iter().for_each(|s| locals_in_stmt(s, &mut used));
        // The loops the lanes cost model kept inside the thread loop, and why.
        let mut kept = Vec::new();
        if !cx.kept.is_empty() {
            let mut counters = Vec::new();
            body.iter().for_each(|s| loop_counters(s, &mut counters));
            kept.extend(counters.iter().filter_map(|c| cx.kept.get(c)));
        }
        for why in kept {
            writeln!(self.out, "{}/* {why} */", "    ".repeat(ind)).ok();
        }
        // An overflow check tested once after the loop, so that the loop vectorises
        // ([`deferred`]); not in SIMD loops (the flag would need a reduction clause).
        let defer =
            if self.arith_checks && self.defer_checks && !cx.simd { deferred::deferrable(cx.f, body) } else { None };
        let (start, labels) = (self.out.len(), self.labels);
        if let Some(span) = defer {
            let flag = format!("overflow{}_", self.labels);
            self.labels += 1;
            *self.deferred.borrow_mut() = Some(deferred::Deferred { span, flag, used: None });
        }
        let r = self.thread_loop_body(cx, set, body, &used, ind);
        let d = self.deferred.borrow_mut().take();
        r?;
        if let Some(deferred::Deferred { flag, used: Some((at, message)), .. }) = d {
            if self.out[start..].contains("STRATA_AT(") {
                // Another run-time check in the loop could fail first: checked in place.
                self.out.truncate(start);
                self.labels = labels;
                self.thread_loop_body(cx, set, body, &used, ind)?;
            } else {
                let pad = "    ".repeat(ind);
                self.out.insert_str(
                    start,
                    &format!("{pad}unsigned {flag} = 0; /* overflow checked after the thread loop */\n"),
                );
                writeln!(self.out, "{pad}if (STRATA_UNLIKELY({flag})) strata_overflow({at}, \"{message}\");").ok();
            }
        }
        // Once every thread of the block has returned, the block has left the kernel: its later
        // code (block-level statements, loops around barriers) runs for nobody, as on `sim`.
        if let (true, Some(end)) = (body.iter().any(|s| stmt_any(s, &|x| matches!(x, Stmt::Return(_)))), &cx.block_end)
        {
            writeln!(self.out, "{}if (nreturned_ == nthreads_) goto {end};", "    ".repeat(ind)).ok();
        }
        Ok(())
    }

    /// The loop over the threads of `set` running `body` (which uses the locals `used`).
    fn thread_loop_body(
        &mut self,
        cx: &mut Cx,
        set: &[(IExpr, IExpr, IExpr)],
        body: &[&Stmt],
        used: &HashSet<LocalId>,
        ind: usize,
    ) -> Result<(), E> {
        // Threads as SIMD lanes inside a region split at interchanged loops (`region`).
        let label = self.open_thread_loop(cx, set, used, ind)?;
        let saved = cx.next_thread.replace(label.clone());
        let mut r = Ok(());
        for s in body {
            r = self.stmt(cx, s, ind + 1);
            if r.is_err() {
                break;
            }
        }
        cx.next_thread = saved;
        r?;
        self.close_thread_loop(cx, &label, ind);
        Ok(())
    }

    /// The head of a loop over the threads of `set` (not those that returned) whose body uses
    /// the locals `used`; returns the label that ends one thread's iteration.
    fn open_thread_loop(
        &mut self,
        cx: &mut Cx,
        set: &[(IExpr, IExpr, IExpr)],
        used: &HashSet<LocalId>,
        ind: usize,
    ) -> Result<String, E> {
        let pad = "    ".repeat(ind);
        let label = format!("next_thread_{}", self.labels);
        self.labels += 1;
        // The block's threads are nested loops over `tz`, `ty`, `tx` (extents the kernel's type
        // fixes at 1 get no loop). Ranges of a region on one coordinate become that loop's
        // bounds (a split's inactive half costs nothing); other conditions skip the thread.
        let FnKind::Kernel { block, .. } = &cx.f.kind else { return Err(not_a_kernel(cx.f.span)) };
        let dims = [
            (DimName::Z, "tz_", "BZ_", &block[2]),
            (DimName::Y, "ty_", "BY_", &block[1]),
            (DimName::X, "tx_", "BX_", &block[0]),
        ];
        let mut bounds: Vec<(String, String)> =
            dims.iter().map(|d| ("UINT64_C(0)".to_string(), d.2.to_string())).collect();
        if let Some(t) = &cx.lane_tile {
            bounds[1] = (t.clone(), format!("{t} + {LANE_TILE}"));
        }
        let mut tests = Vec::new();
        for (on, lo, hi) in set {
            let (on_c, lo_c, hi_c) = (self.iexpr(cx, on)?, self.iexpr(cx, lo)?, self.iexpr(cx, hi)?);
            let uniform = !iexpr_varies(cx, lo, usize::MAX) && !iexpr_varies(cx, hi, usize::MAX);
            let dim = dims.iter().position(|d| matches!(on, IExpr::ThreadIdx(x) if *x == d.0));
            match dim {
                Some(k) if uniform => {
                    let (lo_b, hi_b) = &mut bounds[k];
                    if lo_c != "UINT64_C(0)" {
                        *lo_b = if lo_b == "UINT64_C(0)" { lo_c } else { format!("strata_max_u64({lo_b}, {lo_c})") };
                    }
                    *hi_b = format!("strata_min_u64({hi_b}, {hi_c})");
                }
                _ => tests.push(format!("if (!(({on_c}) >= ({lo_c}) && ({on_c}) < ({hi_c}))) continue;")),
            }
        }
        if let Some(w) = &cx.warp {
            // One warp's threads: 32 consecutive linear indices (x fastest, as CUDA numbers them).
            if matches!((&block[1], &block[2]), (IExpr::Const(1), IExpr::Const(1))) {
                let (lo_b, hi_b) = &mut bounds[2];
                *lo_b = if lo_b == "UINT64_C(0)" {
                    format!("{w} * 32")
                } else {
                    format!("strata_max_u64({lo_b}, {w} * 32)")
                };
                *hi_b = format!("strata_min_u64({hi_b}, {w} * 32 + 32)");
            } else {
                tests.push(format!("if (tid_ / 32 != {w}) continue;"));
            }
        }
        let mut loops = String::new();
        let mut fixed = Vec::new();
        for ((_, name, whole, extent), (lo, hi)) in dims.iter().zip(&bounds) {
            if matches!(extent, IExpr::Const(1)) && lo == "UINT64_C(0)" && hi == whole {
                fixed.push(format!("{name} = 0"));
            } else {
                if cx.simd && *name == "tx_" {
                    // The threads of a row are the lanes: no thread of the region reads what
                    // another writes (race freedom), and the region has no atomics ([`lanes`]).
                    let head = loops.trim_end().len();
                    loops.truncate(head);
                    if !loops.is_empty() {
                        write!(loops, "\n{pad}").ok();
                    }
                    write!(loops, "#pragma omp simd\n{pad}").ok();
                }
                write!(loops, "for (uint64_t {name} = {lo}; {name} < {hi}; {name}++) ").ok();
            }
        }
        writeln!(self.out, "{pad}{loops}{{").ok();
        if !fixed.is_empty() {
            writeln!(self.out, "{pad}    const uint64_t {};", fixed.join(", ")).ok();
        }
        writeln!(self.out, "{pad}    uint64_t tid_ = (tz_ * BY_ + ty_) * BX_ + tx_;").ok();
        writeln!(self.out, "{pad}    (void)tid_; (void)tx_; (void)ty_; (void)tz_;").ok();
        if cx.returns {
            writeln!(self.out, "{pad}    if (done_[tid_]) continue;").ok();
        }
        if cx.predeclared {
            // The thread's own locals of this segment (the rest are per-thread arrays).
            let mut locals: Vec<LocalId> =
                used.iter().copied().filter(|l| thread_local(cx, *l) && !cx.f.params.contains(l)).collect();
            locals.sort();
            self.declare_locals(cx, &locals, &format!("{pad}    "))?;
        }
        cx.in_threads = true;
        for t in tests {
            writeln!(self.out, "{pad}    {t}").ok();
        }
        Ok(label)
    }

    fn close_thread_loop(&mut self, cx: &mut Cx, label: &str, ind: usize) {
        let pad = "    ".repeat(ind);
        cx.in_threads = false;
        writeln!(self.out, "{pad}    {label}: ;").ok();
        writeln!(self.out, "{pad}}}").ok();
    }

    /// Values the block decides control flow around a barrier by, which block-level code cannot
    /// compute (they are held by each thread): computed by the threads of `set` still running
    /// (of the current warp only, within [`Cx::warp`]) into block-level temporaries, whose names
    /// are returned (`bool` for conditions, `uint64_t` for loop bounds). Without `check`
    /// ([`Uniformity`] proves them equal in every thread) the first thread computes them; with
    /// it every thread does, and one that disagrees with the first is a barrier divergence
    /// (E0902 at the barrier `check`), as on `sim`. Where every thread has returned the
    /// temporaries stay 0: a loop or `if` none of them runs.
    fn uniform_values(
        &mut self,
        cx: &mut Cx,
        set: &[(IExpr, IExpr, IExpr)],
        values: &[Uni],
        check: Option<Span>,
        ind: usize,
    ) -> Result<Vec<String>, E> {
        let pad = "    ".repeat(ind);
        let mut used = HashSet::new();
        let mut names = Vec::new();
        for v in values {
            let name = format!("uniform{}_", self.labels);
            self.labels += 1;
            let t = match v {
                Uni::Cond(e) => {
                    locals_in_expr(e, &mut used);
                    "bool"
                }
                Uni::Nat(i) => {
                    locals_in_iexpr(i, &mut used);
                    "uint64_t"
                }
            };
            writeln!(self.out, "{pad}{t} {name} = 0;").ok();
            names.push(name);
        }
        let done = format!("uniform_done{}_", self.labels);
        self.labels += 1;
        if check.is_some() {
            writeln!(self.out, "{pad}bool {done} = 0;").ok();
        }
        // This loop stops after the first thread: never a SIMD loop.
        let simd = std::mem::replace(&mut cx.simd, false);
        let label = self.open_thread_loop(cx, set, &used, ind)?;
        cx.simd = simd;
        let mut mine = Vec::new();
        for (v, name) in values.iter().zip(&names) {
            let c = match v {
                Uni::Cond(e) => self.expr(cx, e)?,
                Uni::Nat(i) => self.iexpr(cx, i)?,
            };
            match check {
                None => writeln!(self.out, "{pad}    {name} = {c};").ok(),
                Some(_) => {
                    let t = if matches!(v, Uni::Cond(_)) { "bool" } else { "uint64_t" };
                    writeln!(self.out, "{pad}    {t} {name}mine_ = {c};").ok();
                    mine.push(format!("{name}mine_"));
                    Some(())
                }
            };
        }
        match check {
            None => {
                writeln!(self.out, "{pad}    goto {done};").ok();
            }
            Some(span) => {
                let at = self.at(span);
                let differs: Vec<String> = names.iter().zip(&mine).map(|(n, m)| format!("{n} != {m}")).collect();
                let set_all: Vec<String> = names.iter().zip(&mine).map(|(n, m)| format!("{n} = {m};")).collect();
                let whom = if cx.warp.is_some() { "warp" } else { "block" };
                writeln!(self.out, "{pad}    if (!{done}) {{ {} {done} = 1; }}", set_all.join(" ")).ok();
                writeln!(
                    self.out,
                    "{pad}    else if ({}) strata_fail(902, {at}, \"barrier divergence: the threads of a {whom} \
                     disagree on the control flow around this barrier, so not every thread reaches it\");",
                    differs.join(" || ")
                )
                .ok();
            }
        }
        self.close_thread_loop(cx, &label, ind);
        if check.is_none() {
            writeln!(self.out, "{pad}{done}: ;").ok();
        }
        Ok(names)
    }

    /// At the top of a block-level `for` loop `s` that `break` leaves: stop when its flag is set,
    /// decided as its `if !flag` body is (the checker made the flag uniform where a barrier is).
    fn loop_exit(&mut self, cx: &mut Cx, set: &[(IExpr, IExpr, IExpr)], s: &Stmt, ind: usize) -> Result<(), E> {
        let Stmt::For { exit: Some(flag), span, .. } = s else { return Ok(()) };
        let pad = "    ".repeat(ind);
        let cond = Expr::Load(Place::local(*flag, *span));
        let c = if self.uniform_expr(cx, &cond) {
            self.expr(cx, &cond)?
        } else {
            let at = (!cx.uniform.expr(&cond)).then(|| sync_span(s));
            let names = self.uniform_values(cx, set, &[Uni::Cond(&cond)], at, ind)?;
            names.into_iter().next().ok_or_else(|| unsupported(*span, "the `break` flag of this loop"))?
        };
        writeln!(self.out, "{pad}if ({c}) break;").ok();
        Ok(())
    }

    /// Whether the block decides `s`, a statement containing a barrier, the same way in every
    /// thread without looking at them: its condition or bounds are block-level values, or
    /// [`Uniformity`] proves them the same in every thread.
    fn decided_for_block(&self, cx: &Cx, s: &Stmt) -> bool {
        match s {
            Stmt::For { counter, lo, hi, exit, span, .. } => {
                // A `break` flag set per warp (a warp-uniform `break`) is not the block's: such a
                // loop runs one warp at a time.
                let flag_ok = exit.is_none_or(|f| {
                    let flag = Expr::Load(Place::local(f, *span));
                    self.uniform_expr(cx, &flag) || cx.uniform.expr(&flag)
                });
                flag_ok
                    && (!(iexpr_varies(cx, lo, *counter) || iexpr_varies(cx, hi, *counter))
                        || (cx.uniform.iexpr(lo) && cx.uniform.iexpr(hi)))
            }
            Stmt::If { cond, .. } | Stmt::While { cond, .. } => self.uniform_expr(cx, cond) || cx.uniform.expr(cond),
            _ => true,
        }
    }

    fn uniform_expr(&self, cx: &Cx, e: &Expr) -> bool {
        !expr_varies(cx, e)
    }
}

/// A value [`Emitter::uniform_values`] computes.
pub(super) enum Uni<'a> {
    Cond(&'a Expr),
    Nat(&'a IExpr),
}

/// The refusal of a barrier under `what` (control flow) that may depend on the thread: the
/// block's threads run as loops split at barriers, which needs the whole block to take the same
/// path ([`Uniformity`] could not prove it). `sim` runs such a kernel and checks it.
fn thread_dependent(s: &Stmt, what: &str) -> E {
    let span = sync_span(s);
    let mut d = Diagnostic::error(
        codes::UNSUPPORTED,
        format!("not supported by the cpu device: a barrier inside {what} may differ between the threads of a block"),
        span,
        "this barrier; run the program with `--device sim`",
    )
    .with_note(
        "the cpu device runs a block's threads one after another between barriers, so a loop or `if` around a \
         barrier must go the same way in every thread; a value computed only from constants, parameters, \
         `blockIdx`, `blockDim`, `gridDim` and such values is, `threadIdx` and values read from memory are not",
    );
    if s.span() != Span::DUMMY && s.span() != span {
        d = d.with_label(s.span(), "the control flow around it");
    }
    Box::new(d)
}

/// Kernel-only code reached for another function: a compiler bug, reported instead of a panic.
fn not_a_kernel(span: Span) -> E {
    unsupported(span, "block and thread code outside a kernel")
}

/// The barrier-free segments of the thread regions in `body`, split exactly as `region` splits
/// them when it emits thread loops.
fn collect_segments<'a>(
    body: &'a [Stmt],
    out: &mut Vec<Vec<&'a Stmt>>,
    in_region: bool,
    lanes: &HashMap<LocalId, String>,
) {
    let mut seg: Vec<&Stmt> = Vec::new();
    for s in body {
        match s {
            Stmt::Threads { body, .. } if !in_region => collect_segments(body, out, true, lanes),
            _ if !in_region => match s {
                Stmt::For { body, .. } | Stmt::While { body, .. } => collect_segments(body, out, false, lanes),
                Stmt::If { then, els, .. } => {
                    collect_segments(then, out, false, lanes);
                    collect_segments(els, out, false, lanes);
                }
                _ => {}
            },
            _ if !contains_sync(s) && !splits_at_lanes(s, lanes) => seg.push(s),
            _ => {
                out.push(std::mem::take(&mut seg));
                match s {
                    Stmt::For { body, .. } | Stmt::While { body, .. } | Stmt::Threads { body, .. } => {
                        collect_segments(body, out, true, lanes)
                    }
                    Stmt::If { then, els, .. } => {
                        collect_segments(then, out, true, lanes);
                        collect_segments(els, out, true, lanes);
                    }
                    _ => {}
                }
            }
        }
    }
    if in_region {
        out.push(seg);
    }
}

/// The locals of each condition or loop bound, in thread regions, of control flow that contains
/// a barrier.
fn collect_barrier_control(body: &[Stmt], out: &mut Vec<HashSet<LocalId>>, in_region: bool) {
    for s in body {
        if !contains_sync(s) {
            continue;
        }
        let mut used = HashSet::new();
        match s {
            Stmt::Threads { body, .. } => collect_barrier_control(body, out, true),
            Stmt::For { lo, hi, body, .. } => {
                locals_in_iexpr(lo, &mut used);
                locals_in_iexpr(hi, &mut used);
                collect_barrier_control(body, out, in_region);
            }
            Stmt::While { cond, body, .. } => {
                locals_in_expr(cond, &mut used);
                collect_barrier_control(body, out, in_region);
            }
            Stmt::If { cond, then, els, .. } => {
                locals_in_expr(cond, &mut used);
                collect_barrier_control(then, out, in_region);
                collect_barrier_control(els, out, in_region);
            }
            _ => {}
        }
        if in_region && !used.is_empty() {
            out.push(used);
        }
    }
}

/// Whether every barrier in `s` is a warp barrier (and there is one).
fn only_warp_barriers(s: &Stmt) -> bool {
    contains_sync(s) && !stmt_any(s, &|x| matches!(x, Stmt::Sync { warp: false, .. }))
}

/// Rows of threads per tile of an interchanged loop (see `region`): 4 rows of up to 32 lanes of
/// f32 are 8 to 16 AVX2 vectors.
const LANE_TILE: u64 = 4;

/// The rows of threads (`BY_`) of a kernel whose interchanged loops are tiled by [`LANE_TILE`]
/// rows: fixed rows of at most 32 threads, more than one tile of them.
fn lane_tile_rows(kind: &FnKind) -> Option<u64> {
    let FnKind::Kernel { block, .. } = kind else { return None };
    match (&block[0], &block[1]) {
        (IExpr::Const(x), IExpr::Const(y)) if *x <= 32 && *y > LANE_TILE && *y % LANE_TILE == 0 => Some(*y),
        _ => None,
    }
}

/// The number of threads of a block whose shape the kernel's type fixes, where it is at most
/// 1024 (a per-thread scalar array on the stack then takes at most 8 KiB).
fn block_threads(block: &[IExpr; 3]) -> Option<u64> {
    let mut n: u64 = 1;
    for d in block {
        let IExpr::Const(c) = d else { return None };
        n = n.checked_mul(*c)?;
    }
    (n <= 1024).then_some(n)
}

/// The counters of the `for` loops in `s`, outer before inner.
fn loop_counters(s: &Stmt, out: &mut Vec<LocalId>) {
    match s {
        Stmt::For { counter, body, .. } => {
            out.push(*counter);
            body.iter().for_each(|x| loop_counters(x, out));
        }
        Stmt::While { body, .. } | Stmt::Threads { body, .. } => body.iter().for_each(|x| loop_counters(x, out)),
        Stmt::If { then, els, .. } => then.iter().chain(els).for_each(|x| loop_counters(x, out)),
        _ => {}
    }
}

/// Whether `s` is or contains a loop run at block level around thread loops ([`lanes`]).
fn splits_at_lanes(s: &Stmt, lanes: &HashMap<LocalId, String>) -> bool {
    !lanes.is_empty() && stmt_any(s, &|x| matches!(x, Stmt::For { counter, .. } if lanes.contains_key(counter)))
}

fn contains_sync(s: &Stmt) -> bool {
    stmt_any(s, &|x| matches!(x, Stmt::Sync { .. }))
}

fn sync_span(s: &Stmt) -> Span {
    match s {
        Stmt::Sync { span, .. } => *span,
        Stmt::For { body, .. } | Stmt::While { body, .. } | Stmt::Threads { body, .. } => {
            body.iter().find(|x| contains_sync(x)).map_or(Span::DUMMY, sync_span)
        }
        Stmt::If { then, els, .. } => then.iter().chain(els).find(|x| contains_sync(x)).map_or(Span::DUMMY, sync_span),
        _ => Span::DUMMY,
    }
}

/// Counters of `for` loops that contain a barrier inside thread regions: they run at block level.
fn collect_hoisted(body: &[Stmt], out: &mut HashSet<LocalId>) {
    for s in body {
        match s {
            Stmt::For { counter, body, .. } => {
                if body.iter().any(contains_sync) {
                    out.insert(*counter);
                }
                collect_hoisted(body, out);
            }
            Stmt::While { body, .. } | Stmt::Threads { body, .. } => collect_hoisted(body, out),
            Stmt::If { then, els, .. } => {
                collect_hoisted(then, out);
                collect_hoisted(els, out);
            }
            _ => {}
        }
    }
}

fn iexpr_varies(cx: &Cx, e: &IExpr, own: LocalId) -> bool {
    match e {
        IExpr::ThreadIdx(_) => true,
        IExpr::Counter(l) => *l != own && (cx.per_thread.contains(l) || thread_local(cx, *l)),
        IExpr::Add(a, b)
        | IExpr::Sub(a, b)
        | IExpr::Mul(a, b)
        | IExpr::Div(a, b)
        | IExpr::Rem(a, b)
        | IExpr::Pow(a, b) => iexpr_varies(cx, a, own) || iexpr_varies(cx, b, own),
        IExpr::Value(v) => expr_varies(cx, v),
        _ => false,
    }
}

/// A local each thread has its own copy of (counters of loops hoisted to block level are not).
fn thread_local(cx: &Cx, l: LocalId) -> bool {
    cx.f.locals.get(l).is_some_and(|x| x.level == Level::Thread) && !cx.hoisted.contains(&l)
}

/// Could `e` differ between the threads of a block? (Any thread-level local or coordinate.)
fn expr_varies(cx: &Cx, e: &Expr) -> bool {
    match e {
        Expr::Lit(_) => false,
        Expr::Nat(i) => iexpr_varies(cx, i, usize::MAX),
        Expr::Load(p) | Expr::Ref(p) => {
            cx.per_thread.contains(&p.root)
                || thread_local(cx, p.root)
                || p.path.iter().any(|s| matches!(s, PathStep::Elem(i) if iexpr_varies(cx, i, usize::MAX)))
                || p.path.iter().any(|s| matches!(s, PathStep::Deref))
        }
        Expr::Unary(_, x) | Expr::Cast(x, _) | Expr::Checked(x, _) | Expr::ArrayRepeat(x, _) => expr_varies(cx, x),
        Expr::Binary(_, a, b) => expr_varies(cx, a) || expr_varies(cx, b),
        Expr::Tuple(xs) | Expr::ArrayList(xs) | Expr::Builtin(_, xs, _) | Expr::Call { args: xs, .. } => {
            xs.iter().any(|x| expr_varies(cx, x))
        }
    }
}
