//! Statements and declarations.

use super::*;

impl Lx {
    pub(crate) fn block(&mut self, n: Node, src: &Src, out: &mut Vec<Stmt>) -> R<()> {
        self.f.scopes.push(HashMap::new());
        let mut c = n.walk();
        let stmts: Vec<Node> = n.named_children(&mut c).collect();
        // The function's own body (not a member function's inlined into it).
        let outermost = std::mem::take(&mut self.f.at_body);
        let start = out.len();
        if outermost {
            self.declare_label(&stmts, src, out)?;
        }
        for s in stmts {
            if outermost && s.kind() == "labeled_statement" {
                // A `goto` to the label skips the statements before it from where it is.
                if let Some((_, flag, _)) = self.f.label.clone() {
                    let before: Vec<Stmt> = out.drain(start..).collect();
                    out.extend(control::guard(before, &[flag]));
                }
            }
            // A refused statement is recorded and the next one lowered ([`Lx::recover`]).
            let depth = (self.f.scopes.len(), self.f.jumps.len());
            let r = self.stmt(s, src, out);
            self.f.scopes.truncate(depth.0);
            self.f.jumps.truncate(depth.1);
            self.recover(r, s, src);
        }
        self.f.scopes.pop();
        Ok(())
    }

    /// One statement, preceded by the statements its expressions need (`?:`, `&&`).
    pub(crate) fn stmt(&mut self, n: Node, src: &Src, out: &mut Vec<Stmt>) -> R<()> {
        let start = out.len();
        let outer = std::mem::take(&mut self.f.pre);
        let r = self.stmt_inner(n, src, out);
        let pre = std::mem::replace(&mut self.f.pre, outer);
        r?;
        out.splice(start..start, pre);
        Ok(())
    }

    fn stmt_inner(&mut self, n: Node, src: &Src, out: &mut Vec<Stmt>) -> R<()> {
        match n.kind() {
            "comment" => {}
            // A `#define` inside a function: defined from there on, as the preprocessor does.
            "preproc_def" | "preproc_function_def" => self.item(n, src)?,
            "compound_statement" => self.block(n, src, out)?,
            "declaration" => self.declaration(n, src, out)?,
            "expression_statement" => {
                let mut c = n.walk();
                let e = n.named_children(&mut c).find(|e| e.kind() != "comment");
                if let Some(e) = e {
                    self.expr_stmt(e, src, out)?;
                }
            }
            "if_statement" => {
                let cond = self.cond(self.child(self.child(n, "condition", src)?, "value", src)?, src)?;
                self.flush(out);
                let mut then = Vec::new();
                self.scoped(self.child(n, "consequence", src)?, src, &mut then)?;
                let mut els = Vec::new();
                if let Some(e) = n.child_by_field_name("alternative") {
                    let mut c = e.walk();
                    for s in e.named_children(&mut c) {
                        self.scoped(s, src, &mut els)?;
                    }
                }
                out.push(Stmt::If { cond, then, els, span: self.span(n, src) });
            }
            "while_statement" => {
                let cond = self.child(self.child(n, "condition", src)?, "value", src)?;
                self.lower_loop(n, (Some(cond), self.child(n, "body", src)?, None, false), src, out)?;
            }
            "do_statement" => {
                let cond = self.child(n, "condition", src)?;
                self.lower_loop(n, (Some(cond), self.child(n, "body", src)?, None, true), src, out)?;
            }
            "break_statement" | "continue_statement" => self.jump(n, src, out)?,
            "goto_statement" => self.goto(n, src, out)?,
            "labeled_statement" => {
                let label = self.text(self.child(n, "label", src)?, src);
                if self.f.label.as_ref().is_none_or(|(l, _, at)| l != label || *at != self.span(n, src)) {
                    return Err(self.unsupported(n, src, "a label other than one in a function's outermost block"));
                }
                let inner = n.named_children(&mut n.walk()).filter(|x| x.kind() != "statement_identifier").last();
                if let Some(inner) = inner {
                    self.stmt(inner, src, out)?;
                }
            }
            "switch_statement" => self.switch(n, src, out)?,
            "for_statement" => {
                self.f.scopes.push(HashMap::new());
                let r = self.for_stmt(n, src, out);
                self.f.scopes.pop();
                r?;
            }
            "return_statement" => {
                let value = n.named_child(0).filter(|v| v.kind() != "comment");
                match (self.f.role, value, self.f.ret) {
                    // `return 0;` ends the program; another status is not supported yet.
                    (Role::Main, Some(v), _) if self.text(v, src).trim() == "0" => out.push(Stmt::Return(None)),
                    (Role::Main, None, _) => out.push(Stmt::Return(None)),
                    (Role::Main, Some(v), _) => {
                        // `return status;` is `exit(status)`: the program's exit status.
                        let (e, et) = self.rvalue(v, src)?;
                        let status = self.convert(e, et, CTy::S(ScalarTy::I32), v, src)?;
                        let span = self.span(n, src);
                        self.flush(out);
                        self.exit_stmts(true, status, span, out);
                    }
                    (_, None, None) => out.push(Stmt::Return(None)),
                    (_, Some(v), Some(t)) => {
                        let (e, et) = self.rvalue(v, src)?;
                        let e = self.convert(e, et, CTy::S(t), v, src)?;
                        out.push(Stmt::Return(Some(e)));
                    }
                    (_, Some(v), None) => {
                        return Err(self.unsupported(v, src, "returning a value from a `void` function"))
                    }
                    (_, None, Some(_)) => {
                        return Err(self.unsupported(n, src, "`return;` in a function that returns a value"))
                    }
                }
            }
            other => return Err(self.unsupported(n, src, format!("the statement `{other}`"))),
        }
        Ok(())
    }

    /// A statement in a scope of its own (a branch or loop body).
    pub(crate) fn scoped(&mut self, n: Node, src: &Src, out: &mut Vec<Stmt>) -> R<()> {
        self.f.scopes.push(HashMap::new());
        let r = self.stmt(n, src, out);
        self.f.scopes.pop();
        r
    }

    pub(crate) fn for_stmt(&mut self, n: Node, src: &Src, out: &mut Vec<Stmt>) -> R<()> {
        if let Some(init) = n.child_by_field_name("initializer") {
            if init.kind() == "declaration" {
                self.declaration(init, src, out)?;
            } else {
                self.expr_stmt(init, src, out)?;
            }
            self.flush(out);
        }
        let cond = n.child_by_field_name("condition");
        let update = n.child_by_field_name("update");
        self.lower_loop(n, (cond, self.child(n, "body", src)?, update, false), src, out)
    }

    pub(crate) fn declaration(&mut self, n: Node, src: &Src, out: &mut Vec<Stmt>) -> R<()> {
        let mut shared = false;
        let mut ext = false;
        let (mut is_const, mut is_static) = (false, false);
        let mut c = n.walk();
        for ch in n.children(&mut c) {
            match (ch.kind(), self.text(ch, src)) {
                ("type_qualifier", "__shared__") => shared = true,
                ("type_qualifier", "const" | "constexpr") => is_const = true,
                ("storage_class_specifier", "static") => is_static = true,
                ("storage_class_specifier", "extern") => ext = true,
                ("type_qualifier" | "storage_class_specifier" | "attribute_specifier", t) => {
                    return Err(self.unsupported(ch, src, format!("`{t}` declarations")));
                }
                _ => {}
            }
        }
        if shared && self.f.role != Role::Kernel {
            return Err(self.unsupported(n, src, "`__shared__` outside a kernel"));
        }
        if ext && !shared {
            return Err(self.unsupported(n, src, "`extern` declarations"));
        }
        if is_static && (!is_const || shared || ext) {
            return Err(self.unsupported(n, src, "`static` local variables other than constants"));
        }
        let ty_node = self.child(n, "type", src)?;
        let scalar = self.scalar_type(ty_node, src).is_ok();
        if is_static && !scalar {
            return Err(self.unsupported(n, src, "`static` local variables other than scalar constants"));
        }
        if self.text(ty_node, src) == "dim3" && !shared && !ext {
            return self.dim3_declaration(n, src, out);
        }
        if let t @ ("cudaStream_t" | "cudaEvent_t") = self.text(ty_node, src) {
            if shared || ext {
                return Err(self.unsupported(n, src, format!("`__shared__` or `extern` `{t}`")));
            }
            return self.handle_declaration(n, t == "cudaStream_t", src, out);
        }
        if let Some(id) = self.struct_type(ty_node, src) {
            if shared {
                return self.shared_struct_declaration(n, id, ext, src);
            }
            return self.struct_declaration(n, id, src, out);
        }
        let t = self.scalar_type(ty_node, src)?;
        for (d, init) in self.declarators(n, src)? {
            let span = self.span(d, src);
            if shared && d.kind() == "identifier" {
                if init.is_some() || ext {
                    return Err(self.unsupported(d, src, "an initialised or `extern` `__shared__` scalar"));
                }
                let name = self.text(d, src);
                let l = self.new_local(name, array_ptr(t, Mem::GpuShared, false), Level::Block);
                self.f.shared.push((l, t.ir(), IExpr::Const(1)));
                self.bind(name, Var { local: l, ty: CTy::SharedScalar(t) });
                continue;
            }
            match d.kind() {
                "identifier" if !shared => {
                    let name = self.text(d, src);
                    let l = self.new_local(name, Ty::Scalar(t.ir()), self.level());
                    if let Some(v) = init.filter(|v| self.is_syncthreads_reduce(*v, src)) {
                        out.push(Stmt::Let { local: l, init: None, span });
                        self.syncthreads_reduce(v, (Place::local(l, span), t), src, out)?;
                        self.bind(name, Var { local: l, ty: CTy::S(t) });
                        continue;
                    }
                    // `const int n = 16;`: also a constant where C++ needs one (array lengths).
                    let value = init.filter(|_| is_const).map(|v| self.constant(v, src));
                    if let Some(Ok(v)) = init.map(|v| self.constant(v, src)) {
                        if !matches!(t, ScalarTy::F32 | ScalarTy::F64) {
                            self.f.init_consts.insert(l, const_of_type(v, t));
                        }
                    }
                    let init = match init {
                        Some(v) => {
                            let (e, et) = self.rvalue(v, src)?;
                            Some(self.convert(e, et, CTy::S(t), v, src)?)
                        }
                        None => None,
                    };
                    if is_const {
                        match value {
                            Some(Ok(v)) if !matches!(t, ScalarTy::F32 | ScalarTy::F64) => {
                                self.f.consts.insert(l, const_of_type(v, t));
                            }
                            // A `static` one is initialised once: only a constant is the same thing.
                            _ if is_static && !init.as_ref().is_some_and(literal_only) => {
                                return Err(self.unsupported(
                                    d,
                                    src,
                                    "a `static` local without a constant initialiser",
                                ));
                            }
                            _ => {}
                        }
                    }
                    self.flush(out);
                    out.push(Stmt::Let { local: l, init, span });
                    self.bind(name, Var { local: l, ty: CTy::S(t) });
                }
                _ if is_static => return Err(self.unsupported(d, src, "`static` local variables other than scalars")),
                "pointer_declarator" if !shared => self.pointer_declaration(d, init, Elem::S(t), src, out)?,
                "array_declarator" => {
                    if let (Some(v), true) = (init, shared) {
                        return Err(self.unsupported(v, src, "initialisers of `__shared__` arrays"));
                    }
                    if shared {
                        let (inner, dims) = self.array_declarator(d, src)?;
                        let name = self.text(inner, src);
                        let len = match (&dims[..], ext) {
                            ([None], true) => IExpr::Param(SMEM_PARAM.to_string()) / IExpr::Const(size_of(t)),
                            (_, false) if dims.iter().all(Option::is_some) => {
                                IExpr::Const(self.flat_length(&dims, d, src)?)
                            }
                            _ => return Err(self.unsupported(d, src, "this `__shared__` array")),
                        };
                        let l = self.new_local(name, array_ptr(t, Mem::GpuShared, false), Level::Block);
                        self.f.shared.push((l, t.ir(), len));
                        if !ext {
                            self.f.arrays.insert(l, (Elem::S(t), dims.into_iter().flatten().collect()));
                        }
                        self.bind(name, Var { local: l, ty: CTy::Ptr(Elem::S(t)) });
                    } else {
                        self.host_array(d, init, Elem::S(t), src, out)?;
                    }
                }
                _ => return Err(self.unsupported(d, src, "this declaration")),
            }
        }
        Ok(())
    }

    /// `T *p [= init];` (`T` a scalar or struct type).
    pub(crate) fn pointer_declaration(
        &mut self,
        d: Node,
        init: Option<Node>,
        t: Elem,
        src: &Src,
        out: &mut Vec<Stmt>,
    ) -> R<()> {
        let span = self.span(d, src);
        let inner = self.child(d, "declarator", src)?;
        if inner.kind() != "identifier" {
            return Err(self.unsupported(inner, src, "pointers to pointers"));
        }
        let name = self.text(inner, src);
        let l = self.new_local(name, self.elem_ptr(t, Mem::Cpu, !self.f.gpu), self.level());
        let init = match (init, t) {
            // `T *q = &p->f;`: only if `q` is used at offset 0 only ([`field_ptr`]).
            (Some(v), Elem::S(st)) if self.memory_field_address(v, src).is_some() => {
                self.field_pointer_to_local(d, v, name, src)?;
                let f = self.memory_field_address(v, src).ok_or_else(|| self.unsupported(v, src, "this pointer"))?;
                Some(self.field_pointer(f, st, src)?)
            }
            (Some(v), _) => Some(self.pointer_init(v, t, src)?),
            (None, _) => None,
        };
        self.flush(out);
        out.push(Stmt::Let { local: l, init, span });
        self.bind(name, Var { local: l, ty: CTy::Ptr(t) });
        Ok(())
    }

    /// `T a[N];`, `T a[N] = {…};`, `T a[] = {…};` (`T` a scalar or struct type; initialisers
    /// of scalars only, the rest of the array 0, as in C). On the host a heap buffer; in GPU
    /// code an array local that the pointer `a` refers to, which `sim` then keeps in the
    /// thread's own `gpu.local` buffer. Both start as zeros where not initialised.
    pub(crate) fn host_array(&mut self, d: Node, init: Option<Node>, t: Elem, src: &Src, out: &mut Vec<Stmt>) -> R<()> {
        let span = self.span(d, src);
        let (inner, mut dims) = self.array_declarator(d, src)?;
        let name = self.text(inner, src);
        let mut values = Vec::new();
        if let Some(v) = init {
            let Elem::S(st) = t else { return Err(self.unsupported(v, src, "initialisers of arrays of structs")) };
            // `T a[] = {…}`: the outer length from the initialiser (rows, or elements).
            let inner_dims: Vec<u64> = dims[1..].iter().flatten().copied().collect();
            let known = dims[0].map_or(u64::MAX, |n| n);
            let mut shape = vec![known];
            shape.extend(&inner_dims);
            values = self.array_init(v, &shape, st, src)?;
            if dims[0].is_none() {
                let row: u64 = inner_dims.iter().product();
                dims[0] = Some((values.len() as u64).div_ceil(row.max(1)));
            }
        }
        let Some(dims) = dims.into_iter().collect::<Option<Vec<u64>>>() else {
            return Err(self.unsupported(d, src, "an array without a size"));
        };
        let n = self.flat_length(&dims.iter().map(|x| Some(*x)).collect::<Vec<_>>(), d, src)?;
        if values.len() as u64 > n {
            return Err(self.unsupported(d, src, "an array of this size with this many initialisers"));
        }
        let data = if values.is_empty() {
            Expr::ArrayRepeat(Box::new(self.elem_zero(t)), IExpr::Const(n))
        } else {
            values.resize(n as usize, self.elem_zero(t));
            Expr::ArrayList(values)
        };
        self.flush(out);
        if self.f.gpu {
            let level = self.level();
            let arr_ty = Ty::Array { elem: Box::new(self.elem_ty(t)), len: IExpr::Const(n) };
            let arr = self.new_local(name, arr_ty, level);
            out.push(Stmt::Let { local: arr, init: Some(data), span });
            let l = self.new_local(name, self.elem_ptr(t, Mem::GpuLocal, false), level);
            out.push(Stmt::Let { local: l, init: Some(Expr::Ref(Place::local(arr, span))), span });
            self.f.arrays.insert(l, (t, dims));
            self.bind(name, Var { local: l, ty: CTy::Ptr(t) });
            return Ok(());
        }
        let l = self.new_local(name, self.elem_ptr(t, Mem::Cpu, true), Level::Host);
        let init = Expr::Builtin(Builtin::HeapNew, vec![data], span);
        out.push(Stmt::Let { local: l, init: Some(init), span });
        self.f.arrays.insert(l, (t, dims));
        self.bind(name, Var { local: l, ty: CTy::Ptr(t) });
        Ok(())
    }

    /// The value of a pointer variable's initialiser: `malloc(bytes)` (cast or not) or another
    /// pointer variable.
    pub(crate) fn pointer_init(&mut self, v: Node, t: Elem, src: &Src) -> R<Expr> {
        let inner = if v.kind() == "cast_expression" { self.child(v, "value", src)? } else { v };
        if inner.kind() == "new_expression" {
            return self.new_array(inner, t, src);
        }
        if inner.kind() == "call_expression" {
            let f = self.child(inner, "function", src)?;
            if self.text(f, src) == "malloc" && !self.f.gpu {
                let args = self.args(inner, src)?;
                if args.len() != 1 {
                    return Err(self.unsupported(inner, src, "`malloc` takes one argument"));
                }
                let len = self.elements(args[0], t, src)?;
                let span = self.span(inner, src);
                let z = self.elem_zero(t);
                return Ok(Expr::Builtin(Builtin::HeapNew, vec![Expr::ArrayRepeat(Box::new(z), len)], span));
            }
            if self.text(f, src) == "calloc" && !self.f.gpu && !self.sigs.contains_key("calloc") {
                // `calloc(n, size)`: n * size bytes of zeros.
                let args = self.args(inner, src)?;
                if args.len() != 2 {
                    return Err(self.unsupported(inner, src, "`calloc` takes two arguments"));
                }
                let (n, nt) = self.rvalue(args[0], src)?;
                let n = self.convert(n, nt, CTy::S(ScalarTy::U64), args[0], src)?;
                let (size, st) = self.rvalue(args[1], src)?;
                let size = self.convert(size, st, CTy::S(ScalarTy::U64), args[1], src)?;
                let bytes = Expr::Binary(BinOp::Mul, Box::new(n), Box::new(size));
                let len = IExpr::Value(Box::new(Expr::Binary(
                    BinOp::Div,
                    Box::new(bytes),
                    Box::new(int(self.elem_size(t).into(), ScalarTy::U64)),
                )));
                let span = self.span(inner, src);
                let z = self.elem_zero(t);
                return Ok(Expr::Builtin(Builtin::HeapNew, vec![Expr::ArrayRepeat(Box::new(z), len)], span));
            }
        }
        let (e, et) = self.rvalue(v, src)?;
        if et != CTy::Ptr(t) && et != CTy::Null {
            return Err(self.unsupported(v, src, "this pointer initialiser"));
        }
        Ok(e)
    }

    /// C++'s `new T[n]`, `new T[n]()` and `new T` on the host: a heap buffer of `n` (or one)
    /// elements, as `malloc` gives (zeros; `delete`/`delete[]` frees it as `free` does).
    fn new_array(&mut self, n: Node, t: Elem, src: &Src) -> R<Expr> {
        if self.f.gpu {
            return Err(self.unsupported(n, src, "`new` in GPU code"));
        }
        if n.child_by_field_name("placement").is_some() {
            return Err(self.unsupported(n, src, "placement `new`"));
        }
        if let Some(a) = n.child_by_field_name("arguments") {
            if a.named_children(&mut a.walk()).any(|x| x.kind() != "comment") {
                return Err(self.unsupported(a, src, "`new` with an initialiser other than `()`"));
            }
        }
        let tn = self.child(n, "type", src)?;
        let et = match self.struct_type(tn, src) {
            Some(id) => Elem::Struct(id),
            None => Elem::S(self.scalar_type(tn, src)?),
        };
        if et != t {
            return Err(self.unsupported(n, src, "`new` of another type than the pointer's"));
        }
        if let Elem::Struct(id) = et {
            if self.method_index(id, "").is_some() {
                return Err(self.unsupported(n, src, "`new` of a struct with a constructor"));
            }
        }
        let len = match n.child_by_field_name("declarator") {
            Some(d) => {
                if d.named_children(&mut d.walk()).any(|x| x.kind() == "new_declarator") {
                    return Err(self.unsupported(d, src, "`new` of an array of arrays"));
                }
                let l = self.child(d, "length", src)?;
                let (e, lt) = self.rvalue(l, src)?;
                IExpr::Value(Box::new(self.convert(e, lt, CTy::S(ScalarTy::U64), l, src)?))
            }
            None => IExpr::Const(1),
        };
        let z = self.elem_zero(t);
        Ok(Expr::Builtin(Builtin::HeapNew, vec![Expr::ArrayRepeat(Box::new(z), len)], self.span(n, src)))
    }

    pub(crate) fn expr_stmt(&mut self, n: Node, src: &Src, out: &mut Vec<Stmt>) -> R<()> {
        match n.kind() {
            "delete_expression" => {
                // `delete p;` / `delete[] p;`: as `free(p)`.
                if self.f.gpu {
                    return Err(self.unsupported(n, src, "`delete` in GPU code"));
                }
                let a = n.named_children(&mut n.walk()).find(|x| x.kind() != "comment");
                let mut v = a.filter(|a| a.kind() == "identifier").and_then(|a| self.lookup(self.text(a, src)));
                if let Some(a) = a.filter(|_| v.is_none()) {
                    v = self.member_pointer(a, src)?.map(|p| Var { local: p.root, ty: CTy::Ptr(p.elem) });
                }
                let Some(Var { local, ty: CTy::Ptr(_) }) = v else {
                    return Err(self.unsupported(n, src, "`delete` of anything but a pointer variable"));
                };
                out.push(Stmt::Free { local, gpu: false, span: self.span(n, src) });
            }
            "assignment_expression" => {
                let left = self.child(n, "left", src)?;
                let right = self.child(n, "right", src)?;
                let op = self.text(self.child(n, "operator", src)?, src);
                // `p = malloc(...)` / `p = q` for a pointer variable.
                if left.kind() == "identifier" {
                    if let Some(Var { local, ty: ty @ (CTy::Struct(id) | CTy::SharedStruct(id)) }) =
                        self.lookup(self.text(left, src))
                    {
                        if op != "=" {
                            return Err(self.unsupported(n, src, format!("`{op}` on a struct")));
                        }
                        let values = self.struct_value(right, id, src)?;
                        self.flush(out);
                        let span = self.span(n, src);
                        for (k, v) in values.into_iter().enumerate() {
                            let place = match ty {
                                CTy::SharedStruct(_) => shared_scalar(local + k, span),
                                _ => Place::local(local + k, span),
                            };
                            out.push(Stmt::Store { place, value: v });
                        }
                        return Ok(());
                    }
                    if let Some(Var { local, ty: CTy::Dim3 }) = self.lookup(self.text(left, src)) {
                        if op != "=" {
                            return Err(self.unsupported(n, src, format!("`{op}` on a `dim3`")));
                        }
                        return self.dim3_assign(local, n, right, src, out);
                    }
                    if let Some(Var { local, ty: CTy::Ptr(t) }) = self.lookup(self.text(left, src)) {
                        self.no_split_pointer(t, left, src)?;
                        if op != "=" {
                            let s = self.ptr_compound(local, t, op, right, n, src)?;
                            out.push(s);
                            return Ok(());
                        }
                        let init = self.pointer_init(right, t, src)?;
                        out.push(Stmt::Let { local, init: Some(init), span: self.span(n, src) });
                        return Ok(());
                    }
                }
                if let Some(()) = self.member_pointer_assign(n, left, op, Some(right), src, out)? {
                    return Ok(());
                }
                if let Some(()) = self.struct_store(n, left, right, op, src, out)? {
                    return Ok(());
                }
                let (place, pt) = self.place(left, src)?;
                if op == "=" && self.is_syncthreads_reduce(right, src) {
                    return self.syncthreads_reduce(right, (place, pt), src, out);
                }
                let (v, vt) = self.rvalue(right, src)?;
                let value = match op {
                    "=" => self.convert(v, vt, CTy::S(pt), right, src)?,
                    _ => {
                        let bop = binop(op.trim_end_matches('=')).ok_or_else(|| self.unsupported(n, src, op))?;
                        let cur = Expr::Load(place.clone());
                        let (e, et) = self.arith_op(bop, (cur, CTy::S(pt)), (v, vt), n, src)?;
                        self.convert(e, et, CTy::S(pt), n, src)?
                    }
                };
                out.push(Stmt::Store { place, value });
            }
            "update_expression" => {
                let arg = self.child(n, "argument", src)?;
                let op = self.text(self.child(n, "operator", src)?, src);
                if arg.kind() == "identifier" {
                    if let Some(Var { local, ty: CTy::Ptr(t) }) = self.lookup(self.text(arg, src)) {
                        self.no_split_pointer(t, arg, src)?;
                        let s = self.ptr_step(local, t, int(1, ScalarTy::I64), op == "--", self.span(n, src));
                        out.push(s);
                        return Ok(());
                    }
                }
                if let Some(()) = self.member_pointer_assign(n, arg, op, None, src, out)? {
                    return Ok(());
                }
                let (place, pt) = self.place(arg, src)?;
                let value = step(Expr::Load(place.clone()), pt, op == "--");
                out.push(Stmt::Store { place, value });
            }
            "call_expression" => self.call_stmt(n, src, out)?,
            // `(f(x));` (a macro's parentheses) and `(void)f(x);`: the expression as a statement.
            "parenthesized_expression" if n.named_child_count() == 1 => {
                let inner = n.named_child(0).ok_or_else(|| self.unsupported(n, src, "empty parentheses"))?;
                self.expr_stmt(inner, src, out)?;
            }
            "cast_expression" if n.child_by_field_name("type").is_some_and(|t| self.text(t, src).trim() == "void") => {
                self.expr_stmt(self.child(n, "value", src)?, src, out)?;
            }
            "comma_expression" => {
                self.expr_stmt(self.child(n, "left", src)?, src, out)?;
                self.flush(out);
                self.expr_stmt(self.child(n, "right", src)?, src, out)?;
            }
            _ => {
                let (e, _) = self.rvalue(n, src)?;
                out.push(Stmt::Eval(e));
            }
        }
        Ok(())
    }
}

/// A constant converted to the integer type `t` of the variable it initialises, as C converts
/// it (a negative `int` wraps to a value no array length accepts).
fn const_of_type(v: u64, t: ScalarTy) -> u64 {
    match t {
        ScalarTy::I32 => i64::from(v as i32) as u64,
        ScalarTy::U32 => u64::from(v as u32),
        ScalarTy::I8 => i64::from(v as i8) as u64,
        ScalarTy::U8 => u64::from(v as u8),
        ScalarTy::I16 => i64::from(v as i16) as u64,
        ScalarTy::U16 => u64::from(v as u16),
        _ => v,
    }
}

/// An expression of literals only (a constant initialiser, `2.5f * 2`).
fn literal_only(e: &Expr) -> bool {
    match e {
        Expr::Lit(_) => true,
        Expr::Unary(_, x) | Expr::Cast(x, _) => literal_only(x),
        Expr::Binary(_, a, b) => literal_only(a) && literal_only(b),
        _ => false,
    }
}
