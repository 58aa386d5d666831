//! Calls and kernel launches: generic inference, argument checks, `where` clauses at the call
//! site, and what passing references to a callee means (I2).

use super::*;

impl FnCx<'_> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn call(
        &mut self,
        func: &[ast::Ident],
        generics: &[ast::GenericArg],
        exec: Option<&ast::ExecExpr>,
        launch: Option<&ast::Launch>,
        args: &[ast::Expr],
        span: Span,
        expected: Option<&Ty>,
    ) -> Ty {
        let stream_let = std::mem::take(&mut self.stream_let);
        let path = func.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join("::");
        let name = PATH_ALIASES.iter().find(|(p, _)| *p == path).map_or(path.as_str(), |(_, n)| n);
        let fspan = func.first().map_or(span, |f| f.span.to(func.last().map_or(f.span, |l| l.span)));
        if func.len() == 1 && self.lookup(name).is_some() {
            let ty = self.lookup(name).map(|id| self.vars[id].ty.clone()).unwrap_or(Ty::Error);
            self.error(
                codes::NOT_CALLABLE,
                fspan,
                format!("`{path}` is not a function"),
                format!("`{path}` is a value of type `{ty}`"),
            );
            for a in args {
                self.expr(a, None);
            }
            return Ty::Error;
        }
        // `println("text")`: a string literal is printable, though not a value.
        if (name == "println" || name == "print")
            && args.len() == 1
            && matches!(args[0].kind, ExprKind::Lit(ast::Lit::Str(_)))
            && generics.is_empty()
        {
            self.check_print_here(name, fspan);
            return Ty::UNIT;
        }
        // A call of a function parameter is checked against its function type.
        let param_sig = if func.len() == 1 { self.sig.fn_param(name).map(|p| p.sig.clone()) } else { None };
        let Some(sig) = param_sig.or_else(|| self.prog.fns.get(name).cloned()) else {
            self.unknown_name(fspan, &path, format!("cannot find function `{path}` in this scope"), NameKind::Function);
            for a in args {
                self.expr(a, None);
            }
            return Ty::Error;
        };
        // The arguments for function parameters name functions; the others are values.
        let mut fn_args: Vec<(&crate::program::FnParamSig, &ast::Expr)> = Vec::new();
        let value_args: Vec<ast::Expr>;
        let args: &[ast::Expr] = if sig.fn_params.is_empty() {
            args
        } else {
            if args.len() != sig.params.len() + sig.fn_params.len() {
                self.error(
                    codes::ARG_COUNT,
                    span,
                    format!(
                        "`{path}` takes {} arguments but {} were supplied",
                        sig.params.len() + sig.fn_params.len(),
                        args.len()
                    ),
                    "wrong number of arguments",
                );
                return Ty::Error;
            }
            let mut rest = Vec::new();
            for (i, a) in args.iter().enumerate() {
                match sig.fn_params.iter().find(|p| p.pos == i) {
                    Some(p) => fn_args.push((p, a)),
                    None => rest.push(a.clone()),
                }
            }
            value_args = rest;
            &value_args
        };
        let kernel = matches!(sig.root, Root::Grid { .. });
        if name == "stream_new" && sig.builtin && !stream_let && self.level() == Level::Cpu {
            self.stream_misuse(span, "a stream must be bound by `let`", "write `let s = Stream::new();` and use `&s`");
        }
        let varies_before = self.varies;
        // A call by the wrong resource is reported once; its arguments' narrowing is then moot.
        let mut exec_ok = true;
        let mut launch_shapes = None;
        let mut block_shape = None;
        let mut subst = Subst::default();
        // Explicit generic arguments, in order.
        let explicit: Vec<&(String, Kind)> = sig.generics.iter().collect();
        if generics.len() > explicit.len() {
            self.error(
                codes::GENERIC_ARG_COUNT,
                fspan,
                format!(
                    "`{path}` takes {} generic argument{} but {} were given",
                    explicit.len(),
                    if explicit.len() == 1 { "" } else { "s" },
                    generics.len()
                ),
                "too many generic arguments",
            );
        }
        let before_generics = self.diags.len();
        for (g, (gname, kind)) in generics.iter().zip(explicit) {
            self.bind_generic(g, gname, *kind, &mut subst);
        }
        // A generic argument that was an error binds nothing: no follow-up errors about it.
        let generics_ok = self.diags.len() == before_generics;
        if let Some(l) = launch {
            if self.level() != Level::Cpu {
                self.error(
                    codes::WRONG_EXEC,
                    span,
                    "kernels are launched from the CPU",
                    format!("this code is executed by {}", self.level().describe()),
                );
            }
            let Root::Grid { blocks, threads } = &sig.root else {
                self.error(
                    codes::NOT_A_KERNEL,
                    fspan,
                    format!("`{path}` is not a kernel"),
                    "only functions executed by a `gpu.grid` can be launched",
                );
                return Ty::Error;
            };
            let (gb, gt) = {
                let mut lower = self.lower();
                (lower.shape(&l.grid), lower.shape(&l.block))
            };
            // Sizes the launch gives directly (`X<n>`) bind `n` now; the others (`X<n / 32>`) are
            // checked once the arguments have bound what they mention.
            self.unify_shape(blocks, &gb, &mut subst, l.grid.span, "blocks", &path, true);
            self.unify_shape(threads, &gt, &mut subst, l.block.span, "threads", &path, true);
            launch_shapes = Some((blocks.clone(), gb, l.grid.span, threads.clone(), gt, l.block.span));
        } else {
            if kernel {
                self.error(
                    codes::NOT_A_KERNEL,
                    fspan,
                    format!("`{path}` is a kernel and must be launched"),
                    format!("launch it: `{path}::<<<grid, block>>>(…)`"),
                );
            }
            let before = self.diags.len();
            block_shape = self.check_call_exec(&sig, exec, fspan, &path, &mut subst);
            exec_ok = self.diags.len() == before;
        }
        // Arguments: a launch allocates the shared-memory parameters itself.
        let params: Vec<&crate::program::ParamSig> =
            sig.params.iter().filter(|p| !(launch.is_some() && p.exec.is_some())).collect();
        if params.len() != args.len() {
            self.error(
                codes::ARG_COUNT,
                span,
                format!(
                    "`{path}` takes {} argument{} but {} were supplied",
                    params.len(),
                    if params.len() == 1 { "" } else { "s" },
                    args.len()
                ),
                "wrong number of arguments",
            );
        }
        // Work issued on a stream: a launch `<<<g, b, s>>>`, or an asynchronous copy, whose last
        // argument is the stream.
        let stream_arg =
            if streams::ASYNC_COPIES.contains(&name) && sig.builtin { args.len().checked_sub(1) } else { None };
        let mut stream_keys = None;
        if let Some(id) = launch.and_then(|l| l.stream.as_ref()) {
            if sig.ordered {
                // Its blocks take their numbers from one counter per kernel in the emitted CUDA,
                // which two launches in flight at once would share.
                self.stream_misuse(
                    id.span,
                    &format!("`{path}` runs on a `gpu.ordered_grid` and is launched on the default stream only"),
                    "launched on a stream",
                );
            }
            match self.lookup(&id.name) {
                None => self.unknown_name(
                    id.span,
                    &id.name,
                    format!("cannot find stream `{}` in this scope", id.name),
                    NameKind::Value,
                ),
                Some(v) if !self.vars[v].ty.is_stream_handle() => {
                    let t = self.vars[v].ty.clone();
                    if !t.is_error() {
                        self.error(
                            codes::MISMATCHED_TYPES,
                            id.span,
                            "mismatched types",
                            format!("expected a stream (`Stream` or `&Stream`), found `{t}`"),
                        );
                    }
                }
                Some(_) => {
                    let e = ast::Expr { kind: ExprKind::Path(vec![id.clone()]), span: id.span };
                    stream_keys = self.stream_keys(&e);
                }
            }
        }
        if let Some(a) = stream_arg.and_then(|i| args.get(i)) {
            stream_keys = self.stream_keys(a);
        }
        let mut mismatches = Vec::new();
        let mut arg_tys = Vec::new();
        let mut arg_loans = Vec::new();
        let mut direct_loans: Vec<Vec<Alias>> = Vec::new();
        let mut arg_unis = Vec::new();
        // `println` only reads its argument, like Rust's `println!`: nothing is moved.
        let reads_only = (name == "println" || name == "print") && sig.builtin;
        let moved_before: Vec<Option<Span>> =
            if reads_only { self.vars.iter().map(|v| v.moved).collect() } else { Vec::new() };
        let binding_alias = std::mem::take(&mut self.binding_alias);
        let reading_only = std::mem::replace(&mut self.reading_only, reads_only);
        let errors_before_args = self.diags.len();
        for (i, a) in args.iter().enumerate() {
            let expected = params.get(i).map(|p| self.apply_subst(&p.ty, &subst)).filter(|t| !has_vars(t, &sig));
            self.in_call_arg = true;
            let direct_borrow = matches!(strip_parens(a).kind, ExprKind::Borrow { .. });
            if direct_borrow && Some(i) != stream_arg {
                self.issuing_on = stream_keys.clone().map(|k| (k, Some(strip_parens(a).span)));
            }
            let (t, uni) = self.expr_uni(a, expected.as_ref());
            self.issuing_on = None;
            self.in_call_arg = false;
            arg_unis.push(uni);
            let mut loans = std::mem::take(&mut self.val_loans);
            direct_loans.push(loans.clone());
            // A reference to data that holds references reaches what they borrow as well: the
            // callee may read, write, return or store it (adversarial/adv6_*).
            if matches!(&t, Ty::Ref { ty, .. } if self.holds_ref(ty)) {
                let more = self.reachable_loans(&loans);
                union_loans(&mut loans, more);
            }
            arg_loans.push(loans);
            arg_tys.push(t.clone());
            if let (Some(p), true) = (params.get(i), matches!(t, Ty::IntLit | Ty::FloatLit)) {
                let want = self.apply_subst(&p.ty, &subst);
                if !has_vars(&want, &sig) {
                    self.fix_open_var(a, &want);
                }
            }
            if let Some(p) = params.get(i) {
                let before = subst.nats.len() + subst.tys.len() + subst.mems.len();
                if !self.unify(&p.ty, &t, &mut subst, &sig) {
                    mismatches.push((i, self.apply_subst(&p.ty, &subst), t, before));
                }
            }
        }
        self.binding_alias = binding_alias;
        self.reading_only = reading_only;
        if exec_ok {
            self.check_whole_resource_args(&sig, args, &arg_unis, &path);
        }
        // An argument that was an error has no type to infer a generic from: that it cannot be
        // inferred is only a consequence.
        let arguments_typed = self.diags.len() == errors_before_args && !arg_tys.iter().any(Ty::is_error);
        // A callee given a `&uniq` reference to data that holds references may store another
        // argument there, out of sight of the liveness analysis: keep every live borrow.
        if !self.on_gpu()
            && arg_tys.iter().any(|t| matches!(t, Ty::Ref { own: Ownership::Uniq, ty, .. } if self.holds_ref(ty)))
        {
            let live: Vec<Span> = self.live_borrows.iter().map(|b| b.2).collect();
            self.pinned_borrows.extend(live);
            self.callee_may_store(&path, args, &arg_tys, &arg_loans, &direct_loans);
        }
        if reads_only {
            for (v, m) in self.vars.iter_mut().zip(moved_before) {
                v.moved = m;
            }
            // A GPU thread prints numbers and text (what CUDA's device `printf` prints).
            if self.on_gpu() {
                for (a, t) in args.iter().zip(&arg_tys) {
                    if !matches!(t, Ty::Scalar(_) | Ty::IntLit | Ty::FloatLit | Ty::Nat | Ty::Error) {
                        self.report(
                            Diagnostic::error(
                                codes::WRONG_EXEC,
                                format!("`{name}` of a `{t}` in GPU code"),
                                a.span,
                                "a GPU thread prints a number, a `bool` or text",
                            )
                            .with_note(
                                "print the elements one by one, or copy the data to the host and print it there",
                            ),
                        );
                    }
                }
            }
            // Printing reads the data: the host cannot read memory of the GPU (copy it first).
            for (a, t) in args.iter().zip(&arg_tys) {
                // Inside `unsafe` it is left to `sim`, which reports it at run time (E0905).
                if let Some(m) = gpu_memory_in(t).filter(|_| !self.on_gpu() && !self.in_unsafe()) {
                    self.report(
                        Diagnostic::error(
                            codes::BAD_DEREF,
                            format!("cannot read `{m}` memory on the host"),
                            a.span,
                            format!("`{name}` would read memory in `{m}` from `cpu.thread`"),
                        )
                        .with_note("copy it to host memory first, e.g. with `copy_mem_to_host`"),
                    );
                }
            }
        }
        let arguments_fit = mismatches.is_empty() && params.len() == args.len();
        // A data type only the result mentions (`load_npy`) is inferred from the expected type
        // (`let x: [f32; 8] @ cpu.mem = load_npy(0);`); a mismatch is reported where the value is used.
        if let Some(want) = expected.filter(|w| !w.is_error()) {
            let open = |s: &Subst| sig.generics.iter().any(|(g, k)| *k == Kind::DataTy && !s.tys.contains_key(g));
            if open(&subst) && arguments_fit {
                let mut trial = subst.clone();
                if self.unify(&sig.ret, want, &mut trial, &sig) {
                    subst = trial;
                }
            }
        }
        // Two swapped arguments are one mistake: report it once.
        if mismatches.len() == 2 && mismatches[1].0 == mismatches[0].0 + 1 {
            let (i, ref want0, ref got0, _) = mismatches[0];
            let (_, ref want1, ref got1, _) = mismatches[1];
            if self.compatible(want0, got1) || self.compatible(want1, got0) || same_shape_refs(want0, got1) {
                let (want0, got0) = (want0.clone(), got0.clone());
                self.mismatch_expr(&args[i], &want0, &got0);
                if let Some(d) = self.diags.last_mut() {
                    d.notes.push("the two arguments appear to be swapped".into());
                }
                mismatches.clear();
            }
        }
        for (i, want, got, _) in mismatches {
            self.mismatch_expr(&args[i], &want, &got);
        }
        // Function arguments: after the value arguments, whose types bind the generics that
        // the function types mention (a function's own types bind those left).
        let mut passed = Vec::new();
        for (p, a) in &fn_args {
            if let Some(f) = self.fn_argument(p, a, &sig, &mut subst, &path) {
                passed.push((p.name.clone(), f));
            }
        }
        if !fn_args.is_empty() {
            self.types.call_fns.insert(span, passed);
        }
        for (g, k) in &sig.generics {
            let bound = match k {
                Kind::Nat => subst.nats.contains_key(g),
                Kind::DataTy | Kind::Num => subst.tys.contains_key(g),
                Kind::Mem => subst.mems.contains_key(g),
                Kind::Prv => true,
            };
            if !bound && arguments_fit && generics_ok && arguments_typed {
                self.error(
                    codes::CANNOT_INFER,
                    fspan,
                    format!("cannot infer `{g}` for this call of `{path}`"),
                    format!("give it explicitly: `{path}::<…>(…)`"),
                );
            }
        }
        // A `num` generic stands for a numeric type only.
        for g in &sig.num_generics {
            if let Some(t) = subst.tys.get(g) {
                let numeric = match t {
                    Ty::Scalar(s) => Ty::Scalar(*s).is_numeric() && !s.is_atomic(),
                    Ty::Var(v) => self.sig.is_num(v),
                    Ty::Error => true,
                    _ => false,
                };
                if !numeric {
                    let mut d = Diagnostic::error(
                        codes::NOT_NUMERIC,
                        format!("`{g}` = `{t}` is not a numeric type"),
                        span,
                        format!("`{path}` requires `{g}: num`: one of `i32`, `i64`, `u32`, `u64`, `f32`, `f64`"),
                    );
                    if let Ty::Var(v) = t {
                        d = d.with_note(format!("help: bound it in the caller as well: `{v}: num`"));
                    }
                    self.report(d);
                }
            }
        }
        if !sig.builtin && sig.generics.iter().any(|(_, k)| *k == Kind::DataTy) {
            let dtys = sig
                .generics
                .iter()
                .filter(|(_, k)| *k == Kind::DataTy)
                .filter_map(|(g, _)| subst.tys.get(g).map(|t| (g.clone(), t.defaulted())))
                .collect();
            self.types.call_dtys.insert(span, dtys);
        }
        for (g, t) in &subst.tys {
            if t.mentions_stream() {
                self.stream_misuse(
                    span,
                    &format!("`{g}` cannot be a stream in this call of `{path}`"),
                    "a stream is only given, as `&s`, to the functions and launches that take one",
                );
            }
        }
        // A host function generic over a data type may read a value of it (print it, copy it):
        // it may not be given one that holds GPU memory.
        if matches!(sig.root, Root::CpuThread) && !reads_only {
            for (g, t) in &subst.tys {
                if let Some(m) = gpu_memory_in(t) {
                    self.error(
                        codes::BAD_DEREF,
                        span,
                        format!("`{g}` = `{t}` cannot be used by `{path}`"),
                        format!("`{path}` runs on the CPU and may read a `{g}`, which holds `{m}` memory"),
                    );
                }
            }
        }
        // Likewise GPU code (a kernel too) may not be given, through a data type, a value that
        // holds host memory: a launch with host memory is E0905 on `sim`.
        let gpu_callee = match sig.root {
            Root::CpuThread => false,
            Root::Any => self.on_gpu(),
            _ => true,
        };
        if gpu_callee {
            for (g, t) in &subst.tys {
                if cpu_memory_in(t) {
                    self.error(
                        codes::BAD_DEREF,
                        span,
                        format!("`{g}` = `{t}` cannot be used by `{path}`"),
                        format!("`{path}` runs on the GPU, and a `{g}` holds `cpu.mem` memory"),
                    );
                }
            }
        }
        // A memory-space parameter may only stand for memory the callee's resource can use.
        for (g, m) in &subst.mems {
            // Code run by `Any` runs where it is called from.
            let gpu_callee = match sig.root {
                Root::CpuThread => false,
                Root::Any => self.on_gpu(),
                _ => true,
            };
            // `Any` code calling `Any` code may run on either device: only a memory space it is
            // itself generic over (checked where it is called) can be passed on.
            let either = self.level() == Level::Any && matches!(sig.root, Root::Any);
            let bad = if either {
                !matches!(m, Mem::Var(_))
            } else if gpu_callee {
                *m == Mem::CpuMem
            } else {
                m.is_gpu()
            };
            if bad && sig.generics.iter().any(|(n, k)| n == g && *k == Kind::Mem) {
                let who = if gpu_callee { "GPU code" } else { "the CPU" };
                self.error(
                    codes::BAD_DEREF,
                    span,
                    format!("`{g}` = `{m}` cannot be used by `{path}`"),
                    format!("`{path}` runs on {who}, which cannot dereference `{m}`"),
                );
            }
        }
        if let Some((blocks, gb, bspan, threads, gt, tspan)) = launch_shapes {
            let before = self.diags.len();
            self.unify_shape(&blocks, &gb, &mut subst, bspan, "blocks", &path, false);
            self.unify_shape(&threads, &gt, &mut subst, tspan, "threads", &path, false);
            if let (Some(l), true) = (launch, generics_ok) {
                let shapes_ok = self.diags.len() == before;
                self.check_launch_limits(name, &sig, l, &gb, &gt, &subst, span, shapes_ok);
            }
        }
        // A block shape that needed sizes the arguments bind (`gpu.block<X<2 * n>>`).
        if let Some(threads) = block_shape {
            if !self.block_shape_fits(&sig, &threads, &mut subst, fspan, &path, true) {
                exec_ok = false;
            }
        }
        // `where` clauses instantiated at the call site.
        for (a, op, b, _) in &sig.where_clauses {
            let (a, b) = (self.subst_nat(a, &subst), self.subst_nat(b, &subst));
            let truth = match op {
                ast::CmpOp::Eq => self.facts.equal(&a, &b),
                ast::CmpOp::Le => self.facts.le(&a, &b),
                ast::CmpOp::Lt => self.facts.lt(&a, &b),
                ast::CmpOp::Ge => self.facts.le(&b, &a),
                ast::CmpOp::Gt => self.facts.lt(&b, &a),
                ast::CmpOp::Ne => match self.facts.equal(&a, &b) {
                    Truth::Proven => Truth::Disproven,
                    Truth::Disproven => Truth::Proven,
                    Truth::Unknown => Truth::Unknown,
                },
            };
            if truth != Truth::Proven && generics_ok {
                let mut d = Diagnostic::error(
                    codes::SIZE_NOT_PROVEN,
                    format!("cannot prove `{a} {} {b}` required by `{path}`", op.symbol()),
                    span,
                    "the `where` clause of the callee is not satisfied here",
                );
                // A fact that is not false here can be established by checking it first, where it
                // can be written as a value (`^` is exclusive or there, not a power).
                let as_value = format!("{a}{b}")
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | ' ' | '+' | '-' | '*' | '/' | '%'));
                if truth == Truth::Unknown && as_value && !(a.vars().is_empty() && b.vars().is_empty()) {
                    d = d.with_note(format!(
                        "help: check it before the call (`if {a} {} {b} {{ … }}`), or require it with a `where` clause of the enclosing function",
                        op.symbol()
                    ));
                }
                self.report(d);
            }
        }
        if WARP_COLLECTIVES.contains(&name) {
            self.check_collective(&path, span);
        }
        // In GPU code the access environment compares the arguments' borrows (E0501), except
        // those of memory a variable holds itself (a thread's own array), which it never
        // records: two `&uniq` borrows of one such element are compared here, as on the host.
        if !self.on_gpu() {
            self.check_argument_aliasing(args, &params, &arg_loans, &subst);
        } else {
            let own = |l: &&Alias| match &self.vars[l.place.root].ty {
                Ty::Ref { mem, .. } => *mem == Mem::GpuLocal,
                Ty::At(..) | Ty::ViewArray(..) => false,
                _ => true,
            };
            let private: Vec<Vec<Alias>> =
                arg_loans.iter().map(|ls| ls.iter().filter(own).cloned().collect()).collect();
            self.check_argument_aliasing(args, &params, &private, &subst);
        }
        if exec_ok {
            // References passed to work on a stream are ordered after that stream's work.
            self.issuing_on = stream_keys.clone().map(|k| (k, None));
            self.pass_references(args, &params, &arg_loans, &direct_loans, &subst, &sig.root);
            self.issuing_on = None;
            // A summarised `gpu.block`/`gpu.warp` function: a barrier, then what it leaves.
            if let (true, Some(s)) = (arguments_fit && launch.is_none(), self.summaries.get(name)) {
                let s = s.clone();
                self.callee_shared_memory(name, &s, span, false);
                self.apply_summary(&sig, &s, &arg_loans, &subst, span);
                self.callee_shared_memory(name, &s, span, true);
            }
        }
        if !self.on_gpu() {
            let name = if sig.builtin { name } else { "" };
            self.stream_effects(name, args, &params, &arg_loans, &subst, stream_arg, stream_keys, span);
        }
        if name == "ballot" && sig.builtin && self.on_gpu() && !self.in_unsafe() {
            // Every lane of the warp takes part (`check_collective`) and gets the same mask,
            // whatever each lane's predicate: the result is warp-uniform.
            self.varies = varies_before.max(Uni::Warp);
        } else if name == "shfl_idx"
            && sig.builtin
            && self.on_gpu()
            && !self.in_unsafe()
            && arg_unis.get(1).is_some_and(|u| *u <= Uni::Warp)
        {
            // Every lane takes part and reads the same source lane when the lane index is the
            // same for the warp: the result is warp-uniform (a broadcast).
            self.varies = varies_before.max(Uni::Warp).max(arg_unis[1]);
        } else if matches!(sig.root, Root::Thread) && self.on_gpu() {
            self.varies = Uni::Thread;
        } else if self.on_gpu() {
            // A `gpu.warp` (`gpu.block`) callee's result is one value per warp (block) whatever
            // its arguments: it may read per-warp memory or coordinates (I4).
            let floor = match sig.root {
                Root::Warp => Uni::Warp,
                Root::Block { .. } => Uni::Block,
                _ => Uni::Uniform,
            };
            self.varies = self.varies.max(floor);
        }
        let nats = sig
            .generics
            .iter()
            .filter(|(_, k)| *k == Kind::Nat)
            .map(|(g, _)| (g.clone(), subst.nats.get(g).cloned().unwrap_or_else(|| Nat::var(g))))
            .collect();
        self.types.call_nats.insert(span, nats);
        if launch.is_none() {
            self.note_callee_shared(name, &subst, span);
        }
        let ret = self.apply_subst(&sig.ret, &subst);
        self.types.call_types.insert(span, ret.defaulted());
        // The result may borrow from any reference argument.
        let mut loans = Vec::new();
        for l in arg_loans {
            union_loans(&mut loans, l);
        }
        if let Ty::Ref { own: Ownership::Shrd, .. } = ret {
            for l in &mut loans {
                l.own = Ownership::Shrd;
            }
        }
        if name.starts_with("shfl_") {
            match ret.defaulted() {
                Ty::Scalar(s) if s != ScalarTy::Unit && !s.is_atomic() => {
                    self.types.shuffle_types.insert(span, s);
                }
                Ty::Error => {}
                other => self.error(
                    codes::MISMATCHED_TYPES,
                    span,
                    format!("`{path}` cannot exchange a value of type `{other}`"),
                    "a warp shuffle moves one `bool`, integer or float per lane",
                ),
            }
        }
        if streams::ASYNC_COPIES.contains(&name) && sig.builtin {
            if let Some(t) = subst.tys.get("d") {
                self.types.async_copy_types.insert(span, t.defaulted());
            }
        }
        if crate::npy::NPY_FUNCTIONS.contains(&name) {
            self.check_npy_type(&path, &subst, span);
        }
        self.val_loans = loans;
        ret
    }

    /// The argument `a` for the function parameter `p` of `sig`: the name of a top-level function,
    /// or of a function parameter of the caller, whose type is `p`'s (binding the generics it
    /// mentions) and whose resource can run where `p` is called. Returns the name passed.
    fn fn_argument(
        &mut self,
        p: &crate::program::FnParamSig,
        a: &ast::Expr,
        sig: &FnSig,
        subst: &mut Subst,
        path: &str,
    ) -> Option<String> {
        let want = &p.sig;
        let described = |me: &Self, s: &Subst| {
            let ps: Vec<String> = want.params.iter().map(|q| me.apply_subst(&q.ty, s).to_string()).collect();
            format!("fn({}) -[{}]-> {}", ps.join(", "), want.root, me.apply_subst(&want.ret, s))
        };
        let ExprKind::Path(ids) = &strip_parens(a).kind else {
            let d = described(self, subst);
            self.expr(a, None);
            self.error(
                codes::FN_ARG_MISMATCH,
                a.span,
                format!("`{path}` expects a function for `{}`", p.name),
                format!("expected the name of a function of type `{d}`"),
            );
            return None;
        };
        let fname = ids.iter().map(|i| i.name.as_str()).collect::<Vec<_>>().join("::");
        let fname = PATH_ALIASES.iter().find(|(q, _)| *q == fname).map_or(fname.clone(), |(_, n)| n.to_string());
        let local = ids.len() == 1 && self.lookup(&fname).is_some();
        let (got, passed_on) = match self.sig.fn_param(&fname).filter(|_| ids.len() == 1 && !local) {
            Some(own) => (own.sig.clone(), true),
            None => match self.prog.fns.get(&fname).filter(|_| !local) {
                Some(f) => (f.clone(), false),
                None => {
                    let d = described(self, subst);
                    let what = if local { "a value" } else { "not a function in scope" };
                    self.error(
                        codes::FN_ARG_MISMATCH,
                        a.span,
                        format!("`{fname}` is {what}, but `{path}` expects a function for `{}`", p.name),
                        format!("expected the name of a function of type `{d}`"),
                    );
                    return None;
                }
            },
        };
        let mut problem = None;
        if !got.generics.is_empty() || !got.fn_params.is_empty() {
            problem = Some(format!(
                "`{fname}` is generic or takes function parameters: only a function without either can be passed \
                 (so that instantiation ends)"
            ));
        } else if matches!(got.root, Root::Grid { .. } | Root::Block { .. } | Root::Warp) {
            problem = Some(format!("`{fname}` is executed by `{}`, not by a single thread", got.root));
        } else if !passed_on && got.builtin && WARP_COLLECTIVES.contains(&fname.as_str()) {
            // A call through the parameter is checked by its type only, which cannot say that
            // every lane of the warp must make it together (E0405 at a direct call).
            problem = Some(format!(
                "`{fname}` is a warp collective: every lane of a warp must call it together, which is \
                 checked only where it is called by name"
            ));
        } else {
            let root_ok = match (&want.root, &got.root) {
                (_, Root::Any) => true,
                (Root::Thread, Root::Thread) | (Root::CpuThread, Root::CpuThread) => true,
                // An `Any` parameter runs wherever its caller is: only `Any` code fits.
                _ => false,
            };
            let types_ok = got.params.len() == want.params.len()
                && want.params.iter().zip(&got.params).all(|(w, g)| self.unify(&w.ty, &g.ty, subst, sig))
                && self.unify(&want.ret, &got.ret, subst, sig);
            if !types_ok {
                let ps: Vec<String> = got.params.iter().map(|q| q.ty.to_string()).collect();
                problem = Some(format!("`{fname}` has type `fn({}) -> {}`", ps.join(", "), got.ret));
            } else if !root_ok {
                problem = Some(format!("`{fname}` is executed by `{}`", got.root));
            }
        }
        if let Some(why) = problem {
            let d = described(self, subst);
            self.error(
                codes::FN_ARG_MISMATCH,
                a.span,
                format!("`{fname}` does not fit the function parameter `{}: {d}` of `{path}`", p.name),
                why,
            );
            return None;
        }
        Some(fname)
    }

    /// `load_npy`/`save_npy`: the data type must be one an `.npy` file holds; recorded for the
    /// lowering.
    fn check_npy_type(&mut self, path: &str, subst: &Subst, span: Span) {
        let Some(t) = subst.tys.get("d").filter(|t| !crate::npy::has_error(t)) else { return };
        match crate::npy::npy_array(t) {
            Ok(_) => {
                self.types.npy_types.insert(span, t.clone());
            }
            Err(why) => {
                let verb = if path == "save_npy" { "write" } else { "read" };
                self.report(
                    Diagnostic::error(
                        codes::MISMATCHED_TYPES,
                        format!("`{path}` cannot {verb} a value of type `{t}`"),
                        span,
                        format!("an .npy file cannot hold `{t}`: {why}"),
                    )
                    .with_note(
                        "an .npy file is read into and written from `[T; n]` (shape (n,)) or `[[T; m]; n]` \
                         (shape (n, m)) of bool, i32, i64, u32, u64, f32 or f64",
                    ),
                )
            }
        }
    }

    /// Passing a reference to a callee is a use of everything it may borrow, by the resource that
    /// makes the call: a `&uniq` argument must be narrowed to it, exactly as if it were borrowed
    /// there (`&uniq place` arguments are checked as borrows when typed).
    pub(super) fn pass_references(
        &mut self,
        args: &[ast::Expr],
        params: &[&crate::program::ParamSig],
        arg_loans: &[Vec<Alias>],
        direct_loans: &[Vec<Alias>],
        subst: &Subst,
        callee: &Root,
    ) {
        let many = matches!(callee, Root::Block { .. } | Root::Warp);
        for (i, ((a, p), loans)) in args.iter().zip(params).zip(arg_loans).enumerate() {
            let mut e = a;
            while let ExprKind::Paren(inner) = &e.kind {
                e = inner;
            }
            // Borrows written in the argument (`(&uniq a, &uniq b)`) were checked and recorded
            // when typed: recording their loans again would conflict with themselves.
            let mut written = Vec::new();
            crate::liveness::borrows_in(a, &mut written);
            let written: Vec<Span> = written.iter().map(|b| b.span).collect();
            let param = self.apply_subst(&p.ty, subst);
            for l in loans {
                // A reference held in an aggregate (a tuple, an array) is passed as it is.
                // What the reference reaches through a `shrd` reference stored behind it is only
                // read.
                let own = match &param {
                    Ty::Ref { own, .. } if l.own == Ownership::Uniq => *own,
                    Ty::Ref { .. } => Ownership::Shrd,
                    _ => l.own,
                };
                let own_memory = !l.place.steps.iter().any(|s| matches!(s, PStep::Deref));
                let mem = match &self.vars[l.place.root].ty {
                    Ty::At(_, m) if own_memory => m.clone(),
                    _ if own_memory => Mem::GpuLocal,
                    _ => Mem::GpuGlobal,
                };
                if many && own == Ownership::Uniq && mem == Mem::GpuLocal && self.on_gpu() && !self.in_unsafe() {
                    // The callee's threads would each write their own copy of a private variable.
                    let name = self.vars[l.place.root].name.clone();
                    self.report(
                        Diagnostic::error(codes::NARROWING_VIOLATED, "narrowing violated", a.span, format!("`{name}` is private to each thread: a function executed by a whole block or warp cannot write it"))
                            .with_note("exchange values between threads through shared memory (`@ gpu.shared`)"),
                    );
                    continue;
                }
                // `&uniq place` arguments were checked as borrows when typed (not what they
                // reach through references stored in `place`).
                let direct = direct_loans.get(i).is_some_and(|d| d.contains(l));
                if (direct && matches!(e.kind, ExprKind::Borrow { .. }))
                    || self.accesses.iter().any(|r| r.place == l.place && written.contains(&r.span))
                {
                    continue;
                }
                let info = PlaceInfo {
                    place: l.place.clone(),
                    ty: Ty::Error,
                    mem: Some(mem),
                    via_shared: l.own == Ownership::Shrd,
                    via_alias: true,
                    consumed: l.consumed.clone(),
                    alts: Vec::new(),
                    via_uni: Uni::Uniform,
                };
                self.access(&info, Mode::Borrow(own), a.span);
            }
        }
    }

    /// What a host call does to the work pending on streams: every argument's loans are checked
    /// against it (work on the stream being issued to excepted), work on a stream takes them,
    /// `stream_sync` and `device_sync` end them.
    #[allow(clippy::too_many_arguments)]
    fn stream_effects(
        &mut self,
        name: &str,
        args: &[ast::Expr],
        params: &[&crate::program::ParamSig],
        arg_loans: &[Vec<Alias>],
        subst: &Subst,
        stream_arg: Option<usize>,
        stream_keys: Option<Vec<usize>>,
        span: Span,
    ) {
        let mut taken = Vec::new();
        for (i, ((a, p), loans)) in args.iter().zip(params).zip(arg_loans).enumerate() {
            if Some(i) == stream_arg {
                continue;
            }
            // A `&uniq` reference passed for a `&shrd` parameter is reborrowed shared.
            let shared = matches!(self.apply_subst(&p.ty, subst), Ty::Ref { own: Ownership::Shrd, .. });
            for l in loans {
                let own = if shared { Ownership::Shrd } else { l.own };
                self.check_pending(&l.place, streams::PendingUse::Borrow(own), a.span, stream_keys.as_deref());
                taken.push((l.place.clone(), own, a.span));
            }
        }
        if let Some(keys) = stream_keys {
            self.issue_on_stream(&keys, taken, span);
        }
        match name {
            "stream_sync" => {
                if let Some(keys) = args.first().and_then(|a| self.stream_keys(a)) {
                    self.sync_streams(&keys);
                }
            }
            "device_sync" => self.pending.clear(),
            _ => {}
        }
    }

    /// Two references passed to one call may not overlap if either is unique, whatever
    /// expressions made them (their loans are compared): the callee would hold a unique reference
    /// and another one to the same memory.
    pub(super) fn check_argument_aliasing(
        &mut self,
        args: &[ast::Expr],
        params: &[&crate::program::ParamSig],
        arg_loans: &[Vec<Alias>],
        subst: &Subst,
    ) {
        let mut items = Vec::new();
        for ((a, p), loans) in args.iter().zip(params).zip(arg_loans) {
            // A `&uniq` reference passed for a `&shrd` parameter is reborrowed shared.
            let shared = matches!(self.apply_subst(&p.ty, subst), Ty::Ref { own: Ownership::Shrd, .. });
            let loans = loans
                .iter()
                .map(|l| Alias { own: if shared { Ownership::Shrd } else { l.own }, ..l.clone() })
                .collect();
            items.push((loans, a.span));
        }
        self.check_loans_disjoint(&items, "second borrow in the same call");
    }

    /// Values held together (the arguments of a call, the components of a tuple or array) may
    /// not borrow overlapping memory if either borrow is unique.
    pub(super) fn check_loans_disjoint(&mut self, items: &[(Vec<Alias>, Span)], label: &str) {
        let mut seen: Vec<(&Alias, Span)> = Vec::new();
        for (loans, span) in items {
            for l in loans {
                let clash = seen.iter().find(|(q, _)| {
                    q.place.root == l.place.root
                        && (l.own == Ownership::Uniq || q.own == Ownership::Uniq)
                        && self.steps_may_overlap(&q.place.steps, &l.place.steps)
                });
                if let Some((q, at)) = clash {
                    let name = self.vars[l.place.root].name.clone();
                    let (o, at) = (q.own, *at);
                    self.report(
                        Diagnostic::error(
                            codes::BORROW_CONFLICT,
                            format!(
                                "cannot borrow `{name}` as {} because it is also borrowed as {}",
                                l.own.keyword(),
                                o.keyword()
                            ),
                            *span,
                            label.to_string(),
                        )
                        .with_label(at, "first borrow"),
                    );
                }
            }
            seen.extend(loans.iter().map(|l| (l, *span)));
        }
    }

    pub(super) fn bind_generic(&mut self, g: &ast::GenericArg, name: &str, kind: Kind, s: &mut Subst) {
        match (g, kind) {
            (ast::GenericArg::Nat(n), Kind::Nat) => {
                if let Some(v) = self.lower_nat(n).filter(|v| self.fits_u64(v, n.span, "a size argument")) {
                    s.nats.insert(name.to_string(), v);
                }
            }
            (ast::GenericArg::Nat(n), Kind::DataTy) => {
                // A bare identifier is parsed as a nat; here it names a type variable.
                if let ast::NatKind::Var(id) = &n.kind {
                    let t = self.lower_ty(&ast::Ty { kind: ast::TyKind::Var(id.clone()), span: n.span });
                    s.tys.insert(name.to_string(), t);
                } else {
                    self.error(codes::KIND_MISMATCH, n.span, "expected a data type", "this is a natural number");
                }
            }
            (ast::GenericArg::Nat(n), Kind::Mem) => {
                if let ast::NatKind::Var(id) = &n.kind {
                    let m = self.lower().mem(&ast::Mem { kind: ast::MemKind::Var(id.clone()), span: n.span });
                    s.mems.insert(name.to_string(), m);
                }
            }
            (ast::GenericArg::Ty(t), Kind::DataTy) => {
                let t = self.lower_ty(t);
                s.tys.insert(name.to_string(), t);
            }
            (ast::GenericArg::Mem(m), Kind::Mem) => {
                let m = self.lower().mem(m);
                s.mems.insert(name.to_string(), m);
            }
            (_, Kind::Prv) => {}
            (g, k) => {
                let span = match g {
                    ast::GenericArg::Nat(n) => n.span,
                    ast::GenericArg::Ty(t) => t.span,
                    ast::GenericArg::Mem(m) => m.span,
                };
                self.error(
                    codes::KIND_MISMATCH,
                    span,
                    format!("expected a `{}` for `{name}`", k.keyword()),
                    "wrong kind of generic argument",
                );
            }
        }
    }

    /// Who may call whom: CPU functions from the CPU, thread functions from one GPU thread, …
    /// A `gpu.block` (`gpu.warp`) function takes each parameter as one value for its whole block
    /// (warp), and may synchronise under a condition on it: an argument that differs between the
    /// threads (lanes) of the calling block (warp), such as a flag set in one arm of a `split`,
    /// would make the callee's threads disagree on it (I4).
    fn check_whole_resource_args(&mut self, sig: &FnSig, args: &[ast::Expr], unis: &[Uni], path: &str) {
        let need = match sig.root {
            Root::Block { .. } => Uni::Block,
            Root::Warp => Uni::Warp,
            _ => return,
        };
        if !self.on_gpu() || self.in_unsafe() {
            return;
        }
        for (a, u) in args.iter().zip(unis) {
            if *u > need {
                let noun = need.noun();
                self.report(
                    Diagnostic::error(
                        codes::BARRIER_NOT_ALLOWED,
                        "barrier not allowed here",
                        a.span,
                        format!("this argument may differ between the threads of the {noun}"),
                    )
                    .with_note(format!(
                        "`{path}` is executed by a whole {noun} and takes each argument as one value for all of its threads (it may synchronise on a condition on it); pass a value that is the same for every thread of the {noun}"
                    )),
                );
            }
        }
    }

    /// Returns the block shape to compare once the arguments are typed, for a `gpu.block` callee
    /// whose block size mentions sizes not bound yet.
    /// Host code: a callee given `&uniq` access to data that holds references (argument `i`)
    /// may store there any reference its other arguments hold or reach (`*p = r;`: provenances
    /// are not checked, so nothing in the signature says it does not). As for an assignment, the
    /// variables that data belongs to take those loans, which must outlive them (E0505), and the
    /// borrows written in the other arguments stay live as long as them.
    fn callee_may_store(
        &mut self,
        path: &str,
        args: &[ast::Expr],
        arg_tys: &[Ty],
        arg_loans: &[Vec<Alias>],
        direct_loans: &[Vec<Alias>],
    ) {
        for (i, t) in arg_tys.iter().enumerate() {
            if !matches!(t, Ty::Ref { own: Ownership::Uniq, ty, .. } if self.holds_ref(ty)) {
                continue;
            }
            // The data the argument points to, and any reached from it through `&uniq`
            // references that itself holds references (`q.0.0 = r` with `q.0: &uniq slots`).
            let direct = direct_loans.get(i).cloned().unwrap_or_default();
            let sinks: Vec<Alias> = arg_loans
                .get(i)
                .into_iter()
                .flatten()
                .filter(|l| {
                    l.own == Ownership::Uniq && (direct.contains(l) || self.holds_ref(&self.vars[l.place.root].ty))
                })
                .cloned()
                .collect();
            for sink in &sinks {
                // Behind a reference (a parameter): memory that outlives every local. A heap
                // cell's memory is its variable's own.
                let behind =
                    sink.place.steps.iter().any(|s| matches!(s, PStep::Deref)) && !self.in_own_cell(&sink.place);
                let depth = if behind { 0 } else { self.vars[sink.place.root].depth };
                let name = self.vars[sink.place.root].name.clone();
                for (j, a) in args.iter().enumerate() {
                    if !arg_tys.get(j).is_some_and(|t| self.holds_ref(t)) {
                        continue;
                    }
                    let mut loans = arg_loans.get(j).cloned().unwrap_or_default();
                    if j == i {
                        // What the argument itself reaches may be moved around inside it.
                        loans.retain(|l| !direct.contains(l));
                        if loans.is_empty() {
                            continue;
                        }
                    }
                    let what = format!(
                        "may be stored by `{path}` behind its `&uniq` argument, in `{name}`, which lives longer"
                    );
                    self.check_loans_outlive(a, &loans, depth, &what);
                    if j != i {
                        self.track_stored_borrows(a, depth);
                    }
                    if !behind {
                        union_loans(&mut self.vars[sink.place.root].loans, loans);
                    }
                }
            }
        }
    }

    /// E0401 for `println`/`print` where nobody may print: in GPU code, anything but a thread of
    /// a kernel's own body (a `gpu.thread`/`gpu.block` function's prints are not supported yet).
    fn check_print_here(&mut self, name: &str, span: Span) {
        let level = self.level();
        if level == Level::Cpu || (level == Level::Thread && matches!(self.sig.root, Root::Grid { .. })) {
            return;
        }
        if level == Level::Thread {
            self.error(
                codes::WRONG_EXEC,
                span,
                format!("`{name}` cannot be called here"),
                "GPU code prints in a kernel's own body; a GPU function cannot print yet",
            );
            return;
        }
        let mut d = Diagnostic::error(
            codes::WRONG_EXEC,
            format!("`{name}` cannot be called here"),
            span,
            format!("in GPU code `{name}` is executed by one thread, but this code is executed by {}", self.level().describe()),
        )
        .with_note("print inside `sched(X) t in b.threads { … }`: each thread prints its own line, like CUDA's device `printf`");
        if let Some((s, l)) = self.executed_by_label() {
            d = d.with_label(s, l);
        }
        self.report(d);
    }

    pub(super) fn check_call_exec(
        &mut self,
        sig: &FnSig,
        exec: Option<&ast::ExecExpr>,
        span: Span,
        path: &str,
        subst: &mut Subst,
    ) -> Option<Vec<(DimName, Nat)>> {
        if let Some(e) = exec {
            self.resolve_exec(e);
        }
        let level = self.level();
        let mut deferred = None;
        if let (Root::Block { threads }, Ok(shape), Level::Block) = (&sig.root, self.current.shape(), level) {
            let here = shape.block.unwrap_or_default();
            // A size that is one of the callee's generics is inferred from the caller's block
            // (`gpu.block<X<n>>` called by blocks of X<32>: n = 32), like a launch's.
            if threads.len() == here.len() && threads.iter().zip(&here).all(|((d1, _), (d2, _))| d1 == d2) {
                for ((_, w), (_, g)) in threads.iter().zip(&here) {
                    if let Some(v) = w.as_var().filter(|v| is_nat_generic(sig, v) && !subst.nats.contains_key(*v)) {
                        subst.nats.insert(v.to_string(), g.clone());
                    }
                }
            }
            if threads.iter().any(|(_, n)| unbound_generic(sig, n, subst)) {
                deferred = Some(here);
            } else if !self.block_shape_fits(sig, &here, subst, span, path, false) {
                return None;
            }
        }
        // `println`/`print` also run on a GPU thread, like CUDA's device `printf`.
        let prints = sig.builtin && (path == "println" || path == "print");
        if prints && level != Level::Cpu {
            self.check_print_here(path, span);
            return deferred;
        }
        let ok = match &sig.root {
            Root::CpuThread => level == Level::Cpu || (prints && level == Level::Thread),
            Root::Thread => level == Level::Thread || (self.in_unsafe() && !matches!(level, Level::Cpu | Level::Any)),
            Root::Warp => level == Level::Warp,
            Root::Block { .. } => level == Level::Block,
            Root::Any => true,
            Root::Grid { .. } => true,
        };
        if ok && self.on_gpu() {
            match &sig.root {
                Root::Warp => self.check_whole_resource_call(Uni::Warp, span, path),
                Root::Block { .. } => self.check_whole_resource_call(Uni::Block, span, path),
                _ => {}
            }
        }
        if !ok {
            let needs = match &sig.root {
                Root::CpuThread => Level::Cpu,
                Root::Thread => Level::Thread,
                Root::Warp => Level::Warp,
                Root::Block { .. } => Level::Block,
                _ => Level::Any,
            };
            let mut d = Diagnostic::error(
                codes::WRONG_EXEC,
                format!("`{path}` cannot be called here"),
                span,
                format!(
                    "`{path}` must be executed by {}, but this code is executed by {}",
                    needs.describe(),
                    level.describe()
                ),
            );
            if let Some((s, l)) = self.executed_by_label() {
                d = d.with_label(s, l);
            }
            self.report(d);
        }
        deferred
    }

    /// Does the callee's block shape (its generics as bound in `subst`) equal `here`, the caller's
    /// blocks? Reports E0401 if not. `late`: after the arguments, when a size the callee leaves
    /// unbound has been reported as not inferred already.
    pub(super) fn block_shape_fits(
        &mut self,
        sig: &FnSig,
        here: &[(DimName, Nat)],
        subst: &mut Subst,
        span: Span,
        path: &str,
        late: bool,
    ) -> bool {
        let Root::Block { threads } = &sig.root else { return true };
        if late && threads.iter().any(|(_, n)| unbound_generic(sig, n, subst)) {
            return true;
        }
        let same = threads.len() == here.len()
            && threads
                .iter()
                .zip(here)
                .all(|((d1, n1), (d2, n2))| d1 == d2 && self.nat_eq(&self.subst_nat(n1, subst), n2));
        if !same {
            let show = |sh: &[(DimName, Nat)]| {
                sh.iter().map(|(d, n)| format!("{}<{n}>", d.letter())).collect::<Vec<_>>().join(", ")
            };
            let want: Vec<(DimName, Nat)> = threads.iter().map(|(d, n)| (*d, self.subst_nat(n, subst))).collect();
            self.error(
                codes::WRONG_EXEC,
                span,
                format!("`{path}` cannot be called here"),
                format!("`{path}` needs blocks of {}, these blocks have {}", show(&want), show(here)),
            );
        }
        same
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn unify_shape(
        &mut self,
        want: &[(DimName, Nat)],
        got: &[(DimName, Nat)],
        s: &mut Subst,
        span: Span,
        what: &str,
        path: &str,
        bind_only: bool,
    ) {
        let names = |sh: &[(DimName, Nat)]| sh.iter().map(|(d, _)| d.letter()).collect::<String>();
        if bind_only {
            for ((_, w), (_, g)) in want.iter().zip(got) {
                if let Some(v) = w.as_var() {
                    if !s.nats.contains_key(v) && names(want) == names(got) {
                        s.nats.insert(v.to_string(), g.clone());
                    }
                }
            }
            return;
        }
        if names(want) != names(got) {
            self.error(
                codes::LAUNCH_SHAPE,
                span,
                "launch shape does not match the kernel",
                format!("`{path}` expects {what} along {}, the launch gives {}", names(want), names(got)),
            );
            return;
        }
        for ((_, w), (_, g)) in want.iter().zip(got) {
            if !self.unify_nat(w, g, s) {
                let w = self.subst_nat(w, s);
                self.error(
                    codes::LAUNCH_SHAPE,
                    span,
                    "launch shape does not match the kernel",
                    format!("`{path}` expects {w} {what}, the launch gives {g}"),
                );
            }
        }
    }

    pub(super) fn unify_nat(&mut self, want: &Nat, got: &Nat, s: &mut Subst) -> bool {
        if let Some(v) = want.as_var() {
            if let Some(bound) = s.nats.get(v) {
                return self.facts.equal(bound, got) == Truth::Proven;
            }
            if self.sig_generic_is_callee(v, s) {
                s.nats.insert(v.to_string(), got.clone());
                return true;
            }
        }
        let w = self.subst_nat(want, s);
        self.facts.equal(&w, got) == Truth::Proven
    }

    /// Callee generics are bound lazily; a variable is the callee's while it is unbound.
    pub(super) fn sig_generic_is_callee(&self, _v: &str, _s: &Subst) -> bool {
        true
    }

    pub(super) fn subst_nat(&self, n: &Nat, s: &Subst) -> Nat {
        // Simultaneous, so a callee variable named like a caller variable is not captured.
        // A result too large to represent is an unknown size (a fresh name), never the callee's.
        n.subst_all(&|name| s.nats.get(name).cloned()).unwrap_or_else(|_| Nat::var(&format!("\u{1}({n})")))
    }

    pub(super) fn apply_subst(&self, t: &Ty, s: &Subst) -> Ty {
        match t {
            Ty::Var(v) => s.tys.get(v).cloned().unwrap_or_else(|| t.clone()),
            Ty::Tuple(ts) => Ty::Tuple(ts.iter().map(|t| self.apply_subst(t, s)).collect()),
            Ty::Array(e, n) => Ty::Array(Box::new(self.apply_subst(e, s)), self.subst_nat(n, s)),
            Ty::ViewArray(e, n) => Ty::ViewArray(Box::new(self.apply_subst(e, s)), self.subst_nat(n, s)),
            Ty::Ref { own, mem, ty } => {
                Ty::Ref { own: *own, mem: subst_mem(mem, s), ty: Box::new(self.apply_subst(ty, s)) }
            }
            Ty::At(e, m) => Ty::At(Box::new(self.apply_subst(e, s)), subst_mem(m, s)),
            other => other.clone(),
        }
    }

    /// Unifies a callee parameter type with an argument type, binding the callee's generics.
    pub(super) fn unify(&mut self, p: &Ty, a: &Ty, s: &mut Subst, sig: &FnSig) -> bool {
        if a.is_error() || p.is_error() {
            return true;
        }
        match (p, a) {
            (Ty::Var(v), _) if sig.generics.iter().any(|(g, _)| g == v) => match s.tys.get(v).cloned() {
                Some(bound) => self.compatible(&bound, a),
                None => {
                    s.tys.insert(v.clone(), a.defaulted());
                    true
                }
            },
            (Ty::Tuple(ps), Ty::Tuple(as_)) => {
                ps.len() == as_.len() && ps.iter().zip(as_).all(|(p, a)| self.unify(p, a, s, sig))
            }
            (Ty::Array(pe, pn), Ty::Array(ae, an)) | (Ty::ViewArray(pe, pn), Ty::ViewArray(ae, an)) => {
                self.unify(pe, ae, s, sig) && self.unify_nat(pn, an, s)
            }
            (Ty::Ref { own: po, mem: pm, ty: pt }, Ty::Ref { own: ao, mem: am, ty: at }) => {
                let own_ok = *po == Ownership::Shrd || *ao == Ownership::Uniq;
                let mem_ok = match pm {
                    Mem::Var(v) if sig.generics.iter().any(|(g, _)| g == v) => match s.mems.get(v) {
                        Some(m) => m == am,
                        None => {
                            s.mems.insert(v.clone(), am.clone());
                            true
                        }
                    },
                    m => m == am,
                };
                own_ok && mem_ok && self.unify(pt, at, s, sig)
            }
            (Ty::At(pt, pm), Ty::At(at, am)) => pm == am && self.unify(pt, at, s, sig),
            _ => self.compatible(p, a),
        }
    }

    /// `found` can be used where `expected` is required (no generics to bind).
    pub(super) fn compatible(&self, expected: &Ty, found: &Ty) -> bool {
        match (expected, found) {
            (Ty::Error, _) | (_, Ty::Error) => true,
            (e, Ty::IntLit | Ty::Nat) => e.is_int(),
            (Ty::IntLit | Ty::Nat, f) => f.is_int(),
            (e, Ty::FloatLit) => e.is_float(),
            (Ty::FloatLit, f) => f.is_float(),
            (Ty::Scalar(a), Ty::Scalar(b)) => a == b,
            (Ty::Var(a), Ty::Var(b)) => a == b,
            (Ty::Tuple(a), Ty::Tuple(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| self.compatible(x, y)),
            (Ty::Array(a, n), Ty::Array(b, m)) | (Ty::ViewArray(a, n), Ty::ViewArray(b, m)) => {
                self.compatible(a, b) && self.nat_eq(n, m)
            }
            (Ty::Ref { own: o1, mem: m1, ty: t1 }, Ty::Ref { own: o2, mem: m2, ty: t2 }) => {
                (*o1 == Ownership::Shrd || *o2 == Ownership::Uniq) && m1 == m2 && self.compatible(t1, t2)
            }
            (Ty::At(a, m), Ty::At(b, n)) => m == n && self.compatible(a, b),
            (Ty::Stream, Ty::Stream) => true,
            _ => false,
        }
    }
}

/// Is `v` one of the callee's `nat` generics?
fn is_nat_generic(sig: &FnSig, v: &str) -> bool {
    sig.generics.iter().any(|(g, k)| g == v && *k == Kind::Nat)
}

/// Does the callee's size `n` mention one of its `nat` generics that `subst` does not bind yet?
/// (Compared before it is bound, it would be read as a caller's variable of the same name.)
fn unbound_generic(sig: &FnSig, n: &Nat, subst: &Subst) -> bool {
    n.vars().iter().any(|v| is_nat_generic(sig, v) && !subst.nats.contains_key(&**v))
}

fn strip_parens(e: &ast::Expr) -> &ast::Expr {
    let mut e = e;
    while let ExprKind::Paren(inner) = &e.kind {
        e = inner;
    }
    e
}
