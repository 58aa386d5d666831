//! Expressions: places (assignable locations), values, conditions, constants, literals.

use super::*;

impl Lx {
    /// A memory location and the scalar type stored there.
    pub(crate) fn place(&mut self, n: Node, src: &Src) -> R<(Place, ScalarTy)> {
        let span = self.span(n, src);
        match n.kind() {
            "parenthesized_expression" => {
                let inner = n.named_child(0).ok_or_else(|| self.unsupported(n, src, "empty parentheses"))?;
                self.place(inner, src)
            }
            "identifier" => match self.lookup(self.text(n, src)) {
                Some(Var { local, ty: CTy::S(t) }) => Ok((Place::local(local, span), t)),
                Some(Var { local, ty: CTy::SharedScalar(t) }) => Ok((shared_scalar(local, span), t)),
                Some(_) => Err(self.unsupported(n, src, "assigning to a pointer here")),
                None => Err(self.unknown(n, src)),
            },
            "subscript_expression" => {
                let (p, i) = self.subscript(n, src)?;
                let t = self.scalar_elem(p.elem, n, src)?;
                // A plain `p[i]` keeps the index's own type (no widening to 64 bits).
                let i = match (&p.off, i) {
                    (None, Expr::Cast(inner, ir::ScalarTy::I64)) => *inner,
                    (_, i) => i,
                };
                Ok((self.ptr_place(p, Some(i), span), t))
            }
            "pointer_expression" if self.text(self.child(n, "operator", src)?, src) == "*" => {
                let arg = self.child(n, "argument", src)?;
                if self.shape(arg, src).len() > 1 {
                    return Err(self.unsupported(n, src, "`*` on a multi-dimensional array (`*a` is a row)"));
                }
                let Some(p) = self.ptr_expr(arg, src)? else {
                    return Err(self.unsupported(arg, src, "dereferencing anything but a pointer"));
                };
                let t = self.scalar_elem(p.elem, n, src)?;
                Ok((self.ptr_place(p, None, span), t))
            }
            "field_expression" => match self.var_field(n, src)? {
                Some(p) => Ok(p),
                None => Err(self.unsupported(n, src, "this field")),
            },
            _ => Err(self.unsupported(n, src, format!("`{}` as an assignable place", n.kind()))),
        }
    }

    /// A condition: an integer compared with zero, as C does.
    pub(crate) fn cond(&mut self, n: Node, src: &Src) -> R<Expr> {
        let (e, t) = self.rvalue(n, src)?;
        match t {
            CTy::S(ScalarTy::Bool) => Ok(e),
            CTy::S(s) => Ok(Expr::Binary(BinOp::Ne, Box::new(e), Box::new(zero(s)))),
            // `if (p)`: not null.
            CTy::Ptr(_) | CTy::Null => {
                let null = Expr::Builtin(Builtin::NullPtr, Vec::new(), self.span(n, src));
                let eq = Expr::Builtin(Builtin::PtrEq, vec![e, null], self.span(n, src));
                Ok(Expr::Unary(UnOp::Not, Box::new(eq)))
            }
            CTy::Dim3
            | CTy::SharedScalar(_)
            | CTy::Struct(_)
            | CTy::SharedStruct(_)
            | CTy::Stream
            | CTy::Event
            | CTy::StreamArray
            | CTy::EventArray
            | CTy::RefS(_) => Err(self.unsupported(n, src, "this condition")),
        }
    }

    pub(crate) fn arith_op(&self, op: BinOp, a: (Expr, CTy), b: (Expr, CTy), n: Node, src: &Src) -> R<(Expr, CTy)> {
        let (CTy::S(ta), CTy::S(tb)) = (a.1, b.1) else {
            return Err(self.unsupported(n, src, format!("`{}` on pointers", op.symbol())));
        };
        let t = arith(ta, tb);
        let is_float = matches!(t, ScalarTy::F32 | ScalarTy::F64);
        if is_float && matches!(op, BinOp::Rem | BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::Shl | BinOp::Shr)
        {
            return Err(self.unsupported(n, src, format!("`{}` on floating-point numbers", op.symbol())));
        }
        let (ea, eb) = (cast(a.0, ta, t), cast(b.0, tb, t));
        let result = if matches!(op, BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge) {
            ScalarTy::Bool
        } else {
            t
        };
        Ok((Expr::Binary(op, Box::new(ea), Box::new(eb)), CTy::S(result)))
    }

    /// An expression's value and C type (comparisons have type `Bool`, converted to `int` where
    /// used as a number).
    pub(crate) fn rvalue(&mut self, n: Node, src: &Src) -> R<(Expr, CTy)> {
        let op = n.child_by_field_name("operator").map(|o| self.text(o, src));
        let maybe_pointer = match n.kind() {
            "binary_expression" => matches!(op, Some("+" | "-")),
            "pointer_expression" => op == Some("&"),
            "update_expression" => true,
            "cast_expression" => true,
            "call_expression" => self.is_ptr_fn_call(n, src),
            "subscript_expression" => n.child_by_field_name("argument").is_some_and(|a| self.is_argv(a, src)),
            "string_literal" | "concatenated_string" => !self.f.gpu,
            "identifier" => !self.f.gpu && matches!(self.text(n, src), "__FILE__" | "__func__" | "__FUNCTION__"),
            _ => false,
        };
        if maybe_pointer {
            if let Some(p) = self.ptr_expr(n, src)? {
                let t = p.elem;
                self.no_split_pointer(t, n, src)?;
                let span = self.span(n, src);
                return Ok((self.ptr_value(p, span), CTy::Ptr(t)));
            }
            // `p - q` is this node's own value only if found at this node (not inside it).
            if let Some((id, d)) = self.f.ptr_diff.take() {
                if id == n.id() {
                    return Ok((d, CTy::S(ScalarTy::I64)));
                }
            }
        }
        self.rvalue_inner(n, src)
    }

    fn rvalue_inner(&mut self, n: Node, src: &Src) -> R<(Expr, CTy)> {
        match n.kind() {
            "number_literal" => self.number(n, src),
            "parenthesized_expression" => {
                let inner = n.named_child(0).ok_or_else(|| self.unsupported(n, src, "empty parentheses"))?;
                self.rvalue(inner, src)
            }
            "identifier" => {
                let name = self.text(n, src);
                if let Some(v) = self.lookup(name) {
                    if let CTy::SharedScalar(t) = v.ty {
                        return Ok((Expr::Load(shared_scalar(v.local, self.span(n, src))), CTy::S(t)));
                    }
                    if let CTy::Ptr(t) = v.ty {
                        self.no_split_pointer(t, n, src)?;
                    }
                    if let CTy::Struct(id) | CTy::SharedStruct(id) = v.ty {
                        let what =
                            format!("a `{}` used other than by field, in `=` or as an argument", self.structs[id].name);
                        return Err(self.unsupported(n, src, what));
                    }
                    if v.ty == CTy::Dim3 {
                        return Err(self.unsupported(
                            n,
                            src,
                            "a `dim3` used other than in a launch, by field or in `=`",
                        ));
                    }
                    return Ok((Expr::Load(Place::local(v.local, self.span(n, src))), v.ty));
                }
                if let Some(m) = self.macros.get(name).cloned() {
                    let msrc = Src { text: &m.text, base: m.base, at: src.at };
                    let e = macro_expr(&m).ok_or_else(|| {
                        Box::new(Diagnostic::error(
                            codes::UNSUPPORTED,
                            "not supported in CUDA-C yet: this macro",
                            m.span,
                            "",
                        ))
                    })?;
                    let (v, vt) = self.rvalue(e, &msrc)?;
                    if let Some(&t) = self.const_types.get(name) {
                        return Ok((self.convert(v, vt, CTy::S(t), n, src)?, CTy::S(t)));
                    }
                    return Ok((v, vt));
                }
                if name == "__LINE__" {
                    let at = self.span(n, src).lo as usize;
                    let line = self.line_starts.partition_point(|s| *s <= at);
                    return Ok((int(line as u128, ScalarTy::I32), CTy::S(ScalarTy::I32)));
                }
                if name == "warpSize" && self.f.gpu {
                    return Ok((int(32, ScalarTy::I32), CTy::S(ScalarTy::I32)));
                }
                if name == "NULL" || name == "nullptr" {
                    return Ok((Expr::Builtin(Builtin::NullPtr, Vec::new(), self.span(n, src)), CTy::Null));
                }
                if name == "cudaSuccess" || name == "EXIT_SUCCESS" {
                    return Ok((int(0, ScalarTy::I32), CTy::S(ScalarTy::I32)));
                }
                if name == "EXIT_FAILURE" {
                    return Ok((int(1, ScalarTy::I32), CTy::S(ScalarTy::I32)));
                }
                // The one error status a call can give on `sim` ([`Lx::set_device_status`]).
                if name == "cudaErrorInvalidDevice" {
                    return Ok((int(101, ScalarTy::I32), CTy::S(ScalarTy::I32)));
                }
                if let Some((_, v)) = cond::PREDEFINED.iter().find(|(k, _)| *k == name) {
                    return Ok((int((*v).into(), ScalarTy::I32), CTy::S(ScalarTy::I32)));
                }
                if name == "CLOCKS_PER_SEC" {
                    return Ok((int(1_000_000, ScalarTy::I64), CTy::S(ScalarTy::I64)));
                }
                if name == "RAND_MAX" {
                    return Ok((int(0x7fff_ffff, ScalarTy::I32), CTy::S(ScalarTy::I32)));
                }
                Err(self.unknown(n, src))
            }
            "field_expression" => {
                match self.field_any(n, src)? {
                    Some((p, structs::FTy::S(t))) => return Ok((Expr::Load(p), CTy::S(t))),
                    Some((p, structs::FTy::Ptr(e))) => return Ok((Expr::Load(p), CTy::Ptr(e))),
                    Some((_, structs::FTy::Arr { .. })) => {
                        // An array member used as a value decays to a pointer to its start.
                        if let Some(p) = self.member_pointer(n, src)? {
                            let e = p.elem;
                            let span = self.span(n, src);
                            return Ok((self.ptr_value(p, span), CTy::Ptr(e)));
                        }
                        return Err(self.unsupported(n, src, "this array member"));
                    }
                    None => {}
                }
                let arg = self.text(self.child(n, "argument", src)?, src);
                let field = self.text(self.child(n, "field", src)?, src);
                let op = self.text(self.child(n, "operator", src)?, src);
                let d = match field {
                    "x" => ir::DimName::X,
                    "y" => ir::DimName::Y,
                    "z" => ir::DimName::Z,
                    _ => return Err(self.unsupported(n, src, "structs and fields")),
                };
                let i = match arg {
                    "threadIdx" => IExpr::ThreadIdx(d),
                    "blockIdx" => IExpr::BlockIdx(d),
                    "blockDim" => IExpr::BlockDim(d),
                    "gridDim" => IExpr::GridDim(d),
                    _ => return Err(self.unsupported(n, src, "structs and fields")),
                };
                if op != "." || !self.f.gpu {
                    return Err(self.unsupported(n, src, format!("`{arg}` outside a kernel")));
                }
                Ok((Expr::Cast(Box::new(Expr::Nat(i)), ir::ScalarTy::U32), CTy::S(ScalarTy::U32)))
            }
            "binary_expression" => {
                let op_text = self.text(self.child(n, "operator", src)?, src);
                let op = binop(op_text).ok_or_else(|| self.unsupported(n, src, format!("the operator `{op_text}`")))?;
                let left = self.child(n, "left", src)?;
                let right = self.child(n, "right", src)?;
                if matches!(op, BinOp::And | BinOp::Or) {
                    let e = self.short_circuit(n, op == BinOp::And, src)?;
                    return Ok((e, CTy::S(ScalarTy::Bool)));
                }
                let a = self.rvalue(left, src)?;
                let b = self.rvalue(right, src)?;
                if matches!(a.1, CTy::Ptr(_) | CTy::Null) || matches!(b.1, CTy::Ptr(_) | CTy::Null) {
                    return self.ptr_compare(op, a, b, n, src);
                }
                self.arith_op(op, a, b, n, src)
            }
            "unary_expression" => {
                let op = self.text(self.child(n, "operator", src)?, src);
                let arg = self.child(n, "argument", src)?;
                match op {
                    "!" => {
                        let c = self.cond(arg, src)?;
                        Ok((Expr::Unary(UnOp::Not, Box::new(c)), CTy::S(ScalarTy::Bool)))
                    }
                    "-" | "+" | "~" => {
                        let (e, t) = self.rvalue(arg, src)?;
                        let CTy::S(s) = t else { return Err(self.unsupported(n, src, "pointer arithmetic")) };
                        let s2 = promote(s);
                        let e = cast(e, s, s2);
                        Ok(match op {
                            "+" => (e, CTy::S(s2)),
                            "~" if !matches!(s2, ScalarTy::F32 | ScalarTy::F64) => {
                                (Expr::Unary(UnOp::Not, Box::new(e)), CTy::S(s2))
                            }
                            "-" => {
                                // Negating an unsigned number wraps, as in C.
                                let e = Expr::Binary(BinOp::Sub, Box::new(zero(s2)), Box::new(e));
                                (e, CTy::S(s2))
                            }
                            _ => return Err(self.unsupported(n, src, "`~` on a float")),
                        })
                    }
                    _ => Err(self.unsupported(n, src, format!("the operator `{op}`"))),
                }
            }
            "subscript_expression" if !self.shape(n, src).is_empty() => {
                // A row of a multi-dimensional array: a pointer to its first element.
                let Some(p) = self.row_pointer(n, src)? else { return Err(self.unsupported(n, src, "this row")) };
                let t = p.elem;
                self.no_split_pointer(t, n, src)?;
                Ok((self.ptr_value(p, self.span(n, src)), CTy::Ptr(t)))
            }
            "subscript_expression" | "pointer_expression" => {
                let (p, t) = self.place(n, src)?;
                Ok((Expr::Load(p), CTy::S(t)))
            }
            "cast_expression" => {
                let td = self.child(n, "type", src)?;
                if td.child_by_field_name("declarator").is_some() {
                    return Err(self.unsupported(td, src, "casts to pointer types"));
                }
                let t = self.scalar_type(self.child(td, "type", src)?, src)?;
                let (e, et) = self.rvalue(self.child(n, "value", src)?, src)?;
                let e = self.convert(e, et, CTy::S(t), n, src)?;
                Ok((e, CTy::S(t)))
            }
            "sizeof_expression" => {
                let v = self.constant(n, src)?;
                Ok((int(v.into(), ScalarTy::U64), CTy::S(ScalarTy::U64)))
            }
            "call_expression" => self.call_value(n, src),
            // `NULL` / `nullptr`, which the grammar reads as a keyword.
            "null" => Ok((Expr::Builtin(Builtin::NullPtr, Vec::new(), self.span(n, src)), CTy::Null)),
            "update_expression" => self.update_value(n, src),
            "conditional_expression" => self.conditional(n, src),
            // `x = v` as a value (`a = b = 0`): the assignment before the expression, then `x`
            // (a variable: reading anything else again could repeat its effects).
            "assignment_expression" => {
                let left = self.child(n, "left", src)?;
                if self.strip_parens(left).kind() != "identifier" {
                    return Err(self.unsupported(n, src, "an assignment to other than a variable used as a value"));
                }
                let mut stmts = Vec::new();
                self.expr_stmt(n, src, &mut stmts)?;
                self.f.pre.extend(stmts);
                self.rvalue(left, src)
            }
            // `(a, b)`: `a` as a statement before the expression, then `b`'s value.
            "comma_expression" => {
                let mut stmts = Vec::new();
                self.expr_stmt(self.child(n, "left", src)?, src, &mut stmts)?;
                self.f.pre.extend(stmts);
                self.rvalue(self.child(n, "right", src)?, src)
            }
            "true" | "false" => Ok((Expr::Lit(Lit::Bool(n.kind() == "true")), CTy::S(ScalarTy::Bool))),
            "char_literal" => Ok((int(self.char_value(n, src)?.into(), ScalarTy::I32), CTy::S(ScalarTy::I32))),
            other => Err(self.unsupported(n, src, format!("the expression `{other}`"))),
        }
    }

    /// The value of a character literal (`'a'`, `'\n'`): its ASCII code.
    pub(crate) fn char_value(&self, n: Node, src: &Src) -> R<u32> {
        let t = self.text(n, src);
        let inner = t.strip_prefix('\'').and_then(|x| x.strip_suffix('\'')).unwrap_or("");
        let c = match inner {
            "\\n" => '\n',
            "\\t" => '\t',
            "\\0" => '\0',
            "\\\\" => '\\',
            "\\'" => '\'',
            "\\\"" => '"',
            _ if inner.len() == 1 && inner.is_ascii() => inner.chars().next().unwrap_or('\0'),
            _ => return Err(self.unsupported(n, src, "this character literal")),
        };
        Ok(c as u32)
    }

    pub(crate) fn number(&self, n: Node, src: &Src) -> R<(Expr, CTy)> {
        let text = self.text(n, src);
        // The grammar reads `-1` as one literal: C's unary minus on `1`.
        if let Some(rest) = text.strip_prefix('-') {
            let (e, t) = self.number_text(rest.trim_start(), n, src)?;
            let CTy::S(s) = t else { return Err(self.unsupported(n, src, "this number")) };
            return Ok((Expr::Binary(BinOp::Sub, Box::new(zero(s)), Box::new(e)), t));
        }
        self.number_text(text, n, src)
    }

    fn number_text(&self, text: &str, n: Node, src: &Src) -> R<(Expr, CTy)> {
        let lower = text.to_ascii_lowercase();
        let hex = lower.starts_with("0x");
        if !hex && (lower.contains('.') || lower.contains('e')) {
            let (body, t) = match lower.strip_suffix('f') {
                Some(b) => (b, ScalarTy::F32),
                None => (lower.as_str(), ScalarTy::F64),
            };
            let v: f64 = body.parse().map_err(|_| self.unsupported(n, src, "this number"))?;
            return Ok((Expr::Lit(Lit::Float(v, t.ir())), CTy::S(t)));
        }
        let unsigned = lower.contains('u');
        let long = lower.contains('l');
        let digits = lower.trim_end_matches(['u', 'l']);
        let v = if hex {
            u64::from_str_radix(&digits[2..], 16).ok()
        } else if digits.len() > 1 && digits.starts_with('0') {
            u64::from_str_radix(&digits[1..], 8).ok()
        } else {
            digits.parse().ok()
        };
        let v = v.ok_or_else(|| self.unsupported(n, src, "this number"))?;
        // C's rule: the first of int, unsigned (hex/octal or `u`), long long, unsigned long long.
        let t = match (unsigned, long) {
            (false, false) if v <= i32::MAX as u64 => ScalarTy::I32,
            (_, false) if v <= u32::MAX as u64 && (unsigned || hex) => ScalarTy::U32,
            (false, _) if v <= i64::MAX as u64 => ScalarTy::I64,
            _ => ScalarTy::U64,
        };
        Ok((int(v.into(), t), CTy::S(t)))
    }

    /// A constant expression (array sizes): literals and macros, `+ - * / %`.
    pub(crate) fn constant(&self, n: Node, src: &Src) -> R<u64> {
        let bad = || self.unsupported(n, src, "this constant expression");
        match n.kind() {
            "number_literal" if self.text(n, src).starts_with('-') => {
                // `-1`: one literal to the grammar; the constant wraps, as C's conversion to an
                // unsigned type does.
                let t = self.text(n, src)[1..].trim_start().trim_end_matches(['u', 'U', 'l', 'L']);
                let v = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
                    u64::from_str_radix(h, 16).ok()
                } else {
                    t.parse::<u64>().ok()
                };
                v.map(u64::wrapping_neg).ok_or_else(bad)
            }
            "number_literal" => {
                let t = self.text(n, src).trim_end_matches(['u', 'U', 'l', 'L']);
                let v = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
                    u64::from_str_radix(h, 16).ok()
                } else {
                    t.parse().ok()
                };
                v.ok_or_else(bad)
            }
            "parenthesized_expression" => self.constant(n.named_child(0).ok_or_else(bad)?, src),
            "char_literal" => Ok(self.char_value(n, src)?.into()),
            // (`type_identifier`: a name as a template argument, `k<threads>`.)
            "identifier" | "type_identifier" => {
                // A local `const` integer with a constant initialiser ([`FnState::consts`]); any
                // other variable hides a file-level `const` of its name.
                if let Some(v) = self.lookup(self.text(n, src)) {
                    return self.f.consts.get(&v.local).copied().ok_or_else(bad);
                }
                if let Some((_, v)) = cond::PREDEFINED.iter().find(|(k, _)| *k == self.text(n, src)) {
                    return Ok(*v);
                }
                if matches!(self.text(n, src), "EXIT_SUCCESS" | "cudaSuccess") {
                    return Ok(0);
                }
                if self.text(n, src) == "EXIT_FAILURE" {
                    return Ok(1);
                }
                let m = self.macros.get(self.text(n, src)).cloned().ok_or_else(bad)?;
                let msrc = Src { text: &m.text, base: m.base, at: src.at };
                self.constant(macro_expr(&m).ok_or_else(bad)?, &msrc)
            }
            "binary_expression" => {
                let a = self.constant(self.child(n, "left", src)?, src)?;
                let b = self.constant(self.child(n, "right", src)?, src)?;
                let op = self.text(self.child(n, "operator", src)?, src);
                match op {
                    "+" => a.checked_add(b),
                    "-" => a.checked_sub(b),
                    "*" => a.checked_mul(b),
                    "/" => a.checked_div(b),
                    "%" => a.checked_rem(b),
                    _ => None,
                }
                .ok_or_else(bad)
            }
            "sizeof_expression" if n.child_by_field_name("type").is_none() => {
                // `sizeof(Name)` (a `typedef` name or a variable) or `sizeof x`.
                let mut v = self.child(n, "value", src)?;
                while v.kind() == "parenthesized_expression" {
                    v = v.named_child(0).ok_or_else(bad)?;
                }
                if v.kind() == "type_descriptor" {
                    let t = self.child(v, "type", src)?;
                    if let Some(id) = self.struct_type(t, src) {
                        return Ok(self.structs[id].size());
                    }
                    return Ok(size_of(self.scalar_type(t, src)?));
                }
                if let Some(bytes) = self.array_size_of(v, src) {
                    return Ok(bytes);
                }
                if let Some(bytes) = self.member_size_of(v, src) {
                    return Ok(bytes);
                }
                let deref = v.kind() == "pointer_expression"
                    && v.child_by_field_name("operator").is_some_and(|o| self.text(o, src) == "*");
                if v.kind() == "subscript_expression" || deref {
                    // `sizeof a[0]`, `sizeof(*p)`: an element of an array or pointer.
                    let mut root = v;
                    while root.kind() == "subscript_expression" || root.kind() == "pointer_expression" {
                        root = self.strip_parens(self.child(root, "argument", src)?);
                    }
                    if deref && self.shape(root, src).len() > 1 {
                        return Err(bad()); // `*a` of an array of arrays is a row
                    }
                    return match self.lookup(self.text(root, src)) {
                        Some(Var { ty: CTy::Ptr(Elem::S(t)), .. }) => Ok(size_of(t)),
                        Some(Var { ty: CTy::Ptr(Elem::Struct(id) | Elem::Split(id)), .. }) => {
                            Ok(self.structs[id].size())
                        }
                        _ => Err(bad()),
                    };
                }
                if v.kind() != "identifier" {
                    return Err(bad());
                }
                let name = self.text(v, src);
                if let Some(id) = self.struct_names.get(name) {
                    return Ok(self.structs[*id].size());
                }
                match self.lookup(name) {
                    Some(Var { ty: CTy::S(t) | CTy::SharedScalar(t), .. }) => Ok(size_of(t)),
                    Some(Var { ty: CTy::Struct(id) | CTy::SharedStruct(id), .. }) => Ok(self.structs[id].size()),
                    // A pointer (8 bytes), or an `extern __shared__` array (no size)?
                    _ => Err(self.unsupported(n, src, "`sizeof` of a pointer variable")),
                }
            }
            "sizeof_expression" => {
                let td = self.child(n, "type", src)?;
                let t = self.child(td, "type", src)?;
                if td.child_by_field_name("declarator").is_some() {
                    return Ok(8); // a pointer
                }
                if let Some(id) = self.struct_type(t, src) {
                    return Ok(self.structs[id].size());
                }
                Ok(size_of(self.scalar_type(t, src)?))
            }
            _ => Err(bad()),
        }
    }
}

/// An expression whose evaluation cannot fail (no memory reads, no division): it may be
/// evaluated even where C would skip it.
pub(crate) fn cannot_fail(e: &Expr) -> bool {
    match e {
        Expr::Lit(_) | Expr::Nat(IExpr::ThreadIdx(_) | IExpr::BlockIdx(_) | IExpr::BlockDim(_) | IExpr::GridDim(_)) => {
            true
        }
        Expr::Load(p) => p.path.is_empty(),
        Expr::Unary(_, x) | Expr::Cast(x, _) => cannot_fail(x),
        Expr::Binary(op, a, b) => {
            !matches!(op, BinOp::Div | BinOp::Rem | BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Shl | BinOp::Shr)
                && cannot_fail(a)
                && cannot_fail(b)
        }
        _ => false,
    }
}

pub(crate) fn binop(op: &str) -> Option<BinOp> {
    Some(match op {
        "+" => BinOp::Add,
        "-" => BinOp::Sub,
        "*" => BinOp::Mul,
        "/" => BinOp::Div,
        "%" => BinOp::Rem,
        "&&" => BinOp::And,
        "||" => BinOp::Or,
        "&" => BinOp::BitAnd,
        "|" => BinOp::BitOr,
        "^" => BinOp::BitXor,
        "<<" => BinOp::Shl,
        ">>" => BinOp::Shr,
        "==" => BinOp::Eq,
        "!=" => BinOp::Ne,
        "<" => BinOp::Lt,
        "<=" => BinOp::Le,
        ">" => BinOp::Gt,
        ">=" => BinOp::Ge,
        _ => return None,
    })
}

/// The place of the `__shared__` scalar whose buffer `local` points to.
pub(crate) fn shared_scalar(local: LocalId, span: Span) -> Place {
    Place { root: local, path: vec![PathStep::Deref, PathStep::Elem(IExpr::Const(0))], checks: Vec::new(), span }
}
