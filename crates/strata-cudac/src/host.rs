//! Calls: CUDA runtime API on the host (`cudaMalloc`, `cudaMemcpy`, launches, …), device
//! builtins (`__syncthreads`) and `printf`.

use super::*;

impl Lx {
    /// `bytes / sizeof(t)` as a run-time element count.
    pub(crate) fn elements(&mut self, bytes: Node, t: Elem, src: &Src) -> R<IExpr> {
        let (e, et) = self.rvalue(bytes, src)?;
        let e = self.convert(e, et, CTy::S(ScalarTy::U64), bytes, src)?;
        Ok(IExpr::Value(Box::new(Expr::Binary(
            BinOp::Div,
            Box::new(e),
            Box::new(int(self.elem_size(t).into(), ScalarTy::U64)),
        ))))
    }

    pub(crate) fn args<'t>(&self, call: Node<'t>, src: &Src) -> R<Vec<Node<'t>>> {
        let a = self.child(call, "arguments", src)?;
        let mut c = a.walk();
        Ok(a.named_children(&mut c).filter(|x| x.kind() != "comment").collect())
    }

    pub(crate) fn call_stmt(&mut self, n: Node, src: &Src, out: &mut Vec<Stmt>) -> R<()> {
        let fnode = self.child(n, "function", src)?;
        if fnode.kind() == "field_expression" {
            return self.method_stmt(n, fnode, src, out);
        }
        let span = self.span(n, src);
        let args = self.args(n, src)?;
        let name = self.callee_name(fnode, &args, src)?;
        let mut c = n.walk();
        let launch = n.children(&mut c).find(|x| x.kind() == "kernel_call_syntax");
        if let Some(cfg) = launch {
            return self.launch(n, cfg, &name, &args, src, out);
        }
        if let Some(m) = self.fn_macros.get(&name).cloned() {
            return self.macro_stmt(n, &m, src, out);
        }
        let host_only = |lx: &Self| -> R<()> {
            if lx.f.gpu {
                Err(lx.unsupported(n, src, format!("`{name}` in GPU code")))
            } else {
                Ok(())
            }
        };
        let want = |lx: &Self, k: usize| -> R<()> {
            if args.len() == k {
                Ok(())
            } else {
                Err(lx.unsupported(n, src, format!("`{name}` with {} arguments (it takes {k})", args.len())))
            }
        };
        match name.as_str() {
            "__syncthreads" => {
                if self.f.role != Role::Kernel {
                    let what = if self.f.gpu {
                        "`__syncthreads` in a `__device__` function"
                    } else {
                        "`__syncthreads` outside a kernel"
                    };
                    return Err(self.unsupported(n, src, what));
                }
                want(self, 0)?;
                out.push(Stmt::Sync { warp: false, span });
            }
            "__syncwarp" => {
                self.kernel_only(n, &name, src)?;
                if args.len() > 1 {
                    return Err(self.unsupported(n, src, "`__syncwarp` with more than one argument"));
                }
                if let Some(m) = args.first() {
                    self.full_mask(*m, src)?;
                }
                out.push(Stmt::Sync { warp: true, span });
            }
            "__threadfence" | "__threadfence_block" | "__threadfence_system" => {
                // `sim` runs threads one at a time and every write is at once visible to all; a
                // device-wide fence is kept for the race check, where a fence followed by an
                // atomic publishes the thread's earlier writes to the block whose atomic on the
                // same element comes later (`Builtin::Fence`). A block-wide fence orders nothing
                // between blocks.
                if !self.f.gpu {
                    return Err(self.unsupported(n, src, format!("`{name}` in host code")));
                }
                want(self, 0)?;
                if name != "__threadfence_block" {
                    out.push(Stmt::Eval(Expr::Builtin(Builtin::Fence, Vec::new(), span)));
                }
            }
            "printf" => self.printf(n, &args, src, out)?,
            // `fprintf(stdout, …)` is `printf`; `fprintf(stderr, …)` prints to the standard
            // error; `puts(s)` is `printf("%s\n", s)`.
            "fprintf" if !self.sigs.contains_key(&name) => {
                host_only(self)?;
                let stream = args.first().map(|a| self.text(*a, src));
                let to_stderr = match stream {
                    Some("stdout") => false,
                    Some("stderr") => true,
                    _ => {
                        let at = args.first().copied().unwrap_or(n);
                        return Err(self.unsupported(at, src, "`fprintf` to a stream other than `stdout` or `stderr`"));
                    }
                };
                let switch =
                    |on: bool| Stmt::Eval(Expr::Builtin(Builtin::OutputToStderr, vec![Expr::Lit(Lit::Bool(on))], span));
                if to_stderr {
                    out.push(switch(true));
                }
                let mut body = Vec::new();
                self.printf(n, &args[1..], src, &mut body)?;
                self.flush(out);
                out.extend(body);
                if to_stderr {
                    out.push(switch(false));
                }
            }
            "puts" if !self.sigs.contains_key(&name) => {
                host_only(self)?;
                want(self, 1)?;
                let s = self.string_expr(args[0], src)?;
                self.flush(out);
                let stmts = self.print_string(s, "", args[0], span, src)?;
                out.extend(stmts);
                out.push(Stmt::Eval(Expr::Builtin(Builtin::PrintInline, vec![Expr::Lit(Lit::Str("\n".into()))], span)));
            }
            "exit" | "abort" | "assert" => {
                // `exit(status)` ends the program with that status (the IR builtin `Exit`, from
                // any call depth); `abort()` and a failed `assert` stop it with E0908 here.
                want(self, if name == "abort" { 0 } else { 1 })?;
                if name == "exit" {
                    host_only(self)?;
                    let (e, et) = self.rvalue(args[0], src)?;
                    let status = self.convert(e, et, CTy::S(ScalarTy::I32), args[0], src)?;
                    self.flush(out);
                    let in_main = self.f.role == Role::Main;
                    self.exit_stmts(in_main, status, span, out);
                    return Ok(());
                }
                let cond = if name == "assert" { self.cond(args[0], src)? } else { Expr::Lit(Lit::Bool(false)) };
                out.push(Stmt::Eval(Expr::Builtin(Builtin::Assert, vec![cond], span)));
            }
            _ if streams::STREAM_CALLS.contains(&name.as_str()) => self.stream_call(n, &name, &args, src, out)?,
            "cudaMalloc" => {
                host_only(self)?;
                want(self, 2)?;
                // `cudaMalloc((void **)&p, …)`: the cast changes nothing here.
                let target =
                    if args[0].kind() == "cast_expression" { self.child(args[0], "value", src)? } else { args[0] };
                let amp_of = (target.kind() == "pointer_expression"
                    && self.text(self.child(target, "operator", src)?, src) == "&")
                    .then(|| target.child_by_field_name("argument"))
                    .flatten();
                let mut var = amp_of.filter(|a| a.kind() == "identifier").and_then(|a| self.lookup(self.text(a, src)));
                if let Some(a) = amp_of.filter(|_| var.is_none()) {
                    // `cudaMalloc(&s.p, …)`, `cudaMalloc(&p->q, …)`: a pointer member.
                    if let Some((place, t)) = self.member_pointer_place(a, src)? {
                        if place.path.is_empty() && place.checks.is_empty() {
                            var = Some(Var { local: place.root, ty: CTy::Ptr(t) });
                        } else {
                            let len = self.elements(args[1], t, src)?;
                            let host = Expr::Builtin(
                                Builtin::HeapNew,
                                vec![Expr::ArrayRepeat(Box::new(self.elem_zero(t)), len)],
                                span,
                            );
                            let l = self.new_local("cudaMalloc", self.elem_ptr(t, Mem::GpuGlobal, true), Level::Host);
                            let init = Expr::Builtin(Builtin::GlobalAllocCopy, vec![host], span);
                            self.flush(out);
                            out.push(Stmt::Let { local: l, init: Some(init), span });
                            out.push(Stmt::Store { place, value: Expr::Load(Place::local(l, span)) });
                            return Ok(());
                        }
                    }
                }
                let Some(Var { local, ty: CTy::Ptr(t) }) = var else {
                    return Err(self.unsupported(target, src, "`cudaMalloc` of anything but `&pointer_variable`"));
                };
                let len = self.elements(args[1], t, src)?;
                let host =
                    Expr::Builtin(Builtin::HeapNew, vec![Expr::ArrayRepeat(Box::new(self.elem_zero(t)), len)], span);
                let init = Expr::Builtin(Builtin::GlobalAllocCopy, vec![host], span);
                self.f.locals[local].ty = self.elem_ptr(t, Mem::GpuGlobal, true);
                out.push(Stmt::Let { local, init: Some(init), span });
            }
            "cudaFree" | "free" => {
                host_only(self)?;
                want(self, 1)?;
                let mut v = (args[0].kind() == "identifier").then(|| self.lookup(self.text(args[0], src))).flatten();
                if v.is_none() {
                    v = self.member_pointer(args[0], src)?.map(|p| Var { local: p.root, ty: CTy::Ptr(p.elem) });
                    self.flush(out);
                }
                let Some(Var { local, ty: CTy::Ptr(_) }) = v else {
                    return Err(self.unsupported(args[0], src, format!("`{name}` of anything but a pointer variable")));
                };
                out.push(Stmt::Free { local, gpu: name == "cudaFree", span });
            }
            "cudaMemcpy" => {
                host_only(self)?;
                want(self, 4)?;
                // Legacy default-stream work that the host waits for: after all work in flight
                // (the host side is read or written by the host before the copy builtin).
                out.push(Stmt::Eval(Expr::Builtin(Builtin::DeviceSync, Vec::new(), span)));
                self.memcpy(n, &args, src, out)?;
            }
            "cudaMemcpyToSymbol" | "cudaMemcpyFromSymbol" => {
                host_only(self)?;
                self.memcpy_symbol(n, &args, src, out)?;
            }
            "cudaMemset" => {
                host_only(self)?;
                want(self, 3)?;
                out.push(Stmt::Eval(Expr::Builtin(Builtin::DeviceSync, Vec::new(), span)));
                self.memset(n, &args, src, out)?;
            }
            // `<string.h>` on host memory: `memcpy`/`memmove` as a host-to-host `cudaMemcpy`
            // (exactly the byte count's elements, checked; overlapping ranges copy as
            // `memmove`), `memset` of a constant byte as `cudaMemset` does.
            "memcpy" | "memmove" if !self.sigs.contains_key(&name) => {
                host_only(self)?;
                want(self, 3)?;
                self.memcpy_kind(n, &args, (false, false), src, out)?;
            }
            "memset" if !self.sigs.contains_key(&name) && self.struct_address(args.first().copied(), src).is_some() => {
                // `memset(&s, 0, sizeof(T))` of a struct variable: every member 0.
                host_only(self)?;
                want(self, 3)?;
                let Some((local, id)) = self.struct_address(Some(args[0]), src) else {
                    return Err(self.unsupported(args[0], src, "this argument of `memset`"));
                };
                let size = self.structs[id].size();
                if self.constant(args[1], src).ok() != Some(0) || self.constant(args[2], src).ok() != Some(size) {
                    return Err(self.unsupported(
                        n,
                        src,
                        "`memset` of a struct variable other than to 0 and of its whole size (`sizeof(T)`)",
                    ));
                }
                for (k, (_, t)) in self.structs[id].fields.clone().into_iter().enumerate() {
                    out.push(Stmt::Let { local: local + k, init: Some(self.field_zero(t)), span });
                }
            }
            "memset" if !self.sigs.contains_key(&name) => {
                host_only(self)?;
                want(self, 3)?;
                let (dst, t) = self.pointer_arg(args[0], src, out)?;
                let value = self.memset_value(args[1], t, src)?;
                let count = self.elements(args[2], t, src)?;
                let tmp = self.new_local("memset buffer", self.elem_ptr(t, Mem::Cpu, true), Level::Host);
                let init =
                    Expr::Builtin(Builtin::HeapNew, vec![Expr::ArrayRepeat(Box::new(value), count.clone())], span);
                out.push(Stmt::Let { local: tmp, init: Some(init), span });
                let load = |l: LocalId| Expr::Load(Place::local(l, span));
                out.push(Stmt::Eval(Expr::Builtin(
                    Builtin::CopyElems { dst_gpu: false, src_gpu: false },
                    vec![load(dst), load(tmp), Expr::Nat(count)],
                    span,
                )));
                out.push(Stmt::Free { local: tmp, gpu: false, span });
            }
            // One device: `cudaGetDeviceCount(&n)` gives 1, `cudaGetDevice(&d)` 0, and
            // `cudaSetDevice(0)` does nothing (another device is refused).
            "cudaGetDeviceCount" | "cudaGetDevice" if !self.sigs.contains_key(&name) => {
                host_only(self)?;
                want(self, 1)?;
                let Some(p) = self.ptr_expr(args[0], src)? else {
                    return Err(self.unsupported(args[0], src, format!("this argument of `{name}` (`&n`)")));
                };
                let t = self.scalar_elem(p.elem, args[0], src)?;
                let v = u128::from(name == "cudaGetDeviceCount");
                let place = self.ptr_place(p, None, span);
                self.flush(out);
                out.push(Stmt::Store { place, value: cast(int(v, ScalarTy::I32), ScalarTy::I32, t) });
            }
            "cudaGetDeviceProperties" if !self.sigs.contains_key(&name) => {
                host_only(self)?;
                self.device_properties(n, &args, src, out)?;
            }
            "srand" if !self.sigs.contains_key(&name) => {
                host_only(self)?;
                want(self, 1)?;
                if self.text(args[0], src).contains("time") {
                    return Err(self.unsupported(
                        args[0],
                        src,
                        "a seed from the clock (the run would not be repeatable; give a constant)",
                    ));
                }
                let (e, et) = self.rvalue(args[0], src)?;
                let seed = self.convert(e, et, CTy::S(ScalarTy::U32), args[0], src)?;
                self.flush(out);
                out.push(Stmt::Eval(Expr::Builtin(Builtin::SeedRand, vec![seed], span)));
            }
            // `cudaChooseDevice(&dev, &prop)`: the one device, 0, is the closest to any `prop`.
            "cudaChooseDevice" if !self.sigs.contains_key(&name) => {
                host_only(self)?;
                want(self, 2)?;
                if self.struct_address(Some(args[1]), src).is_none() {
                    return Err(self.unsupported(args[1], src, "this argument of `cudaChooseDevice` (`&prop`)"));
                }
                let Some(p) = self.ptr_expr(args[0], src)? else {
                    return Err(self.unsupported(args[0], src, "this argument of `cudaChooseDevice` (`&dev`)"));
                };
                let t = self.scalar_elem(p.elem, args[0], src)?;
                let place = self.ptr_place(p, None, span);
                self.flush(out);
                out.push(Stmt::Store { place, value: cast(int(0, ScalarTy::I32), ScalarTy::I32, t) });
            }
            "cudaSetDevice" if !self.sigs.contains_key(&name) => {
                host_only(self)?;
                want(self, 1)?;
                match self.constant(args[0], src) {
                    Ok(0) => {}
                    Ok(_) => return Err(self.unsupported(args[0], src, "a device other than 0 (`sim` has one)")),
                    // A device in a variable: another than 0 is `cudaErrorInvalidDevice`
                    // ([`Lx::set_device_status`]), which a statement discards, as CUDA does.
                    Err(_) => {
                        let (e, _) = self.set_device_status(args[0], src)?;
                        self.flush(out);
                        out.push(Stmt::Eval(e));
                    }
                }
            }
            // `cudaDeviceReset()`: waits for the device's work, as CUDA does first; its
            // allocations are not freed (a use after it is not reported).
            "cudaDeviceReset" if !self.sigs.contains_key(&name) => {
                host_only(self)?;
                want(self, 0)?;
                out.push(Stmt::Eval(Expr::Builtin(Builtin::DeviceSync, Vec::new(), span)));
            }
            "cudaGetLastError" | "cudaPeekAtLastError" => {
                // Every error stops the program on `sim`: the last error is always `cudaSuccess`.
                host_only(self)?;
                want(self, 0)?;
            }
            _ if device::atomic_op(&name).is_some() || name.starts_with("__shfl") || name == "__ballot_sync" => {
                let (e, _) = self.call_value(n, src)?;
                out.push(Stmt::Eval(e));
            }
            _ => {
                let (call, _) = self.user_call(n, &name, &args, src)?;
                out.push(Stmt::Eval(call));
            }
        }
        Ok(())
    }

    /// A pointer given to a CUDA API call, as a host local holding it (the variable itself, or a
    /// new local holding `p + i`), and its element type.
    pub(crate) fn pointer_arg(&mut self, n: Node, src: &Src, out: &mut Vec<Stmt>) -> R<(LocalId, Elem)> {
        if n.kind() == "identifier" {
            // A scalar global (`cudaMemcpyToSymbol(counter, …)`): its one-element buffer.
            if let Some(Var { local, ty: CTy::SharedScalar(t) }) = self.lookup(self.text(n, src)) {
                return Ok((local, Elem::S(t)));
            }
        }
        let Some(p) = self.ptr_expr(n, src)? else {
            return Err(self.unsupported(n, src, "this argument, which is not a pointer"));
        };
        let t = p.elem;
        if p.off.is_none() {
            return Ok((p.root, t));
        }
        let span = self.span(n, src);
        let mem = match &self.f.locals[p.root].ty {
            Ty::Owned(_, m) | Ty::Ref(_, m) => *m,
            _ => Mem::Cpu,
        };
        let l = self.new_local("cudaMemcpy pointer", self.elem_ptr(t, mem, false), Level::Host);
        let value = self.ptr_value(p, span);
        out.push(Stmt::Let { local: l, init: Some(value), span });
        Ok((l, t))
    }

    /// `cudaMemcpy(dst, src, bytes, kind)` of each kind: exactly `bytes / sizeof(T)` elements in
    /// one `Builtin::CopyElems`, which checks a device side holds them (E0903 at the call) and a
    /// host side as that many element accesses (bounds, memory space, uninitialised source).
    pub(crate) fn memcpy(&mut self, n: Node, args: &[Node], src: &Src, out: &mut Vec<Stmt>) -> R<()> {
        let kind = self.text(args[3], src);
        let (dst_gpu, src_gpu) = match kind {
            "cudaMemcpyHostToDevice" => (true, false),
            "cudaMemcpyDeviceToHost" => (false, true),
            "cudaMemcpyDeviceToDevice" => (true, true),
            "cudaMemcpyHostToHost" => (false, false),
            _ => return Err(self.unsupported(args[3], src, format!("`cudaMemcpy` of kind `{kind}`"))),
        };
        self.memcpy_kind(n, args, (dst_gpu, src_gpu), src, out)
    }

    /// [`Lx::memcpy`] of `args[0..3]` (destination, source, bytes) with the sides known.
    pub(crate) fn memcpy_kind(
        &mut self,
        n: Node,
        args: &[Node],
        (dst_gpu, src_gpu): (bool, bool),
        src: &Src,
        out: &mut Vec<Stmt>,
    ) -> R<()> {
        let span = self.span(n, src);
        let (dst, dt) = self.pointer_arg(args[0], src, out)?;
        let (from, st) = self.pointer_arg(args[1], src, out)?;
        if dt != st {
            return Err(self.unsupported(n, src, "`cudaMemcpy` between pointers of different element types"));
        }
        let count = self.elements(args[2], dt, src)?;
        let load = |l: LocalId| Expr::Load(Place::local(l, span));
        out.push(Stmt::Eval(Expr::Builtin(
            Builtin::CopyElems { dst_gpu, src_gpu },
            vec![load(dst), load(from), Expr::Nat(count)],
            span,
        )));
        Ok(())
    }

    /// `cudaMemset(p, value, bytes)`: `bytes / sizeof(T)` elements whose every byte is `value`
    /// (a constant), through a host buffer, after probing that the device side holds them.
    pub(crate) fn memset(&mut self, n: Node, args: &[Node], src: &Src, out: &mut Vec<Stmt>) -> R<()> {
        let span = self.span(n, src);
        let (dst, t) = self.pointer_arg(args[0], src, out)?;
        let value = self.memset_value(args[1], t, src)?;
        let count = self.elements(args[2], t, src)?;
        let elem_at =
            |i: IExpr| Place { root: dst, path: vec![PathStep::Deref, PathStep::Elem(i)], checks: Vec::new(), span };
        let probe = self.new_local("cudaMemset probe", self.elem_ptr(t, Mem::Cpu, true), Level::Host);
        let heap =
            |v: Expr, len: IExpr| Expr::Builtin(Builtin::HeapNew, vec![Expr::ArrayRepeat(Box::new(v), len)], span);
        out.push(Stmt::Let { local: probe, init: Some(heap(self.elem_zero(t), IExpr::Const(1))), span });
        out.push(Stmt::Eval(Expr::Builtin(
            Builtin::CopyToHost,
            vec![Expr::Ref(elem_at(count.clone())), Expr::Load(Place::local(probe, span))],
            span,
        )));
        out.push(Stmt::Free { local: probe, gpu: false, span });
        let tmp = self.new_local("cudaMemset buffer", self.elem_ptr(t, Mem::Cpu, true), Level::Host);
        out.push(Stmt::Let { local: tmp, init: Some(heap(value, count)), span });
        out.push(Stmt::Eval(Expr::Builtin(
            Builtin::CopyToGpu,
            vec![Expr::Load(Place::local(dst, span)), Expr::Load(Place::local(tmp, span))],
            span,
        )));
        out.push(Stmt::Free { local: tmp, gpu: false, span });
        Ok(())
    }

    /// The element of type `t` whose every byte is the constant byte `v` (`cudaMemset`'s value).
    /// The element every byte of which is the constant `v` (`cudaMemset`, `cudaMemsetAsync`):
    /// structs only for 0 (each field 0; other bytes would depend on the padding).
    pub(crate) fn memset_value(&self, v: Node, et: Elem, src: &Src) -> R<Expr> {
        let byte = self.constant(v, src)? & 0xff;
        Ok(match et {
            Elem::S(t) => {
                let pattern = (0..size_of(t)).fold(0u64, |acc, _| (acc << 8) | byte);
                match t {
                    ScalarTy::F32 => Expr::Lit(Lit::Float(f64::from(f32::from_bits(pattern as u32)), t.ir())),
                    ScalarTy::F64 => Expr::Lit(Lit::Float(f64::from_bits(pattern), t.ir())),
                    _ => cast(int(pattern.into(), ScalarTy::U64), ScalarTy::U64, t),
                }
            }
            Elem::Struct(_) if byte == 0 => self.elem_zero(et),
            Elem::Struct(_) | Elem::Split(_) => {
                return Err(self.unsupported(v, src, "`cudaMemset` of structs to other than 0"))
            }
        })
    }

    pub(crate) fn launch(
        &mut self,
        n: Node,
        cfg: Node,
        name: &str,
        args: &[Node],
        src: &Src,
        out: &mut Vec<Stmt>,
    ) -> R<()> {
        if self.f.gpu {
            return Err(self.unsupported(n, src, "kernel launches from GPU code"));
        }
        let Some((kernel, ptys)) =
            self.sigs.get(name).filter(|s| s.kernel).and_then(|s| Some((s.device?, s.params.clone())))
        else {
            return Err(self.unsupported(n, src, format!("a launch of `{name}`, which is not a kernel defined above")));
        };
        let mut c = cfg.walk();
        let conf: Vec<Node> = cfg.named_children(&mut c).filter(|x| x.kind() != "comment").collect();
        if conf.len() < 2 || conf.len() > 4 {
            return Err(self.unsupported(
                cfg,
                src,
                "a launch configuration other than `<<<grid, block[, shared bytes[, stream]]>>>`",
            ));
        }
        let stream = match conf.get(3) {
            Some(s) => self.launch_stream(*s, src)?,
            None => None,
        };
        let as_nat = |e: Expr| IExpr::Value(Box::new(Expr::Cast(Box::new(e), ir::ScalarTy::U64)));
        let grid = self.dim3_value(conf[0], src)?.map(as_nat);
        let block = self.dim3_value(conf[1], src)?.map(as_nat);
        let smem = match conf.get(2) {
            Some(d) => {
                let (e, t) = self.rvalue(*d, src)?;
                if !matches!(t, CTy::S(s) if !matches!(s, ScalarTy::F32 | ScalarTy::F64)) {
                    return Err(self.unsupported(*d, src, "a shared memory size that is not an integer"));
                }
                IExpr::Value(Box::new(self.convert(e, t, CTy::S(ScalarTy::U64), *d, src)?))
            }
            None => IExpr::Const(0),
        };
        if args.len() != ptys.len() {
            return Err(self.unsupported(
                n,
                src,
                format!("`{name}` takes {} arguments, not {}", ptys.len(), args.len()),
            ));
        }
        let mut values = self.arguments(name, args, &ptys, src)?;
        values.extend(self.global_args(true, self.span(n, src)));
        out.push(Stmt::Launch { kernel, nats: vec![smem], grid, block, args: values, stream, span: self.span(n, src) });
        Ok(())
    }

    pub(crate) fn printf(&mut self, n: Node, args: &[Node], src: &Src, out: &mut Vec<Stmt>) -> R<()> {
        let Some(fmt) = args.first() else {
            return Err(self.unsupported(n, src, "`printf` without a format string"));
        };
        // The format: a literal, or a choice between literals (`printf(i ? " %d" : "%d", x)`).
        let s = self.string_expr(*fmt, src)?;
        self.flush(out);
        self.printf_cases(n, s, *fmt, &args[1..], src, out)
    }

    fn printf_cases(
        &mut self,
        n: Node,
        s: strings::StrE,
        fmt: Node,
        values: &[Node],
        src: &Src,
        out: &mut Vec<Stmt>,
    ) -> R<()> {
        match s {
            strings::StrE::Lit(text) => self.printf_text(n, &text, &fmt, values, src, out),
            strings::StrE::Cond(cond, a, b) => {
                let (mut then, mut els) = (Vec::new(), Vec::new());
                self.printf_cases(n, *a, fmt, values, src, &mut then)?;
                self.printf_cases(n, *b, fmt, values, src, &mut els)?;
                out.push(Stmt::If { cond, then, els, span: self.span(n, src) });
                Ok(())
            }
            strings::StrE::Ptr(_) => {
                Err(self.unsupported(fmt, src, "a `printf` format that is not a string literal (or a choice of them)"))
            }
        }
    }

    /// `printf` of the format `text` (whose node is `fmt`) and `values`.
    fn printf_text(
        &mut self,
        n: Node,
        text: &str,
        fmt: &Node,
        values: &[Node],
        src: &Src,
        out: &mut Vec<Stmt>,
    ) -> R<()> {
        let span = self.span(n, src);
        let print = |s: &str, out: &mut Vec<Stmt>| {
            if !s.is_empty() {
                out.push(Stmt::Eval(Expr::Builtin(
                    Builtin::PrintInline,
                    vec![Expr::Lit(Lit::Str(s.to_string()))],
                    span,
                )));
            }
        };
        let mut lit = String::new();
        let mut values = values.iter();
        let mut chars = text.chars().peekable();
        while let Some(ch) = chars.next() {
            if ch != '%' {
                lit.push(ch);
                continue;
            }
            let mut conv = String::new();
            while let Some(&x) = chars.peek() {
                conv.push(x);
                chars.next();
                if x.is_ascii_alphabetic() && !matches!(x, 'l' | 'z' | 'h') || x == '%' {
                    break;
                }
            }
            if conv == "%" {
                lit.push('%');
                continue;
            }
            // `*` width or precision: a constant argument, written into the conversion.
            while let Some(star) = conv.find('*') {
                let Some(w) = values.next() else {
                    return Err(self.unsupported(n, src, "`printf` with fewer arguments than conversions"));
                };
                let Ok(v) = self.constant(*w, src) else {
                    return Err(self.unsupported(*w, src, "a `printf` `*` width or precision that is not a constant"));
                };
                // A negative width (the constant wrapped) is the `-` flag and its size, as in C.
                let neg = (v as i64) < 0 && !conv[..star].contains('.');
                let text = if neg { format!("-{}", (v as i64).unsigned_abs()) } else { v.to_string() };
                if (v as i64) < 0 && !neg {
                    // A negative precision counts as none.
                    conv.replace_range(star - 1..star + 1, "");
                } else {
                    conv.replace_range(star..star + 1, &text);
                }
            }
            let Some(v) = values.next() else {
                return Err(self.unsupported(n, src, "`printf` with fewer arguments than conversions"));
            };
            let letter = conv.chars().last().unwrap_or('%');
            let body = &conv[..conv.len() - letter.len_utf8()];
            let length = &body[body.trim_end_matches(['l', 'z', 'h']).len()..];
            let prefix = &body[..body.len() - length.len()];
            let prefix_ok = {
                let rest = prefix.trim_start_matches(['-', '+', ' ', '0', '#']);
                let (w, p) = rest.split_once('.').unwrap_or((rest, ""));
                w.bytes().all(|b| b.is_ascii_digit()) && p.bytes().all(|b| b.is_ascii_digit())
            };
            let bad = |lx: &Self| lx.unsupported(*fmt, src, format!("the `printf` conversion `%{conv}`"));
            if !prefix_ok {
                return Err(bad(self));
            }
            if letter == 's' {
                if !length.is_empty() {
                    return Err(bad(self));
                }
                // Text: a literal is written as it is; other strings by statements printing them.
                match self.string_expr(*v, src)? {
                    strings::StrE::Lit(t) => lit.push_str(&strings::pad(&t, prefix)),
                    s => {
                        print(&std::mem::take(&mut lit), out);
                        self.flush(out);
                        let stmts = self.print_string(s, prefix, *v, span, src)?;
                        out.extend(stmts);
                    }
                }
                continue;
            }
            if length == "z" && self.f.gpu {
                // CUDA's device `printf` has no `z` length (an H200 printed `%zu` as it is).
                return Err(self.unsupported(
                    *fmt,
                    src,
                    format!("`%{conv}` in device `printf` (CUDA's has no `z`; use `%lu`)"),
                ));
            }
            use ScalarTy::*;
            // `h` and `hh`: the value converted to `short` or `char` (of the conversion's
            // signedness), then printed as an `int`.
            let narrow = match (letter, length) {
                ('d' | 'i', "h") => Some(I16),
                ('d' | 'i', "hh") => Some(I8),
                ('u' | 'x' | 'X' | 'o', "h") => Some(U16),
                ('u' | 'x' | 'X' | 'o', "hh") => Some(U8),
                _ => None,
            };
            let length = if narrow.is_some() { "" } else { length };
            let conv = if narrow.is_some() { format!("{prefix}{letter}") } else { conv.clone() };
            let (t, float) = match (letter, length) {
                ('d' | 'i', "") | ('c', "") => (I32, false),
                ('d' | 'i', "l" | "ll") => (I64, false),
                ('u' | 'x' | 'X' | 'o', "") => (U32, false),
                ('u' | 'x' | 'X' | 'o', "l" | "ll" | "z") => (U64, false),
                ('f' | 'F' | 'e' | 'E' | 'g' | 'G', "" | "l") => (F64, true),
                _ => return Err(bad(self)),
            };
            print(&std::mem::take(&mut lit), out);
            let (e, et) = self.rvalue(*v, src)?;
            self.flush(out);
            let e = match et {
                CTy::S(s) if float == matches!(s, F32 | F64) => match narrow {
                    Some(h) => cast(cast(e, s, h), h, t),
                    None => cast(e, s, t),
                },
                _ => return Err(self.unsupported(*v, src, format!("printing this value with `%{conv}`"))),
            };
            // Plain decimal conversions print as Strata prints numbers; the rest as C does.
            let plain = prefix.is_empty() && matches!(letter, 'd' | 'i' | 'u');
            let printed = if plain {
                Expr::Builtin(Builtin::PrintInline, vec![e], span)
            } else {
                Expr::Builtin(Builtin::PrintFormatted, vec![Expr::Lit(Lit::Str(format!("%{conv}"))), e], span)
            };
            out.push(Stmt::Eval(printed));
        }
        if let Some(extra) = values.next() {
            return Err(self.unsupported(*extra, src, "`printf` arguments without a conversion"));
        }
        print(&lit, out);
        Ok(())
    }

    /// The text of a string literal, with its escapes resolved.
    pub(crate) fn string_text(&self, lit: Node, src: &Src) -> R<String> {
        let mut text = String::new();
        let mut c = lit.walk();
        for part in lit.named_children(&mut c) {
            let t = self.text(part, src);
            match part.kind() {
                "string_content" => text.push_str(t),
                "escape_sequence" => text.push(match t {
                    "\\n" => '\n',
                    "\\t" => '\t',
                    "\\\\" => '\\',
                    "\\\"" => '"',
                    "\\'" => '\'',
                    _ => return Err(self.unsupported(part, src, format!("the escape `{t}`"))),
                }),
                _ => return Err(self.unsupported(part, src, "this part of a string")),
            }
        }
        Ok(text)
    }

    /// A call used as a value: a user function that returns one.
    pub(crate) fn call_value(&mut self, n: Node, src: &Src) -> R<(Expr, CTy)> {
        let fnode = self.child(n, "function", src)?;
        if fnode.kind() == "field_expression" {
            return self.method_value(n, fnode, src);
        }
        let mut c = n.walk();
        if n.children(&mut c).any(|x| x.kind() == "kernel_call_syntax") {
            return Err(self.unsupported(n, src, "a kernel launch used as a value"));
        }
        let args = self.args(n, src)?;
        let name = self.callee_name(fnode, &args, src)?;
        if let Some(m) = self.fn_macros.get(&name).cloned() {
            return self.macro_value(n, &m, src);
        }
        // C++'s functional cast `double(x)`, `unsigned(x)`, `size_t(x)`: the cast `(double)x`.
        if !self.sigs.contains_key(&name) && self.lookup(&name).is_none() && !self.ptr_fns.contains_key(&name) {
            if let Ok(t) = self.scalar_type(fnode, src) {
                let [v] = args[..] else {
                    return Err(self.unsupported(n, src, format!("`{name}(…)` of other than one value")));
                };
                let (e, et) = self.rvalue(v, src)?;
                return Ok((self.convert(e, et, CTy::S(t), n, src)?, CTy::S(t)));
            }
        }
        if let Some(op) = device::atomic_op(&name) {
            return self.atomic(n, op, &args, src);
        }
        if name == "clock" && !self.sigs.contains_key(&name) {
            // `sim` has no clock (as `cudaEventElapsedTime`, which gives 0): always 0, on both
            // devices, so a program's output does not depend on the machine.
            if self.f.gpu || !args.is_empty() {
                return Err(self.unsupported(n, src, "`clock` here (host code, no arguments)"));
            }
            return Ok((int(0, ScalarTy::I64), CTy::S(ScalarTy::I64)));
        }
        if name == "rand" && !self.sigs.contains_key(&name) {
            // glibc's sequence on both devices (`Builtin::Rand`).
            if self.f.gpu || !args.is_empty() {
                return Err(self.unsupported(n, src, "`rand` here (host code, no arguments)"));
            }
            return Ok((Expr::Builtin(Builtin::Rand, Vec::new(), self.span(n, src)), CTy::S(ScalarTy::I32)));
        }
        if matches!(name.as_str(), "strlen" | "strcmp") && !self.sigs.contains_key(&name) {
            return self.str_fn(n, &name, &args, src);
        }
        if matches!(name.as_str(), "atomicInc" | "atomicDec") && !self.sigs.contains_key(&name) {
            return self.atomic_inc_dec(n, name == "atomicDec", &args, src);
        }
        // `atoi(s)`, `atol(s)`, `atoll(s)`, `strtol(s, NULL, 10)` and `strtoll` of a string.
        let strtol = matches!(name.as_str(), "strtol" | "strtoll")
            && args.len() == 3
            && matches!(self.text(args[1], src), "NULL" | "nullptr" | "0")
            && self.constant(args[2], src).ok() == Some(10);
        if (matches!(name.as_str(), "atoi" | "atol" | "atoll") && args.len() == 1 || strtol)
            && self.lookup(&name).is_none()
        {
            let t = if name == "atoi" { ScalarTy::I32 } else { ScalarTy::I64 };
            return self.atoi(n, args[0], t, src);
        }
        if name == "cudaSetDevice"
            && !self.sigs.contains_key(&name)
            && args.len() == 1
            && self.constant(args[0], src).is_err()
        {
            return self.set_device_status(args[0], src);
        }
        if matches!(
            name.as_str(),
            "cudaMalloc"
                | "cudaFree"
                | "cudaMemcpy"
                | "cudaMemset"
                | "cudaDeviceSynchronize"
                | "cudaMemcpyToSymbol"
                | "cudaMemcpyFromSymbol"
                | "cudaGetDeviceCount"
                | "cudaGetDevice"
                | "cudaSetDevice"
                | "cudaChooseDevice"
                | "cudaDeviceReset"
                | "cudaGetDeviceProperties"
        ) || streams::STREAM_CALLS.contains(&name.as_str())
        {
            // The call happens before the expression; its status is always `cudaSuccess` on
            // `sim`, where every failure stops the program.
            let mut pre = Vec::new();
            self.call_stmt(n, src, &mut pre)?;
            self.f.pre.extend(pre);
            return Ok((int(0, ScalarTy::I32), CTy::S(ScalarTy::I32)));
        }
        if let Some(r) = self.warp_call(n, &name, &args, src)? {
            return Ok(r);
        }
        if !self.sigs.contains_key(&name) {
            if let Some(r) = self.math_call(n, &name, &args, src)? {
                return Ok(r);
            }
        }
        if name.starts_with("__syncthreads_") {
            return Err(self.unsupported(
                n,
                src,
                format!("`{name}` other than as a whole initialiser or right side (`int c = {name}(p);`)"),
            ));
        }
        if name == "cudaGetLastError" || name == "cudaPeekAtLastError" {
            if self.f.gpu || !args.is_empty() {
                return Err(self.unsupported(n, src, format!("this call of `{name}`")));
            }
            // Every error stops the program on `sim`: the last error is always `cudaSuccess`.
            return Ok((int(0, ScalarTy::I32), CTy::S(ScalarTy::I32)));
        }
        if !self.sigs.contains_key(&name) {
            return Err(self.unsupported(fnode, src, format!("`{name}` used as a value")));
        }
        match self.user_call(n, &name, &args, src)? {
            (call, Some(t)) => Ok((call, CTy::S(t))),
            (_, None) => Err(self.unsupported(n, src, format!("the value of `{name}`, which returns `void`"))),
        }
    }
}

impl Lx {
    /// `exit(status)` (an `i32`): the IR builtin `Exit`, which ends the program with that status.
    /// In `main` a status of 0 is a plain return instead, so that work still in flight on streams
    /// runs and is checked as at the end of `main`.
    pub(crate) fn exit_stmts(&mut self, in_main: bool, status: Expr, span: Span, out: &mut Vec<Stmt>) {
        let exit = |e: Expr| Stmt::Eval(Expr::Builtin(Builtin::Exit, vec![e], span));
        if !in_main {
            out.push(exit(status));
            return;
        }
        match status {
            Expr::Lit(Lit::Int(0, _)) => {}
            status => {
                let t = self.new_local("exit status", Ty::Scalar(ScalarTy::I32.ir()), Level::Host);
                out.push(Stmt::Let { local: t, init: Some(status), span });
                let failed = Expr::Binary(
                    BinOp::Ne,
                    Box::new(Expr::Load(Place::local(t, span))),
                    Box::new(int(0, ScalarTy::I32)),
                );
                out.push(Stmt::If {
                    cond: failed,
                    then: vec![exit(Expr::Load(Place::local(t, span)))],
                    els: Vec::new(),
                    span,
                });
            }
        }
        out.push(Stmt::Return(None));
    }
}

impl Lx {
    /// The status of `cudaSetDevice(d)` for a device `d` in a variable: `cudaSuccess` for 0, the
    /// one device, `cudaErrorInvalidDevice` (101) for any other.
    pub(crate) fn set_device_status(&mut self, d: Node, src: &Src) -> R<(Expr, CTy)> {
        let (e, t) = self.rvalue(d, src)?;
        let e = self.convert(e, t, CTy::S(ScalarTy::I32), d, src)?;
        let other = Expr::Binary(BinOp::Ne, Box::new(e), Box::new(int(0, ScalarTy::I32)));
        let code = Expr::Binary(
            BinOp::Mul,
            Box::new(cast(other, ScalarTy::Bool, ScalarTy::I32)),
            Box::new(int(101, ScalarTy::I32)),
        );
        Ok((code, CTy::S(ScalarTy::I32)))
    }

    /// `&s` of a struct variable `s`: its first local and struct.
    pub(crate) fn struct_address(&self, a: Option<Node>, src: &Src) -> Option<(LocalId, usize)> {
        let a = self.strip_parens(a?);
        let amp = a.kind() == "pointer_expression"
            && a.child_by_field_name("operator").is_some_and(|o| self.text(o, src) == "&");
        let v = a.child_by_field_name("argument").filter(|x| amp && x.kind() == "identifier")?;
        match self.lookup(self.text(v, src)) {
            Some(Var { local, ty: CTy::Struct(id) }) => Some((local, id)),
            _ => None,
        }
    }
}
