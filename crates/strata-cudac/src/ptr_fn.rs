//! Functions that return pointers: `void *big_random_block(int size) { … return data; }`,
//! `__device__ float *row(float *m, int i) { return m + i * N; }`.
//!
//! The IR's functions return scalars, so such a function is inlined at each call, the way a
//! member function returning a pointer is ([`methods`]): its parameters become new locals holding
//! the arguments, its statements are lowered before the statement that calls it, and the value of
//! its final `return E;` is a new pointer local pointing where E points. The result is therefore
//! the same allocation at the same offset: `sim` checks every access through it against that
//! buffer's bounds, and a `free` through it frees that buffer.
//!
//! A function returning `void *` returns whatever pointer its `return` names; the caller casts
//! it to that pointer's own type (`(unsigned char *)big_random_block(n)` of a function that
//! returns an `unsigned char *`). A cast to any other type is refused (E0801), as is a body with
//! a `return` anywhere but as its last statement, a call from the other side (GPU code calling a
//! host function), recursion, pointers to pointers, and struct parameters.

use super::*;
use methods::has_return;
use ptr::PtrE;

/// A function returning a pointer, found by the first pass.
pub(crate) struct PtrFn {
    file: FileId,
    range: (usize, usize),
    host: bool,
    device: bool,
    /// The pointer's element type; `None` for `void *`.
    elem: Option<Elem>,
}

impl Lx {
    /// Whether `n` (a function definition) returns a pointer.
    pub(crate) fn returns_pointer(&self, n: Node) -> bool {
        n.child_by_field_name("declarator").is_some_and(|d| d.kind() == "pointer_declarator")
    }

    /// The first pass over a function definition returning a pointer: recorded for inlining.
    pub(crate) fn declare_ptr_fn(&mut self, n: Node, src: &Src) -> R<()> {
        let decl = self.child(n, "declarator", src)?;
        let inner = self.child(decl, "declarator", src)?;
        if inner.kind() != "function_declarator" {
            return Err(self.unsupported(
                decl,
                src,
                "this function declarator (functions returning pointers to pointers?)",
            ));
        }
        let name = self.text(self.child(inner, "declarator", src)?, src).to_string();
        let (mut host, mut device) = (false, false);
        for ch in n.children(&mut n.walk()) {
            match ch.kind() {
                "__global__" => return Err(self.unsupported(ch, src, "a kernel must return `void`")),
                "__host__" => host = true,
                "__device__" => device = true,
                "storage_class_specifier" if matches!(self.text(ch, src), "static" | "inline") => {}
                "storage_class_specifier" | "attribute_specifier" | "ms_declspec_modifier" => {
                    return Err(self.unsupported(ch, src, format!("functions with `{}`", self.text(ch, src))));
                }
                _ => {}
            }
        }
        if !device {
            host = true;
        }
        let tn = self.child(n, "type", src)?;
        let elem = match self.struct_type(tn, src) {
            Some(id) => Some(Elem::Struct(id)),
            None if self.text(tn, src) == "void" => None,
            None => Some(Elem::S(self.scalar_type(tn, src)?)),
        };
        if self.sigs.contains_key(&name) || self.ptr_fns.contains_key(&name) || self.templates.contains_key(&name) {
            return Err(self.unsupported(inner, src, format!("a second definition of `{name}` (C++ overloading)")));
        }
        // The parameters are checked here, so that a refused one is reported at the definition.
        self.method_params(n, src)?;
        let range = (n.start_byte(), n.end_byte());
        self.ptr_fns.insert(name, PtrFn { file: self.file, range, host, device, elem });
        Ok(())
    }

    /// Whether `n` is a call of a function returning a pointer.
    pub(crate) fn is_ptr_fn_call(&self, n: Node, src: &Src) -> bool {
        n.kind() == "call_expression"
            && n.child_by_field_name("function")
                .is_some_and(|f| f.kind() == "identifier" && self.ptr_fns.contains_key(self.text(f, src)))
    }

    /// A call `f(a, b)` of a function returning a pointer, inlined: its statements go to `pre`,
    /// its result is a new pointer local.
    pub(crate) fn ptr_fn_call(&mut self, n: Node, src: &Src) -> R<PtrE> {
        let fnode = self.child(n, "function", src)?;
        let name = self.text(fnode, src).to_string();
        let Some((file, range, host, device, declared)) =
            self.ptr_fns.get(&name).map(|f| (f.file, f.range, f.host, f.device, f.elem))
        else {
            return Err(self.unsupported(n, src, "this call"));
        };
        if (self.f.gpu && !device) || (!self.f.gpu && !host) {
            let side = if self.f.gpu { "GPU" } else { "host" };
            return Err(self.unsupported(n, src, format!("a call of `{name}` from {side} code")));
        }
        // A function that calls itself would be inlined without end.
        if self.macro_depth >= 64 {
            return Err(self.unsupported(n, src, "functions returning pointers inlined more than 64 deep (recursion)"));
        }
        self.macro_depth += 1;
        let r = self.ptr_fn_inline(n, &name, file, range, declared, src);
        self.macro_depth -= 1;
        r
    }

    fn ptr_fn_inline(
        &mut self,
        n: Node,
        name: &str,
        file: FileId,
        range: (usize, usize),
        declared: Option<Elem>,
        src: &Src,
    ) -> R<PtrE> {
        let args = self.args(n, src)?;
        let (params, variadic) = self.with_definition(file, range, |lx, d, dsrc| lx.method_params(d, dsrc))?;
        if args.len() != params.len() || variadic {
            return Err(self.unsupported(n, src, format!("this call: `{name}` takes {} argument(s)", params.len())));
        }
        let span = self.span(n, src);
        let level = self.level();
        let mut stmts = Vec::new();
        let mut bound = Vec::new();
        for (a, (pname, t)) in args.iter().zip(&params) {
            let (v, ty) = match t {
                CTy::S(s) => {
                    let (e, et) = self.rvalue(*a, src)?;
                    (self.convert(e, et, *t, *a, src)?, Ty::Scalar(s.ir()))
                }
                CTy::Ptr(e) => {
                    let mem = self.ptr_mem(*a, src)?;
                    (self.pointer_init(*a, *e, src)?, self.elem_ptr(*e, mem, false))
                }
                _ => return Err(self.unsupported(*a, src, format!("this argument of `{name}` (a struct)"))),
            };
            let l = self.new_local(pname, ty, level);
            self.flush(&mut stmts);
            stmts.push(Stmt::Let { local: l, init: Some(v), span });
            bound.push((pname.clone(), Var { local: l, ty: *t }));
        }
        // The body sees the globals and its parameters, not the caller's locals.
        let mut globals = HashMap::new();
        for (i, g) in self.globals.clone().iter().enumerate() {
            if let Some(Some(l)) = self.f.global_locals.get(i) {
                globals.insert(g.name.clone(), Var { local: *l, ty: Self::global_cty(g) });
            }
        }
        let mut params_scope = HashMap::new();
        for (pname, v) in bound {
            params_scope.insert(pname, v);
        }
        let saved_scopes = std::mem::replace(&mut self.f.scopes, vec![globals, params_scope]);
        let saved_jumps = std::mem::take(&mut self.f.jumps);
        let saved_label = self.f.label.take();
        let r = self.with_definition(file, range, |lx, d, dsrc| {
            let body = lx.child(d, "body", dsrc)?;
            let items: Vec<Node> = body.named_children(&mut body.walk()).filter(|x| x.kind() != "comment").collect();
            let Some((last, rest)) = items.split_last() else {
                return Err(lx.unsupported(body, dsrc, "a function returning a pointer without a `return`"));
            };
            if last.kind() != "return_statement" || rest.iter().any(|s| has_return(*s)) {
                return Err(lx.unsupported(
                    d,
                    dsrc,
                    "a function returning a pointer whose only `return` is not its last statement",
                ));
            }
            for s in rest {
                lx.stmt(*s, dsrc, &mut stmts)?;
            }
            let Some(e) = last.named_child(0) else {
                return Err(lx.unsupported(*last, dsrc, "`return` without a value"));
            };
            let p = match lx.ptr_expr(e, dsrc)? {
                Some(p) => p,
                None => return Err(lx.unsupported(e, dsrc, "this returned value (a pointer variable or `p + i`)")),
            };
            if declared.is_some_and(|t| t != p.elem) {
                return Err(lx.unsupported(e, dsrc, "returning a pointer of another type than the function's"));
            }
            lx.flush(&mut stmts);
            Ok(p)
        });
        self.f.scopes = saved_scopes;
        self.f.jumps = saved_jumps;
        self.f.label = saved_label;
        let p = r?;
        let mem = self.local_mem(p.root);
        let elem = p.elem;
        let l = self.new_local(&format!("{name} result"), self.elem_ptr(elem, mem, false), level);
        let value = self.ptr_value(p, span);
        stmts.push(Stmt::Let { local: l, init: Some(value), span });
        self.f.pre.extend(stmts);
        Ok(PtrE::at(l, elem))
    }

    /// The memory an argument that is a pointer points into (host memory for anything that is
    /// not a pointer expression, such as `NULL`).
    fn ptr_mem(&mut self, a: Node, src: &Src) -> R<Mem> {
        let default = if self.f.gpu { Mem::GpuGlobal } else { Mem::Cpu };
        let root = match self.strip_parens(a) {
            x if x.kind() == "identifier" => self.lookup(self.text(x, src)).map(|v| v.local),
            _ => None,
        };
        Ok(root.map_or(default, |r| self.local_mem(r)))
    }

    /// The memory pointer local `l` points into.
    fn local_mem(&self, l: LocalId) -> Mem {
        match self.f.locals.get(l).map(|x| &x.ty) {
            Some(Ty::Ref(_, m) | Ty::Owned(_, m)) => *m,
            _ if self.f.gpu => Mem::GpuGlobal,
            _ => Mem::Cpu,
        }
    }
}
