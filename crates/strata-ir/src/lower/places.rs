//! Places: whole parts of arrays read, written and printed element by element, and the lowering of
//! a place expression (dereferences, indices, run-time indices, selections and views) to an IR
//! place.

use super::*;

impl<'a> FnLower<'_, 'a> {
    /// The dimensions (outermost first) and the type of the part of an array `st` denotes.
    pub(crate) fn part_ty(st: &PState) -> Option<(Vec<IExpr>, Ty)> {
        let arr = st.arr.as_ref()?;
        let dims = arr.dims[arr.fixed.len()..].to_vec();
        let ty = dims.iter().rev().fold(arr.leaf.clone(), |t, n| Ty::Array { elem: Box::new(t), len: n.clone() });
        Some((dims, ty))
    }

    /// Loops over every element of a part of an array with dimensions `dims`: `body` gets the
    /// element's index (one counter per dimension) and returns the statements for it.
    pub(crate) fn each_elem(
        &mut self,
        dims: &[IExpr],
        span: Span,
        body: impl FnOnce(&mut Self, &[IExpr]) -> Vec<Stmt>,
    ) -> Vec<Stmt> {
        let level = self.local_level();
        let counters: Vec<LocalId> = dims.iter().map(|_| self.new_local("elem_i", Ty::Nat, level)).collect();
        let idx: Vec<IExpr> = counters.iter().map(|c| IExpr::Counter(*c)).collect();
        let mut stmts = body(self, &idx);
        for (c, n) in counters.iter().zip(dims).rev() {
            stmts = vec![Stmt::For { counter: *c, lo: IExpr::Const(0), hi: n.clone(), body: stmts, exit: None, span }];
        }
        stmts
    }

    /// A part of an array (a row `h[1]`, a view) used as a value: a place denotes it only by a
    /// pointer to its first scalar, so it is copied, element by element through its indices
    /// (views compose as for any access), into a fresh local of its array type, run before the
    /// expression that uses it.
    pub(crate) fn part_value(&mut self, st: PState, span: Span) -> Expr {
        let Some((dims, ty)) = Self::part_ty(&st) else { return Expr::Lit(Lit::Unit) };
        let temp = self.new_local("part_value", ty.clone(), self.local_level());
        self.value_temps.push(temp);
        let copy = self.each_elem(&dims, span, |s, idx| {
            let mut src = st.clone();
            for i in idx {
                s.push_index(&mut src, i.clone());
            }
            let Some(src) = s.finish(src, span) else { return Vec::new() };
            let dst = Place { root: temp, path: vec![PathStep::Elem(offset(idx, &dims))], checks: vec![], span };
            vec![Stmt::Store { place: dst, value: Expr::Load(src) }]
        });
        // Zeros first: the element stores need an array to store into on every device.
        self.pre.push(Stmt::Let { local: temp, init: zero_value(&ty), span });
        self.pre.extend(copy);
        Expr::Load(Place::local(temp, span))
    }

    /// `part = value` for a part of an array (a row, a view): the value, kept in a local, is
    /// stored element by element.
    pub(crate) fn store_part(&mut self, st: PState, value: Expr, span: Span, out: &mut Vec<Stmt>) {
        let Some((dims, ty)) = Self::part_ty(&st) else { return };
        let src = match value {
            Expr::Load(p) if p.path.is_empty() && self.value_temps.contains(&p.root) => p.root,
            v => {
                let temp = self.new_local("assigned_value", ty, self.local_level());
                out.push(Stmt::Let { local: temp, init: Some(v), span });
                temp
            }
        };
        let copy = self.each_elem(&dims, span, |s, idx| {
            let mut dst = st.clone();
            for i in idx {
                s.push_index(&mut dst, i.clone());
            }
            let Some(dst) = s.finish(dst, span) else { return Vec::new() };
            let from = Place { root: src, path: vec![PathStep::Elem(offset(idx, &dims))], checks: vec![], span };
            vec![Stmt::Store { place: dst, value: Expr::Load(from) }]
        });
        out.extend(copy);
    }

    /// The number of scalars a pointer argument `a` (a borrow of a place, or a reference bound
    /// to one) refers to, where that is a part of an array (a row, a view): its pointer, to the
    /// part's first scalar, does not say how long the part is. `None` for whole arrays.
    pub(crate) fn part_len(&mut self, a: &ast::Expr) -> Option<IExpr> {
        let errors = self.l.errors.len();
        let st = match &a.kind {
            ExprKind::Paren(x) => return self.part_len(x),
            ExprKind::Borrow { place, .. } => self.borrowed(place),
            ExprKind::Path(segs) if segs.len() == 1 => match self.lookup(&segs[0].name) {
                Some(Binding::Ref(st)) => Some((*st).clone()),
                _ => None,
            },
            _ => None,
        };
        self.l.errors.truncate(errors);
        let (dims, _) = Self::part_ty(&st?)?;
        Some(dims.into_iter().fold(IExpr::Const(1), IExpr::mul))
    }

    pub(crate) fn place(&mut self, e: &ast::Expr) -> Option<Place> {
        let st = self.pstate(e)?;
        self.finish(st, e.span)
    }

    /// Whether a pointer can express the place `st` (see [`FnLower::finish`]).
    pub(crate) fn contiguous(&self, st: &PState) -> bool {
        match &st.arr {
            Some(arr) if arr.viewed => {
                let mut first = arr.fixed.clone();
                first.extend(std::iter::repeat_n(IExpr::Const(0), arr.dims.len() - arr.fixed.len()));
                is_contiguous(arr, &offset(&(arr.inv)(first), &arr.base_dims))
            }
            _ => true,
        }
    }

    pub(crate) fn finish(&mut self, mut st: PState, span: Span) -> Option<Place> {
        if let Some(arr) = st.arr.take() {
            // A part of an array referred to as a whole: a pointer to its first scalar, which
            // only expresses a part whose elements lie contiguously and in order in memory.
            let k = arr.fixed.len();
            let mut first = arr.fixed.clone();
            first.extend(std::iter::repeat_n(IExpr::Const(0), arr.dims.len() - k));
            let start = offset(&(arr.inv)(first), &arr.base_dims);
            if arr.viewed && !is_contiguous(&arr, &start) {
                self.err(span, "a reference to a view that is not a contiguous part of memory");
                return None;
            }
            if k > 0 || start != IExpr::Const(0) {
                st.path.push(PathStep::Elem(start));
            }
        }
        Some(Place { root: st.root, path: st.path, checks: st.checks, span })
    }

    pub(crate) fn pstate(&mut self, e: &ast::Expr) -> Option<PState> {
        match &e.kind {
            ExprKind::Path(segs) if segs.len() == 1 => match self.lookup(&segs[0].name) {
                Some(Binding::Local(l)) => {
                    Some(PState { root: l, path: vec![], arr: None, ty: self.locals[l].ty.clone(), checks: vec![] })
                }
                Some(Binding::Ref(st)) => Some((*st).clone()),
                _ => {
                    self.err(e.span, "this place");
                    None
                }
            },
            ExprKind::Paren(x) => self.pstate(x),
            ExprKind::Deref(x) => {
                if let ExprKind::Path(segs) = &x.kind {
                    // A static reference's place is already the memory it refers to.
                    if let Some(Binding::Ref(st)) = self.lookup(&segs[0].name) {
                        return Some((*st).clone());
                    }
                }
                let mut st = self.pstate(x)?;
                self.deref(&mut st, e.span)?;
                Some(st)
            }
            ExprKind::Field(x, f) => {
                let mut st = self.pstate(x)?;
                self.auto_deref(&mut st, e.span)?;
                let i = match f {
                    ast::Field::Fst => 0,
                    ast::Field::Snd => 1,
                    ast::Field::Index(i) => *i,
                };
                let Ty::Tuple(ts) = &st.ty else {
                    self.err(e.span, "this projection");
                    return None;
                };
                st.ty = ts.get(i as usize).cloned().unwrap_or(Ty::Scalar(ScalarTy::Unit));
                st.path.push(PathStep::Field(i));
                Some(st)
            }
            ExprKind::Index(x, idx) => {
                let mut st = self.pstate(x)?;
                self.enter_array(&mut st, e.span)?;
                let i = match self.index_nat(idx) {
                    Some(i) => i,
                    None => {
                        let v = self.run_time_index(idx);
                        let i = IExpr::Value(Box::new(v));
                        let bound =
                            st.arr.as_ref().and_then(|a| a.dims.get(a.fixed.len()).cloned()).unwrap_or(IExpr::Const(0));
                        st.checks.push((i.clone(), bound));
                        i
                    }
                };
                self.push_index(&mut st, i);
                Some(st)
            }
            ExprKind::Select(x, ex) => {
                let mut st = self.pstate(x)?;
                self.enter_array(&mut st, e.span)?;
                let name = match &ex.base {
                    ast::ExecBase::Var(id) => id.name.clone(),
                    _ => return None,
                };
                let Some(Binding::Exec(b)) = self.lookup(&name) else {
                    self.err(ex.span, "this selection");
                    return None;
                };
                let dims = self.l.types.selections.get(&e.span).cloned();
                for c in self.select_coords(b, dims.as_deref()) {
                    self.push_index(&mut st, c);
                }
                Some(st)
            }
            ExprKind::View(x, v) => {
                let mut st = self.pstate(x)?;
                self.enter_array(&mut st, e.span)?;
                let mut arr = st.arr.take()?;
                // Views act on the dimensions not yet indexed.
                let fixed = std::mem::take(&mut arr.fixed);
                let rest: Vec<IExpr> = arr.dims[fixed.len()..].to_vec();
                let (dims, inv) = self.view(&rest, v, &HashMap::new())?;
                let old = arr.inv.clone();
                arr.inv = Rc::new(move |idx: Vec<IExpr>| {
                    let mut full = fixed.clone();
                    full.extend(inv(idx));
                    old(full)
                });
                arr.dims = dims;
                arr.viewed = true;
                st.arr = Some(arr);
                Some(st)
            }
            _ => {
                self.err(e.span, "this place expression");
                None
            }
        }
    }

    /// A run-time index, evaluated once: every device evaluates it for the bound check and for
    /// the offset, so an index with an effect (a call, an atomic) is bound to a local first.
    pub(crate) fn run_time_index(&mut self, idx: &ast::Expr) -> Expr {
        let v = self.expr(idx);
        self.evaluated_once(idx, v, "an index")
    }

    /// `v`, the lowered `e`, where a device may evaluate it more than once (an index, the
    /// element of `[e; n]`): with an effect (a call, an atomic), it is bound to a local first,
    /// so that the effect happens once on every device.
    pub(crate) fn evaluated_once(&mut self, e: &ast::Expr, v: Expr, what: &str) -> Expr {
        if !expr_has_effects(&v) {
            return v;
        }
        let Some(ty) = self.scalar_call_type(e).or_else(|| self.scalar_ty(&v)) else {
            // Evaluated twice it would run its effect twice: refuse rather than differ.
            self.err(
                e.span,
                format!(
                    "{what} with an effect (a call, an atomic) whose type is not known here: bind it to a `let` first"
                ),
            );
            return v;
        };
        let temp = self.new_local("once", Ty::Scalar(ty), self.local_level());
        self.value_temps.push(temp);
        self.pre.push(Stmt::Let { local: temp, init: Some(v), span: e.span });
        Expr::Load(Place::local(temp, e.span))
    }

    pub(crate) fn index_nat(&mut self, idx: &ast::Expr) -> Option<IExpr> {
        match &idx.kind {
            ExprKind::Lit(ast::Lit::Int(v, _)) => Some(IExpr::Const(*v as u64)),
            ExprKind::Paren(x) => self.index_nat(x),
            ExprKind::Path(segs) if segs.len() == 1 => match self.lookup(&segs[0].name) {
                Some(Binding::Counter(c)) => Some(IExpr::Counter(c)),
                Some(Binding::Nat(n)) => Some(n),
                Some(_) => None,
                None => Some(self.name_to_iexpr(&segs[0].name)),
            },
            ExprKind::Binary(op, a, b) => {
                let (a, b) = (self.index_nat(a)?, self.index_nat(b)?);
                Some(match op {
                    ast::BinOp::Add => IExpr::add(a, b),
                    ast::BinOp::Sub => IExpr::sub(a, b),
                    ast::BinOp::Mul => IExpr::mul(a, b),
                    ast::BinOp::Div => IExpr::div(a, b),
                    ast::BinOp::Rem => IExpr::rem(a, b),
                    _ => return None,
                })
            }
            _ => None,
        }
    }

    /// The coordinates a selection by binder `b` indexes with: those of the dimensions the checker
    /// recorded for it (`dims`, outermost first), else every dimension scheduled down to `b`.
    pub(crate) fn select_coords(&self, b: usize, dims: Option<&[DimName]>) -> Vec<IExpr> {
        let coll = self.binders[b].coll;
        let scheduled: Vec<&(DimName, IExpr, IExpr)> = self.binders[..=b]
            .iter()
            .filter(|x| x.coll == coll && self.binder_in_scope(x))
            .flat_map(|x| x.scheduled.iter())
            .collect();
        match dims {
            Some(dims) => dims
                .iter()
                .filter_map(|d| scheduled.iter().find(|(n, _, _)| n == d).map(|(_, c, _)| c.clone()))
                .collect(),
            None => scheduled.iter().map(|(_, c, _)| c.clone()).collect(),
        }
    }

    pub(crate) fn binder_in_scope(&self, b: &ExecB) -> bool {
        self.scopes
            .iter()
            .flatten()
            .any(|(n, bind)| n == &b.name && matches!(bind, Binding::Exec(i) if std::ptr::eq(&self.binders[*i], b)))
    }

    pub(crate) fn deref(&mut self, st: &mut PState, span: Span) -> Option<()> {
        match st.ty.clone() {
            Ty::Ref(t, _) | Ty::Owned(t, _) => {
                st.path.push(PathStep::Deref);
                st.ty = *t;
                Some(())
            }
            _ => {
                self.err(span, "dereferencing this value");
                None
            }
        }
    }

    pub(crate) fn auto_deref(&mut self, st: &mut PState, span: Span) -> Option<()> {
        while matches!(st.ty, Ty::Ref(..) | Ty::Owned(..)) && st.arr.is_none() {
            self.deref(st, span)?;
        }
        Some(())
    }

    /// Starts the view machinery at an array (after dereferencing).
    pub(crate) fn enter_array(&mut self, st: &mut PState, span: Span) -> Option<()> {
        if st.arr.is_some() {
            return Some(());
        }
        self.auto_deref(st, span)?;
        let mut dims = Vec::new();
        let mut t = st.ty.clone();
        while let Ty::Array { elem, len } = t {
            dims.push(len);
            t = *elem;
        }
        if dims.is_empty() {
            self.err(span, "indexing a non-array");
            return None;
        }
        st.arr = Some(ArrState {
            base_dims: dims.clone(),
            dims,
            fixed: vec![],
            inv: Rc::new(|v| v),
            leaf: t,
            viewed: false,
        });
        Some(())
    }

    pub(crate) fn push_index(&mut self, st: &mut PState, i: IExpr) {
        let Some(arr) = st.arr.as_mut() else { return };
        arr.fixed.push(i);
        if arr.fixed.len() == arr.dims.len() {
            let base = (arr.inv)(arr.fixed.clone());
            let off = offset(&base, &arr.base_dims);
            st.path.push(PathStep::Elem(off));
            st.ty = arr.leaf.clone();
            st.arr = None;
        }
    }

    /// A view applied to dimensions `dims`: the new dimensions and the inverse index function.
    pub(crate) fn view(
        &mut self,
        dims: &[IExpr],
        v: &ast::ViewRef,
        env: &HashMap<String, IExpr>,
    ) -> Option<(Vec<IExpr>, Inv)> {
        let nats: Vec<IExpr> = v.nat_args.iter().map(|n| self.ast_nat(n, env)).collect();
        let d0 = dims.first().cloned().unwrap_or(IExpr::Const(0));
        let rest: Vec<IExpr> = dims.iter().skip(1).cloned().collect();
        let with = |head: Vec<IExpr>, rest: &[IExpr]| head.into_iter().chain(rest.iter().cloned()).collect::<Vec<_>>();
        match v.name.name.as_str() {
            "group" | "grp" => {
                let k = nats.first()?.clone();
                let k2 = k.clone();
                Some((
                    with(vec![IExpr::div(d0, k.clone()), k], &rest),
                    Rc::new(move |idx: Vec<IExpr>| {
                        let mut out = vec![IExpr::add(IExpr::mul(idx[0].clone(), k2.clone()), idx[1].clone())];
                        out.extend(idx[2..].iter().cloned());
                        out
                    }),
                ))
            }
            "take_left" => Some((with(vec![nats.first()?.clone()], &rest), Rc::new(|idx| idx))),
            "take_right" => {
                let k = nats.first()?.clone();
                let k2 = k.clone();
                Some((
                    with(vec![IExpr::sub(d0, k)], &rest),
                    Rc::new(move |mut idx: Vec<IExpr>| {
                        idx[0] = IExpr::add(idx[0].clone(), k2.clone());
                        idx
                    }),
                ))
            }
            "transpose" | "transp" => {
                let d1 = rest.first()?.clone();
                let tail: Vec<IExpr> = rest.iter().skip(1).cloned().collect();
                Some((
                    with(vec![d1, d0], &tail),
                    Rc::new(|mut idx: Vec<IExpr>| {
                        idx.swap(0, 1);
                        idx
                    }),
                ))
            }
            "join" => {
                let d1 = rest.first()?.clone();
                let tail: Vec<IExpr> = rest.iter().skip(1).cloned().collect();
                let m = d1.clone();
                Some((
                    with(vec![IExpr::mul(d0, d1)], &tail),
                    Rc::new(move |idx: Vec<IExpr>| {
                        let mut out =
                            vec![IExpr::div(idx[0].clone(), m.clone()), IExpr::rem(idx[0].clone(), m.clone())];
                        out.extend(idx[1..].iter().cloned());
                        out
                    }),
                ))
            }
            "reverse" | "rev" => {
                let n = d0.clone();
                Some((
                    dims.to_vec(),
                    Rc::new(move |mut idx: Vec<IExpr>| {
                        idx[0] = IExpr::sub(IExpr::sub(n.clone(), IExpr::Const(1)), idx[0].clone());
                        idx
                    }),
                ))
            }
            "to_view" => Some((dims.to_vec(), Rc::new(|idx| idx))),
            "map" => {
                let mut inner_dims = rest.clone();
                let mut inner_inv: Inv = Rc::new(|idx| idx);
                for step in v.view_args.first()? {
                    let (nd, ni) = self.view(&inner_dims, step, env)?;
                    let prev = inner_inv.clone();
                    inner_inv = Rc::new(move |idx| prev(ni(idx)));
                    inner_dims = nd;
                }
                Some((
                    with(vec![d0], &inner_dims),
                    Rc::new(move |idx: Vec<IExpr>| {
                        let mut out = vec![idx[0].clone()];
                        out.extend(inner_inv(idx[1..].to_vec()));
                        out
                    }),
                ))
            }
            name => {
                let def = self.l.env.views.get(name).cloned()?;
                let env2: HashMap<String, IExpr> = def.generics.iter().cloned().zip(nats).collect();
                let mut cur = dims.to_vec();
                let mut inv: Inv = Rc::new(|idx| idx);
                for step in &def.body {
                    let (nd, ni) = self.view(&cur, step, &env2)?;
                    let prev = inv.clone();
                    inv = Rc::new(move |idx| prev(ni(idx)));
                    cur = nd;
                }
                Some((cur, inv))
            }
        }
    }
}
