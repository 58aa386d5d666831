//! The builtins of the IR in C and CUDA: memory and streams, math, collectives, atomics and `.npy`
//! files, and the helpers they call.

use super::*;

impl<'p> Emitter<'p> {
    pub(super) fn builtin(&self, cx: &Cx, b: Builtin, args: &[Expr], span: Span) -> Result<String, E> {
        let prints = matches!(b, Builtin::Print | Builtin::PrintInline | Builtin::PrintFormatted);
        // A kernel's own prints (CUDA-C's `__device__` functions print directly, unordered).
        if prints && (self.cuda || matches!(cx.f.kind, FnKind::Kernel { .. })) && !matches!(cx.f.kind, FnKind::Host) {
            return self.gpu_print(cx, b, args, span);
        }
        self.builtin_value(cx, b, args, span)
    }

    /// A print of a GPU thread. CUDA: device `printf`, in the GPU's own order. The cpu device: the
    /// print goes to the thread's buffer (`strata_kprint_begin`/`_end` of the runtime), written
    /// out by block and thread when the launch ends, as `sim` orders it.
    fn gpu_print(&self, cx: &Cx, b: Builtin, args: &[Expr], span: Span) -> Result<String, E> {
        if self.cuda {
            return self.device_printf(cx, b, args, span);
        }
        let dims = ["x", "y", "z"];
        let coords: Vec<String> =
            dims.iter().map(|d| format!("b{d}_")).chain(dims.iter().map(|d| format!("t{d}_"))).collect();
        let text = self.builtin_value(cx, b, args, span)?;
        Ok(format!("(strata_kprint_begin({}), (void)({text}), strata_kprint_end())", coords.join(", ")))
    }

    /// CUDA's device `printf` of a Strata print: numbers with the conversion of their type (floats
    /// as `%.9g`/`%.17g`, which read back exactly but are not always the shortest digits that
    /// `sim` and the cpu device print), `bool` as `true`/`false`, text as it is.
    fn device_printf(&self, cx: &Cx, b: Builtin, args: &[Expr], span: Span) -> Result<String, E> {
        let end = if b == Builtin::Print { "\\n" } else { "" };
        let Some(e) = args.first() else { return Ok(format!("printf(\"{end}\")")) };
        if let Expr::Lit(Lit::Str(text)) = e {
            return Ok(format!("printf(\"%s{end}\", {})", c_string(text)));
        }
        if b == Builtin::PrintFormatted {
            return Err(unsupported(span, "C's `printf` in CUDA output"));
        }
        let v = self.expr(cx, e)?;
        let (conv, cast) = match self.expr_ty(cx, e) {
            Ty::Scalar(ScalarTy::Bool) => return Ok(format!("printf(\"%s{end}\", ({v}) ? \"true\" : \"false\")")),
            Ty::Scalar(ScalarTy::I8 | ScalarTy::I16 | ScalarTy::I32) => ("%d", "int"),
            Ty::Scalar(ScalarTy::U8 | ScalarTy::U16 | ScalarTy::U32) => ("%u", "unsigned"),
            Ty::Scalar(ScalarTy::I64) => ("%lld", "long long"),
            Ty::Scalar(ScalarTy::U64) | Ty::Nat => ("%llu", "unsigned long long"),
            Ty::Scalar(ScalarTy::F32) => ("%.9g", "double"),
            Ty::Scalar(ScalarTy::F64) => ("%.17g", "double"),
            _ => return Err(unsupported(span, "printing this value from GPU code")),
        };
        Ok(format!("printf(\"{conv}{end}\", ({cast})({v}))"))
    }

    fn builtin_value(&self, cx: &Cx, b: Builtin, args: &[Expr], span: Span) -> Result<String, E> {
        let arg = |i: usize| args.get(i).map(|a| self.expr(cx, a)).unwrap_or(Ok("0".into()));
        let at = self.at(span);
        // `&a[i]` for `atomic_fetch_add_at(a, i, v)`, the index checked against `a`'s length.
        // The length is the call's argument 3 (the referenced array's, which a pointer to a row
        // does not say), else the referent's type's.
        let elem_at = || -> Result<String, E> {
            let len = match args.get(3) {
                Some(n) => format!("(uint64_t)({})", self.expr(cx, n)?),
                None => self.flat_len(cx, &args.first().map_or(Ty::Nat, |a| self.referent(cx, a)))?,
            };
            // An index provably below the length (a `u8` into 256 elements) is not checked.
            let referent = args.first().map(|a| self.referent(cx, a));
            let bound = match (args.get(3), &referent) {
                (Some(Expr::Nat(n)), _) => Some(n.clone()),
                (None, Some(Ty::Array { elem, len })) if matches!(**elem, Ty::Scalar(_)) => Some(len.clone()),
                _ => None,
            };
            if let (Some(i), Some(b)) = (args.get(1), bound) {
                if self.value_below(cx, i, &b) {
                    return Ok(format!("&({})[(uint64_t)({})]", arg(0)?, arg(1)?));
                }
            }
            Ok(format!("&({})[strata_index((uint64_t)({}), {len}, {at})]", arg(0)?, arg(1)?))
        };
        // The scalar type an atomic operation works on (its argument is a pointer to it).
        let atomic_ty = || match args.first().map(|a| self.referent(cx, a)).as_ref().map(leaf) {
            Some(Ty::Scalar(ScalarTy::AtomicI32 | ScalarTy::I32)) => "i32",
            _ => "u32",
        };
        Ok(match b {
            Builtin::HeapNew => return Err(unsupported(span, "`CpuHeap::new` outside a `let`")),
            Builtin::GlobalAllocCopy if self.p.runtime_lengths && !self.cuda => {
                let ct = c_type(leaf(&self.referent(cx, &args[0])), span)?;
                format!("(({ct} *)strata_rt_alloc_copy({}, sizeof({ct}), {at}))", arg(0)?)
            }
            Builtin::GlobalAllocCopy => {
                let t = self.referent(cx, &args[0]);
                let (ct, len) = (c_type(leaf(&t), span)?, self.copy_len(cx, &t, args.get(1))?);
                let f = if self.cuda { "strata_cuda_alloc_copy" } else { "strata_alloc_copy" };
                format!("(({ct} *){f}({}, {len}, sizeof({ct}), {at}))", arg(0)?)
            }
            Builtin::CopyToHost | Builtin::CopyToGpu if self.cuda => {
                let (dst, src, kind) = if b == Builtin::CopyToHost {
                    (1, 0, "cudaMemcpyDeviceToHost")
                } else {
                    (0, 1, "cudaMemcpyHostToDevice")
                };
                let t = self.referent(cx, &args[dst]);
                let (ct, len) = (c_type(leaf(&t), span)?, self.copy_len(cx, &t, args.get(2))?);
                format!(
                    "strata_cuda_check(cudaMemcpy({}, {}, ({len}) * sizeof({ct}), {kind}), {at})",
                    arg(dst)?,
                    arg(src)?
                )
            }
            Builtin::StreamNew
            | Builtin::StreamSync
            | Builtin::StreamDestroy
            | Builtin::DeviceSync
            | Builtin::EventNew
            | Builtin::EventRecord
            | Builtin::EventSync
            | Builtin::EventDestroy
            | Builtin::StreamWaitEvent
            | Builtin::CopyAsync => self.stream_builtin(cx, b, args, span)?,
            Builtin::CopyElems { dst_gpu, src_gpu } => {
                let t = self.referent(cx, &args[0]);
                let ct = c_type(leaf(&t), span)?;
                let bytes = format!("({}) * sizeof({ct})", arg(2)?);
                match (dst_gpu, src_gpu) {
                    (true, true) if self.cuda => format!(
                        "strata_cuda_check(cudaMemcpy({}, {}, {bytes}, cudaMemcpyDeviceToDevice), {at})",
                        arg(0)?,
                        arg(1)?
                    ),
                    (true, false) if self.cuda => format!(
                        "strata_cuda_check(cudaMemcpy({}, {}, {bytes}, cudaMemcpyHostToDevice), {at})",
                        arg(0)?,
                        arg(1)?
                    ),
                    (false, true) if self.cuda => format!(
                        "strata_cuda_check(cudaMemcpy({}, {}, {bytes}, cudaMemcpyDeviceToHost), {at})",
                        arg(0)?,
                        arg(1)?
                    ),
                    // CUDA-C on the cpu device: both sides must hold the `n` elements (their
                    // lengths are known only at run time), as `sim` checks.
                    _ if self.p.runtime_lengths => format!(
                        "strata_rt_copy_n({}, {}, (uint64_t)({}), sizeof({ct}), {at})",
                        arg(0)?,
                        arg(1)?,
                        arg(2)?
                    ),
                    // One address space (the `cpu` device), or host to host: the ranges may overlap.
                    _ => format!("memmove({}, {}, {bytes})", arg(0)?, arg(1)?),
                }
            }
            Builtin::AtomicFetchAdd if self.cuda => format!("atomicAdd({}, {})", arg(0)?, arg(1)?),
            // Relaxed atomic loads and stores of an aligned 32-bit word: PTX treats `volatile`
            // accesses as relaxed at system scope, so no read-modify-write is needed.
            Builtin::AtomicLoad if self.cuda => format!("strata_atomic_load_{}({})", atomic_ty(), arg(0)?),
            Builtin::AtomicStore if self.cuda => {
                format!("strata_atomic_store_{}({}, {})", atomic_ty(), arg(0)?, arg(1)?)
            }
            Builtin::AtomicFetchAddAt if self.cuda => format!("atomicAdd({}, {})", elem_at()?, arg(2)?),
            Builtin::CopyToHost | Builtin::CopyToGpu if self.p.runtime_lengths => {
                let (dst, src) = if b == Builtin::CopyToHost { (1, 0) } else { (0, 1) };
                let ct = c_type(leaf(&self.referent(cx, &args[dst])), span)?;
                format!("strata_rt_copy({}, {}, sizeof({ct}), {at})", arg(dst)?, arg(src)?)
            }
            Builtin::CopyToHost | Builtin::CopyToGpu => {
                let (dst, src) = if b == Builtin::CopyToHost { (1, 0) } else { (0, 1) };
                let t = self.referent(cx, &args[dst]);
                let (ct, len) = (c_type(leaf(&t), span)?, self.copy_len(cx, &t, args.get(2))?);
                format!("memcpy({}, {}, ({len}) * sizeof({ct}))", arg(dst)?, arg(src)?)
            }
            // A block's threads run one after another on one OS thread, so atomics on the block's
            // own shared memory need no locked instruction; global memory stays atomic.
            Builtin::AtomicFetchAdd if args.first().is_some_and(|a| block_private(cx, a)) => {
                format!("strata_fetch_add_plain_{}({}, {})", atomic_ty(), arg(0)?, arg(1)?)
            }
            Builtin::AtomicFetchAddAt if args.first().is_some_and(|a| block_private(cx, a)) => {
                format!("strata_fetch_add_plain_{}({}, {})", atomic_ty(), elem_at()?, arg(2)?)
            }
            Builtin::AtomicFetchAdd => format!("__atomic_fetch_add({}, {}, __ATOMIC_RELAXED)", arg(0)?, arg(1)?),
            Builtin::AtomicLoad => format!("__atomic_load_n({}, __ATOMIC_RELAXED)", arg(0)?),
            Builtin::AtomicStore => format!("__atomic_store_n({}, {}, __ATOMIC_RELAXED)", arg(0)?, arg(1)?),
            Builtin::AtomicFetchAddAt => format!("__atomic_fetch_add({}, {}, __ATOMIC_RELAXED)", elem_at()?, arg(2)?),
            Builtin::AtomicAt(op, t) => self.atomic_at(cx, op, t, args, span)?,
            Builtin::AtomicRmw(op, t) if self.cuda => {
                // CUDA declares its 64-bit atomics on `(unsigned) long long`, not on `(u)int64_t`.
                let (p, v) = match t {
                    ScalarTy::U64 | ScalarTy::AtomicU64 => ("(unsigned long long *)", "(unsigned long long)"),
                    ScalarTy::I64 | ScalarTy::AtomicI64 => ("(long long *)", "(long long)"),
                    _ => ("", ""),
                };
                let rest = if op == AtomicOp::Cas { format!(", {v}({})", arg(2)?) } else { String::new() };
                format!("{}({p}({}), {v}({}){rest})", op.cuda_name(), arg(0)?, arg(1)?)
            }
            Builtin::AtomicRmw(op, t) => {
                let name = self.atomic_helper(op, t, span)?;
                let rest = if op == AtomicOp::Cas { format!(", {}", arg(2)?) } else { String::new() };
                format!("{name}({}, {}{rest})", arg(0)?, arg(1)?)
            }
            Builtin::PrintFormatted => {
                let Some(Expr::Lit(Lit::Str(spec))) = args.first() else {
                    return Err(unsupported(span, "`printf` without its conversion"));
                };
                let conv = spec.chars().last().unwrap_or('?');
                let length = spec.trim_end_matches(conv).trim_start_matches(|c: char| !c.is_ascii_alphabetic());
                let ct = match (conv, length) {
                    ('d' | 'i' | 'c', "") => "int",
                    ('d' | 'i', "l") => "long",
                    ('d' | 'i', "ll") => "long long",
                    ('u' | 'x' | 'X' | 'o', "") => "unsigned",
                    ('u' | 'x' | 'X' | 'o', "l") => "unsigned long",
                    ('u' | 'x' | 'X' | 'o', "ll") => "unsigned long long",
                    ('u' | 'x' | 'X' | 'o', "z") => "size_t",
                    ('f' | 'F' | 'e' | 'E' | 'g' | 'G', "" | "l") => "double",
                    _ => return Err(unsupported(span, format!("the `printf` conversion `{spec}`"))),
                };
                format!("fprintf(STRATA_OUT, {}, ({ct})({}))", c_string(spec), arg(1)?)
            }
            Builtin::Assert => {
                format!("(({}) ? (void)0 : strata_fail(908, {at}, \"assertion failed\"))", arg(0)?)
            }
            Builtin::FillRandom => {
                let t = self.referent(cx, &args[0]);
                let len = if self.p.runtime_lengths {
                    format!("strata_rt_left({}, sizeof({}), {at})", arg(0)?, c_type(leaf(&t), span)?)
                } else {
                    self.flat_len(cx, &t)?
                };
                let name = match leaf(&t) {
                    Ty::Scalar(s) => format!("strata_fill_random_{}", scalar_suffix(*s)),
                    Ty::Tuple(ts) => self.fill_random_tuple_helper(ts, span)?,
                    _ => "strata_fill_random_i32".to_string(),
                };
                format!("{name}({}, {len}, (uint64_t)({}))", arg(0)?, arg(1)?)
            }
            Builtin::Print | Builtin::PrintInline if args.len() > 1 => {
                self.print_nested(cx, &args[0], &args[1..], b == Builtin::Print)?
            }
            Builtin::Print | Builtin::PrintInline => self.print(cx, &args[0], b == Builtin::Print)?,
            Builtin::Math(MathFn::Rsqrt, t) if !self.cuda => {
                // C has no `rsqrt`: `sim` computes `1 / sqrt(x)` likewise (CUDA's is approximate).
                if t == ScalarTy::F32 {
                    format!("(1.0f / sqrtf({}))", arg(0)?)
                } else {
                    format!("(1.0 / sqrt({}))", arg(0)?)
                }
            }
            Builtin::Math(m, t) => {
                let f = if t == ScalarTy::F32 { "f" } else { "" };
                let rest = (1..m.arity()).map(|i| Ok(format!(", {}", arg(i)?))).collect::<Result<String, E>>()?;
                let name = format!("{}{f}", m.c_name());
                let exact = m.exact();
                if exact || self.cuda {
                    format!("{name}({}{rest})", arg(0)?)
                } else {
                    // The C compiler would compute a call on constants itself, correctly rounded,
                    // where `sim` calls the C library: through `volatile`, both call the library.
                    let helper = format!("strata_libm_{name}");
                    if !self.helpers.borrow().iter().any(|(n, _)| *n == helper) {
                        let ct = scalar_c(t);
                        let (params, call) = if m.arity() >= 2 {
                            (format!("{ct} x, {ct} y"), "volatile {ct} a = x, b = y;\n    return NAME(a, b);")
                        } else {
                            (format!("{ct} x"), "volatile {ct} a = x;\n    return NAME(a);")
                        };
                        let call = call.replace("{ct}", ct).replace("NAME", &name);
                        let def = format!("static {ct} {helper}({params}) {{\n    {call}\n}}\n\n");
                        self.helpers.borrow_mut().push((helper.clone(), def));
                    }
                    format!("{helper}({}{rest})", arg(0)?)
                }
            }
            Builtin::IntMath(f, t) => format!(
                "strata_{}_{}({}{})",
                f.name(),
                scalar_suffix(t),
                arg(0)?,
                if f.arity() == 1 { String::new() } else { format!(", {}", arg(1)?) }
            ),
            Builtin::IsNan(t) => format!("strata_is_nan_{}({})", scalar_suffix(t), arg(0)?),
            Builtin::IsFinite(t) => format!("strata_is_finite_{}({})", scalar_suffix(t), arg(0)?),
            Builtin::Powi(t) => format!("strata_powi_{}({}, {})", scalar_suffix(t), arg(0)?, arg(1)?),
            Builtin::Sqrt(ScalarTy::F32) => format!("sqrtf({})", arg(0)?),
            Builtin::Sqrt(_) => format!("sqrt({})", arg(0)?),
            Builtin::Shuffle(op, t) if self.cuda => {
                let f = match op {
                    ShuffleOp::Down => "__shfl_down_sync",
                    ShuffleOp::Up => "__shfl_up_sync",
                    ShuffleOp::Xor => "__shfl_xor_sync",
                    ShuffleOp::Idx => "__shfl_sync",
                };
                // A delta of 32 or more keeps every lane's own value, as on `sim`; the hardware
                // adds the delta in 32 bits, so a run-time delta is clamped (a literal one is not).
                let a = match (op, args.get(1)) {
                    // (`shfl_up`/`shfl_xor` by 32 also keep the lane's own value: the hardware reads
                    // the low five bits, so 32 is a shift or mask of 0.)
                    (ShuffleOp::Down | ShuffleOp::Up | ShuffleOp::Xor, Some(Expr::Lit(Lit::Int(d, _)))) if *d < 32 => {
                        arg(1)?
                    }
                    (ShuffleOp::Down | ShuffleOp::Up | ShuffleOp::Xor, _) => {
                        format!("min((unsigned)({}), 32u)", arg(1)?)
                    }
                    _ => format!("(unsigned)({})", arg(1)?),
                };
                // The intrinsics have no `bool` or 8- and 16-bit overloads: exchange those as an
                // `int` (which keeps the value).
                match t {
                    ScalarTy::Bool => format!("((bool){f}(0xffffffffu, (int)({}), {a}))", arg(0)?),
                    t if t.is_small_int() => format!("(({}){f}(0xffffffffu, (int)({}), {a}))", scalar_c(t), arg(0)?),
                    _ => format!("{f}(0xffffffffu, {}, {a})", arg(0)?),
                }
            }
            Builtin::ArgCount => "strata_arg_count()".to_string(),
            Builtin::NowMs => "(strata_now() * 1e3)".to_string(),
            Builtin::ArgU64 => format!("strata_arg_u64((uint64_t)({}), {at})", arg(0)?),
            Builtin::ArgF64 => format!("strata_arg_f64((uint64_t)({}), {at})", arg(0)?),
            Builtin::ArgByte => format!("strata_arg_byte((uint64_t)({}), (uint64_t)({}), {at})", arg(0)?, arg(1)?),
            Builtin::NpyLen => format!("strata_npy_dim((uint64_t)({}), 0, {at})", arg(0)?),
            Builtin::NpyDim => format!("strata_npy_dim((uint64_t)({}), (uint64_t)({}), {at})", arg(0)?, arg(1)?),
            Builtin::LoadNpy(t) => {
                let (rank, d0, d1) = self.npy_dims(cx, args, 1)?;
                let ct = c_type(&Ty::Scalar(t), span)?;
                let kind = scalar_suffix(t).to_ascii_uppercase();
                format!("(({ct} *)strata_load_npy((uint64_t)({}), STRATA_{kind}, {rank}, {d0}, {d1}, {at}))", arg(0)?)
            }
            Builtin::SaveNpy(t) => {
                let (rank, d0, d1) = self.npy_dims(cx, args, 2)?;
                let kind = scalar_suffix(t).to_ascii_uppercase();
                format!(
                    "strata_save_npy((uint64_t)({}), STRATA_{kind}, {}, {rank}, {d0}, {d1}, {at})",
                    arg(0)?,
                    arg(1)?
                )
            }
            Builtin::Ballot if self.cuda => format!("__ballot_sync(0xffffffffu, {})", arg(0)?),
            Builtin::Shuffle(..) | Builtin::Ballot => {
                return Err(unsupported(span, "a warp collective that was not expanded into an exchange"))
            }
            // Only CUDA-C input makes these, and its references are plain C pointers on the cpu
            // device (`runtime_lengths`); `sim` is what checks that two pointers share an allocation.
            Builtin::NullPtr if self.p.runtime_lengths && !self.cuda => "NULL".to_string(),
            Builtin::PtrEq if self.p.runtime_lengths && !self.cuda => format!("({} == {})", arg(0)?, arg(1)?),
            Builtin::PtrDiff if self.p.runtime_lengths && !self.cuda => {
                format!("((int64_t)({} - {}))", arg(0)?, arg(1)?)
            }
            Builtin::NullPtr | Builtin::PtrEq | Builtin::PtrDiff => {
                return Err(unsupported(span, "null pointers and pointer comparisons (CUDA-C input)"))
            }
            // CUDA-C's `__threadfence()`: on the cpu device, the C11 fence that orders the
            // thread's memory accesses before it before those after it for every other thread.
            Builtin::OutputToStderr => format!("strata_output_to_stderr({})", arg(0)?),
            Builtin::Rand => "strata_rand()".to_string(),
            Builtin::Exit => format!("strata_exit((int32_t)({}))", arg(0)?),
            Builtin::SeedRand => format!("strata_srand((uint32_t)({}))", arg(0)?),
            Builtin::Fence if self.cuda => "__threadfence()".to_string(),
            Builtin::Fence => "__atomic_thread_fence(__ATOMIC_SEQ_CST)".to_string(),
        })
    }

    /// The rank and the two dimensions (the second 1 for one dimension) of a `load_npy` or
    /// `save_npy` call, whose dimensions follow its first `skip` arguments.
    /// The C function (made on first use) for `AtomicRmw(op, t)`: a compare-and-swap loop on the
    /// element's bits, integers computed unsigned so that they wrap as on `sim`.
    pub(super) fn atomic_helper(&self, op: AtomicOp, t: ScalarTy, span: Span) -> Result<String, E> {
        let name = format!("strata_atomic_{}_{}", format!("{op:?}").to_lowercase(), scalar_suffix(t));
        if self.helpers.borrow().iter().any(|(n, _)| *n == name) {
            return Ok(name);
        }
        let ct = scalar_c(t);
        let float = matches!(t, ScalarTy::F32 | ScalarTy::F64);
        let bits = if matches!(t, ScalarTy::I64 | ScalarTy::U64 | ScalarTy::F64) { "uint64_t" } else { "uint32_t" };
        let wrap = |o: &str| if float { format!("o {o} v") } else { format!("({ct})(({bits})o {o} ({bits})v)") };
        let new = match op {
            AtomicOp::Add => wrap("+"),
            AtomicOp::Sub => wrap("-"),
            AtomicOp::And => format!("({ct})(o & v)"),
            AtomicOp::Or => format!("({ct})(o | v)"),
            AtomicOp::Xor => format!("({ct})(o ^ v)"),
            AtomicOp::Exch => "v".to_string(),
            AtomicOp::Min => "v < o ? v : o".to_string(),
            AtomicOp::Max => "v > o ? v : o".to_string(),
            AtomicOp::Cas => "o == v ? w : o".to_string(),
        };
        if float && matches!(op, AtomicOp::And | AtomicOp::Or | AtomicOp::Xor | AtomicOp::Cas) {
            return Err(unsupported(span, format!("`{}` on floating-point numbers", op.cuda_name())));
        }
        let w = if op == AtomicOp::Cas { format!(", {ct} w") } else { String::new() };
        let def = format!(
            "static inline {ct} {name}({ct} *p, {ct} v{w}) {{\n    {bits} old_ = __atomic_load_n(({bits} *)p, __ATOMIC_RELAXED), new_;\n    {ct} o, n;\n    do {{\n        memcpy(&o, &old_, sizeof o);\n        n = {new};\n        memcpy(&new_, &n, sizeof n);\n    }} while (!__atomic_compare_exchange_n(({bits} *)p, &old_, new_, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED));\n    return o;\n}}\n\n"
        );
        self.helpers.borrow_mut().push((name.clone(), def));
        Ok(name)
    }

    /// The C function (made on first use) that fills an array of tuples of scalars (a CUDA-C
    /// struct buffer) as `sim` does: one splitmix64 output per field, field by field.
    pub(super) fn fill_random_tuple_helper(&self, ts: &[Ty], span: Span) -> Result<String, E> {
        let tuple = tuple_name(ts, span)?;
        let name = format!("strata_fill_random_{}", tuple.trim_start_matches("strata_"));
        if self.helpers.borrow().iter().any(|(n, _)| *n == name) {
            return Ok(name);
        }
        let mut fields = String::new();
        for (i, t) in ts.iter().enumerate() {
            let Ty::Scalar(st) = t else { return Err(unsupported(span, "`fill_random` of nested tuples")) };
            let value = match st {
                ScalarTy::F32 | ScalarTy::AtomicF32 => "(float)((double)(x >> 11) / 9007199254740992.0)".to_string(),
                ScalarTy::F64 | ScalarTy::AtomicF64 => "((double)(x >> 11) / 9007199254740992.0)".to_string(),
                ScalarTy::Bool => "((x & 1) == 1)".to_string(),
                other => format!("({})(x % 100)", scalar_c(*other)),
            };
            fields.push_str(&format!("        x = strata_splitmix(&s);\n        v[k].f{i} = {value};\n"));
        }
        let def = format!(
            "static inline void {name}({tuple} *v, uint64_t n, uint64_t seed) {{\n    uint64_t s = seed, x;\n    for (uint64_t k = 0; k < n; k++) {{\n{fields}    }}\n}}\n\n"
        );
        self.helpers.borrow_mut().push((name.clone(), def));
        Ok(name)
    }

    pub(super) fn npy_dims(&self, cx: &Cx, args: &[Expr], skip: usize) -> Result<(usize, String, String), E> {
        let dims = &args[skip.min(args.len())..];
        let c = |i: usize| {
            dims.get(i).map_or(Ok("1".to_string()), |d| self.expr(cx, d).map(|v| format!("(uint64_t)({v})")))
        };
        Ok((dims.len(), c(0)?, c(1)?))
    }
}
