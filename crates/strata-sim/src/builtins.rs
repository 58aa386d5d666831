//! The builtins of the IR on `sim`: memory and streams, printing, math, collectives and atomics,
//! each with the checks of the reference semantics, and the copies and `.npy` files they use.

use super::*;

impl Machine<'_, '_> {
    /// Where a print of `who` goes: the host's standard output (or error), or, for a GPU thread,
    /// the thread's own buffer of the launch, written out by block and then thread when the
    /// launch ends ([`Machine::flush_kernel_prints`]), so that the output is the same under every
    /// schedule and on the cpu device.
    pub(crate) fn printer(&mut self, who: Who) -> &mut dyn Write {
        if who.gpu {
            return self.kernel_prints.entry((who.block_lin, who.thread_lin, self.to_stderr)).or_default();
        }
        if self.to_stderr {
            &mut *self.stderr
        } else {
            &mut *self.out
        }
    }

    /// Writes what the threads of the launch printed, block by block, each block's threads in
    /// order, each thread's text in the order it printed it.
    pub(crate) fn flush_kernel_prints(&mut self) {
        for ((_, _, to_stderr), text) in std::mem::take(&mut self.kernel_prints) {
            let w: &mut dyn Write = if to_stderr { &mut *self.stderr } else { &mut *self.out };
            let _ = w.write_all(&text);
        }
    }

    pub(crate) fn builtin(&mut self, b: Builtin, args: &[Expr], span: Span, f: &mut Frame, who: Who) -> R<Value> {
        // Literal text (the pieces of a `printf` around its conversions) printed from the
        // program without copying it into a `Value` and a list of arguments first.
        if let (Builtin::Print | Builtin::PrintInline, [Expr::Lit(Lit::Str(text))]) = (b, args) {
            let end = if b == Builtin::Print { "\n" } else { "" };
            let w = self.printer(who);
            let _ = write!(w, "{text}{end}");
            return Ok(Value::Unit);
        }
        let mut vs = Vec::new();
        for a in args {
            // An argument that does not fit in memory (`CpuHeap::new([0; N])`) is this call's
            // allocation.
            vs.push(self.eval(a, f, who).map_err(|mut d| {
                if d.primary.span == Span::DUMMY && is_oom(&d) {
                    d.primary.span = span;
                }
                d
            })?);
        }
        let arg = |i: usize| vs.get(i).cloned().unwrap_or(Value::Unit);
        // An argument index, axis or dimension (a `u64` or size; never negative).
        let index = |i: usize| vs.get(i).and_then(Value::as_u64).unwrap_or(u64::MAX);
        let version = self.mem_version;
        let v = match b {
            Builtin::Rand => Value::I32(self.rand.get_or_insert_with(|| crand::CRand::new(1)).next()),
            Builtin::SeedRand => {
                self.rand = Some(crand::CRand::new(arg(0).as_u64().unwrap_or(1) as u32));
                Value::Unit
            }
            Builtin::Exit => {
                if who.gpu {
                    return Err(fail(codes::RUN_ASSERTION, "`exit` in GPU code", span, "called here"));
                }
                let _ = self.out.flush();
                self.to_stderr = false;
                // The status as C's `exit` passes it on: its low byte.
                let status = match arg(0) {
                    Value::I32(v) => v as u8,
                    v => v.as_u64().map_or(1, |v| v as u8),
                };
                self.exited = Some(status);
                self.stats.exit_span = Some(span);
                return Err(fail(codes::RUN_ASSERTION, "the program exited", span, "`exit` called here"));
            }
            Builtin::OutputToStderr => {
                let _ = self.out.flush();
                self.to_stderr = arg(0).as_bool() == Some(true);
                Value::Unit
            }
            Builtin::Fence => {
                self.fence(who);
                Value::Unit
            }
            Builtin::NullPtr => Value::Null,
            Builtin::PtrEq | Builtin::PtrDiff => {
                // Pointers as (buffer, slot); a struct element is `stride` slots.
                let at = |v: &Value| match v {
                    Value::Ref { buf, off } => Some((*buf, *off)),
                    Value::Owned { buf } => Some((*buf, 0)),
                    _ => None,
                };
                let (a, b2) = (arg(0), arg(1));
                let (pa, pb) = (at(&a), at(&b2));
                // Each must point into (or just past) a live allocation, as C requires.
                for v in [&a, &b2] {
                    if *v != Value::Null {
                        self.pointer(v, span)?;
                    }
                }
                if b == Builtin::PtrEq {
                    return Ok(Value::Bool(match (pa, pb) {
                        (Some(x), Some(y)) => x == y,
                        _ => a == Value::Null && b2 == Value::Null,
                    }));
                }
                match (pa, pb) {
                    (Some((ba, oa)), Some((bb, ob))) if ba == bb => {
                        let stride = self.buffers[ba].stride.max(1) as i64;
                        Value::I64((oa as i64 - ob as i64) / stride)
                    }
                    _ if a == Value::Null && b2 == Value::Null => Value::I64(0),
                    _ => {
                        return Err(fail(
                            codes::RUN_OUT_OF_BOUNDS,
                            "comparing or subtracting pointers that do not point into the same allocation",
                            span,
                            "this comparison",
                        ))
                    }
                }
            }
            Builtin::HeapNew => {
                let data = match vs.pop() {
                    Some(Value::Array(v)) => *v,
                    v => Arr::from_values(v).map_err(|e| oom(e, span, "a heap allocation"))?,
                };
                Value::Owned { buf: self.alloc(data, Space::Cpu, "a heap allocation".to_string()) }
            }
            Builtin::GlobalAllocCopy => {
                self.device_sync()?;
                let (src, off) = self.pointer(&arg(0), span)?;
                self.check_space(src, Space::Cpu, who, span, "copied to the GPU")?;
                let name = format!("GPU copy of {}", self.buffers[src].name);
                let stride = self.buffers[src].stride;
                let from = &self.buffers[src].data;
                // An explicit count (a row, a view): that many scalars, else the rest of the buffer.
                let end = match vs.get(1).and_then(Value::as_u64) {
                    Some(n) => (off as usize)
                        .saturating_add((n as usize).saturating_mul(stride.max(1) as usize))
                        .min(from.len()),
                    None => from.len(),
                };
                let data = from
                    .slice(off as usize, end)
                    .map_err(|e| oom(e, span, &format!("a GPU copy of `{}`", self.buffers[src].name)))?;
                let buf = self.alloc(data, Space::Global, name);
                if off % stride == 0 {
                    self.buffers[buf].stride = stride;
                }
                Value::Owned { buf }
            }
            Builtin::CopyToHost | Builtin::CopyToGpu => {
                // Default-stream work the host waits for: after all work in flight.
                self.device_sync()?;
                let (src_v, dst_v) = if b == Builtin::CopyToHost { (arg(0), arg(1)) } else { (arg(1), arg(0)) };
                let (src, so) = self.pointer(&src_v, span)?;
                let (dst, doff) = self.pointer(&dst_v, span)?;
                let (so, doff) = (so as usize, doff as usize);
                let mut n = (self.buffers[src].data.len() - so).min(self.buffers[dst].data.len() - doff);
                // An explicit count (a row, a view) copies only that part.
                if let Some(c) = vs.get(2).and_then(Value::as_u64) {
                    n = n.min((c as usize).saturating_mul(self.buffers[src].stride.max(1) as usize));
                }
                self.copy_range(src, so, dst, doff, n).map_err(|e| oom(e, span, "a copy"))?;
                Value::Unit
            }
            Builtin::CopyElems { dst_gpu, src_gpu } => {
                // Default-stream work the host waits for, as `CopyToHost`.
                self.device_sync()?;
                self.copy_elems(&arg(0), dst_gpu, &arg(1), src_gpu, index(2), span)?;
                Value::Unit
            }
            Builtin::AtomicFetchAdd | Builtin::AtomicFetchAddAt | Builtin::AtomicLoad | Builtin::AtomicStore => {
                let (buf, mut off) = self.pointer(&arg(0), span)?;
                let mut next = 1;
                if b == Builtin::AtomicFetchAddAt {
                    let i = arg(1).as_u64().unwrap_or(u64::MAX);
                    next = 2;
                    // The bound is the referenced array's own length (argument 3), not the
                    // buffer's: a row of a 2-D array ends before the buffer does. The buffer's
                    // end still bounds IR built without it.
                    let rest = (self.buffers[buf].data.len() as u64).saturating_sub(off);
                    let len = vs.get(3).and_then(Value::as_u64).map_or(rest, |n| n.min(rest));
                    off = off.saturating_add(i);
                    if i >= len {
                        return Err(fail(
                            codes::RUN_OUT_OF_BOUNDS,
                            format!("atomic update out of bounds: index {i}, length {len}"),
                            span,
                            "this atomic operation",
                        ));
                    }
                }
                // A store does not read what it overwrites (which may never have been written).
                let old =
                    if b == Builtin::AtomicStore { Value::Unit } else { self.read_raw(buf, off, who, span, true)? };
                let new = match b {
                    Builtin::AtomicLoad => old.clone(),
                    Builtin::AtomicStore => vs.get(next).cloned().unwrap_or(Value::Unit),
                    _ => binary(BinOp::Add, old.clone(), vs.get(next).cloned().unwrap_or(Value::Unit))
                        .unwrap_or(old.clone()),
                };
                self.write_raw(buf, off, new, who, span, true)?;
                if b == Builtin::AtomicStore {
                    Value::Unit
                } else {
                    old
                }
            }
            Builtin::AtomicRmw(op, t) => {
                let (buf, off) = self.pointer(&arg(0), span)?;
                let old = self.read_raw(buf, off, who, span, true)?.cast(t);
                let new = atomics::rmw_value(op, &old, &arg(1).cast(t), &arg(2).cast(t)).ok_or_else(|| {
                    fail(codes::UNSUPPORTED, format!("`{}` on this value", op.cuda_name()), span, "this atomic")
                })?;
                self.write_raw(buf, off, new, who, span, true)?;
                old
            }
            Builtin::AtomicAt(op, t) => self.atomic_at(op, t, &vs, span, who)?,
            Builtin::FillRandom => {
                let (buf, off) = self.pointer(&arg(0), span)?;
                let mut state = arg(1).as_u64().unwrap_or(0);
                self.buffers[buf].data.fill_random(off as usize, &mut state);
                self.mem_version += 1;
                Value::Unit
            }
            Builtin::Print | Builtin::PrintInline if vs.len() > 1 => {
                // A (sub-)array with its dimensions: nested lists, outermost first.
                let dims: Vec<u64> = vs[1..].iter().map(|d| d.as_u64().unwrap_or(0)).collect();
                let total: u64 = dims.iter().product();
                let (buf, off) = match arg(0) {
                    Value::Ref { buf, off } => (buf, off),
                    Value::Owned { buf } => (buf, 0),
                    _ => return Err(fail(codes::UNSUPPORTED, "printing this value", span, "not an array")),
                };
                self.pointer(&arg(0), span)?;
                if !who.gpu {
                    self.check_space(buf, Space::Cpu, who, span, "printed")?;
                    let end = off.saturating_add(total).min(self.buffers[buf].data.len() as u64);
                    self.stream_host_access(buf, off, end, false, span)?;
                }
                let data = &self.buffers[buf].data;
                let end = off.saturating_add(total).min(data.len() as u64);
                // A host print goes straight out; a GPU thread's joins its buffer.
                if who.gpu {
                    let mut text = Vec::new();
                    let _ = write_nested(&mut text, data, off as usize, (end as usize).max(off as usize), &dims);
                    let _ = self.printer(who).write_all(&text);
                } else {
                    let w: &mut dyn Write = if self.to_stderr { &mut *self.stderr } else { &mut *self.out };
                    let _ = write_nested(w, data, off as usize, (end as usize).max(off as usize), &dims);
                }
                if b == Builtin::Print {
                    let _ = writeln!(self.printer(who));
                }
                Value::Unit
            }
            Builtin::Print | Builtin::PrintInline | Builtin::PrintFormatted
                if vs.iter().any(|v| matches!(v, Value::Uninit)) =>
            {
                return Err(uninit_variable());
            }
            Builtin::Print | Builtin::PrintInline => {
                let end = if b == Builtin::Print { "\n" } else { "" };
                // Numbers, text and arrays of numbers print as they are (without a copy).
                let plain = match vs.first() {
                    Some(Value::Array(a)) => a.scalar().is_some(),
                    Some(v) => v.scalar().is_some() || matches!(v, Value::Nat(_) | Value::Str(_) | Value::Unit),
                    None => false,
                };
                if plain {
                    let w = self.printer(who);
                    let _ = write!(w, "{}{end}", vs[0]);
                } else {
                    let ty = args.first().and_then(|a| self.expr_ty(a, f));
                    let v = self.deep(&arg(0), ty.as_ref(), f, who, span)?;
                    let w = self.printer(who);
                    let _ = write!(w, "{v}{end}");
                }
                Value::Unit
            }
            Builtin::PrintFormatted => {
                // Borrowed, not copied: a `printf` in a host loop is one of these per iteration.
                let spec = match vs.first() {
                    Some(Value::Str(s)) => s.as_str(),
                    _ => "",
                };
                let text = cfmt::format(spec, vs.get(1).unwrap_or(&Value::Unit)).ok_or_else(|| {
                    fail(codes::UNSUPPORTED, format!("printing this value with `{spec}`"), span, "this print")
                })?;
                let w = self.printer(who);
                let _ = w.write_all(&text);
                Value::Unit
            }
            Builtin::Math(m, t) => {
                let x = |i: usize| arg(i).cast(t);
                match (x(0), x(1), x(2)) {
                    (Value::F32(a), b, c) => {
                        let f = |v: Value| if let Value::F32(v) = v { v } else { 0.0 };
                        Value::F32(libm::f32(m, a, f(b), f(c)))
                    }
                    (Value::F64(a), b, c) => {
                        let f = |v: Value| if let Value::F64(v) = v { v } else { 0.0 };
                        Value::F64(libm::f64(m, a, f(b), f(c)))
                    }
                    _ => return Err(fail(codes::UNSUPPORTED, "a math function of a non-float", span, "not a float")),
                }
            }
            Builtin::IntMath(f, t)
                if !matches!(f, ir::IntFn::Min | ir::IntFn::Max | ir::IntFn::Abs) || t.is_small_int() =>
            {
                // A `nat` argument takes the parameter's type, as at every call.
                let x = arg(0).cast(t);
                let y = if f.arity() == 2 { arg(1).cast(t) } else { Value::Unit };
                crate::intfns::int_fn(f, &x, &y)
                    .ok_or_else(|| fail(codes::UNSUPPORTED, "this integer function", span, "these operands"))?
            }
            Builtin::IntMath(f, _) => {
                use ir::IntFn;
                match (f, arg(0), arg(1)) {
                    (IntFn::Abs, Value::I32(a), _) => Value::I32(a.wrapping_abs()),
                    (IntFn::Abs, Value::I64(a), _) => Value::I64(a.wrapping_abs()),
                    (IntFn::Min, Value::I32(a), Value::I32(b)) => Value::I32(a.min(b)),
                    (IntFn::Min, Value::I64(a), Value::I64(b)) => Value::I64(a.min(b)),
                    (IntFn::Min, Value::U32(a), Value::U32(b)) => Value::U32(a.min(b)),
                    (IntFn::Min, Value::U64(a), Value::U64(b)) => Value::U64(a.min(b)),
                    (IntFn::Max, Value::I32(a), Value::I32(b)) => Value::I32(a.max(b)),
                    (IntFn::Max, Value::I64(a), Value::I64(b)) => Value::I64(a.max(b)),
                    (IntFn::Max, Value::U32(a), Value::U32(b)) => Value::U32(a.max(b)),
                    (IntFn::Max, Value::U64(a), Value::U64(b)) => Value::U64(a.max(b)),
                    _ => return Err(fail(codes::UNSUPPORTED, "this integer function", span, "these operands")),
                }
            }
            Builtin::Powi(_) => {
                let n = match arg(1) {
                    Value::I32(n) => n,
                    v => match v.cast(ir::ScalarTy::I32) {
                        Value::I32(n) => n,
                        _ => 0,
                    },
                };
                match arg(0) {
                    Value::F32(x) => Value::F32(crate::intfns::powi_f32(x, n)),
                    Value::F64(x) => Value::F64(crate::intfns::powi_f64(x, n)),
                    _ => return Err(fail(codes::UNSUPPORTED, "`powi` of a non-float", span, "not a float")),
                }
            }
            Builtin::IsNan(_) | Builtin::IsFinite(_) => {
                let x = match arg(0) {
                    Value::F32(x) => f64::from(x),
                    Value::F64(x) => x,
                    _ => return Err(fail(codes::UNSUPPORTED, "a float test of a non-float", span, "not a float")),
                };
                Value::Bool(if matches!(b, Builtin::IsNan(_)) { x.is_nan() } else { x.is_finite() })
            }
            Builtin::Sqrt(_) => match arg(0) {
                Value::F32(x) => Value::F32(x.sqrt()),
                Value::F64(x) => Value::F64(x.sqrt()),
                _ => return Err(fail(codes::UNSUPPORTED, "a square root of a non-float", span, "not a float")),
            },
            Builtin::Shuffle(..) | Builtin::Ballot => {
                return Err(fail(codes::UNSUPPORTED, "a warp collective outside a kernel", span, "not expanded"));
            }
            Builtin::ArgCount => Value::U64(self.opts.args.len() as u64),
            Builtin::NowMs => Value::F64(self.started.elapsed().as_secs_f64() * 1e3),
            Builtin::ArgU64 => Value::U64(self.npy(span, |a| Ok(npy::arg_u64(a, index(0))?))?),
            Builtin::ArgF64 => Value::F64(self.npy(span, |a| Ok(npy::arg_f64(a, index(0))?))?),
            Builtin::ArgByte => {
                let (i, argc) = (index(0), self.opts.args.len() as u64 + 1);
                if i == 0 || i >= argc {
                    return Err(Box::new(
                        Diagnostic::error(
                            codes::RUN_PROGRAM_INPUT,
                            if i == 0 {
                                "`argv[0]`, the program's name, is known only at a constant index".to_string()
                            } else {
                                format!("`argv[{}]` is past the program's arguments (`argc` is {argc})", i as i64)
                            },
                            span,
                            "this argument is missing",
                        )
                        .with_note("the program's arguments follow `--`: `strata run prog.cu -- A B`"),
                    ));
                }
                let k = usize::try_from(index(1)).ok();
                let byte = self.npy(span, |a| Ok(k.and_then(|k| npy::arg(a, i - 1).ok()?.get(k).copied())))?;
                Value::I32(byte.map_or(0, |b| i32::from(b as i8)))
            }
            Builtin::NpyLen => Value::U64(self.npy(span, |a| npy::dim(a, index(0), 0))?),
            Builtin::NpyDim => Value::U64(self.npy(span, |a| npy::dim(a, index(0), index(1)))?),
            Builtin::LoadNpy(elem) => {
                let dims: Vec<u64> = (1..vs.len()).map(index).collect();
                let data = self.npy(span, |a| npy::load(a, index(0), elem, &dims))?;
                let file = self.npy(span, |a| Ok(npy::shown(npy::arg(a, index(0))?)))?;
                Value::Owned { buf: self.alloc(data, Space::Cpu, format!("the array read from `{file}`")) }
            }
            Builtin::SaveNpy(elem) => {
                let dims: Vec<u64> = (2..vs.len()).map(index).collect();
                let (buf, off) = self.pointer(&arg(1), span)?;
                self.check_space(buf, Space::Cpu, who, span, "written to a file")?;
                self.stream_host_access(buf, off, self.buffers[buf].data.len() as u64, false, span)?;
                let args = &self.opts.args;
                let data = &self.buffers[buf].data;
                npy::save(args, index(0), elem, &dims, data, off as usize).map_err(|e| npy_fail(e, span))?;
                Value::Unit
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
            | Builtin::CopyAsync => return self.stream_builtin(b, &vs, span),
            Builtin::Assert => {
                if arg(0).as_bool() != Some(true) {
                    return Err(fail(codes::RUN_ASSERTION, "assertion failed", span, "this condition is false"));
                }
                Value::Unit
            }
        };
        // A thread that waits on an atomic comes back to it with nothing changed ([`crate::spin`]).
        if who.gpu
            && self.mem_version == version
            && matches!(
                b,
                Builtin::AtomicFetchAdd
                    | Builtin::AtomicFetchAddAt
                    | Builtin::AtomicLoad
                    | Builtin::AtomicRmw(..)
                    | Builtin::AtomicAt(..)
            )
        {
            self.spin_check(args.as_ptr() as usize, span, f, who)?;
        }
        Ok(v)
    }

    /// [`Builtin::CopyElems`]: `n` elements from `src` to `dst`, with the checks (and the errors,
    /// in the same order) of the element-by-element copy through a host buffer it replaces: a GPU
    /// side is a pointer that must hold `n` elements (source first), a host side `n` accesses by
    /// host code, the source's element `k` read before the destination's is written.
    pub(crate) fn copy_elems(
        &mut self,
        dst: &Value,
        dst_gpu: bool,
        src: &Value,
        src_gpu: bool,
        n: u64,
        span: Span,
    ) -> R<()> {
        // A buffer of structs holds each element's fields one after another (`stride` values):
        // `n` elements are `n * stride` values.
        let stride = match src {
            Value::Ref { buf, .. } | Value::Owned { buf } => self.buffers.get(*buf).map_or(1, |b| b.stride.max(1)),
            _ => 1,
        };
        let n = n.saturating_mul(stride);
        for (v, gpu) in [(src, src_gpu), (dst, dst_gpu)] {
            if gpu {
                let (buf, off) = self.pointer(v, span)?;
                if off.saturating_add(n) > self.buffers[buf].data.len() as u64 {
                    return Err(fail(
                        codes::RUN_OUT_OF_BOUNDS,
                        "a pointer past the end of its buffer",
                        span,
                        "this use",
                    ));
                }
            }
        }
        let (s, so) = self.pointer_parts(src, span)?;
        let (d, doff) = self.pointer_parts(dst, span)?;
        if n == 0 {
            return Ok(());
        }
        // The first element at which each host side fails its checks, with the error.
        let host_side = |m: &Self, buf: usize, off: u64, reads: bool| -> Option<(u64, Fail)> {
            if let Err(e) = m.access_checks(buf, off, HOST, span) {
                return Some((0, e));
            }
            let data = &m.buffers[buf].data;
            // Elements `off..end` are in bounds.
            let end = off.saturating_add(n).min(data.len() as u64).max(off);
            if reads {
                if let Some(i) = data.first_uninit(off as usize, end as usize) {
                    let msg = format!("read of uninitialised memory: `{}[{i}]`", m.buffers[buf].name);
                    return Some((
                        i as u64 - off,
                        fail(codes::RUN_UNINIT, msg, span, "never written before this read"),
                    ));
                }
            }
            if off.saturating_add(n) > end {
                return m.access_checks(buf, end, HOST, span).err().map(|e| (end - off, e));
            }
            None
        };
        let src_fails = if src_gpu { None } else { host_side(self, s, so, true) };
        let dst_fails = if dst_gpu { None } else { host_side(self, d, doff, false) };
        match (src_fails, dst_fails) {
            (Some((ks, e)), Some((kd, _))) if ks <= kd => return Err(e),
            (_, Some((_, e))) | (Some((_, e)), None) => return Err(e),
            (None, None) => {}
        }
        self.copy_range(s, so as usize, d, doff as usize, n as usize).map_err(|e| oom(e, span, "a copy"))
    }

    /// The buffer and offset of a pointer, without checks.
    pub(crate) fn pointer_parts(&self, v: &Value, span: Span) -> R<(usize, u64)> {
        match v {
            Value::Ref { buf, off } => Ok((*buf, *off)),
            Value::Owned { buf } => Ok((*buf, 0)),
            _ => Err(fail(codes::UNSUPPORTED, "expected a pointer", span, "not a pointer")),
        }
    }

    /// Runs `f` on the program's arguments; its error becomes E0912 (or E0903) at `span`.
    pub(crate) fn npy<T>(&self, span: Span, f: impl FnOnce(&[std::ffi::OsString]) -> Result<T, npy::NpyError>) -> R<T> {
        f(&self.opts.args).map_err(|e| npy_fail(e, span))
    }
}

impl Machine<'_, '_> {
    /// A device-wide fence of GPU thread `who`: its accesses before are released by its next
    /// atomic operation (`race.rs`).
    pub(crate) fn fence(&mut self, who: Who) {
        if who.gpu {
            if let Some(l) = self.launch.as_mut() {
                *l.fences.entry(who.thread_lin).or_insert(0) += 1;
            }
        }
    }
}
