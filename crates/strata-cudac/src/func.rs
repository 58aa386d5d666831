//! Function definitions: kernels (`__global__`), `__device__`, `__host__` and `__host__
//! __device__` functions, and `main`; calls of user functions.
//!
//! Every function is known before any body is lowered ([`Lx::declare`], a first pass over the
//! file), so a function may call one defined later, or itself. A `__device__` function becomes an
//! IR function of kind [`FnKind::Device`] that a GPU thread calls ([`Expr::Call`]); a host
//! function (plain or `__host__`) one of kind [`FnKind::Host`]; a `__host__ __device__` function
//! is lowered twice, once for each side.

use super::*;

/// Where a function's body runs, and what `return` means in it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub(crate) enum Role {
    #[default]
    Main,
    Kernel,
    Device,
    Host,
}

/// A user function as its callers see it.
#[derive(Clone, Debug)]
pub(crate) struct Sig {
    pub(crate) kernel: bool,
    /// The host version's id (`__host__` or no qualifier, and `main`).
    pub(crate) host: Option<FnId>,
    /// The device version's id (`__device__`), or the kernel's.
    pub(crate) device: Option<FnId>,
    pub(crate) params: Vec<CTy>,
    /// `None`: `void`.
    pub(crate) ret: Option<ScalarTy>,
    /// Each parameter's default argument (`bool abort = true`), a constant of its type.
    pub(crate) defaults: Vec<Option<Expr>>,
}

/// A parsed function head.
pub(crate) struct Head<'t> {
    pub(crate) name: String,
    name_node: Node<'t>,
    pub(crate) kernel: bool,
    pub(crate) host: bool,
    pub(crate) device: bool,
    pub(crate) ret: Option<ScalarTy>,
    /// Each parameter's name and type (none for `main`: its `argc` and `argv` are `main_args`).
    pub(crate) params: Vec<(String, CTy)>,
    /// Each parameter's default argument, if it has one.
    pub(crate) defaults: Vec<Option<Expr>>,
    main_args: Vec<String>,
}

impl Lx {
    /// The head of function definition `n` (or of a prototype `n`, a declaration).
    pub(crate) fn head<'t>(&self, n: Node<'t>, src: &Src) -> R<Head<'t>> {
        let (mut kernel, mut host, mut device) = (false, false, false);
        let mut c = n.walk();
        for ch in n.children(&mut c) {
            match ch.kind() {
                "__global__" => kernel = true,
                "__host__" => host = true,
                "__device__" => device = true,
                "storage_class_specifier" if matches!(self.text(ch, src), "static" | "inline") => {}
                "storage_class_specifier" | "type_qualifier" | "attribute_specifier" | "ms_declspec_modifier" => {
                    return Err(self.unsupported(ch, src, format!("functions with `{}`", self.text(ch, src))));
                }
                _ => {}
            }
        }
        if kernel && (host || device) {
            return Err(self.unsupported(n, src, "a `__global__` function that is also `__host__` or `__device__`"));
        }
        if !kernel && !device {
            host = true;
        }
        let decl = self.child(n, "declarator", src)?;
        if decl.kind() != "function_declarator" {
            return Err(self.unsupported(decl, src, "this function declarator (functions returning pointers?)"));
        }
        let name_node = self.child(decl, "declarator", src)?;
        let name = self.text(name_node, src).to_string();
        let ret_node = self.child(n, "type", src)?;
        let ret = match self.text(ret_node, src) {
            "void" => None,
            _ => Some(self.scalar_type(ret_node, src)?),
        };
        if kernel && ret.is_some() {
            return Err(self.unsupported(ret_node, src, "a kernel must return `void`"));
        }
        if name == "main" {
            if ret != Some(ScalarTy::I32) {
                return Err(self.unsupported(ret_node, src, "`main` must return `int`"));
            }
            if device || kernel {
                return Err(self.unsupported(name_node, src, "`main` on the GPU"));
            }
        }
        let mut params = Vec::new();
        let mut main_args = Vec::new();
        let mut defaults = Vec::new();
        let plist = self.child(decl, "parameters", src)?;
        let mut c = plist.walk();
        for p in plist.named_children(&mut c) {
            if p.kind() == "comment" {
                continue;
            }
            if !matches!(p.kind(), "parameter_declaration" | "optional_parameter_declaration") {
                return Err(self.unsupported(p, src, "this parameter"));
            }
            if name == "main" {
                // `int main(void)` or `int main(int argc, char **argv)` (or `char *argv[]`):
                // `argc` is a number, `argv[i]` a string ([`strings`]).
                let mut d = p.child_by_field_name("declarator");
                while let Some(x) = d.filter(|x| x.kind() != "identifier") {
                    d = x.child_by_field_name("declarator");
                }
                if let Some(d) = d {
                    main_args.push(self.text(d, src).to_string());
                }
                continue;
            }
            let ty_node = self.child(p, "type", src)?;
            let Some(d) = p.child_by_field_name("declarator") else {
                if self.text(ty_node, src) == "void" {
                    continue; // `f(void)`
                }
                // A parameter without a name (a prototype's, or one the function does not use).
                let elem = match self.struct_type(ty_node, src) {
                    Some(id) => CTy::Struct(id),
                    None => CTy::S(self.scalar_type(ty_node, src)?),
                };
                params.push((String::new(), elem));
                defaults.push(match p.child_by_field_name("default_value") {
                    Some(v) => Some(self.default_arg(v, elem, src)?),
                    None => None,
                });
                continue;
            };
            let elem = match self.struct_type(ty_node, src) {
                Some(id) => Elem::Struct(id),
                None => Elem::S(self.scalar_type(ty_node, src)?),
            };
            let (pname, cty) = match (d.kind(), elem) {
                ("identifier", Elem::S(t)) => (self.text(d, src), CTy::S(t)),
                ("identifier", Elem::Struct(id)) => (self.text(d, src), CTy::Struct(id)),
                ("pointer_declarator", _) => {
                    let inner = self.child(d, "declarator", src)?;
                    if inner.kind() != "identifier" {
                        return Err(self.unsupported(inner, src, "pointers to pointers"));
                    }
                    (self.text(inner, src), CTy::Ptr(elem))
                }
                // `int p[]`, `float p[N]`: a pointer, as in C.
                ("array_declarator", _) => {
                    let inner = self.child(d, "declarator", src)?;
                    if inner.kind() != "identifier" {
                        return Err(self.unsupported(d, src, "pointer-to-array parameters (`float a[][4]`)"));
                    }
                    (self.text(inner, src), CTy::Ptr(elem))
                }
                ("abstract_pointer_declarator", _) if d.named_child_count() == 0 => ("", CTy::Ptr(elem)),
                ("abstract_array_declarator", _) => ("", CTy::Ptr(elem)),
                // `float &x`, `const int &n`: a reference to a scalar.
                ("reference_declarator", Elem::S(t)) if !kernel => {
                    let inner = d.named_child(0).filter(|i| i.kind() == "identifier");
                    let Some(inner) = inner else {
                        return Err(self.unsupported(d, src, "this reference parameter"));
                    };
                    (self.text(inner, src), CTy::RefS(t))
                }
                ("reference_declarator", _) => {
                    return Err(self.unsupported(
                        d,
                        src,
                        "C++ reference parameters of kernels or to structs (use a pointer, or pass by value)",
                    ))
                }
                _ => return Err(self.unsupported(d, src, "this parameter declarator")),
            };
            params.push((pname.to_string(), cty));
            defaults.push(match p.child_by_field_name("default_value") {
                Some(v) => Some(self.default_arg(v, cty, src)?),
                None => None,
            });
        }
        Ok(Head { name, name_node, kernel, host, device, ret, params, main_args, defaults })
    }

    /// The first pass: every function definition gets its ids (one per side it runs on).
    pub(crate) fn declare(&mut self, root: Node, src: &Src) -> R<()> {
        let mut c = root.walk();
        let in_root = self.file == self.root_file;
        for (i, n) in root.named_children(&mut c).enumerate() {
            let r = if n.kind() == "template_declaration" {
                self.declare_template(n, in_root.then(|| u32::try_from(i).ok()).flatten(), src)
            } else {
                self.declare_item(n, src)
            };
            self.recover(r, n, src);
        }
        Ok(())
    }

    /// [`Lx::declare`] of one item.
    fn declare_item(&mut self, n: Node, src: &Src) -> R<()> {
        {
            if matches!(n.kind(), "struct_specifier" | "type_definition") {
                // Types first, for the functions' parameters.
                return self.struct_item(n, src);
            }
            if n.kind() == "preproc_include" {
                return self.include(n, src, true).map(|_| ());
            }
            if matches!(n.kind(), "preproc_def" | "preproc_function_def") {
                // Macros too, for the sizes and initialisers of globals.
                return self.item(n, src);
            }
            if n.kind() == "declaration"
                && n.child_by_field_name("declarator").is_some_and(|d| d.kind() != "function_declarator")
            {
                return self.global_declaration(n, src);
            }
            if n.kind() != "function_definition" {
                return Ok(());
            }
            if self.returns_pointer(n) {
                return self.declare_ptr_fn(n, src);
            }
            let h = self.head(n, src)?;
            if self.sigs.contains_key(&h.name) {
                return Err(self.unsupported(
                    h.name_node,
                    src,
                    format!("a second definition of `{}` (C++ overloading)", h.name),
                ));
            }
            let next = &mut self.next_fn;
            let mut id = || {
                *next += 1;
                *next - 1
            };
            let host = h.host.then(&mut id);
            let device = (h.device || h.kernel).then(&mut id);
            let params = h.params.iter().map(|p| p.1).collect();
            let defaults = h.defaults.clone();
            self.sigs.insert(h.name.clone(), Sig { kernel: h.kernel, host, device, params, ret: h.ret, defaults });
        }
        Ok(())
    }

    /// A prototype at file level: allowed for a function defined in the file, with the same
    /// signature.
    pub(crate) fn prototype(&mut self, n: Node, src: &Src) -> R<()> {
        let h = self.head(n, src)?;
        let same = self.sigs.get(&h.name).is_some_and(|s| {
            s.kernel == h.kernel
                && s.host.is_some() == h.host
                && s.device.is_some() == (h.device || h.kernel)
                && s.ret == h.ret
                && s.params == h.params.iter().map(|p| p.1).collect::<Vec<_>>()
        });
        if !same {
            return Err(self.unsupported(
                n,
                src,
                "a function declaration without a definition of the same signature in this file",
            ));
        }
        // Default arguments are usually written in the prototype.
        if let Some(sig) = self.sigs.get_mut(&h.name) {
            for (d, p) in sig.defaults.iter_mut().zip(h.defaults) {
                if p.is_some() {
                    *d = p;
                }
            }
        }
        Ok(())
    }

    pub(crate) fn function(&mut self, n: Node, src: &Src) -> R<()> {
        let h = self.head(n, src)?;
        self.function_head(n, h, src)
    }

    /// [`Lx::function`] of an instantiation of a function template, named `name`
    /// ([`templates`]).
    pub(crate) fn function_named(&mut self, n: Node, name: &str, src: &Src) -> R<()> {
        let mut h = self.head(n, src)?;
        h.name = name.to_string();
        self.function_head(n, h, src)
    }

    /// [`Lx::function_head`] for a member function lowered as a function ([`methods`]).
    pub(crate) fn function_head_of(&mut self, n: Node, h: Head, src: &Src) -> R<()> {
        self.function_head(n, h, src)
    }

    fn function_head(&mut self, n: Node, h: Head, src: &Src) -> R<()> {
        let mut roles = Vec::new();
        if h.kernel {
            roles.push(Role::Kernel);
        }
        if h.host {
            roles.push(if h.name == "main" { Role::Main } else { Role::Host });
        }
        if h.device {
            roles.push(Role::Device);
        }
        // Host first, then device: the order `declare` numbered them in.
        for role in roles {
            self.function_as(n, &h, role, src)?;
        }
        Ok(())
    }

    fn function_as(&mut self, n: Node, h: &Head, role: Role, src: &Src) -> R<()> {
        let gpu = matches!(role, Role::Kernel | Role::Device);
        self.f =
            FnState { gpu, role, ret: h.ret, scopes: vec![HashMap::new()], name: h.name.clone(), ..FnState::default() };
        if role == Role::Main {
            // The globals' allocations are `main`'s first locals and statements.
            self.f.locals = self.prologue.locals.clone();
            self.bind_globals_in_main();
        }
        let mut params = Vec::new();
        for (pname, cty) in &h.params {
            if let CTy::Struct(id) = cty {
                // One parameter per field.
                let level = if role == Role::Kernel { Level::Block } else { self.level() };
                let first = self.struct_locals(pname, *id, level, true);
                params.extend(first..self.f.locals.len());
                self.bind(pname, Var { local: first, ty: *cty });
                if pname == "this" {
                    // A member function's struct ([`methods`]): its members by their names.
                    let fields = self.structs[*id].fields.clone();
                    for (k, (f, t)) in fields.iter().enumerate() {
                        let ty = match t {
                            structs::FTy::S(s) => CTy::S(*s),
                            structs::FTy::Ptr(e) => CTy::Ptr(*e),
                            structs::FTy::Arr { .. } => continue,
                        };
                        self.bind(f, Var { local: first + k, ty });
                    }
                }
                continue;
            }
            let (ty, level) = match (cty, role) {
                (CTy::S(t), Role::Kernel) => (Ty::Scalar(t.ir()), Level::Block),
                (CTy::S(t), _) => (Ty::Scalar(t.ir()), self.level()),
                (CTy::Ptr(t), Role::Kernel) => (self.elem_ptr(*t, Mem::GpuGlobal, false), Level::Block),
                (CTy::Ptr(t), _) => {
                    (self.elem_ptr(*t, if gpu { Mem::GpuGlobal } else { Mem::Cpu }, false), self.level())
                }
                (CTy::RefS(t), _) => {
                    let p = self.elem_ptr(Elem::S(*t), if gpu { Mem::GpuGlobal } else { Mem::Cpu }, false);
                    let l = self.new_local(pname, p, self.level());
                    self.bind(pname, Var { local: l, ty: CTy::SharedScalar(*t) });
                    params.push(l);
                    continue;
                }
                (
                    CTy::Dim3
                    | CTy::SharedScalar(_)
                    | CTy::Struct(_)
                    | CTy::SharedStruct(_)
                    | CTy::Null
                    | CTy::Stream
                    | CTy::Event
                    | CTy::StreamArray
                    | CTy::EventArray,
                    _,
                ) => return Err(self.unsupported(n, src, "`dim3` parameters")),
            };
            let l = self.new_local(pname, ty, level);
            if let (CTy::S(t), Role::Kernel) = (cty, role) {
                if let Some(bits) = t.narrow() {
                    self.prologue.narrow_params.insert((h.name.clone(), l), bits);
                }
            }
            self.bind(pname, Var { local: l, ty: *cty });
            params.push(l);
        }
        if role != Role::Main {
            params.extend(self.global_params(role));
        }
        let body_node = self.child(n, "body", src)?;
        let mut body = if role == Role::Main { self.prologue.body.clone() } else { Vec::new() };
        if role == Role::Kernel {
            self.file_shared_in_kernel(n, src, &mut body)?;
        }
        if role == Role::Main {
            // `argc`: the run's arguments (after `--`) and the program's name.
            if let Some(argc) = h.main_args.first() {
                let span = self.span(h.name_node, src);
                let l = self.new_local(argc, Ty::Scalar(ir::ScalarTy::I32), Level::Host);
                let count = cast(Expr::Builtin(Builtin::ArgCount, Vec::new(), span), ScalarTy::U64, ScalarTy::I32);
                let init = Expr::Binary(BinOp::Add, Box::new(count), Box::new(int(1, ScalarTy::I32)));
                body.push(Stmt::Let { local: l, init: Some(init), span });
                self.bind(argc, Var { local: l, ty: CTy::S(ScalarTy::I32) });
            }
            self.f.argv = h.main_args.get(1).cloned();
        }
        let refused = self.errors.len();
        self.f.at_body = true;
        self.block(body_node, src, &mut body)?;
        // (A body with a refused statement may lack the `return` that statement was.)
        if matches!(role, Role::Device | Role::Host)
            && h.ret.is_some()
            && !always_returns(&body)
            && self.errors.len() == refused
        {
            let close = body_node.child(body_node.child_count().saturating_sub(1)).unwrap_or(body_node);
            return Err(self.unsupported(
                close,
                src,
                format!("the end of `{}`, which returns a value, reached without a `return`", h.name),
            ));
        }
        let fs = std::mem::take(&mut self.f);
        let kind = match role {
            Role::Kernel => {
                // The shape is the launch's (the warp collectives' exchange buffers are sized by it).
                let dims = |f: fn(ir::DimName) -> IExpr| [ir::DimName::X, ir::DimName::Y, ir::DimName::Z].map(f);
                body = vec![Stmt::Threads { set: Vec::new(), body }];
                FnKind::Kernel {
                    grid: dims(IExpr::GridDim),
                    block: dims(IExpr::BlockDim),
                    shared: fs.shared,
                    ordered: false,
                }
            }
            Role::Device => FnKind::Device,
            Role::Host | Role::Main => FnKind::Host,
        };
        self.functions.push(ir::Function {
            name: h.name.clone(),
            kind,
            nat_params: if role == Role::Kernel { vec![SMEM_PARAM.to_string()] } else { Vec::new() },
            nat_max: HashMap::new(),
            params,
            locals: fs.locals,
            body,
            ret: Ty::Scalar(h.ret.unwrap_or(ScalarTy::Unit).ir()),
            span: self.span(n, src),
            shrd_params: Vec::new(),
        });
        Ok(())
    }

    /// A call of a user function `name` (not a launch): the callee for this side, the
    /// arguments converted to the parameters' types. Its type is `None` for a `void` function.
    pub(crate) fn user_call(&mut self, n: Node, name: &str, args: &[Node], src: &Src) -> R<(Expr, Option<ScalarTy>)> {
        let fnode = self.child(n, "function", src)?;
        let Some(sig) = self.sigs.get(name).cloned() else {
            return Err(self.unsupported(fnode, src, format!("calls of `{name}`")));
        };
        if sig.kernel {
            return Err(self.unsupported(n, src, format!("a call of kernel `{name}` without `<<<…>>>`")));
        }
        let func = if self.f.gpu { sig.device } else { sig.host };
        let Some(func) = func else {
            let (what, side) = if self.f.gpu { ("host", "GPU") } else { ("`__device__`", "host") };
            return Err(self.unsupported(n, src, format!("a call of {what} function `{name}` from {side} code")));
        };
        let defaulted = args.len() <= sig.params.len() && sig.defaults[args.len()..].iter().all(Option::is_some);
        if !defaulted {
            return Err(self.unsupported(
                n,
                src,
                format!("`{name}` takes {} arguments, not {}", sig.params.len(), args.len()),
            ));
        }
        let mut values = self.arguments(name, args, &sig.params[..args.len()], src)?;
        for d in sig.defaults[args.len()..].iter().flatten() {
            values.push(match d {
                Expr::Lit(Lit::Str(text)) if !self.f.gpu => {
                    let p = self.literal_buffer(text, self.span(n, src));
                    self.ptr_value(p, self.span(n, src))
                }
                Expr::Lit(Lit::Str(_)) => {
                    return Err(self.unsupported(n, src, "a string default argument in GPU code"))
                }
                d => d.clone(),
            });
        }
        values.extend(self.global_args(self.f.gpu, self.span(n, src)));
        let call = Expr::Call { func, nats: Vec::new(), args: values, span: self.span(n, src) };
        Ok((call, sig.ret))
    }
}

impl Lx {
    /// A default argument (`= 3`, `= 0.5f`, `= true`, `= NULL`): a constant of the parameter's
    /// type.
    fn default_arg(&self, v: Node, t: CTy, src: &Src) -> R<Expr> {
        let text = self.text(v, src).trim();
        let bad = || self.unsupported(v, src, "this default argument (a constant is supported)");
        Ok(match t {
            CTy::S(ScalarTy::Bool) => Expr::Lit(Lit::Bool(match text {
                "true" => true,
                "false" => false,
                _ => self.constant(v, src)? != 0,
            })),
            CTy::S(f @ (ScalarTy::F32 | ScalarTy::F64)) => {
                let num = text.trim_end_matches(['f', 'F']).parse::<f64>().map_err(|_| bad())?;
                Expr::Lit(Lit::Float(num, f.ir()))
            }
            CTy::S(s) => cast(int(u128::from(self.constant(v, src)?), ScalarTy::U64), ScalarTy::U64, s),
            CTy::Ptr(_) if matches!(text, "NULL" | "nullptr" | "0") => {
                Expr::Builtin(Builtin::NullPtr, Vec::new(), self.span(v, src))
            }
            // A string: made into a buffer at each call that uses it ([`Lx::user_call`]).
            CTy::Ptr(Elem::S(ScalarTy::I8 | ScalarTy::U8)) if v.kind() == "string_literal" => {
                Expr::Lit(Lit::Str(self.string_text(v, src)?))
            }
            _ => return Err(bad()),
        })
    }

    /// The argument of a reference parameter `T &x`: a pointer to the variable or element it
    /// names, or to a temporary holding its value where it names none (C++ binds a `const T &`
    /// to a temporary so).
    fn reference_arg(&mut self, a: Node, t: ScalarTy, src: &Src) -> R<Expr> {
        let span = self.span(a, src);
        let a = self.strip_parens(a);
        let op = a.child_by_field_name("operator").map(|o| self.text(o, src));
        if a.kind() == "field_expression" {
            let base = a.child_by_field_name("argument").map(|b| self.strip_parens(b));
            if op != Some(".") || base.is_none_or(|b| b.kind() != "identifier") {
                return Err(self.unsupported(a, src, "a field of a struct in memory as a reference argument"));
            }
        }
        let lvalue = match a.kind() {
            "identifier" | "subscript_expression" | "field_expression" => true,
            "pointer_expression" => op == Some("*"),
            _ => false,
        };
        if lvalue {
            let (place, pt) = self.place(a, src)?;
            if pt != t {
                return Err(self.unsupported(
                    a,
                    src,
                    format!("a `{} &` bound to a `{}`", device::c_name(t), device::c_name(pt)),
                ));
            }
            if place.path.is_empty() {
                // A local variable: the IR's reference to it, as `&x`.
                let p = self.local_address(place.root, t, span);
                return Ok(self.ptr_value(p, span));
            }
            return Ok(Expr::Ref(place));
        }
        let (e, et) = self.rvalue(a, src)?;
        let e = self.convert(e, et, CTy::S(t), a, src)?;
        let l = self.new_local("reference temporary", Ty::Scalar(t.ir()), self.level());
        self.f.pre.push(Stmt::Let { local: l, init: Some(e), span });
        let p = self.local_address(l, t, span);
        Ok(self.ptr_value(p, span))
    }
}

/// Whether every path through `body` ends in a `return`.
fn always_returns(body: &[Stmt]) -> bool {
    match body.last() {
        Some(Stmt::Return(_)) => true,
        Some(Stmt::If { then, els, .. }) => always_returns(then) && always_returns(els),
        _ => false,
    }
}

impl Lx {
    /// Arguments converted to the parameters' types; a struct argument is one value per field.
    /// `&p->f` is a pointer argument only if `callee` uses it at offset 0 only ([`field_ptr`]).
    pub(crate) fn arguments(&mut self, callee: &str, args: &[Node], params: &[CTy], src: &Src) -> R<Vec<Expr>> {
        let mut values = Vec::new();
        for (k, (a, pt)) in args.iter().zip(params).enumerate() {
            if let CTy::Struct(id) = pt {
                values.extend(self.struct_value(*a, *id, src)?);
                continue;
            }
            if let CTy::RefS(t) = pt {
                values.push(self.reference_arg(*a, *t, src)?);
                continue;
            }
            if let (CTy::Ptr(Elem::S(t)), Some(f)) = (pt, self.memory_field_address(*a, src)) {
                self.field_pointer_to_param(*a, callee, k, src)?;
                values.push(self.field_pointer(f, *t, src)?);
                continue;
            }
            let (e, t) = self.rvalue(*a, src)?;
            values.push(self.convert(e, t, *pt, *a, src)?);
        }
        Ok(values)
    }
}
