//! Streams and events: `cudaStream_t`/`cudaEvent_t` host variables and the runtime calls on them,
//! lowered to the IR's stream builtins ([`Builtin::StreamNew`] …), whose semantics and race checks
//! `sim` implements (docs/architecture.md). Also pinned host memory (`cudaMallocHost`), which
//! real asynchronous copies need and which is plain host memory here.

use super::*;

/// The runtime calls of this module, as statements or as values (always `cudaSuccess`).
pub(crate) const STREAM_CALLS: [&str; 13] = [
    "cudaStreamCreate",
    "cudaStreamDestroy",
    "cudaStreamSynchronize",
    "cudaMemcpyAsync",
    "cudaEventCreate",
    "cudaEventRecord",
    "cudaEventSynchronize",
    "cudaStreamWaitEvent",
    "cudaEventDestroy",
    "cudaEventElapsedTime",
    "cudaMallocHost",
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
        let mut c = n.walk();
        let decls: Vec<Node> = n.children_by_field_name("declarator", &mut c).collect();
        for d in decls {
            let (d, init) = if d.kind() == "init_declarator" {
                (self.child(d, "declarator", src)?, Some(self.child(d, "value", src)?))
            } else {
                (d, None)
            };
            if d.kind() != "identifier" {
                return Err(self.unsupported(
                    d,
                    src,
                    format!("this `{what}` declaration (arrays and pointers of them)"),
                ));
            }
            let name = self.text(d, src);
            let span = self.span(d, src);
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
        match self.handle_var(n, src) {
            Some((l, CTy::Stream)) => Ok(Expr::Load(Place::local(l, self.span(n, src)))),
            _ => Err(self.unsupported(n, src, "this stream (a `cudaStream_t` variable or `0`)")),
        }
    }

    fn event_value(&mut self, n: Node, src: &Src) -> R<Expr> {
        match self.handle_var(n, src) {
            Some((l, CTy::Event)) => Ok(Expr::Load(Place::local(l, self.span(n, src)))),
            _ => Err(self.unsupported(n, src, "this event (a `cudaEvent_t` variable)")),
        }
    }

    /// The local and type of a variable named by `n` (in parentheses or not).
    fn handle_var(&self, n: Node, src: &Src) -> Option<(LocalId, CTy)> {
        let n = if n.kind() == "parenthesized_expression" { n.named_child(0)? } else { n };
        (n.kind() == "identifier").then(|| self.lookup(self.text(n, src))).flatten().map(|v| (v.local, v.ty))
    }

    /// `&v` of a variable: its local and type.
    fn address_of(&self, n: Node, src: &Src) -> Option<(LocalId, CTy)> {
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
            "cudaStreamWaitEvent" | "cudaEventElapsedTime" => &[3],
            "cudaMemcpyAsync" => &[4, 5],
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
                let Some((l, t)) = self.address_of(args[0], src).filter(|(_, t)| *t == want) else {
                    let what = if stream { "`&stream_variable`" } else { "`&event_variable`" };
                    return Err(self.unsupported(args[0], src, format!("`{name}` of anything but {what}")));
                };
                let b = if t == CTy::Stream { Builtin::StreamNew } else { Builtin::EventNew };
                out.push(Stmt::Let { local: l, init: Some(Expr::Builtin(b, Vec::new(), span)), span });
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
                let Some((l, CTy::S(ScalarTy::F32))) = self.address_of(args[0], src) else {
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
                    value: Expr::Lit(Lit::Float(0.0, ScalarTy::F32)),
                });
            }
            "cudaMallocHost" => {
                let Some((local, CTy::Ptr(t))) = self.address_of(args[0], src) else {
                    return Err(self.unsupported(args[0], src, "`cudaMallocHost` of anything but `&pointer_variable`"));
                };
                let len = self.elements(args[1], t, src)?;
                let init = Expr::Builtin(Builtin::HeapNew, vec![Expr::ArrayRepeat(Box::new(zero(t)), len)], span);
                self.f.locals[local].ty = array_ptr(t, Mem::Cpu, true);
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
