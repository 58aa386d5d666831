//! Streams and events: `cudaStream_t`/`cudaEvent_t` host variables and the runtime calls on them,
//! lowered to the IR's stream builtins ([`Builtin::StreamNew`] …), whose semantics and race checks
//! `sim` implements (docs/architecture.md). Also pinned host memory (`cudaMallocHost`), which
//! real asynchronous copies need and which is plain host memory here.

use super::*;

/// The runtime calls of this module, as statements or as values (always `cudaSuccess`).
pub(crate) const STREAM_CALLS: [&str; 15] = [
    "cudaStreamCreate",
    "cudaStreamDestroy",
    "cudaStreamSynchronize",
    "cudaMemcpyAsync",
    "cudaMemsetAsync",
    "cudaEventCreate",
    "cudaEventRecord",
    "cudaEventSynchronize",
    "cudaStreamWaitEvent",
    "cudaEventDestroy",
    "cudaEventElapsedTime",
    "cudaMallocHost",
    "cudaHostAlloc",
    "cudaFreeHost",
    "cudaDeviceSynchronize",
];

impl Lx {
    /// `cudaStream_t s, t = 0;` / `cudaEvent_t e;`: host locals of the IR's handle types; `0` is
    /// the default stream.
    pub(crate) fn handle_declaration(&mut self, n: Node, stream: bool, src: &Src, out: &mut Vec<Stmt>) -> R<()> {
        let what = if stream { "cudaStream_t" } else { "cudaEvent_t" };
        if self.f.gpu {
            return Err(self.unsupported(n, src, format!("`{what}` in GPU code")));
        }
        for (d, init) in self.declarators(n, src)? {
            let span = self.span(d, src);
            if d.kind() == "array_declarator" {
                // `cudaStream_t s[K];`: K handles on the host heap, the default stream (or an
                // event never recorded) until created.
                let inner = self.child(d, "declarator", src)?;
                let (Some(size), "identifier", None) = (d.child_by_field_name("size"), inner.kind(), init) else {
                    return Err(self.unsupported(d, src, format!("this array of `{what}`")));
                };
                let len = IExpr::Const(self.constant(size, src)?);
                let (elem, cty) = if stream { (Ty::Stream, CTy::StreamArray) } else { (Ty::Event, CTy::EventArray) };
                let ty = Ty::Owned(Box::new(Ty::Array { elem: Box::new(elem), len: len.clone() }), Mem::Cpu);
                let l = self.new_local(self.text(inner, src), ty, Level::Host);
                let none = Expr::Lit(Lit::Unit);
                let init = Expr::Builtin(Builtin::HeapNew, vec![Expr::ArrayRepeat(Box::new(none), len)], span);
                self.flush(out);
                out.push(Stmt::Let { local: l, init: Some(init), span });
                self.bind(self.text(inner, src), Var { local: l, ty: cty });
                continue;
            }
            if d.kind() != "identifier" {
                return Err(self.unsupported(d, src, format!("this `{what}` declaration (pointers to them)")));
            }
            let name = self.text(d, src);
            let (ty, cty) = if stream { (Ty::Stream, CTy::Stream) } else { (Ty::Event, CTy::Event) };
            let l = self.new_local(name, ty, Level::Host);
            let init = match init {
                Some(v) if stream => Some(self.stream_value(v, src)?),
                Some(v) => Some(self.event_value(v, src)?),
                None => None,
            };
            self.flush(out);
            out.push(Stmt::Let { local: l, init, span });
            self.bind(name, Var { local: l, ty: cty });
        }
        Ok(())
    }

    /// A stream argument: a `cudaStream_t` variable, or `0` (the default stream).
    pub(crate) fn stream_value(&mut self, n: Node, src: &Src) -> R<Expr> {
        if self.constant(n, src).ok() == Some(0) || matches!(self.text(n, src), "NULL" | "nullptr" | "cudaStreamLegacy")
        {
            return Ok(Expr::Lit(Lit::Unit));
        }
        match self.handle_place(n, src)? {
            Some((p, CTy::Stream)) => Ok(Expr::Load(p)),
            _ => Err(self.unsupported(n, src, "this stream (a `cudaStream_t` variable or element, or `0`)")),
        }
    }

    fn event_value(&mut self, n: Node, src: &Src) -> R<Expr> {
        match self.handle_place(n, src)? {
            Some((p, CTy::Event)) => Ok(Expr::Load(p)),
            _ => Err(self.unsupported(n, src, "this event (a `cudaEvent_t` variable or element)")),
        }
    }

    /// The local and type of a variable named by `n` (in parentheses or not).
    fn handle_var(&self, n: Node, src: &Src) -> Option<(LocalId, CTy)> {
        let n = if n.kind() == "parenthesized_expression" { n.named_child(0)? } else { n };
        (n.kind() == "identifier").then(|| self.lookup(self.text(n, src))).flatten().map(|v| (v.local, v.ty))
    }

    /// Where a handle `n` lives: a variable (`s`), or an element of an array of them (`s[i]`,
    /// checked against the array's length on `sim`), with the handle's type.
    fn handle_place(&mut self, n: Node, src: &Src) -> R<Option<(Place, CTy)>> {
        let span = self.span(n, src);
        if n.kind() == "subscript_expression" {
            let (Some(a), Some(list)) = (n.child_by_field_name("argument"), n.child_by_field_name("indices")) else {
                return Ok(None);
            };
            let mut c = list.walk();
            let idx: Vec<Node> = list.named_children(&mut c).filter(|x| x.kind() != "comment").collect();
            let [i] = idx[..] else { return Err(self.unsupported(list, src, "this subscript")) };
            let elem = match self.handle_var(a, src) {
                Some((l, CTy::StreamArray)) => (l, CTy::Stream),
                Some((l, CTy::EventArray)) => (l, CTy::Event),
                _ => return Ok(None),
            };
            let (e, t) = self.rvalue(i, src)?;
            if !matches!(t, CTy::S(s) if !matches!(s, ScalarTy::F32 | ScalarTy::F64 | ScalarTy::Bool)) {
                return Err(self.unsupported(i, src, "an index that is not an integer"));
            }
            let i = IExpr::Value(Box::new(self.convert(e, t, CTy::S(ScalarTy::U64), i, src)?));
            let p = Place { root: elem.0, path: vec![PathStep::Deref, PathStep::Elem(i)], checks: Vec::new(), span };
            return Ok(Some((p, elem.1)));
        }
        Ok(self.handle_var(n, src).map(|(l, t)| (Place::local(l, span), t)))
    }

    /// `&h` of a handle (a variable or an array element): where it lives and its type.
    fn address_of(&mut self, n: Node, src: &Src) -> R<Option<(Place, CTy)>> {
        let amp = n.child_by_field_name("operator").is_some_and(|o| self.text(o, src) == "&");
        match n.child_by_field_name("argument") {
            Some(a) if n.kind() == "pointer_expression" && amp => self.handle_place(a, src),
            _ => Ok(None),
        }
    }

    /// `&v` of a variable: its local and type.
    fn address_of_var(&self, n: Node, src: &Src) -> Option<(LocalId, CTy)> {
        // `cudaMallocHost((void **)&p, …)`: the cast changes nothing here.
        let n = if n.kind() == "cast_expression" { n.child_by_field_name("value")? } else { n };
        if n.kind() != "pointer_expression" || self.text(n.child_by_field_name("operator")?, src) != "&" {
            return None;
        }
        self.handle_var(n.child_by_field_name("argument")?, src)
    }

    /// A call of [`STREAM_CALLS`] as a statement.
    pub(crate) fn stream_call(&mut self, n: Node, name: &str, args: &[Node], src: &Src, out: &mut Vec<Stmt>) -> R<()> {
        if self.f.gpu {
            return Err(self.unsupported(n, src, format!("`{name}` in GPU code")));
        }
        let span = self.span(n, src);
        let arity: &[usize] = match name {
            "cudaDeviceSynchronize" => &[0],
            "cudaStreamCreate"
            | "cudaStreamDestroy"
            | "cudaStreamSynchronize"
            | "cudaEventCreate"
            | "cudaEventSynchronize"
            | "cudaEventDestroy"
            | "cudaFreeHost" => &[1],
            "cudaEventRecord" => &[1, 2],
            "cudaMallocHost" => &[2],
            "cudaHostAlloc" => &[3],
            "cudaStreamWaitEvent" | "cudaEventElapsedTime" => &[3],
            "cudaMemcpyAsync" => &[4, 5],
            "cudaMemsetAsync" => &[3, 4],
            _ => &[],
        };
        if !arity.contains(&args.len()) {
            let want = arity.iter().map(|k| k.to_string()).collect::<Vec<_>>().join(" or ");
            return Err(self.unsupported(n, src, format!("`{name}` with {} arguments (it takes {want})", args.len())));
        }
        let eval = |b: Builtin, a: Vec<Expr>| Stmt::Eval(Expr::Builtin(b, a, span));
        match name {
            "cudaDeviceSynchronize" => out.push(eval(Builtin::DeviceSync, Vec::new())),
            "cudaStreamCreate" | "cudaEventCreate" => {
                let stream = name == "cudaStreamCreate";
                let want = if stream { CTy::Stream } else { CTy::Event };
                let Some((p, t)) = self.address_of(args[0], src)?.filter(|(_, t)| *t == want) else {
                    let what = if stream { "`&stream_variable`" } else { "`&event_variable`" };
                    return Err(self.unsupported(args[0], src, format!("`{name}` of anything but {what}")));
                };
                let b = if t == CTy::Stream { Builtin::StreamNew } else { Builtin::EventNew };
                let value = Expr::Builtin(b, Vec::new(), span);
                out.push(match p.path.is_empty() {
                    true => Stmt::Let { local: p.root, init: Some(value), span },
                    false => Stmt::Store { place: p, value },
                });
            }
            "cudaStreamDestroy" | "cudaStreamSynchronize" => {
                let s = self.stream_value(args[0], src)?;
                let b = if name == "cudaStreamDestroy" { Builtin::StreamDestroy } else { Builtin::StreamSync };
                out.push(eval(b, vec![s]));
            }
            "cudaEventSynchronize" | "cudaEventDestroy" => {
                let e = self.event_value(args[0], src)?;
                let b = if name == "cudaEventDestroy" { Builtin::EventDestroy } else { Builtin::EventSync };
                out.push(eval(b, vec![e]));
            }
            "cudaEventRecord" => {
                let e = self.event_value(args[0], src)?;
                let s = match args.get(1) {
                    Some(a) => self.stream_value(*a, src)?,
                    None => Expr::Lit(Lit::Unit),
                };
                out.push(eval(Builtin::EventRecord, vec![e, s]));
            }
            "cudaStreamWaitEvent" => {
                let s = self.stream_value(args[0], src)?;
                let e = self.event_value(args[1], src)?;
                if self.constant(args[2], src).ok() != Some(0) {
                    return Err(self.unsupported(args[2], src, "`cudaStreamWaitEvent` flags other than 0"));
                }
                out.push(eval(Builtin::StreamWaitEvent, vec![s, e]));
            }
            "cudaEventElapsedTime" => {
                // No clock on `sim`: the time is 0 ms (documented), after both events completed.
                let Some((l, CTy::S(ScalarTy::F32))) = self.address_of_var(args[0], src) else {
                    return Err(self.unsupported(
                        args[0],
                        src,
                        "`cudaEventElapsedTime` into anything but `&float_variable`",
                    ));
                };
                for a in &args[1..] {
                    let e = self.event_value(*a, src)?;
                    out.push(eval(Builtin::EventSync, vec![e]));
                }
                out.push(Stmt::Store {
                    place: Place::local(l, span),
                    value: Expr::Lit(Lit::Float(0.0, ir::ScalarTy::F32)),
                });
            }
            "cudaMallocHost" | "cudaHostAlloc" => {
                if name == "cudaHostAlloc" {
                    // Pinned host memory: the flags that change only speed; mapped (zero-copy)
                    // memory, which the device reads directly, is not supported.
                    let flags = self.text(args[2], src).split('|').map(str::trim).collect::<Vec<_>>();
                    let speed_only =
                        ["cudaHostAllocDefault", "cudaHostAllocPortable", "cudaHostAllocWriteCombined", "0"];
                    if !flags.iter().all(|f| speed_only.contains(f)) {
                        return Err(self.unsupported(
                            args[2],
                            src,
                            "`cudaHostAlloc` flags other than `cudaHostAllocDefault`, `Portable` and `WriteCombined`",
                        ));
                    }
                }
                let Some((local, CTy::Ptr(t))) = self.address_of_var(args[0], src) else {
                    return Err(self.unsupported(args[0], src, "`cudaMallocHost` of anything but `&pointer_variable`"));
                };
                let len = self.elements(args[1], t, src)?;
                let init =
                    Expr::Builtin(Builtin::HeapNew, vec![Expr::ArrayRepeat(Box::new(self.elem_zero(t)), len)], span);
                self.f.locals[local].ty = self.elem_ptr(t, Mem::Cpu, true);
                out.push(Stmt::Let { local, init: Some(init), span });
            }
            "cudaFreeHost" => {
                let Some((local, CTy::Ptr(_))) = self.handle_var(args[0], src) else {
                    return Err(self.unsupported(args[0], src, "`cudaFreeHost` of anything but a pointer variable"));
                };
                // CUDA's `cudaFreeHost` waits for the device first.
                out.push(eval(Builtin::DeviceSync, Vec::new()));
                out.push(Stmt::Free { local, gpu: false, span });
            }
            "cudaMemcpyAsync" => self.memcpy_async(n, args, src, out)?,
            "cudaMemsetAsync" => {
                // A copy on the stream from a host buffer filled at the call, which stays
                // allocated (the copy may read it any time later).
                let (dst, t) = self.pointer_arg(args[0], src, out)?;
                let value = self.memset_value(args[1], t, src)?;
                let count = self.elements(args[2], t, src)?;
                let stream = match args.get(3) {
                    Some(a) => self.stream_value(*a, src)?,
                    None => Expr::Lit(Lit::Unit),
                };
                let tmp = self.new_local("cudaMemsetAsync buffer", self.elem_ptr(t, Mem::Cpu, true), Level::Host);
                let fill = Expr::ArrayRepeat(Box::new(value), count.clone());
                out.push(Stmt::Let { local: tmp, init: Some(Expr::Builtin(Builtin::HeapNew, vec![fill], span)), span });
                let load = |l: LocalId| Expr::Load(Place::local(l, span));
                out.push(eval(Builtin::CopyAsync, vec![load(dst), load(tmp), Expr::Nat(count), stream]));
            }
            _ => return Err(self.unsupported(n, src, format!("`{name}`"))),
        }
        Ok(())
    }

    /// `cudaMemcpyAsync(dst, src, bytes, kind[, stream])`: [`Builtin::CopyAsync`] of
    /// `bytes / sizeof(T)` elements on the stream. The copy goes by the pointers (as
    /// `cudaMemcpyDefault` does); `sim` checks both sides hold that many elements at the call.
    fn memcpy_async(&mut self, n: Node, args: &[Node], src: &Src, out: &mut Vec<Stmt>) -> R<()> {
        let span = self.span(n, src);
        let kind = self.text(args[3], src);
        if !matches!(
            kind,
            "cudaMemcpyHostToDevice"
                | "cudaMemcpyDeviceToHost"
                | "cudaMemcpyDeviceToDevice"
                | "cudaMemcpyHostToHost"
                | "cudaMemcpyDefault"
        ) {
            return Err(self.unsupported(args[3], src, format!("`cudaMemcpyAsync` of kind `{kind}`")));
        }
        let (dst, dt) = self.pointer_arg(args[0], src, out)?;
        let (from, st) = self.pointer_arg(args[1], src, out)?;
        if dt != st {
            return Err(self.unsupported(n, src, "`cudaMemcpyAsync` between pointers of different element types"));
        }
        let count = self.elements(args[2], dt, src)?;
        let stream = match args.get(4) {
            Some(a) => self.stream_value(*a, src)?,
            None => Expr::Lit(Lit::Unit),
        };
        let load = |l: LocalId| Expr::Load(Place::local(l, span));
        out.push(Stmt::Eval(Expr::Builtin(
            Builtin::CopyAsync,
            vec![load(dst), load(from), Expr::Nat(count), stream],
            span,
        )));
        Ok(())
    }

    /// The stream of a launch's fourth `<<<…>>>` argument (`None`: the default stream).
    pub(crate) fn launch_stream(&mut self, n: Node, src: &Src) -> R<Option<Expr>> {
        Ok(match self.stream_value(n, src)? {
            Expr::Lit(Lit::Unit) => None,
            e => Some(e),
        })
    }
}
