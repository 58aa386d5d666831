//! Pointer arithmetic into allocations: `p + i`, `i + p`, `p - i`, `&p[i]`, `*(p + i)`,
//! `(p + i)[j]`, `p += i`, `p++`, casts to the same pointer type.
//!
//! A pointer expression is a pointer variable (its root local) and an element offset from where
//! that variable points. As a value it is the IR's reference to that element of the allocation,
//! `&(*p)[off]` ([`Expr::Ref`] of a place with a run-time index), so `sim` keeps the buffer and
//! the offset and checks every access through it against the buffer's real bounds. An access
//! `q[j]` through such an expression is the place `(*p)[off + j]`. The offset may be negative
//! (`p[-1]`, `p - 1` where `p` points into the middle of an allocation): `sim` and the cpu device
//! check only that the element reached is not before the allocation's start (E0903).

use super::*;

/// A pointer expression: `root` (a pointer variable) plus `off` elements (an `I64`), of `elem`;
/// `checks` are the row-index checks of a multi-dimensional array access that led here
/// ([`arrays`]), made by an access through it (not by forming the pointer: `&a[i][M]` is C's
/// one-past-the-row pointer).
pub(crate) struct PtrE {
    pub(crate) root: LocalId,
    pub(crate) off: Option<Expr>,
    pub(crate) elem: Elem,
    pub(crate) checks: Vec<(IExpr, IExpr)>,
}

impl PtrE {
    /// Where the pointer variable `root` points.
    pub(crate) fn at(root: LocalId, elem: Elem) -> PtrE {
        PtrE { root, off: None, elem, checks: Vec::new() }
    }
}

impl Lx {
    /// `n` as a pointer expression, if it is written as one (`None` for anything else).
    pub(crate) fn ptr_expr(&mut self, n: Node, src: &Src) -> R<Option<PtrE>> {
        Ok(match n.kind() {
            "identifier" => match self.lookup(self.text(n, src)) {
                Some(Var { local, ty: CTy::Ptr(t) }) => Some(PtrE::at(local, t)),
                // `__FILE__`, `__func__` as a `const char *` (host code): a buffer holding it.
                None if !self.f.gpu && matches!(self.text(n, src), "__FILE__" | "__func__" | "__FUNCTION__") => {
                    let strings::StrE::Lit(text) = self.string_expr(n, src)? else { return Ok(None) };
                    Some(self.literal_buffer(&text, self.span(n, src)))
                }
                _ => None,
            },
            "parenthesized_expression" => match n.named_child(0) {
                Some(inner) => self.ptr_expr(inner, src)?,
                None => None,
            },
            "update_expression" => self.update_pointer(n, src)?,
            // A pointer member (`s.p`, `p->next`, `a[i].data`).
            "field_expression" => self.member_pointer(n, src)?,
            // A function returning a pointer, inlined ([`ptr_fn`]).
            "call_expression" if self.is_ptr_fn_call(n, src) => Some(self.ptr_fn_call(n, src)?),
            // A member function returning a pointer, inlined (`bitmap.get_ptr()`, [`methods`]).
            "call_expression" if n.child_by_field_name("function").is_some_and(|f| f.kind() == "field_expression") => {
                let (e, t) = self.call_value(n, src)?;
                let CTy::Ptr(elem) = t else { return Ok(None) };
                let span = self.span(n, src);
                let mem = if self.f.gpu { Mem::GpuGlobal } else { Mem::Cpu };
                let level = self.level();
                let l = self.new_local("member function result", self.elem_ptr(elem, mem, false), level);
                self.f.pre.push(Stmt::Let { local: l, init: Some(e), span });
                Some(PtrE::at(l, elem))
            }
            // `argv[i]`: a string ([`strings`]).
            "subscript_expression" if self.is_argv(self.child(n, "argument", src)?, src) => {
                let idx_list = self.child(n, "indices", src)?;
                let Some(i) = idx_list.named_child(0).filter(|_| idx_list.named_child_count() == 1) else {
                    return Err(self.unsupported(idx_list, src, "this subscript"));
                };
                Some(self.argv_string(i, self.span(n, src), src)?)
            }
            // A row of a multi-dimensional array (`a[i]` of `a[N][M]`) decays to a pointer.
            "subscript_expression" => self.row_pointer(n, src)?,
            // A string literal used as a `char *` (host code): a new buffer holding it.
            "string_literal" | "concatenated_string" if !self.f.gpu => {
                let strings::StrE::Lit(text) = self.string_expr(n, src)? else { return Ok(None) };
                Some(self.literal_buffer(&text, self.span(n, src)))
            }
            "cast_expression" => {
                let td = self.child(n, "type", src)?;
                let Some(d) = td.child_by_field_name("declarator") else { return Ok(None) };
                let tn = self.child(td, "type", src)?;
                let t = match self.struct_type(tn, src) {
                    Some(id) => Elem::Struct(id),
                    None => Elem::S(self.scalar_type(tn, src)?),
                };
                let value = self.child(n, "value", src)?;
                match self.ptr_expr(value, src)? {
                    Some(p)
                        if p.elem == t && d.kind() == "abstract_pointer_declarator" && d.named_child_count() == 0 =>
                    {
                        Some(p)
                    }
                    _ => return Err(self.unsupported(n, src, "casts to pointer types other than the pointer's own")),
                }
            }
            "binary_expression" => {
                let op = self.text(self.child(n, "operator", src)?, src);
                if op != "+" && op != "-" {
                    return Ok(None);
                }
                let (left, right) = (self.child(n, "left", src)?, self.child(n, "right", src)?);
                if self.shape(left, src).len() > 1 || self.shape(right, src).len() > 1 {
                    // `a + 1` of `a[N][M]` is a pointer to a row, not to an element.
                    return Err(self.unsupported(n, src, "pointer arithmetic on a multi-dimensional array"));
                }
                if let Some(p) = self.ptr_expr(left, src)? {
                    if let Some(q) = self.ptr_expr(right, src)? {
                        if op == "+" || p.elem != q.elem {
                            return Err(self.unsupported(
                                n,
                                src,
                                "adding two pointers, or subtracting pointers of different types",
                            ));
                        }
                        // `p - q`: a number, not a pointer ([`Lx::rvalue`] takes it from here).
                        let span = self.span(n, src);
                        let (a, b) = (self.ptr_value(p, span), self.ptr_value(q, span));
                        self.f.ptr_diff = Some((n.id(), Expr::Builtin(Builtin::PtrDiff, vec![a, b], span)));
                        return Ok(None);
                    }
                    let i = self.offset(right, src)?;
                    Some(self.advance(p, i, op == "-"))
                } else if op == "+" {
                    match self.ptr_expr(right, src)? {
                        Some(p) => {
                            let i = self.offset(left, src)?;
                            Some(self.advance(p, i, false))
                        }
                        None => None,
                    }
                } else {
                    None
                }
            }
            "pointer_expression" if self.text(self.child(n, "operator", src)?, src) == "&" => {
                let arg = self.child(n, "argument", src)?;
                let arg =
                    if arg.kind() == "parenthesized_expression" { arg.named_child(0).unwrap_or(arg) } else { arg };
                if arg.kind() == "identifier" {
                    match self.lookup(self.text(arg, src)) {
                        Some(Var { local, ty: CTy::SharedScalar(t) }) => {
                            return Ok(Some(PtrE::at(local, Elem::S(t))));
                        }
                        Some(Var { local, ty: CTy::S(t) }) => {
                            // `&x` of a local: the IR's reference to the local, which `sim` then
                            // keeps in a one-element buffer of its own (host memory, or the
                            // thread's `gpu.local`), so `p[1]` through it is out of bounds.
                            let span = self.span(n, src);
                            return Ok(Some(self.local_address(local, t, span)));
                        }
                        _ => {}
                    }
                }
                if let Some(p) = self.var_field_address(arg, src)? {
                    return Ok(Some(p));
                }
                if arg.kind() == "field_expression" {
                    // `&p->f`, `&a[i].f`: only where its every use is known ([`field_ptr`]).
                    return Err(self.unsupported(
                        n,
                        src,
                        "a pointer to a field of a struct in memory other than as an argument of an atomic or of a \
                         function, or as the initialiser of a pointer variable",
                    ));
                }
                if arg.kind() != "subscript_expression" {
                    return Err(self.unsupported(
                        n,
                        src,
                        "taking the address of anything but an element (`&p[i]`) or a scalar variable",
                    ));
                }
                let (p, i) = self.subscript(arg, src)?;
                Some(self.advance(p, i, false))
            }
            _ => None,
        })
    }

    /// `base[i]` as an element: the pointer expression `base` and the index `i` (an `I64`). A row
    /// of a multi-dimensional array is not an element ([`Lx::row_pointer`] makes it a pointer).
    pub(crate) fn subscript(&mut self, n: Node, src: &Src) -> R<(PtrE, Expr)> {
        if !self.shape(n, src).is_empty() {
            return Err(self.unsupported(n, src, "a row of a multi-dimensional array where an element is expected"));
        }
        self.subscript_parts(n, src)
    }

    /// An integer offset or index, as an `I64`.
    pub(crate) fn offset(&mut self, n: Node, src: &Src) -> R<Expr> {
        let (e, t) = self.rvalue(n, src)?;
        match t {
            CTy::S(s) if !matches!(s, ScalarTy::F32 | ScalarTy::F64 | ScalarTy::Bool) => Ok(cast(e, s, ScalarTy::I64)),
            _ => Err(self.unsupported(n, src, "an index or pointer offset that is not an integer")),
        }
    }

    /// `p + i` (`p - i` when `minus`).
    pub(crate) fn advance(&self, p: PtrE, i: Expr, minus: bool) -> PtrE {
        let base = p.off.unwrap_or(int(0, ScalarTy::I64));
        let op = if minus { BinOp::Sub } else { BinOp::Add };
        PtrE { off: Some(Expr::Binary(op, Box::new(base), Box::new(i))), ..p }
    }

    /// The element `i` elements on from where `p` points.
    pub(crate) fn ptr_place(&self, p: PtrE, i: Option<Expr>, span: Span) -> Place {
        let at = match (p.off, i) {
            (None, None) => IExpr::Const(0),
            (Some(o), None) | (None, Some(o)) => IExpr::Value(Box::new(o)),
            (Some(o), Some(i)) => IExpr::Value(Box::new(Expr::Binary(BinOp::Add, Box::new(o), Box::new(i)))),
        };
        Place { root: p.root, path: vec![PathStep::Deref, PathStep::Elem(at)], checks: p.checks, span }
    }

    /// The value of `p`: the variable's pointer, or a reference to the element at its offset.
    pub(crate) fn ptr_value(&self, p: PtrE, span: Span) -> Expr {
        match p.off {
            None => Expr::Load(Place::local(p.root, span)),
            Some(_) => Expr::Ref(self.ptr_place(PtrE { checks: Vec::new(), ..p }, None, span)),
        }
    }

    /// `p += i`, `p -= i`, `p++`, `p--` for a pointer variable `p`.
    pub(crate) fn ptr_step(&mut self, local: LocalId, t: Elem, i: Expr, minus: bool, span: Span) -> Stmt {
        let p = self.advance(PtrE::at(local, t), i, minus);
        Stmt::Let { local, init: Some(self.ptr_value(p, span)), span }
    }

    /// `p += n` / `p -= n` with `n`'s node.
    pub(crate) fn ptr_compound(
        &mut self,
        local: LocalId,
        t: Elem,
        op: &str,
        right: Node,
        n: Node,
        src: &Src,
    ) -> R<Stmt> {
        if op != "+=" && op != "-=" {
            return Err(self.unsupported(n, src, format!("`{op}` on a pointer")));
        }
        let i = self.offset(right, src)?;
        Ok(self.ptr_step(local, t, i, op == "-=", self.span(n, src)))
    }
}

impl Lx {
    /// A comparison with a pointer on either side: `p == q`, `p != NULL` (the same element of the
    /// same allocation, or both null), `p < end` and the other relations (the distance `p - q`,
    /// which needs both in one allocation, compared with 0).
    pub(crate) fn ptr_compare(&self, op: BinOp, a: (Expr, CTy), b: (Expr, CTy), n: Node, src: &Src) -> R<(Expr, CTy)> {
        let span = self.span(n, src);
        let compatible = match (a.1, b.1) {
            (CTy::Ptr(x), CTy::Ptr(y)) => x == y,
            (CTy::Ptr(_) | CTy::Null, CTy::Ptr(_) | CTy::Null) => true,
            _ => false,
        };
        if !compatible {
            return Err(self.unsupported(n, src, format!("`{}` of a pointer and a number", op.symbol())));
        }
        let bool_ty = CTy::S(ScalarTy::Bool);
        let e = match op {
            BinOp::Eq | BinOp::Ne => {
                let eq = Expr::Builtin(Builtin::PtrEq, vec![a.0, b.0], span);
                if op == BinOp::Eq {
                    eq
                } else {
                    Expr::Unary(UnOp::Not, Box::new(eq))
                }
            }
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                let d = Expr::Builtin(Builtin::PtrDiff, vec![a.0, b.0], span);
                Expr::Binary(op, Box::new(d), Box::new(int(0, ScalarTy::I64)))
            }
            _ => return Err(self.unsupported(n, src, format!("`{}` on pointers", op.symbol()))),
        };
        Ok((e, bool_ty))
    }
}
