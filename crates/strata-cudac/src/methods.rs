//! C++ member functions of structs (`struct Sphere { …; __device__ float hit(float x, float y,
//! float *n) {…} };`) and constructors (`CPUBitmap bitmap(DIM, DIM);`), the way CUDA code
//! written as C++ uses them.
//!
//! A member function is reached in two ways:
//!
//! * **Inlined** where it is called on a struct *variable* (`v.f(a)`) and its body is one
//!   `return E;` or has no `return` at all: the body is lowered at the call with the member names
//!   bound to the variable's own locals (so it may change them, as a constructor does) and the
//!   parameters to new locals holding the arguments. A constructor is always inlined, at the
//!   declaration `T v(a, b);`. This is also how a member function returning a pointer
//!   (`unsigned char *get_ptr() { return pixels; }`) is used: the IR's functions return scalars.
//! * **Lowered as a function** of its own, named `S::f`, whose first parameter is the struct
//!   *by value* (one IR parameter per member, as for any struct parameter), with the member
//!   names bound to that copy — for a member function with a scalar or `void` result that does
//!   not assign any member (an assignment to the copy would be lost, so such a member function is
//!   only inlined). It is called on any struct: a variable, `a[i].f(…)`, `p->f(…)`.
//!
//! Not supported (E0801): `this`, member initialiser lists (`: r(a), i(b)`), operators,
//! overloading, static members, a call that neither way can take (a member function that
//! changes its struct called on a struct in memory). A variadic constructor's extra arguments
//! (`CPUBitmap(int w, int h, ...)`) are not evaluated.

use super::*;

/// A member function or constructor of a struct, found where the struct is defined.
pub(crate) struct Method {
    pub(crate) strukt: usize,
    /// The member function's name; empty for a constructor.
    pub(crate) name: String,
    file: FileId,
    range: (usize, usize),
    /// The function it is lowered as (`S::f`), if it is one ([`Lx::declare_method`]).
    pub(crate) func: Option<String>,
}

/// A parameter of a member function: its name and type.
type Params = Vec<(String, CTy)>;

impl Lx {
    /// Records the member functions in the body of struct `id` (the first pass), and gives those
    /// that may be lowered as functions their signature.
    pub(crate) fn declare_methods(&mut self, id: usize, defs: &[Node], src: &Src) -> R<()> {
        for d in defs {
            let decl = function_declarator(self.child(*d, "declarator", src)?);
            let name_node = self.child(decl, "declarator", src)?;
            let ctor = d.child_by_field_name("type").is_none();
            let name = if ctor { String::new() } else { self.text(name_node, src).to_string() };
            if ctor && self.text(name_node, src) != self.structs[id].name.trim_start_matches("struct ") {
                return Err(self.unsupported(*d, src, "this member function"));
            }
            if self.methods.iter().any(|m| m.strukt == id && m.name == name) {
                return Err(self.unsupported(name_node, src, "overloaded member functions"));
            }
            let mut func = None;
            if !ctor && !self.assigns_member(*d, id, src) {
                if let Ok(h) = self.head(*d, src) {
                    let fname = format!("{}::{name}", self.structs[id].name.trim_start_matches("struct "));
                    let next = &mut self.next_fn;
                    let mut fresh = || {
                        *next += 1;
                        *next - 1
                    };
                    let host = h.host.then(&mut fresh);
                    let device = h.device.then(&mut fresh);
                    let mut params = vec![CTy::Struct(id)];
                    params.extend(h.params.iter().map(|p| p.1));
                    let mut defaults = vec![None];
                    defaults.extend(h.defaults.clone());
                    self.sigs
                        .insert(fname.clone(), func::Sig { kernel: false, host, device, params, ret: h.ret, defaults });
                    func = Some(fname);
                }
            }
            let (file, range) = (self.file, (d.start_byte(), d.end_byte()));
            self.methods.push(Method { strukt: id, name, file, range, func });
        }
        Ok(())
    }

    /// Whether the body of member function `d` assigns a member of struct `id` by its name.
    fn assigns_member(&self, d: Node, id: usize, src: &Src) -> bool {
        let fields: Vec<&str> = self.structs[id].fields.iter().map(|(f, _)| f.as_str()).collect();
        let mut stack = vec![d];
        while let Some(n) = stack.pop() {
            let target = match n.kind() {
                "assignment_expression" => n.child_by_field_name("left"),
                "update_expression" => n.child_by_field_name("argument"),
                _ => None,
            };
            if let Some(t) = target {
                let mut t = self.strip_parens(t);
                while matches!(t.kind(), "subscript_expression" | "field_expression") {
                    match t.child_by_field_name("argument") {
                        Some(a) => t = self.strip_parens(a),
                        None => break,
                    }
                }
                if t.kind() == "identifier" && fields.contains(&self.text(t, src)) || self.text(t, src) == "this" {
                    return true;
                }
            }
            let mut c = n.walk();
            stack.extend(n.named_children(&mut c));
        }
        false
    }

    /// The second pass over a struct's definition: its member functions that are functions.
    pub(crate) fn struct_methods(&mut self, n: Node, src: &Src) -> R<()> {
        let spec = if n.kind() == "type_definition" { self.child(n, "type", src)? } else { n };
        let Some(body) = spec.child_by_field_name("body") else { return Ok(()) };
        let mut c = body.walk();
        let defs: Vec<Node> = body.named_children(&mut c).filter(|x| x.kind() == "function_definition").collect();
        for d in defs {
            let m = self.methods.iter().find(|m| m.file == self.file && m.range == (d.start_byte(), d.end_byte()));
            let Some((id, Some(fname))) = m.map(|m| (m.strukt, m.func.clone())) else { continue };
            let mut h = self.head(d, src)?;
            h.name = fname;
            h.params.insert(0, ("this".to_string(), CTy::Struct(id)));
            h.defaults.insert(0, None);
            let r = self.function_head_of(d, h, src);
            self.recover(r, d, src);
        }
        Ok(())
    }

    /// Runs `f` on the definition of method `k`, with the file it is in as the current one.
    pub(crate) fn with_method<T>(&mut self, k: usize, f: impl FnOnce(&mut Self, Node, &Src) -> R<T>) -> R<T> {
        let (file, range) = (self.methods[k].file, self.methods[k].range);
        self.with_definition(file, range, f)
    }

    /// Runs `f` on the function definition at byte `range` of `file` (the `.cu` file or one of
    /// its headers), with that file as the current one.
    pub(crate) fn with_definition<T>(
        &mut self,
        file: FileId,
        range: (usize, usize),
        f: impl FnOnce(&mut Self, Node, &Src) -> R<T>,
    ) -> R<T> {
        let (tree, text, lines) = if file == self.root_file {
            let Some(tree) = self.root_tree.clone() else {
                return Err(Box::new(Diagnostic::error(codes::UNSUPPORTED, "a member function", Span::DUMMY, "")));
            };
            let lines = std::iter::once(0).chain(self.root_text.match_indices('\n').map(|(i, _)| i + 1)).collect();
            (tree, self.root_text.clone(), lines)
        } else {
            match self.headers.values().find(|h| h.file == file).cloned() {
                Some(h) => (h.tree.clone(), h.text.clone(), h.line_starts.clone()),
                None => {
                    return Err(Box::new(Diagnostic::error(codes::UNSUPPORTED, "a member function", Span::DUMMY, "")))
                }
            }
        };
        let src = Src { text: &text, base: 0, at: None };
        let mut node = tree.root_node().descendant_for_byte_range(range.0, range.1);
        while let Some(x) = node.filter(|x| x.kind() != "function_definition" || x.byte_range() != (range.0..range.1)) {
            node = x.parent();
        }
        let Some(node) = node else {
            return Err(Box::new(Diagnostic::error(codes::UNSUPPORTED, "a member function", Span::DUMMY, "")));
        };
        let saved_file = std::mem::replace(&mut self.file, file);
        let saved_lines = std::mem::replace(&mut self.line_starts, lines);
        let r = f(self, node, &src);
        self.file = saved_file;
        self.line_starts = saved_lines;
        r
    }

    /// The parameters of method `d` (a constructor's too), and whether it takes `...` more.
    pub(crate) fn method_params(&self, d: Node, src: &Src) -> R<(Params, bool)> {
        let decl = function_declarator(self.child(d, "declarator", src)?);
        let plist = self.child(decl, "parameters", src)?;
        let mut params = Vec::new();
        let mut variadic =
            plist.children(&mut plist.walk()).any(|x| x.kind() == "..." || x.kind() == "variadic_parameter");
        let mut c = plist.walk();
        for p in plist.named_children(&mut c) {
            match p.kind() {
                "comment" => continue,
                "variadic_parameter" => {
                    variadic = true;
                    continue;
                }
                "parameter_declaration" => {}
                _ => return Err(self.unsupported(p, src, "this parameter of a member function")),
            }
            let tn = self.child(p, "type", src)?;
            let Some(dn) = p.child_by_field_name("declarator") else {
                if self.text(tn, src) == "void" {
                    continue;
                }
                return Err(self.unsupported(p, src, "a parameter without a name"));
            };
            let elem = match self.struct_type(tn, src) {
                Some(id) => Elem::Struct(id),
                None => Elem::S(self.scalar_type(tn, src)?),
            };
            let (name, t) = match (dn.kind(), elem) {
                ("identifier", Elem::S(t)) => (dn, CTy::S(t)),
                ("identifier", Elem::Struct(id) | Elem::Split(id)) => (dn, CTy::Struct(id)),
                ("pointer_declarator", e) => (self.child(dn, "declarator", src)?, CTy::Ptr(e)),
                _ => return Err(self.unsupported(dn, src, "this parameter of a member function")),
            };
            if name.kind() != "identifier" {
                return Err(self.unsupported(dn, src, "this parameter of a member function"));
            }
            params.push((self.text(name, src).to_string(), t));
        }
        Ok((params, variadic))
    }

    /// The member function `name` of struct `id` (a constructor for `""`).
    pub(crate) fn method_index(&self, id: usize, name: &str) -> Option<usize> {
        self.methods.iter().position(|m| m.strukt == id && m.name == name)
    }

    /// Method `k` inlined on the struct variable at `local`: its arguments (`args`, nodes of the
    /// caller's `src`) bound to its parameters, its members to the variable's locals. A body of
    /// one `return E;` gives E's value; another body is lowered into `out` (none: refused).
    pub(crate) fn inline_method(
        &mut self,
        k: usize,
        local: LocalId,
        args: &[Node],
        at: Node,
        src: &Src,
        out: Option<&mut Vec<Stmt>>,
    ) -> R<Option<(Expr, CTy)>> {
        // (A body that names the variable it is inlined on would inline itself without end.)
        if self.macro_depth >= 64 {
            return Err(self.unsupported(at, src, "member functions inlined more than 64 deep"));
        }
        self.macro_depth += 1;
        let r = self.inline_method_inner(k, local, args, at, src, out);
        self.macro_depth -= 1;
        r
    }

    fn inline_method_inner(
        &mut self,
        k: usize,
        local: LocalId,
        args: &[Node],
        at: Node,
        src: &Src,
        out: Option<&mut Vec<Stmt>>,
    ) -> R<Option<(Expr, CTy)>> {
        let (params, variadic) = self.with_method(k, |lx, d, msrc| lx.method_params(d, msrc))?;
        if args.len() < params.len() || (args.len() > params.len() && !variadic) {
            let n = params.len();
            let what = if variadic { format!("at least {n}") } else { n.to_string() };
            return Err(self.unsupported(at, src, format!("this call: the member function takes {what} argument(s)")));
        }
        let span = self.span(at, src);
        let mut values = Vec::new();
        for (a, (_, t)) in args.iter().zip(&params) {
            values.push(match t {
                CTy::Struct(id) => {
                    return Err(self.unsupported(*a, src, format!("a `{}` argument here", self.structs[*id].name)))
                }
                CTy::Ptr(e) => self.pointer_init(*a, *e, src)?,
                _ => {
                    let (e, et) = self.rvalue(*a, src)?;
                    self.convert(e, et, *t, *a, src)?
                }
            });
        }
        let id = self.methods[k].strukt;
        let fields = self.structs[id].fields.clone();
        let level = self.level();
        let mut param_locals = Vec::new();
        for ((name, t), v) in params.iter().zip(values) {
            let ty = match t {
                CTy::S(s) => Ty::Scalar(s.ir()),
                CTy::Ptr(e) => self.elem_ptr(*e, if self.f.gpu { Mem::GpuGlobal } else { Mem::Cpu }, false),
                _ => return Err(self.unsupported(at, src, "this parameter")),
            };
            let l = self.new_local(name, ty, level);
            self.f.pre.push(Stmt::Let { local: l, init: Some(v), span });
            param_locals.push((name.clone(), Var { local: l, ty: *t }));
        }
        let mut out = out;
        self.with_method(k, |lx, d, msrc| {
            let body = lx.child(d, "body", msrc)?;
            lx.f.scopes.push(HashMap::new());
            for (f, (name, t)) in fields.iter().enumerate() {
                let ty = match t {
                    structs::FTy::S(s) => CTy::S(*s),
                    structs::FTy::Ptr(e) => CTy::Ptr(*e),
                    structs::FTy::Arr { .. } => continue,
                };
                lx.bind(name, Var { local: local + f, ty });
            }
            for (name, v) in &param_locals {
                lx.bind(name, *v);
            }
            if let Some(list) = d.named_children(&mut d.walk()).find(|x| x.kind() == "field_initializer_list") {
                let Some(out) = out.as_deref_mut() else {
                    lx.f.scopes.pop();
                    return Err(lx.unsupported(list, msrc, "a member initialiser list here"));
                };
                let r = lx.field_initializers(list, local, id, msrc, out);
                if let Err(e) = r {
                    lx.f.scopes.pop();
                    return Err(e);
                }
            }
            let stmts: Vec<Node> = body.named_children(&mut body.walk()).filter(|x| x.kind() != "comment").collect();
            let r = match (&stmts[..], out) {
                ([ret], _) if ret.kind() == "return_statement" => match ret.named_child(0) {
                    Some(e) => lx.rvalue(e, msrc).map(Some),
                    None => Ok(None),
                },
                (_, Some(out)) if !has_return(body) => {
                    let depth = lx.f.scopes.len();
                    let r = lx.block(body, msrc, out);
                    lx.f.scopes.truncate(depth);
                    r.map(|()| None)
                }
                _ => Err(lx.unsupported(
                    d,
                    msrc,
                    "this member function here (it is not one `return` or a body without `return`)",
                )),
            };
            lx.f.scopes.pop();
            r
        })
    }

    /// A constructor's member initialiser list (`: r(a), i(b)`): each member it names set from
    /// its one argument, in the order the members are declared (as C++ initialises them). Members
    /// that are arrays, and initialisers with other than one argument, are refused (E0801).
    fn field_initializers(&mut self, list: Node, local: LocalId, id: usize, src: &Src, out: &mut Vec<Stmt>) -> R<()> {
        let fields = self.structs[id].fields.clone();
        let mut inits = Vec::new();
        for fi in list.named_children(&mut list.walk()).filter(|x| x.kind() != "comment") {
            let name = fi.named_child(0).filter(|x| x.kind() == "field_identifier");
            let args = fi.named_child(1).filter(|x| x.kind() == "argument_list");
            let (Some(name), Some(args)) = (name, args) else {
                return Err(self.unsupported(fi, src, "this member initialiser (write `m(value)`)"));
            };
            let Some(f) = fields.iter().position(|(n, _)| n == self.text(name, src)) else {
                return Err(self.unsupported(
                    name,
                    src,
                    format!("`{}` has no member `{}`", self.structs[id].name, self.text(name, src)),
                ));
            };
            let vals: Vec<Node> = args.named_children(&mut args.walk()).filter(|x| x.kind() != "comment").collect();
            let [v] = vals[..] else {
                return Err(self.unsupported(args, src, "a member initialiser with other than one value"));
            };
            if inits.iter().any(|(g, _)| *g == f) {
                return Err(self.unsupported(fi, src, "a member initialised twice"));
            }
            inits.push((f, v));
        }
        inits.sort_by_key(|(f, _)| *f);
        for (f, v) in inits {
            let value = match fields[f].1 {
                structs::FTy::S(t) => {
                    let (e, et) = self.rvalue(v, src)?;
                    self.convert(e, et, CTy::S(t), v, src)?
                }
                structs::FTy::Ptr(e) => self.pointer_init(v, e, src)?,
                structs::FTy::Arr { .. } => {
                    return Err(self.unsupported(v, src, "a member initialiser of an array member"));
                }
            };
            self.flush(out);
            out.push(Stmt::Let { local: local + f, init: Some(value), span: self.span(v, src) });
        }
        Ok(())
    }

    /// `T v(a, b);` of a struct `T` with a constructor: `v`'s locals, then the constructor's body
    /// on them.
    pub(crate) fn construct(
        &mut self,
        d: Node,
        list: &[Node],
        at: Node,
        id: usize,
        src: &Src,
        out: &mut Vec<Stmt>,
    ) -> R<()> {
        let Some(k) = self.method_index(id, "") else {
            return Err(self.unsupported(at, src, format!("`{}` has no constructor", self.structs[id].name)));
        };
        let name = self.text(d, src);
        self.flush(out);
        let level = self.level();
        let first = self.struct_locals(name, id, level, false);
        let span = self.span(d, src);
        for f in 0..self.structs[id].fields.len() {
            let init = match self.structs[id].fields[f].1 {
                structs::FTy::Arr { .. } => Some(self.field_zero(self.structs[id].fields[f].1)),
                _ => None,
            };
            out.push(Stmt::Let { local: first + f, init, span });
        }
        let mut body = Vec::new();
        self.inline_method(k, first, list, at, src, Some(&mut body))?;
        self.flush(out);
        out.extend(body);
        self.bind(name, Var { local: first, ty: CTy::Struct(id) });
        Ok(())
    }

    /// `o.f(a)` / `p->f(a)` (`fnode` the field expression) as a value.
    pub(crate) fn method_value(&mut self, n: Node, fnode: Node, src: &Src) -> R<(Expr, CTy)> {
        match self.method_call(n, fnode, src, None)? {
            Some((_, CTy::S(ScalarTy::Unit))) | None => {
                Err(self.unsupported(n, src, "the value of a member function that returns `void`"))
            }
            Some(v) => Ok(v),
        }
    }

    /// `o.f(a);` as a statement.
    pub(crate) fn method_stmt(&mut self, n: Node, fnode: Node, src: &Src, out: &mut Vec<Stmt>) -> R<()> {
        if let Some((e, _)) = self.method_call(n, fnode, src, Some(out))? {
            out.push(Stmt::Eval(e));
        }
        Ok(())
    }

    fn method_call(&mut self, n: Node, fnode: Node, src: &Src, out: Option<&mut Vec<Stmt>>) -> R<Option<(Expr, CTy)>> {
        let obj = self.strip_parens(self.child(fnode, "argument", src)?);
        let fname = self.text(self.child(fnode, "field", src)?, src).to_string();
        let arrow = self.text(self.child(fnode, "operator", src)?, src) == "->";
        let args = self.args(n, src)?;
        let var = (!arrow && obj.kind() == "identifier").then(|| self.lookup(self.text(obj, src))).flatten();
        // The receiver: a struct variable, or a struct in memory.
        let (id, receiver) = match var {
            Some(Var { local, ty: CTy::Struct(id) }) => (id, Err(local)),
            _ => {
                let span = self.span(obj, src);
                let at = if arrow {
                    match self.ptr_expr(obj, src)? {
                        Some(p) => match p.elem {
                            Elem::Struct(id) => {
                                Some(structs::StructAt { base: self.ptr_place(p, None, span), id, split: false })
                            }
                            _ => None,
                        },
                        None => None,
                    }
                } else {
                    self.struct_in_memory(obj, src)?.filter(|a| !a.split)
                };
                let Some(at) = at else {
                    return Err(self.unsupported(fnode, src, "a member function called on anything but a struct"));
                };
                let loads = (0..self.structs[at.id].fields.len()).map(|k| Expr::Load(at.field(k))).collect::<Vec<_>>();
                (at.id, Ok(loads))
            }
        };
        let Some(k) = self.method_index(id, &fname) else {
            return Err(self.unsupported(
                fnode,
                src,
                format!("`{}` has no member function `{fname}`", self.structs[id].name),
            ));
        };
        if let Err(local) = receiver {
            let inlinable = self.with_method(k, |lx, d, msrc| {
                let body = lx.child(d, "body", msrc)?;
                let stmts: Vec<Node> =
                    body.named_children(&mut body.walk()).filter(|x| x.kind() != "comment").collect();
                Ok(matches!(&stmts[..], [r] if r.kind() == "return_statement") || !has_return(body))
            })?;
            if inlinable {
                let mut body = Vec::new();
                let r = self.inline_method(k, local, &args, n, src, Some(&mut body))?;
                match out {
                    Some(out) => {
                        self.flush(out);
                        out.extend(body);
                    }
                    None if body.is_empty() => {}
                    None => return Err(self.unsupported(n, src, "a member function without a result used as a value")),
                }
                return Ok(r);
            }
        }
        let Some(func) = self.methods[k].func.clone() else {
            return Err(self.unsupported(
                n,
                src,
                "this member function here (it changes its struct's members or returns a pointer: call it on a struct \
                 variable, where it is inlined)",
            ));
        };
        let receiver = match receiver {
            Ok(loads) => loads,
            Err(local) => {
                let span = self.span(obj, src);
                (0..self.structs[id].fields.len()).map(|f| Expr::Load(Place::local(local + f, span))).collect()
            }
        };
        let Some(sig) = self.sigs.get(&func).cloned() else { return Err(self.unsupported(n, src, "this call")) };
        let Some(fid) = (if self.f.gpu { sig.device } else { sig.host }) else {
            let side = if self.f.gpu { "GPU" } else { "host" };
            return Err(self.unsupported(n, src, format!("a call of `{func}` from {side} code")));
        };
        if args.len() + 1 > sig.params.len() || sig.defaults[args.len() + 1..].iter().any(Option::is_none) {
            return Err(self.unsupported(n, src, format!("`{func}` takes {} arguments", sig.params.len() - 1)));
        }
        let mut values = receiver;
        values.extend(self.arguments(&func, &args, &sig.params[1..args.len() + 1], src)?);
        values.extend(sig.defaults[args.len() + 1..].iter().flatten().cloned());
        values.extend(self.global_args(self.f.gpu, self.span(n, src)));
        let call = Expr::Call { func: fid, nats: Vec::new(), args: values, span: self.span(n, src) };
        Ok(Some(match sig.ret {
            Some(t) => (call, CTy::S(t)),
            None => (call, CTy::S(ScalarTy::Unit)),
        }))
    }
}

/// The function declarator of a definition's declarator (`*f(…)` of a function returning a
/// pointer is a pointer declarator around it).
pub(crate) fn function_declarator(mut d: Node) -> Node {
    while d.kind() == "pointer_declarator" {
        match d.child_by_field_name("declarator") {
            Some(x) => d = x,
            None => break,
        }
    }
    d
}

/// Whether a `return` statement is anywhere in `n`.
pub(crate) fn has_return(n: Node) -> bool {
    let mut stack = vec![n];
    while let Some(x) = stack.pop() {
        if x.kind() == "return_statement" {
            return true;
        }
        let mut c = x.walk();
        stack.extend(x.named_children(&mut c));
    }
    false
}
