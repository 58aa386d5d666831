//! Places in memory: locals moved into buffers when borrowed, flattening of values into buffer
//! slots and back, and loads and stores through a place.

use super::*;

impl Machine<'_, '_> {
    /// A reference to (a part of) local `root`: the local moves into a buffer of its own (in
    /// `cpu.mem` for host code, else `gpu.local`), where it lives from now on.
    pub(crate) fn box_local(
        &mut self,
        root: usize,
        path: &[LocalStep],
        span: Span,
        f: &mut Frame,
        who: Who,
    ) -> R<Value> {
        let prog = self.program;
        let mut t = prog.functions[f.func].locals.get(root).map_or(ir::Ty::Nat, |l| l.ty.clone());
        let name = self.program.functions[f.func].locals.get(root).map_or(String::new(), |l| l.name.clone());
        let mut data = Arr::new();
        Self::flatten(std::mem::replace(&mut f.locals[root], Value::Uninit), &t, &mut data)
            .map_err(|e| oom(e, span, &format!("`{name}`, moved to memory because of a reference to it")))?;
        let mut off = 0;
        for step in path {
            match (step, &t) {
                (LocalStep::Elem(o), arr) => {
                    t = ir::leaf(arr).clone();
                    off += o * self.slots(&t, f, who)?;
                }
                (LocalStep::Field(i), ir::Ty::Tuple(ts)) => {
                    for x in ts.iter().take(*i) {
                        off += self.slots(x, f, who)?;
                    }
                    t = ts.get(*i).cloned().unwrap_or(ir::Ty::Nat);
                }
                _ => return Err(fail(codes::UNSUPPORTED, "a reference into this variable", span, "")),
            }
        }
        let space = if who.gpu { Space::Local } else { Space::Cpu };
        let buf = self.alloc(data, space, name);
        self.buffers[buf].named = true;
        f.locals[root] = Value::Boxed { buf };
        Ok(Value::Ref { buf, off })
    }

    /// The number of scalars of a value of type `t` (1 for anything but an array).
    pub(crate) fn flat_len(&mut self, t: &ir::Ty, f: &mut Frame, who: Who) -> R<u64> {
        Ok(match t {
            ir::Ty::Array { elem, len } => self.iexpr(len, f, who)?.saturating_mul(self.flat_len(elem, f, who)?),
            _ => 1,
        })
    }

    pub(crate) fn alloc(&mut self, data: Arr, space: Space, name: String) -> usize {
        self.buffers.push(Buffer { data, space, name, named: false, freed: false, stride: 1 });
        self.mem_version += 1;
        self.buffers.len() - 1
    }

    // --------------------------------------------------------------------------------------------
    // Memory

    /// Errors raised while evaluating the indices of `p` point at `p` and name the thread.
    pub(crate) fn locate(&mut self, p: &Place, f: &mut Frame, who: Who) -> R<Loc> {
        self.locate_inner(p, f, who).map_err(|mut d| {
            if d.primary.span == Span::DUMMY {
                d.primary.span = p.span;
                if who.gpu {
                    d.primary.message = format!("in thread {} of block {}", coords(who.thread), coords(who.block));
                } else {
                    d.primary.message = "in this access".to_string();
                }
            }
            d
        })
    }

    pub(crate) fn locate_inner(&mut self, p: &Place, f: &mut Frame, who: Who) -> R<Loc> {
        for (i, bound) in &p.checks {
            // A negative run-time index is the same promise-free error as one past the end.
            let i = self.iexpr(i, f, who).map_err(|mut d| {
                if d.code == codes::RUN_OUT_OF_BOUNDS && d.primary.span == Span::DUMMY {
                    d.primary.span = p.span;
                    d.primary.message = crate::RUN_TIME_INDEX_LABEL.to_string();
                }
                d
            })?;
            let bound = self.iexpr(bound, f, who)?;
            if i >= bound {
                return Err(fail(
                    codes::RUN_OUT_OF_BOUNDS,
                    format!("index out of bounds: the length is {bound} but the index is {i}"),
                    p.span,
                    crate::RUN_TIME_INDEX_LABEL,
                ));
            }
        }
        // Memory holds values flat: an array's elements, a tuple's fields one after another.
        let prog = self.program;
        let mut t: &ir::Ty = prog.functions[f.func].locals.get(p.root).map_or(&NAT, |l| &l.ty);
        let mut loc = match f.locals.get(p.root) {
            Some(Value::Boxed { buf }) => Loc::Buf(*buf, 0),
            _ => Loc::Local(p.root, Vec::new()),
        };
        // Whether the step before is a dereference: an index right after one may be negative.
        let mut after_deref = false;
        for step in &p.path {
            let deref_before = std::mem::replace(&mut after_deref, matches!(step, PathStep::Deref));
            let next: &ir::Ty = match (step, t) {
                (PathStep::Deref, ir::Ty::Ref(x, _) | ir::Ty::Owned(x, _)) => x,
                (PathStep::Field(i), ir::Ty::Tuple(ts)) => ts.get(*i as usize).unwrap_or(&NAT),
                (PathStep::Elem(_), arr) => ir::leaf(arr),
                (_, other) => other,
            };
            loc = match (loc, step) {
                // A pointer stored in memory (in a local that was moved into a buffer).
                (Loc::Buf(buf, off), PathStep::Deref) => match self.read_raw(buf, off, who, p.span, false)? {
                    Value::Ref { buf, off } => Loc::Buf(buf, off),
                    Value::Owned { buf } => Loc::Buf(buf, 0),
                    Value::Null => return Err(null_deref(p.span)),
                    _ => {
                        return Err(fail(codes::UNSUPPORTED, "dereferencing a value that is not a pointer", p.span, ""))
                    }
                },
                // A pointer variable (the most frequent): read in place, not copied out first.
                (Loc::Local(root, path), PathStep::Deref)
                    if path.is_empty()
                        && matches!(f.locals.get(root), Some(Value::Ref { .. } | Value::Owned { .. })) =>
                {
                    match f.locals.get(root) {
                        Some(Value::Ref { buf, off }) => Loc::Buf(*buf, *off),
                        Some(Value::Owned { buf }) => Loc::Buf(*buf, 0),
                        _ => Loc::Local(root, path),
                    }
                }
                (Loc::Local(root, path), PathStep::Deref) => match self
                    .local_value(f, root, &path)
                    .unwrap_or(Value::Uninit)
                {
                    Value::Ref { buf, off } => Loc::Buf(buf, off),
                    Value::Owned { buf } => Loc::Buf(buf, 0),
                    Value::Null => return Err(null_deref(p.span)),
                    _ => {
                        return Err(fail(codes::UNSUPPORTED, "dereferencing a value that is not a pointer", p.span, ""))
                    }
                },
                (Loc::Local(root, mut path), PathStep::Field(i)) => {
                    path.push(LocalStep::Field(*i as usize));
                    Loc::Local(root, path)
                }
                (Loc::Local(root, mut path), PathStep::Elem(e)) => {
                    let o = self.iexpr(e, f, who)?;
                    path.push(LocalStep::Elem(o));
                    Loc::Local(root, path)
                }
                // C's `p[-1]` and `p - 1` where `p` points into the middle of its buffer: the
                // index counts from where the reference points, and only the element reached
                // must not lie before the buffer's start.
                (Loc::Buf(buf, off), PathStep::Elem(IExpr::Value(v))) if deref_before => {
                    let i = self.sc_index_signed(v, f, who)?;
                    let size = self.slots(next, f, who)?;
                    match u64::try_from(i128::from(off) + i * i128::from(size)) {
                        Ok(at) => Loc::Buf(buf, at),
                        Err(_) => {
                            return Err(fail(
                                codes::RUN_OUT_OF_BOUNDS,
                                format!("index `{i}` is negative"),
                                Span::DUMMY,
                                "",
                            ))
                        }
                    }
                }
                (Loc::Buf(buf, off), PathStep::Elem(e)) => {
                    let o = self.iexpr(e, f, who)?;
                    let size = self.slots(next, f, who)?;
                    Loc::Buf(buf, off + o * size)
                }
                (Loc::Buf(buf, off), PathStep::Field(i)) => {
                    let ir::Ty::Tuple(ts) = t else {
                        return Err(fail(codes::UNSUPPORTED, "a field of a non-tuple", p.span, ""));
                    };
                    let mut o = 0;
                    for x in ts.iter().take(*i as usize) {
                        o += self.slots(x, f, who)?;
                    }
                    Loc::Buf(buf, off + o)
                }
            };
            t = next;
        }
        Ok(loc)
    }

    /// How many slots of a buffer a value of type `t` takes (its scalars and pointers).
    pub(crate) fn slots(&mut self, t: &ir::Ty, f: &mut Frame, who: Who) -> R<u64> {
        Ok(match t {
            ir::Ty::Array { elem, len } => self.iexpr(len, f, who)?.saturating_mul(self.slots(elem, f, who)?),
            ir::Ty::Tuple(ts) => {
                let mut n = 0u64;
                for x in ts {
                    n = n.saturating_add(self.slots(x, f, who)?);
                }
                n
            }
            _ => 1,
        })
    }

    /// A value of type `t` as the slots memory holds it, appended to `out`.
    pub(crate) fn flatten(v: Value, t: &ir::Ty, out: &mut Arr) -> Result<(), Oom> {
        match (v, t) {
            (Value::Array(vs), ir::Ty::Array { .. }) if vs.scalar().is_some() => {
                if out.is_empty() {
                    *out = *vs; // flat already
                    Ok(())
                } else {
                    out.extend(&vs, 0, vs.len())
                }
            }
            (Value::Array(vs), ir::Ty::Array { .. }) => vs.iter().try_for_each(|x| Self::flatten(x, ir::leaf(t), out)),
            (Value::Tuple(vs), ir::Ty::Tuple(ts)) => {
                vs.into_iter().zip(ts).try_for_each(|(x, t)| Self::flatten(x, t, out))
            }
            (v, _) => out.push(v),
        }
    }

    /// The value of type `t` in `slots` (as [`Machine::flatten`] wrote it).
    pub(crate) fn unflatten(
        &mut self,
        slots: &mut impl Iterator<Item = Value>,
        t: &ir::Ty,
        f: &mut Frame,
        who: Who,
    ) -> R<Value> {
        Ok(match t {
            ir::Ty::Array { .. } => {
                let leaf = ir::leaf(t);
                let n = self.slots(t, f, who)? / self.slots(leaf, f, who)?.max(1);
                let mut vs = Arr::with_capacity(n);
                for _ in 0..n {
                    let v = self.unflatten(slots, leaf, f, who)?;
                    vs.push(v).map_err(|e| oom(e, Span::DUMMY, "an array"))?;
                }
                Value::Array(Box::new(vs))
            }
            ir::Ty::Tuple(ts) => {
                let mut vs = Vec::new();
                for x in ts {
                    vs.push(self.unflatten(slots, x, f, who)?);
                }
                Value::Tuple(vs)
            }
            _ => slots.next().unwrap_or(Value::Uninit),
        })
    }

    /// The value at `path` in local `root` (a copy of a whole array is charged).
    pub(crate) fn local_value(&self, f: &Frame, root: usize, path: &[LocalStep]) -> Result<Value, Oom> {
        fn at(v: &Value, path: &[LocalStep]) -> Result<Value, Oom> {
            match (v, path.split_first()) {
                (v, None) => v.try_clone(),
                (Value::Tuple(vs), Some((LocalStep::Field(i), rest))) => {
                    vs.get(*i).map_or(Ok(Value::Uninit), |x| at(x, rest))
                }
                (Value::Array(vs), Some((LocalStep::Elem(i), []))) => Ok(vs.get(*i as usize)),
                (Value::Array(vs), Some((LocalStep::Elem(i), rest))) => at(&vs.get(*i as usize), rest),
                _ => Ok(Value::Uninit),
            }
        }
        at(&f.locals[root], path)
    }

    pub(crate) fn load(&mut self, p: &Place, f: &mut Frame, who: Who) -> R<Value> {
        // A variable that lives in the frame (the most frequent load): no place to resolve.
        if p.path.is_empty() && p.checks.is_empty() {
            // Scalars rebuilt here rather than by the out-of-line `try_clone`.
            match f.locals.get(p.root) {
                Some(Value::U32(x)) => return Ok(Value::U32(*x)),
                Some(Value::I32(x)) => return Ok(Value::I32(*x)),
                Some(Value::U64(x)) => return Ok(Value::U64(*x)),
                Some(Value::I64(x)) => return Ok(Value::I64(*x)),
                Some(Value::Nat(x)) => return Ok(Value::Nat(*x)),
                Some(Value::Boxed { .. }) | None => {}
                Some(v) => return v.try_clone().map_err(|e| oom(e, p.span, "a copy of this value")),
            }
        }
        self.load_place(p, f, who)
    }

    #[inline(never)]
    pub(crate) fn load_place(&mut self, p: &Place, f: &mut Frame, who: Who) -> R<Value> {
        match self.locate(p, f, who)? {
            // A whole array or tuple in memory (behind a pointer, or a local moved into a buffer).
            Loc::Buf(buf, off)
                if matches!(place_ty(&self.program.functions[f.func], p), ir::Ty::Array { .. } | ir::Ty::Tuple(_)) =>
            {
                let prog = self.program;
                let t = place_ty(&prog.functions[f.func], p);
                let n = self.slots(t, f, who)?;
                let mut vs = Arr::with_capacity(n);
                for k in 0..n {
                    let v = self.read_raw(buf, off + k, who, p.span, false)?;
                    vs.push(v).map_err(|e| oom(e, p.span, "a copy of this value"))?;
                }
                if matches!(t, ir::Ty::Array { .. })
                    && matches!(ir::leaf(t), ir::Ty::Scalar(_))
                    && vs.scalar().is_some()
                {
                    return Ok(Value::Array(Box::new(vs))); // an array of scalars: flat already
                }
                let mut slots = vs.iter();
                self.unflatten(&mut slots, t, f, who)
            }
            Loc::Buf(buf, off) => self.read_raw(buf, off, who, p.span, false),
            Loc::Local(root, path) => {
                let v = self.local_value(f, root, &path).map_err(|e| oom(e, p.span, "a copy of this value"))?;
                if v == Value::Uninit && !path.is_empty() {
                    return Err(fail(codes::RUN_UNINIT, "read of uninitialised memory", p.span, "never written"));
                }
                Ok(v)
            }
        }
    }

    pub(crate) fn store(&mut self, p: &Place, v: Value, f: &mut Frame, who: Who) -> R<()> {
        match self.locate(p, f, who)? {
            Loc::Buf(buf, off) => {
                match &v {
                    Value::Array(a) if a.scalar().is_some() => {
                        // An array of scalars: flat already.
                        for k in 0..a.len() {
                            self.write_raw(buf, off + k as u64, a.get(k), who, p.span, false)?;
                        }
                        return Ok(());
                    }
                    Value::Array(_) | Value::Tuple(_) => {}
                    _ => return self.write_raw(buf, off, v, who, p.span, false),
                }
                let mut slots = Arr::new();
                let prog = self.program;
                Self::flatten(v, place_ty(&prog.functions[f.func], p), &mut slots)
                    .map_err(|e| oom(e, p.span, "a copy of this value"))?;
                for k in 0..slots.len() {
                    self.write_raw(buf, off + k as u64, slots.get(k), who, p.span, false)?;
                }
                Ok(())
            }
            Loc::Local(root, path) => {
                /// Stores `v` at `path` in `slot`; `Ok(false)`: the path leaves the value.
                fn put(slot: &mut Value, path: &[LocalStep], v: Value) -> Result<bool, Oom> {
                    match (slot, path.split_first()) {
                        (slot, None) => {
                            *slot = convert_like(slot, v);
                            Ok(true)
                        }
                        (Value::Tuple(vs), Some((LocalStep::Field(i), rest))) if *i < vs.len() => {
                            put(&mut vs[*i], rest, v)
                        }
                        (Value::Array(vs), Some((LocalStep::Elem(i), []))) if (*i as usize) < vs.len() => {
                            vs.set(*i as usize, v).map(|()| true)
                        }
                        (Value::Array(vs), Some((LocalStep::Elem(i), rest))) => match vs.get_mut_value(*i as usize) {
                            Some(x) => put(x, rest, v),
                            None => Ok(false),
                        },
                        _ => Ok(false),
                    }
                }
                if put(&mut f.locals[root], &path, v).map_err(|e| oom(e, p.span, "a variable"))? {
                    Ok(())
                } else {
                    Err(fail(codes::RUN_OUT_OF_BOUNDS, "store out of bounds of a local array", p.span, "this store"))
                }
            }
        }
    }
}
