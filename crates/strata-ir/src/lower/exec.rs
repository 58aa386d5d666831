//! Execution resources: the domain of a `sched`, the coordinates of resources as values, and the
//! lowering of `sched` and `split` to thread sets.

use super::*;

impl<'a> FnLower<'_, 'a> {
    pub(crate) fn exec_is_warp(&self, t: &ast::ExecExpr) -> bool {
        match (&t.base, t.path.is_empty()) {
            (ast::ExecBase::Var(id), true) => match self.lookup(&id.name) {
                Some(Binding::Exec(b)) => self.binders[b].what == What::Warp,
                _ => false,
            },
            _ => false,
        }
    }

    // --------------------------------------------------------------------------------------------
    // sched and split

    /// The collection an execution-resource expression denotes for `sched`/`split`.
    pub(crate) fn domain(&mut self, e: &ast::ExecExpr) -> Option<(Coll, Vec<Coord>, ThreadSet)> {
        let ast::ExecBase::Var(id) = &e.base else {
            self.err(e.span, "literal execution resources");
            return None;
        };
        let Some(Binding::Exec(b)) = self.lookup(&id.name) else {
            self.err(e.span, "this execution resource");
            return None;
        };
        let b = self.binders[b].clone();
        let mut set = Vec::new();
        let lin = || {
            // Linear thread number within the block.
            IExpr::add(
                IExpr::ThreadIdx(DimName::X),
                IExpr::mul(
                    IExpr::BlockDim(DimName::X),
                    IExpr::add(
                        IExpr::ThreadIdx(DimName::Y),
                        IExpr::mul(IExpr::BlockDim(DimName::Y), IExpr::ThreadIdx(DimName::Z)),
                    ),
                ),
            )
        };
        let (mut coll, mut dims) = match (b.what, b.coll) {
            (What::Grid, _) => (Coll::Blocks, b.remaining.clone()),
            (What::Block, _) => (Coll::Threads, self.block_threads()),
            (What::Warp, _) => (Coll::Lanes, vec![(DimName::X, IExpr::rem(lin(), IExpr::Const(32)), IExpr::Const(32))]),
            (What::Collection, Some(c)) => (c, b.remaining.clone()),
            _ => {
                self.err(e.span, "scheduling over a single thread");
                return None;
            }
        };
        for step in &e.path {
            match step {
                ast::ExecStep::Blocks if b.what == What::Grid => {}
                ast::ExecStep::Threads if b.what == What::Block => {}
                ast::ExecStep::Lanes if b.what == What::Warp => {}
                ast::ExecStep::ToThreads if b.what == What::Grid => {
                    coll = Coll::GridThreads;
                    dims = self.grid_threads();
                }
                ast::ExecStep::Warps | ast::ExecStep::ToWarps if b.what == What::Block => {
                    coll = Coll::Warps;
                    let total =
                        self.block_threads().iter().fold(IExpr::Const(1), |acc, (_, _, s)| IExpr::mul(acc, s.clone()));
                    dims = vec![(DimName::X, IExpr::div(lin(), IExpr::Const(32)), IExpr::div(total, IExpr::Const(32)))];
                }
                ast::ExecStep::Range(a, z, d) => {
                    let (a, z) = (self.ast_nat(a, &HashMap::new()), self.ast_nat(z, &HashMap::new()));
                    if let Some(slot) = dims.iter_mut().find(|(n, _, _)| n == d) {
                        set.push((slot.1.clone(), a.clone(), z.clone()));
                        slot.1 = IExpr::sub(slot.1.clone(), a.clone());
                        slot.2 = IExpr::sub(z, a);
                    }
                }
                _ => {
                    self.err(e.span, "this execution resource path");
                    return None;
                }
            }
        }
        Some((coll, dims, set))
    }

    /// The threads of one block, along the dimensions the signature gives the block.
    pub(crate) fn block_threads(&self) -> Vec<(DimName, IExpr, IExpr)> {
        self.block_shape.iter().map(|(d, n)| (*d, IExpr::ThreadIdx(*d), n.clone())).collect()
    }

    /// `r.idx`, `r.idx_x`, …, `r.global_idx_z` of a resource `r` scheduled by `sched` (the
    /// checker has refused every other use): its coordinate in the collection it was scheduled
    /// from (`u32`), or a thread's index among all threads of the grid (`u64`).
    pub(crate) fn coordinate(&self, base: &ast::Expr, v: &ast::ViewRef) -> Option<Expr> {
        let ExprKind::Path(segs) = &base.kind else { return None };
        let what = v.name.name.as_str();
        if segs.len() != 1 || !strata_check::exec::COORDINATES.contains(&what) {
            return None;
        }
        let Some(Binding::Exec(b)) = self.lookup(&segs[0].name) else { return None };
        let dim = match what.rsplit_once('_').map(|(_, d)| d) {
            Some("x") => Some(DimName::X),
            Some("y") => Some(DimName::Y),
            Some("z") => Some(DimName::Z),
            _ => None,
        };
        if what.starts_with("global_") {
            let d = dim.unwrap_or(DimName::X);
            let coord = IExpr::add(IExpr::mul(IExpr::BlockIdx(d), IExpr::BlockDim(d)), IExpr::ThreadIdx(d));
            return Some(Expr::Cast(Box::new(Expr::Nat(coord)), ScalarTy::U64));
        }
        let mine = &self.binders[b].scheduled;
        let coord = match dim {
            Some(d) => mine.iter().find(|(n, _, _)| *n == d)?.1.clone(),
            None => mine.first()?.1.clone(),
        };
        Some(Expr::Cast(Box::new(Expr::Nat(coord)), ScalarTy::U32))
    }

    /// All threads of the grid (`to_threads`): along each dimension, blocks times threads.
    pub(crate) fn grid_threads(&self) -> Vec<(DimName, IExpr, IExpr)> {
        [DimName::X, DimName::Y, DimName::Z]
            .iter()
            .filter_map(|d| {
                let g = self.grid_shape.iter().find(|(n, _)| n == d).map(|(_, s)| s.clone());
                let b = self.block_shape.iter().find(|(n, _)| n == d).map(|(_, s)| s.clone());
                if g.is_none() && b.is_none() {
                    return None;
                }
                let coord = IExpr::add(IExpr::mul(IExpr::BlockIdx(*d), IExpr::BlockDim(*d)), IExpr::ThreadIdx(*d));
                Some((*d, coord, IExpr::mul(g.unwrap_or(IExpr::Const(1)), b.unwrap_or(IExpr::Const(1)))))
            })
            .collect()
    }

    pub(crate) fn sched(
        &mut self,
        dims: &[DimName],
        var: &ast::Ident,
        exec: &ast::ExecExpr,
        body: &ast::Block,
        span: Span,
        out: &mut Vec<Stmt>,
    ) {
        if self.level == Level::Host {
            self.err(span, "`sched` in host code");
            return;
        }
        let Some((coll, mut avail, extra_set)) = self.domain(exec) else { return };
        let mut scheduled = Vec::new();
        for d in dims {
            match avail.iter().position(|(n, _, _)| n == d) {
                Some(i) => scheduled.push(avail.remove(i)),
                None => {
                    self.err(span, format!("scheduling over dimension {}", d.letter()));
                    return;
                }
            }
        }
        let single = avail.is_empty();
        let what = match (coll, single) {
            (_, false) => What::Collection,
            (Coll::Blocks, true) => What::Block,
            (Coll::Warps, true) => What::Warp,
            _ => What::Thread,
        };
        let b = self.binders.len();
        self.binders.push(ExecB { name: var.name.clone(), coll: Some(coll), scheduled, remaining: avail, what });
        let enters_region = !self.in_region && matches!(coll, Coll::Threads | Coll::GridThreads | Coll::Warps);
        self.scopes.push(vec![(var.name.clone(), Binding::Exec(b))]);
        if enters_region {
            self.in_region = true;
            let inner = self.block(body);
            self.in_region = false;
            out.push(Stmt::Threads { set: extra_set, body: inner });
        } else {
            // Blocks (or, inside a region, lanes or threads) of a range of the collection: only
            // those in the range run the body.
            let inner = self.block(body);
            guarded(&extra_set, inner, span, out);
        }
        self.scopes.pop();
    }

    pub(crate) fn split(
        &mut self,
        dim: DimName,
        exec: &ast::ExecExpr,
        at: &ast::Nat,
        arms: &[ast::SplitArm; 2],
        span: Span,
        out: &mut Vec<Stmt>,
    ) {
        let Some((coll, dims, extra)) = self.domain(exec) else { return };
        let Some((_, coord, size)) = dims.iter().find(|(n, _, _)| *n == dim).cloned() else {
            self.err(span, "this split");
            return;
        };
        let pos = self.ast_nat(at, &HashMap::new());
        // A split of threads or warps at block level: each arm runs as a thread region.
        let as_regions = !self.in_region && coll != Coll::Blocks;
        let mut parts = Vec::new();
        for (i, arm) in arms.iter().enumerate() {
            let (lo, hi) = if i == 0 { (IExpr::Const(0), pos.clone()) } else { (pos.clone(), size.clone()) };
            let mut arm_dims = dims.clone();
            for slot in arm_dims.iter_mut().filter(|(n, _, _)| *n == dim) {
                slot.1 = IExpr::sub(coord.clone(), lo.clone());
                slot.2 = IExpr::sub(hi.clone(), lo.clone());
            }
            let b = self.binders.len();
            self.binders.push(ExecB {
                name: arm.name.name.clone(),
                coll: Some(coll),
                scheduled: vec![],
                remaining: arm_dims,
                what: What::Collection,
            });
            self.scopes.push(vec![(arm.name.name.clone(), Binding::Exec(b))]);
            let was_in_region = self.in_region;
            self.in_region |= as_regions;
            let mut body = Vec::new();
            self.stmt_expr(&arm.body, &mut body);
            self.in_region = was_in_region;
            self.scopes.pop();
            parts.push(body);
        }
        let second = parts.pop().unwrap_or_default();
        let first = parts.pop().unwrap_or_default();
        if as_regions {
            // Each arm is a thread region of its part, whatever it contains: a `return` or a
            // `let` in an arm belongs to the arm's threads only.
            for (body, lo, hi) in [(first, IExpr::Const(0), pos.clone()), (second, pos.clone(), size)] {
                if !body.is_empty() {
                    let mut set = extra.clone();
                    set.push((coord.clone(), lo, hi));
                    out.push(Stmt::Threads { set, body });
                }
            }
        } else {
            // Inside a region, or a split of blocks (uniform in each block): a condition.
            let cond = Expr::Binary(ast::BinOp::Lt, Box::new(Expr::Nat(coord)), Box::new(Expr::Nat(pos)));
            let split = vec![Stmt::If { cond, then: first, els: second, span }];
            guarded(&extra, split, span, out);
        }
    }

    // --------------------------------------------------------------------------------------------
    // Calls and launches
}
