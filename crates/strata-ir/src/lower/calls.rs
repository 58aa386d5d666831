//! Launches, stream operations, calls of functions and builtins (including the `.npy` ones), and
//! the inlining of functions whose arguments are views or arrays.

use super::*;

impl<'a> FnLower<'_, 'a> {
    pub(crate) fn call_nats(&self, span: Span) -> Vec<IExpr> {
        self.l.types.call_nats.get(&span).map(|v| v.iter().map(|(_, n)| self.nat(n)).collect()).unwrap_or_default()
    }

    pub(crate) fn launch(
        &mut self,
        func: &[ast::Ident],
        l: &ast::Launch,
        args: &[ast::Expr],
        span: Span,
        out: &mut Vec<Stmt>,
    ) {
        let name = func.iter().map(|f| f.name.as_str()).collect::<Vec<_>>().join("::");
        let Some(&kernel) = self.l.fn_ids.get(&name) else {
            self.err(span, format!("launching `{name}`, which has no body"));
            return;
        };
        let dim3 = |fl: &mut Self, d: &ast::Dim| {
            let get = |fl: &mut Self, n: DimName| {
                d.dims.iter().find(|(x, _)| *x == n).map_or(IExpr::Const(1), |(_, v)| fl.ast_nat(v, &HashMap::new()))
            };
            [get(fl, DimName::X), get(fl, DimName::Y), get(fl, DimName::Z)]
        };
        let grid = dim3(self, &l.grid);
        let block = dim3(self, &l.block);
        let nats = self.call_nats(span);
        let args = self.hoisting(out, |s| s.operands(args.iter()));
        let stream = l.stream.as_ref().map(|id| {
            let e = ast::Expr { kind: ExprKind::Path(vec![id.clone()]), span: id.span };
            self.hoisting(out, |s| s.stream_value(&e))
        });
        out.push(Stmt::Launch { kernel, nats, grid, block, args, stream, span });
    }

    /// The stream an expression denotes, as a [`Ty::Stream`] value: `&s` or `s` (a `Stream`
    /// variable) reads the variable; a reference to a stream (`r`, a `&Stream` parameter) is
    /// dereferenced.
    pub(crate) fn stream_value(&mut self, e: &ast::Expr) -> Expr {
        let mut e = e;
        while let ExprKind::Paren(inner) = &e.kind {
            e = inner;
        }
        let direct = match &e.kind {
            ExprKind::Borrow { place, .. } => return self.expr(place),
            ExprKind::Path(segs) if segs.len() == 1 => {
                matches!(self.lookup(&segs[0].name), Some(Binding::Local(l)) if self.locals[l].ty == Ty::Stream)
            }
            _ => false,
        };
        if direct {
            return self.expr(e);
        }
        self.expr(&ast::Expr { kind: ExprKind::Deref(Box::new(e.clone())), span: e.span })
    }

    /// The streams of the prelude (`Stream::new`, `stream_sync`, `device_sync`, the
    /// asynchronous copies), as stream builtins; `None` for any other function.
    pub(crate) fn stream_call(&mut self, name: &str, args: &[ast::Expr], span: Span) -> Option<Expr> {
        if !self.l.env.fns.get(name).is_some_and(|s| s.builtin) {
            return None;
        }
        Some(match name {
            "stream_new" => Expr::Builtin(Builtin::StreamNew, Vec::new(), span),
            "device_sync" => Expr::Builtin(Builtin::DeviceSync, Vec::new(), span),
            "stream_sync" => {
                let s = self.stream_value(args.first()?);
                Expr::Builtin(Builtin::StreamSync, vec![s], span)
            }
            "copy_mem_to_gpu_async" | "copy_mem_to_host_async" if args.len() == 3 => {
                // The number of scalars copied, from the data type the checker inferred.
                let Some(n) = self.l.types.async_copy_types.get(&span).and_then(scalar_count) else {
                    self.err(span, format!("`{name}` of data that is not an array of scalars"));
                    return Some(Expr::Lit(Lit::Unit));
                };
                let n = Expr::Nat(self.nat(&n));
                let mut ops = self.operands(args[..2].iter());
                if name == "copy_mem_to_host_async" {
                    ops.swap(0, 1);
                }
                let stream = self.stream_value(&args[2]);
                ops.extend([n, stream]);
                Expr::Builtin(Builtin::CopyAsync, ops, span)
            }
            _ => return None,
        })
    }

    /// A call of a function parameter of an inlined function is a call of the function passed.
    pub(crate) fn passed_fn(&self, func: &[ast::Ident]) -> Option<Vec<ast::Ident>> {
        match (func, func.first().map(|f| self.lookup(&f.name))) {
            ([f], Some(Some(Binding::Func(real)))) => Some(vec![ast::Ident { name: real, span: f.span }]),
            _ => None,
        }
    }

    pub(crate) fn call(
        &mut self,
        func: &[ast::Ident],
        exec: Option<&ast::ExecExpr>,
        args: &[ast::Expr],
        span: Span,
    ) -> Expr {
        let passed = self.passed_fn(func);
        let func = passed.as_deref().unwrap_or(func);
        let path = func.iter().map(|f| f.name.as_str()).collect::<Vec<_>>().join("::");
        let name = PATH_ALIASES.iter().find(|(p, _)| *p == path).map_or(path.clone(), |(_, n)| n.to_string());
        // A program may define a function the prelude declares; its own definition wins, here
        // as in the checker (which typed the call by the program's signature).
        let prelude_fn = self.l.env.fns.get(&name).is_some_and(|s| s.builtin);
        if prelude_fn && (name == "zero" || name == "one") {
            // The identity elements of the type the call was instantiated with.
            let t = self.l.types.call_types.get(&span).map(|t| self.ty(t, span));
            let one = name == "one";
            return match t {
                Some(Ty::Scalar(s)) if matches!(s, ScalarTy::F32 | ScalarTy::F64) => {
                    Expr::Lit(Lit::Float(if one { 1.0 } else { 0.0 }, s))
                }
                Some(Ty::Scalar(s)) => Expr::Lit(Lit::Int(u128::from(one), s)),
                _ => {
                    self.err(span, format!("`{name}` of a type the checker did not record"));
                    Expr::Lit(Lit::Unit)
                }
            };
        }
        let builtin = match name.as_str() {
            _ if !prelude_fn => None,
            "cpu_heap_new" => Some(Builtin::HeapNew),
            "gpu_global_alloc_copy" => Some(Builtin::GlobalAllocCopy),
            "copy_mem_to_host" => Some(Builtin::CopyToHost),
            "copy_mem_to_gpu" => Some(Builtin::CopyToGpu),
            "atomic_fetch_add_u32" | "atomic_fetch_add_i32" | "atomic_fetch_add" => Some(Builtin::AtomicFetchAdd),
            "atomic_fetch_add_at" | "atomic_fetch_add_at_i32" => Some(Builtin::AtomicFetchAddAt),
            "atomic_load_u32" => Some(Builtin::AtomicLoad),
            "atomic_store_u32" => Some(Builtin::AtomicStore),
            "println" => Some(Builtin::Print),
            "print" => Some(Builtin::PrintInline),
            "sqrt_f32" => Some(Builtin::Sqrt(ScalarTy::F32)),
            "sqrt_f64" => Some(Builtin::Sqrt(ScalarTy::F64)),
            "ballot" => Some(Builtin::Ballot),
            "shfl_down" | "shfl_up" | "shfl_xor" | "shfl_idx" => {
                let op = match name.as_str() {
                    "shfl_down" => ShuffleOp::Down,
                    "shfl_up" => ShuffleOp::Up,
                    "shfl_xor" => ShuffleOp::Xor,
                    _ => ShuffleOp::Idx,
                };
                // The checker recorded the exchanged scalar type (and rejected any other).
                let ty = self.l.types.shuffle_types.get(&span).copied().unwrap_or(ScalarTy::I32);
                Some(Builtin::Shuffle(op, ty))
            }
            "assert" => Some(Builtin::Assert),
            "fill_random" => Some(Builtin::FillRandom),
            "arg_count" => Some(Builtin::ArgCount),
            "now_ms" => Some(Builtin::NowMs),
            "arg_u64" => Some(Builtin::ArgU64),
            "arg_f64" => Some(Builtin::ArgF64),
            "npy_len" => Some(Builtin::NpyLen),
            "npy_dim" => Some(Builtin::NpyDim),
            "load_npy" | "save_npy" => return self.npy_call(&name, args, span),
            _ => crate::atomics::atomic_builtin(&name).or_else(|| math_builtin(&name)),
        };
        if let Some(e) = self.stream_call(&name, args, span) {
            return e;
        }
        if builtin.is_none() {
            if let Some((decl, sig)) = self.inlined_callee(func) {
                // The inlined body runs before the expression that uses its value.
                let mut pre = std::mem::take(&mut self.pre);
                let v = self.inline_call(decl, &sig, exec, args, span, &mut pre);
                self.pre = pre;
                return v;
            }
        }
        // Printing a (sub-)array: the printer needs its shape, which the flat IR loses.
        if let (Some(b @ (Builtin::Print | Builtin::PrintInline)), 1) = (builtin, args.len()) {
            if let Some((arg, dims)) = self.printed_array(&args[0]) {
                let mut all = vec![arg];
                all.extend(dims.into_iter().map(Expr::Nat));
                return Expr::Builtin(b, all, span);
            }
        }
        let mut lowered: Vec<Expr> = self.operands(args.iter());
        if let Some(b @ (Builtin::GlobalAllocCopy | Builtin::CopyToHost | Builtin::CopyToGpu)) = builtin {
            // A copy of or into a part of an array (a row, a view) says how many scalars it copies.
            let n = args.iter().take(2).find_map(|a| self.part_len(a));
            if let Some(n) = n {
                lowered.truncate(if b == Builtin::GlobalAllocCopy { 1 } else { 2 });
                lowered.push(Expr::Nat(n));
            }
        }
        if builtin == Some(Builtin::AtomicFetchAddAt) && lowered.len() == 3 {
            // The index is checked against the referenced array's own length (the callee's size
            // argument `n`, as the checker inferred it): a row or a reference parameter points
            // into a bigger buffer, whose length is not the bound.
            match self.call_nats(span).into_iter().next() {
                Some(n) => lowered.push(Expr::Nat(n)),
                None => self.err(span, "`atomic_fetch_add_at` whose array length the checker did not record"),
            }
        }
        if let Some(Builtin::AtomicAt(op, _)) = builtin {
            // As for `atomic_fetch_add_at`: the bound is the referenced array's length.
            match self.call_nats(span).into_iter().next() {
                Some(n) if lowered.len() == 2 + op.values() => lowered.push(Expr::Nat(n)),
                _ => self.err(span, "an atomic operation whose array length the checker did not record"),
            }
        }
        if let (Some(Builtin::Math(ir::MathFn::Fmin, t)), true, 3) =
            (builtin, name.starts_with("clamp_"), lowered.len())
        {
            // `clamp(x, lo, hi)` is `fmin(fmax(x, lo), hi)`, each argument evaluated once.
            let hi = lowered.pop().unwrap_or(Expr::Lit(Lit::Unit));
            let inner = Expr::Builtin(Builtin::Math(ir::MathFn::Fmax, t), lowered, span);
            return Expr::Builtin(Builtin::Math(ir::MathFn::Fmin, t), vec![inner, hi], span);
        }
        if let Some(b) = builtin {
            return Expr::Builtin(b, lowered, span);
        }
        match self.l.fn_ids.get(&name) {
            Some(&f) => Expr::Call { func: f, nats: self.call_nats(span), args: lowered, span },
            None => {
                self.err(span, format!("calling `{path}`"));
                Expr::Lit(Lit::Unit)
            }
        }
    }

    /// `load_npy(i)` / `save_npy(i, value)`: the element type and the dimensions of the array
    /// (the checker recorded its data type `d`) become part of the builtin, the dimensions as
    /// arguments after the call's own, evaluated when the call runs.
    pub(crate) fn npy_call(&mut self, name: &str, args: &[ast::Expr], span: Span) -> Expr {
        let Some(t) = self.l.types.npy_types.get(&span) else {
            self.err(span, format!("`{name}` of a data type the checker did not record"));
            return Expr::Lit(Lit::Unit);
        };
        let t = self.ty(t, span);
        let mut dims = Vec::new();
        let mut at = &t;
        while let Ty::Array { elem, len } = at {
            dims.push(Expr::Nat(len.clone()));
            at = elem;
        }
        let Ty::Scalar(elem) = *at else {
            self.err(span, format!("`{name}` of an array whose elements are not scalars"));
            return Expr::Lit(Lit::Unit);
        };
        let mut lowered: Vec<Expr> = self.operands(args.iter());
        lowered.extend(dims);
        let b = if name == "save_npy" { Builtin::SaveNpy(elem) } else { Builtin::LoadNpy(elem) };
        Expr::Builtin(b, lowered, span)
    }

    /// The declaration and signature of the function a call names, where its calls are inlined.
    pub(crate) fn inlined_callee(&self, func: &[ast::Ident]) -> Option<(&'a ast::FnDecl, Rc<FnSig>)> {
        let passed = self.passed_fn(func);
        let func = passed.as_deref().unwrap_or(func);
        let path = func.iter().map(|f| f.name.as_str()).collect::<Vec<_>>().join("::");
        let name = PATH_ALIASES.iter().find(|(p, _)| *p == path).map_or(path.clone(), |(_, n)| n.to_string());
        let sig = self.l.env.fns.get(&name)?;
        if !always_inlined(sig) {
            return None;
        }
        let decl = self.l.decls.get(&name).copied()?;
        Some((decl, sig.clone()))
    }

    /// The execution resource a call runs on: the one it names (`f::<…>::<e>(…)`), else the
    /// innermost one in scope.
    pub(crate) fn call_resource(&self, exec: Option<&ast::ExecExpr>) -> Option<usize> {
        if let Some(ast::ExecExpr { base: ast::ExecBase::Var(id), path, .. }) = exec {
            if let (Some(Binding::Exec(b)), true) = (self.lookup(&id.name), path.is_empty()) {
                return Some(b);
            }
        }
        self.scopes.iter().rev().flat_map(|s| s.iter().rev()).find_map(|(_, b)| match b {
            Binding::Exec(i) => Some(*i),
            _ => None,
        })
    }

    /// The place a reference argument refers to (`&uniq p` or a reference `r`), resolved now, in
    /// the caller's scope; references along the way are followed, so it is the memory itself.
    pub(crate) fn arg_place(&mut self, a: &ast::Expr) -> Option<PState> {
        let place = match &a.kind {
            ExprKind::Borrow { place, .. } => &**place,
            ExprKind::Paren(x) => return self.arg_place(x),
            _ => a,
        };
        let mut st = self.pstate(place)?;
        self.auto_deref(&mut st, a.span)?;
        Some(st)
    }

    /// Lowers a call of `f` by lowering its body here, into `out`: reference parameters are bound
    /// to their arguments' places (which compose with the callee's views and selections like a
    /// `let` alias), by-value parameters to fresh locals, size parameters to the call's sizes and
    /// the callee's resource to the caller's. The callee sees only its own names. Returns the
    /// call's value (a load of a local it is stored in) or `()`.
    pub(crate) fn inline_call(
        &mut self,
        f: &ast::FnDecl,
        sig: &FnSig,
        exec: Option<&ast::ExecExpr>,
        args: &[ast::Expr],
        span: Span,
        out: &mut Vec<Stmt>,
    ) -> Expr {
        let unit = Expr::Lit(Lit::Unit);
        let name = &f.name.name;
        let Some(body) = &f.body else { return unit };
        if self.inlining.contains(name) || self.inlining.len() >= MAX_INLINE_DEPTH {
            let what = if self.inlining.contains(name) {
                "a recursive call of".to_string()
            } else {
                format!("more than {MAX_INLINE_DEPTH} nested calls, here of")
            };
            self.err(
                span,
                format!(
                    "{what} `{name}` (calls of a function executed by a block or a warp, generic over a data type or a function, or with a view-array \
                     parameter, are inlined)"
                ),
            );
            return unit;
        }
        let Some(body) = inline_body(body) else {
            self.err(
                span,
                format!(
                    "calling `{name}`, which has a `return` before its end (calls of a function executed by a \
                     block or a warp, or with a view-array parameter, are inlined)"
                ),
            );
            return unit;
        };
        if args.len() != sig.params.len() + sig.fn_params.len() {
            self.err(span, format!("this call of `{name}`"));
            return unit;
        }
        // The arguments for function parameters name functions: bound, not evaluated.
        let args: Vec<&ast::Expr> = args
            .iter()
            .enumerate()
            .filter(|(i, _)| !sig.fn_params.iter().any(|p| p.pos == *i))
            .map(|(_, a)| a)
            .collect();
        // Everything the arguments say is resolved in the caller's scope.
        let mut scope: Vec<(String, Binding)> = Vec::new();
        if let Some(nats) = self.l.types.call_nats.get(&span) {
            for (n, v) in nats {
                scope.push((n.clone(), Binding::Nat(self.nat(v))));
            }
        }
        // The instantiation: the functions passed (a function parameter of the caller passed on
        // is the function it is bound to) and the data types, in the caller's terms.
        for (p, f) in self.l.types.call_fns.get(&span).into_iter().flatten() {
            let real = match self.lookup(f) {
                Some(Binding::Func(real)) => real,
                _ => f.clone(),
            };
            scope.push((p.clone(), Binding::Func(real)));
        }
        if sig.fn_params.iter().any(|p| !scope.iter().any(|(n, _)| *n == p.name)) {
            self.err(span, format!("a call of `{name}` whose function arguments the checker did not record"));
            return unit;
        }
        let mut subst = HashMap::new();
        let mut instance_tys = Vec::new();
        for (g, t) in self.l.types.call_dtys.get(&span).into_iter().flatten() {
            instance_tys.push(format!("{g} = {t}"));
            let t = self.ty(t, span);
            subst.insert(g.clone(), t);
        }
        match self.call_resource(exec) {
            Some(r) => {
                let mut b = self.binders[r].clone();
                b.name = sig.exec_name.clone();
                scope.push((sig.exec_name.clone(), Binding::Exec(self.binders.len())));
                self.binders.push(b);
            }
            None if matches!(sig.root, Root::Block { .. } | Root::Warp) => {
                self.err(span, format!("calling `{name}` outside a block or warp"));
                return unit;
            }
            None => {}
        }
        let mut values = Vec::new();
        for (p, a) in sig.params.iter().zip(args.iter().copied()) {
            if matches!(p.ty, cty::Ty::Ref { .. }) {
                let Some(st) = self.arg_place(a) else { return unit };
                scope.push((p.name.clone(), Binding::Ref(Rc::new(st))));
            } else {
                values.push((p, self.value_into(a, out)));
            }
        }
        let caller_scopes = std::mem::replace(&mut self.scopes, vec![scope]);
        let caller_subst = std::mem::replace(&mut self.ty_subst, subst);
        let owned_before = self.owned.len();
        // By-value parameters are the callee's own (mutable) copies; in host code the callee
        // owns the buffers passed to it by value and releases them at its end.
        for (p, v) in values {
            let ty = self.ty(&p.ty, p.span);
            let local = self.new_local(&p.name, ty, self.local_level());
            out.push(Stmt::Let { local, init: Some(v), span: p.span });
            self.bind(&p.name, Binding::Local(local));
            if let (cty::Ty::At(_, mem), Level::Host) = (&p.ty, self.level) {
                self.owned.push((local, mem.is_gpu(), p.span));
            }
        }
        let ret = self.ty(&sig.ret, f.span);
        let returns_value = !matches!(ret, Ty::Scalar(ScalarTy::Unit));
        // An instantiation: what the lowering cannot express inside it names the instantiation.
        let mut instance: Vec<String> = Vec::new();
        for (n, b) in self.scopes.iter().flatten() {
            if let Binding::Func(f) = b {
                instance.push(format!("{n} = {f}"));
            }
        }
        instance.extend(instance_tys);
        let errors_before = self.l.errors.len();
        self.inlining.push(name.clone());
        let mut stmts = self.block_releasing(&body, owned_before, Some(&ret), returns_value);
        self.inlining.pop();
        if !instance.is_empty() {
            let note = format!("in the instantiation of `{name}` with {}", instance.join(", "));
            for e in &mut self.l.errors[errors_before..] {
                e.notes.push(note.clone());
            }
        }
        self.scopes = caller_scopes;
        self.ty_subst = caller_subst;
        let mut result = unit;
        if returns_value && tail_value(&body).is_some() {
            match stmts.pop() {
                Some(Stmt::Eval(v)) => {
                    // Stored at once: later operands of the caller's expression may change what
                    // the value reads.
                    let temp = self.new_local(&format!("{name}_result"), ret, self.local_level());
                    self.value_temps.push(temp);
                    stmts.push(Stmt::Let { local: temp, init: Some(v), span });
                    result = Expr::Load(Place::local(temp, span));
                }
                other => stmts.extend(other),
            }
        }
        out.extend(stmts);
        result
    }

    // --------------------------------------------------------------------------------------------
    // Expressions
}
