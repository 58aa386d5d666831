//! Index expressions (64- and 32-bit), places and value expressions in C, with the types the
//! emitter needs to write them.

use super::*;

impl<'p> Emitter<'p> {
    /// The C name of a block or thread coordinate or extent: CUDA's built-in variables, or the
    /// cpu device's loop variables and constants (`bx_`, `tx_`, `BX_`, `GX_`).
    pub(super) fn coordinate(&self, e: &IExpr) -> Option<String> {
        let lower = |d: &DimName| d.letter().to_ascii_lowercase();
        Some(match e {
            IExpr::BlockIdx(x) if self.ordered_cuda => format!("obid_.{}", lower(x)),
            IExpr::BlockIdx(x) if self.cuda => format!("blockIdx.{}", lower(x)),
            IExpr::ThreadIdx(x) if self.cuda => format!("threadIdx.{}", lower(x)),
            IExpr::BlockDim(x) if self.cuda => format!("blockDim.{}", lower(x)),
            IExpr::GridDim(x) if self.cuda => format!("gridDim.{}", lower(x)),
            IExpr::BlockIdx(x) => format!("b{}_", lower(x)),
            IExpr::ThreadIdx(x) => format!("t{}_", lower(x)),
            IExpr::BlockDim(x) => format!("B{}_", x.letter()),
            IExpr::GridDim(x) => format!("G{}_", x.letter()),
            _ => return None,
        })
    }

    /// A host size expression in checked 128-bit arithmetic (`strata_wide`); its other
    /// operations (division, powers, leaves) are computed as sizes and widened.
    pub(super) fn wide_iexpr(&self, cx: &Cx, e: &IExpr) -> Result<String, E> {
        let f = match e {
            IExpr::Add(..) => "strata_wadd",
            IExpr::Sub(..) => "strata_wsub",
            IExpr::Mul(..) => "strata_wmul",
            _ => return Ok(format!("((strata_wide){})", self.iexpr(cx, e)?)),
        };
        let Some((a, b)) = e.operands() else { return Err(unsupported(cx.span, "this size expression")) };
        Ok(format!("{f}({}, {}, {})", self.wide_iexpr(cx, a)?, self.wide_iexpr(cx, b)?, self.at(cx.span)))
    }

    pub(super) fn iexpr(&self, cx: &Cx, e: &IExpr) -> Result<String, E> {
        if let Some(name) = self.coordinate(e) {
            // CUDA's built-ins are `unsigned`: widen them; the cpu device's are `uint64_t` already.
            return Ok(if self.cuda { format!("((uint64_t){name})") } else { name });
        }
        // Host code computes the sizes everything else is bounded by, possibly from data:
        // checked, as `sim` checks every size.
        let host = matches!(cx.f.kind, FnKind::Host);
        if host && e.has_sub() && matches!(e, IExpr::Add(..) | IExpr::Sub(..) | IExpr::Mul(..)) {
            // A subtraction may cancel what a step before it took beyond 64 bits (the checker
            // normalises `n * (m - k)` to `n*m - n*k`): exact 128-bit steps, and only the result
            // must be a size, as on `sim`.
            return Ok(format!("strata_nfit({}, {})", self.wide_iexpr(cx, e)?, self.at(cx.span)));
        }
        match e {
            IExpr::Add(a, b) | IExpr::Mul(a, b) | IExpr::Pow(a, b) if host || !cx.env.fits_u64(e) => {
                // GPU code: only where the ranges in scope do not rule out wrap-around (sizes
                // without a `where` bound); everything with known ranges stays plain arithmetic.
                let f = match (e, host) {
                    (IExpr::Add(..), true) => "strata_nadd",
                    (IExpr::Mul(..), true) => "strata_nmul",
                    (_, true) => "strata_npow",
                    (IExpr::Add(..), false) => "strata_kadd",
                    (IExpr::Mul(..), false) => "strata_kmul",
                    (_, false) => "strata_kpow",
                };
                return Ok(format!("{f}({}, {}, {})", self.iexpr(cx, a)?, self.iexpr(cx, b)?, self.at(cx.span)));
            }
            _ => {}
        }
        if let Some((a, op, b)) = e.infix() {
            return Ok(format!("({} {op} {})", self.iexpr(cx, a)?, self.iexpr(cx, b)?));
        }
        Ok(match e {
            IExpr::Const(c) => format!("UINT64_C({c})"),
            IExpr::Param(p) => nat_name(&cx.names, p),
            // Keeps the 64-bit type (and unsigned semantics) of every use outside narrowed code.
            IExpr::Counter(l) if cx.narrow32.contains(l) => format!("((uint64_t){})", self.local(cx, *l)),
            IExpr::Counter(l) => self.local(cx, *l),
            // Powers of two are the common case (tree levels): a shift the C compiler can hoist.
            IExpr::Pow(a, b) if matches!(**a, IExpr::Const(2)) => {
                let b = self.iexpr(cx, b)?;
                format!("(({b}) < 64 ? UINT64_C(1) << ({b}) : UINT64_C(0))")
            }
            IExpr::Pow(a, b) => format!("strata_ipow({}, {})", self.iexpr(cx, a)?, self.iexpr(cx, b)?),
            IExpr::Value(v) => {
                let s = self.expr(cx, v)?;
                match self.checked_value(e, &s) {
                    Some(checked) => checked,
                    None => format!("strata_idx((int64_t)({s}), {})", self.at(cx.span)),
                }
            }
            // Coordinates and infix operations are handled above.
            _ => return Err(unsupported(cx.span, "this index expression")),
        })
    }

    /// Can `e` be emitted in signed 32 bits ([`Env::range`] proves every intermediate fits)?
    pub(super) fn narrowable(&self, cx: &Cx, e: &IExpr) -> bool {
        self.narrow && cx.env.range(e).is_some()
    }

    /// An element offset: in 32 bits where provably equal, otherwise in 64.
    pub(super) fn index(&self, cx: &Cx, e: &IExpr) -> Result<String, E> {
        if self.narrowable(cx, e) {
            self.iexpr32(cx, e)
        } else {
            self.iexpr(cx, e)
        }
    }

    /// The C type and bounds of `for counter in lo..hi`, and the counter's range entered into
    /// the environment for the body. `int32_t` when both bounds are narrowable and the counter is
    /// declared here (`declare`), `uint64_t` otherwise.
    pub(super) fn loop_head(
        &self,
        cx: &mut Cx,
        counter: LocalId,
        lo: &IExpr,
        hi: &IExpr,
        declare: bool,
    ) -> Result<(&'static str, String, String), E> {
        // The counter's range is entered on both dialects: on the cpu device too it proves index
        // arithmetic free of 64-bit wrap-around, which is then not checked at run time.
        let range = cx.env.loop_range(lo, hi);
        let head = match range {
            Some(_) if declare && self.narrow => {
                cx.narrow32.insert(counter);
                ("int32_t", self.iexpr32(cx, lo)?, self.iexpr32(cx, hi)?)
            }
            _ => ("uint64_t", self.iexpr(cx, lo)?, self.iexpr(cx, hi)?),
        };
        // The counter's values are the same whatever its C type.
        if let Some(r) = range {
            cx.env.counters.insert(counter, r);
        }
        Ok(head)
    }

    /// `e` in signed 32-bit arithmetic; only for expressions [`Env::range`] accepts, where it is
    /// equal to the 64-bit result (no intermediate overflows or goes negative).
    pub(super) fn iexpr32(&self, cx: &Cx, e: &IExpr) -> Result<String, E> {
        if let Some(name) = self.coordinate(e) {
            return Ok(format!("((int32_t){name})"));
        }
        if let Some((a, op, b)) = e.infix() {
            return Ok(format!("({} {op} {})", self.iexpr32(cx, a)?, self.iexpr32(cx, b)?));
        }
        Ok(match e {
            IExpr::Const(c) => format!("INT32_C({c})"),
            IExpr::Counter(l) if cx.narrow32.contains(l) => self.local(cx, *l),
            IExpr::Counter(l) => format!("((int32_t){})", self.local(cx, *l)),
            // A size parameter its `where` clauses bound (`Function::nat_max`).
            IExpr::Param(p) => format!("((int32_t){})", nat_name(&cx.names, p)),
            // The range proof bounds the exponent by 30: a plain shift.
            IExpr::Pow(a, b) if matches!(**a, IExpr::Const(2)) => format!("(INT32_C(1) << ({}))", self.iexpr32(cx, b)?),
            // The range proof refuses the rest, so they never reach here: a compiler bug if they do.
            _ => return Err(unsupported(cx.span, "32-bit index arithmetic over a value of unknown range")),
        })
    }

    /// Total number of scalars in a value of type `t`.
    pub(super) fn flat_len(&self, cx: &Cx, t: &Ty) -> Result<String, E> {
        Ok(match t {
            Ty::Array { elem, len } => match &**elem {
                Ty::Array { .. } if matches!(cx.f.kind, FnKind::Host) => {
                    format!("strata_nmul({}, {}, {})", self.iexpr(cx, len)?, self.flat_len(cx, elem)?, self.at(cx.span))
                }
                _ => format!("({} * {})", self.iexpr(cx, len)?, self.flat_len(cx, elem)?),
            },
            _ => "UINT64_C(1)".to_string(),
        })
    }

    /// The number of scalars a copy moves: its explicit count (a part of an array, whose pointer's
    /// type says only its first scalar), else all of the referent's type `t`.
    pub(super) fn copy_len(&self, cx: &Cx, t: &Ty, count: Option<&Expr>) -> Result<String, E> {
        match count {
            Some(Expr::Nat(n)) => self.iexpr(cx, n),
            _ => self.flat_len(cx, t),
        }
    }

    /// The number of scalars of an array value (`[x; n]`, `[a, b, …]`), for allocations whose
    /// type has no length ([`Program::runtime_lengths`]).
    pub(super) fn value_len(&self, cx: &Cx, e: &Expr) -> Result<String, E> {
        Ok(match e {
            Expr::ArrayRepeat(x, n) => {
                let n = self.iexpr(cx, n)?;
                match **x {
                    Expr::ArrayRepeat(..) | Expr::ArrayList(_) => {
                        format!("strata_nmul({n}, {}, {})", self.value_len(cx, x)?, self.at(cx.span))
                    }
                    _ => n,
                }
            }
            Expr::ArrayList(xs) => match xs.first() {
                Some(x @ (Expr::ArrayRepeat(..) | Expr::ArrayList(_))) => {
                    format!("strata_nmul(UINT64_C({}), {}, {})", xs.len(), self.value_len(cx, x)?, self.at(cx.span))
                }
                _ => format!("UINT64_C({})", xs.len()),
            },
            _ => {
                return Err(unsupported(
                    cx.span,
                    "an allocation whose length is known neither from its type nor its value",
                ))
            }
        })
    }

    /// The type of the memory a place denotes.
    pub(super) fn place_ty(&self, cx: &Cx, p: &Place) -> Ty {
        cx.f.place_ty(p)
    }

    /// An lvalue for a place; array-valued places are pointers to their first scalar.
    pub(super) fn place(&self, cx: &Cx, p: &Place) -> Result<String, E> {
        let mut s = self.local(cx, p.root);
        let mut t = cx.f.locals[p.root].ty.clone();
        let mut pointer = false; // `s` points at scalars (after a dereference)

        // The run-time checks of the place not yet emitted: each at its index (see `checked`).
        let mut checks: Vec<usize> = (0..p.checks.len()).collect();
        let last_elem = p.path.iter().rposition(|s| matches!(s, PathStep::Elem(_)));
        for (k, step) in p.path.iter().enumerate() {
            match step {
                PathStep::Deref => {
                    t = match t {
                        Ty::Ref(x, _) | Ty::Owned(x, _) => *x,
                        _ => return Err(unsupported(p.span, "dereferencing a non-pointer")),
                    };
                    if !matches!(t, Ty::Array { .. }) {
                        s = format!("(*{s})");
                    } else {
                        pointer = true;
                    }
                }
                // An index through a pointer may be negative where the pointer points into the
                // middle of its allocation (`strata_sidx` checks it stays inside, as `sim` does).
                PathStep::Elem(IExpr::Value(v)) if pointer && checks.is_empty() => {
                    let i = self.expr(cx, v)?;
                    s = format!(
                        "{s}[strata_sidx((int64_t)({i}), (const void *)({s}), sizeof(*({s})), {})]",
                        self.at(p.span)
                    );
                    t = leaf(&t).clone();
                    pointer = false;
                }
                PathStep::Elem(e) => {
                    let off = self.checked_offset(cx, p, e, &mut checks, Some(k) == last_elem)?;
                    if !pointer && !matches!(t, Ty::Array { .. }) {
                        return Err(unsupported(p.span, "indexing a non-array"));
                    }
                    s = format!("{s}[{off}]");
                    t = leaf(&t).clone();
                    pointer = false;
                }
                PathStep::Field(i) => {
                    let Ty::Tuple(ts) = t else { return Err(unsupported(p.span, "a field of a non-tuple")) };
                    s = format!("{s}.f{i}");
                    t = ts.get(*i as usize).cloned().unwrap_or(Ty::Nat);
                    pointer = false;
                }
            }
        }
        Ok(s)
    }

    /// A pointer to the memory a place denotes (for `&p`).
    pub(super) fn place_ref(&self, cx: &Cx, p: &Place) -> Result<String, E> {
        match p.path.last() {
            Some(PathStep::Deref) => {
                let mut q = p.clone();
                q.path.pop();
                self.place(cx, &q)
            }
            // An array (a local, or a row of per-thread storage) decays to its first scalar.
            _ if matches!(self.place_ty(cx, p), Ty::Array { .. }) => self.place(cx, p),
            _ => Ok(format!("(&{})", self.place(cx, p)?)),
        }
    }

    /// The type of an expression (enough to print it and to convert operands like `sim` does).
    pub(super) fn expr_ty(&self, cx: &Cx, e: &Expr) -> Ty {
        match e {
            Expr::Lit(Lit::Bool(_)) => Ty::Scalar(ScalarTy::Bool),
            Expr::Lit(Lit::Int(_, s) | Lit::Float(_, s)) => Ty::Scalar(*s),
            Expr::Lit(_) => Ty::Scalar(ScalarTy::Unit),
            Expr::Nat(_) => Ty::Nat,
            Expr::Load(p) => self.place_ty(cx, p),
            Expr::Ref(p) => Ty::Ref(Box::new(self.place_ty(cx, p)), cx.f.place_mem(p)),
            Expr::Unary(_, x) | Expr::Checked(x, _) => self.expr_ty(cx, x),
            Expr::Binary(op, a, b) => {
                if op.is_comparison() || matches!(op, BinOp::And | BinOp::Or) {
                    return Ty::Scalar(ScalarTy::Bool);
                }
                match (self.expr_ty(cx, a), self.expr_ty(cx, b)) {
                    (Ty::Nat, t) | (t, Ty::Nat) => t,
                    (t, _) => t,
                }
            }
            Expr::Cast(_, s) => Ty::Scalar(*s),
            Expr::Tuple(xs) => Ty::Tuple(xs.iter().map(|x| self.expr_ty(cx, x)).collect()),
            Expr::Call { func, .. } => self.p.functions[*func].ret.clone(),
            Expr::Builtin(Builtin::Sqrt(t) | Builtin::Shuffle(_, t), _, _) => Ty::Scalar(*t),
            Expr::Builtin(Builtin::Ballot, _, _) => Ty::Scalar(ScalarTy::U32),
            Expr::Builtin(Builtin::AtomicRmw(_, t) | Builtin::Math(_, t) | Builtin::Powi(t), _, _) => Ty::Scalar(*t),
            Expr::Builtin(Builtin::AtomicAt(op, t), _, _) if !op.is_store() => Ty::Scalar(*t),
            Expr::Builtin(Builtin::ArgCount | Builtin::ArgU64 | Builtin::NpyLen | Builtin::NpyDim, _, _) => {
                Ty::Scalar(ScalarTy::U64)
            }
            Expr::Builtin(Builtin::ArgF64 | Builtin::NowMs, _, _) => Ty::Scalar(ScalarTy::F64),
            Expr::Builtin(Builtin::ArgByte | Builtin::Rand, _, _) => Ty::Scalar(ScalarTy::I32),
            Expr::Builtin(Builtin::PtrEq | Builtin::IsNan(_) | Builtin::IsFinite(_), _, _) => {
                Ty::Scalar(ScalarTy::Bool)
            }
            Expr::Builtin(Builtin::IntMath(_, t), _, _) => Ty::Scalar(*t),
            Expr::Builtin(Builtin::PtrDiff, _, _) => Ty::Scalar(ScalarTy::I64),
            Expr::Builtin(Builtin::LoadNpy(t), args, _) => Ty::Owned(
                Box::new(strata_ir::ir::npy_array_ty(*t, &strata_ir::ir::npy_dims(args, 1))),
                strata_ir::ir::Mem::Cpu,
            ),
            Expr::Builtin(Builtin::AtomicFetchAdd | Builtin::AtomicFetchAddAt | Builtin::AtomicLoad, args, _) => {
                match args.first().map(|a| self.expr_ty(cx, a)) {
                    Some(Ty::Ref(t, _)) => match leaf(&t) {
                        Ty::Scalar(ScalarTy::AtomicI32) => Ty::Scalar(ScalarTy::I32),
                        _ => Ty::Scalar(ScalarTy::U32),
                    },
                    _ => Ty::Scalar(ScalarTy::U32),
                }
            }
            _ => Ty::Scalar(ScalarTy::Unit),
        }
    }

    /// `e` converted to `want` where it is a natural number (as `sim` converts on store).
    pub(super) fn typed_expr(&self, cx: &Cx, e: &Expr, want: &Ty) -> Result<String, E> {
        if let (Expr::Tuple(xs), Ty::Tuple(ts)) = (e, want) {
            // A compound literal of the wanted struct, each field converted like a store.
            let mut fields = Vec::new();
            for (x, t) in xs.iter().zip(ts) {
                fields.push(self.typed_expr(cx, x, t)?);
            }
            // C++ (CUDA) has no compound literals, but aggregate initialisation.
            let name = tuple_name(ts, cx.span)?;
            return Ok(if self.cuda {
                format!("({name}{{{}}})", fields.join(", "))
            } else {
                format!("(({name}){{{}}})", fields.join(", "))
            });
        }
        // An array held by value in a tuple (a C array member): an aggregate of its elements.
        if let (Expr::ArrayList(_) | Expr::ArrayRepeat(..), Ty::Array { elem, .. }) = (e, want) {
            let mut items = Vec::new();
            let mut stack = vec![e];
            while let Some(x) = stack.pop() {
                match x {
                    Expr::ArrayList(xs) => stack.extend(xs.iter().rev()),
                    Expr::ArrayRepeat(x, IExpr::Const(n)) if *n <= 1 << 16 => {
                        (0..*n).for_each(|_| stack.push(x));
                    }
                    Expr::ArrayRepeat(..) => {
                        return Err(unsupported(cx.span, "an array value of this length in a tuple"))
                    }
                    x => items.push(self.typed_expr(cx, x, leaf(elem))?),
                }
            }
            return Ok(format!("{{{}}}", items.join(", ")));
        }
        let v = self.expr(cx, e)?;
        Ok(match (self.expr_ty(cx, e), want) {
            (Ty::Nat, Ty::Scalar(s)) => format!("(({}){v})", scalar_c(*s)),
            _ => v,
        })
    }

    pub(super) fn expr(&self, cx: &Cx, e: &Expr) -> Result<String, E> {
        Ok(match e {
            Expr::Lit(l) => match l {
                Lit::Bool(b) => b.to_string(),
                Lit::Unit => "0".into(),
                Lit::Int(v, s) => match s {
                    // C has no literals of these types: an `int` converted.
                    ScalarTy::I8 | ScalarTy::U8 | ScalarTy::I16 | ScalarTy::U16 => {
                        format!("(({})INT32_C({}))", scalar_c(*s), *v as i128 as i64 as i32)
                    }
                    ScalarTy::I32 | ScalarTy::AtomicI32 => format!("INT32_C({v})"),
                    ScalarTy::I64 | ScalarTy::AtomicI64 => format!("INT64_C({v})"),
                    ScalarTy::U32 | ScalarTy::AtomicU32 => format!("UINT32_C({v})"),
                    ScalarTy::U64 | ScalarTy::AtomicU64 => format!("UINT64_C({v})"),
                    ScalarTy::F32 | ScalarTy::AtomicF32 => format!("{v}.0f"),
                    ScalarTy::F64 | ScalarTy::AtomicF64 => format!("{v}.0"),
                    ScalarTy::Bool => (*v != 0).to_string(),
                    ScalarTy::Unit => "0".into(),
                },
                Lit::Float(v, s) => {
                    let text = if v.is_finite() {
                        format!("{v:?}")
                    } else if v.is_nan() {
                        "NAN".into()
                    } else if *v > 0.0 {
                        "INFINITY".into()
                    } else {
                        "(-INFINITY)".into()
                    };
                    if *s == ScalarTy::F32 && v.is_finite() {
                        format!("{text}f")
                    } else {
                        text
                    }
                }
                Lit::Str(_) => "0".into(),
            },
            Expr::Nat(i) => self.iexpr(cx, i)?,
            Expr::Load(p) => self.place(cx, p)?,
            Expr::Ref(p) => self.place_ref(cx, p)?,
            Expr::Unary(op, x) => {
                let v = self.expr(cx, x)?;
                let t = self.expr_ty(cx, x);
                let s = match op {
                    UnOp::Neg => format!("(-{v})"),
                    UnOp::Not if t == Ty::Scalar(ScalarTy::Bool) => format!("(!{v})"),
                    UnOp::Not => format!("(~{v})"),
                };
                // C computes 8- and 16-bit integers in `int`: the result converted back (`~x` of
                // a `u8` 0 is 255, not -1), as `sim` computes it.
                match t {
                    Ty::Scalar(st) if st.is_small_int() => format!("(({}){s})", scalar_c(st)),
                    _ => s,
                }
            }
            Expr::Binary(op, a, b) => {
                let (ta, tb) = (self.expr_ty(cx, a), self.expr_ty(cx, b));
                // A natural number adopts the type of the other operand, as in `sim`.
                let conv = |me: &Self, x: &Expr, t: &Ty, other: &Ty| -> Result<String, E> {
                    let v = me.expr(cx, x)?;
                    Ok(match (t, other) {
                        (Ty::Nat, Ty::Scalar(s)) => format!("(({}){v})", scalar_c(*s)),
                        _ => v,
                    })
                };
                let (x, y) = (conv(self, a, &ta, &tb)?, conv(self, b, &tb, &ta)?);
                let int = |t: &Ty| matches!(t, Ty::Scalar(s) if s.is_int()) || *t == Ty::Nat;
                // C computes 8- and 16-bit integers in `int`: an arithmetic or bit operation's
                // result is converted back to the operands' type (what `sim` computes; a
                // comparison's is a `bool`).
                let small = match (&ta, &tb) {
                    (Ty::Nat, Ty::Scalar(s)) | (Ty::Scalar(s), _) if s.is_small_int() && !op.is_comparison() => {
                        Some(scalar_c(*s))
                    }
                    _ => None,
                };
                let plain = match op {
                    // Checked (a zero divisor, and the one quotient of signed integers that
                    // overflows) by a runtime helper of the operands' type.
                    BinOp::Div | BinOp::Rem if int(&ta) && int(&tb) => {
                        let which = if *op == BinOp::Div { "div" } else { "rem" };
                        let t = match (&ta, &tb) {
                            (Ty::Nat, t) | (t, _) => t,
                        };
                        let suffix = match t {
                            Ty::Scalar(s) if s.is_int() => scalar_suffix(*s),
                            _ => "u64",
                        };
                        format!("strata_{which}_{suffix}({x}, {y}, {})", self.at(cx.span))
                    }
                    BinOp::Rem if !int(&ta) => format!("fmod({x}, {y})"),
                    // The amount is taken modulo the width, as `sim` does: C leaves a shift by the
                    // width or more undefined.
                    BinOp::Shl | BinOp::Shr if int(&ta) => {
                        let bits = match ta {
                            Ty::Scalar(s) if s.is_int() => s.int_bits().unwrap_or(64) - 1,
                            _ => 63,
                        };
                        format!("({x} {} (int)(({y}) & {bits}))", op.symbol())
                    }
                    _ => format!("({x} {} {y})", op.symbol()),
                };
                match small {
                    Some(c) => format!("(({c}){plain})"),
                    None => plain,
                }
            }
            Expr::Checked(inner, span) => self.checked_arith(cx, inner, *span)?,
            // A float converted to an integer saturates (NaN gives 0), as on `sim`: a plain C cast
            // of an out-of-range value is undefined behaviour.
            Expr::Cast(x, s)
                if matches!(self.expr_ty(cx, x), Ty::Scalar(ScalarTy::F32 | ScalarTy::F64)) && s.is_int() =>
            {
                format!("strata_f2{}((double)({}))", scalar_suffix(*s), self.expr(cx, x)?)
            }
            Expr::Cast(x, s) => format!("(({})({}))", scalar_c(*s), self.expr(cx, x)?),
            Expr::Call { func, nats, args, .. } => {
                let mut a = Vec::new();
                for n in nats {
                    a.push(self.iexpr(cx, n)?);
                }
                let callee = &self.p.functions[*func];
                for (x, p) in args.iter().zip(&callee.params) {
                    a.push(self.typed_expr(cx, x, &callee.locals[*p].ty)?);
                }
                format!("{}({})", self.fn_names[*func], a.join(", "))
            }
            Expr::Builtin(b, args, span) => self.builtin(cx, *b, args, *span)?,
            Expr::Tuple(xs) => {
                let ts: Vec<Ty> = xs.iter().map(|x| self.expr_ty(cx, x)).collect();
                return self.typed_expr(cx, e, &Ty::Tuple(ts));
            }
            Expr::ArrayList(_) | Expr::ArrayRepeat(..) => {
                return Err(unsupported(cx.f.span, "array values outside `CpuHeap::new`"))
            }
        })
    }

    pub(super) fn referent(&self, cx: &Cx, e: &Expr) -> Ty {
        match self.expr_ty(cx, e) {
            Ty::Ref(t, _) | Ty::Owned(t, _) => *t,
            t => t,
        }
    }
}
