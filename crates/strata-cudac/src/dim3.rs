//! `dim3`: a variable of type `dim3` is three `unsigned` locals (`.x`, `.y`, `.z`, consecutive
//! local ids); a launch's grid and block are `dim3` values or integers (`n` is `dim3(n, 1, 1)`).

use super::*;

impl Lx {
    /// `dim3 a, b(16, 16), c = dim3(4), d = n;` — `n` is an integer or another `dim3`.
    pub(crate) fn dim3_declaration(&mut self, n: Node, src: &Src, out: &mut Vec<Stmt>) -> R<()> {
        for (d, init) in self.declarators(n, src)? {
            // `dim3 block(size, size);` with names only parses as a function declaration.
            if d.kind() == "function_declarator" && init.is_none() {
                self.dim3_from_names(d, src, out)?;
                continue;
            }
            if d.kind() != "identifier" {
                return Err(self.unsupported(d, src, "this `dim3` declaration"));
            }
            let name = self.text(d, src);
            let span = self.span(d, src);
            let values = match init {
                None => [int(1, ScalarTy::U32), int(1, ScalarTy::U32), int(1, ScalarTy::U32)],
                Some(v) if v.kind() == "argument_list" || v.kind() == "initializer_list" => {
                    let mut c = v.walk();
                    let parts: Vec<Node> = v.named_children(&mut c).filter(|x| x.kind() != "comment").collect();
                    self.dim3_parts(v, &parts, src)?
                }
                Some(v) => self.dim3_value(v, src)?,
            };
            let level = self.level();
            let first = self.f.locals.len();
            for (k, v) in values.into_iter().enumerate() {
                let l = self.new_local(&format!("{name}.{}", ["x", "y", "z"][k]), Ty::Scalar(ir::ScalarTy::U32), level);
                out.push(Stmt::Let { local: l, init: Some(v), span });
            }
            self.bind(name, Var { local: first, ty: CTy::Dim3 });
        }
        Ok(())
    }

    /// `dim3 b(x, y);` whose arguments are all names, which the grammar reads as a function
    /// declaration `b` with parameters of types `x` and `y`: each name is a variable or a
    /// constant.
    fn dim3_from_names(&mut self, d: Node, src: &Src, out: &mut Vec<Stmt>) -> R<()> {
        let name_node = self.child(d, "declarator", src)?;
        let plist = self.child(d, "parameters", src)?;
        if name_node.kind() != "identifier" {
            return Err(self.unsupported(d, src, "this `dim3` declaration"));
        }
        let mut values = [int(1, ScalarTy::U32), int(1, ScalarTy::U32), int(1, ScalarTy::U32)];
        let params: Vec<Node> = plist.named_children(&mut plist.walk()).filter(|x| x.kind() != "comment").collect();
        if params.len() > 3 {
            return Err(self.unsupported(d, src, "`dim3` with more than three components"));
        }
        for (k, p) in params.iter().enumerate() {
            let t = p.child_by_field_name("type").filter(|t| {
                t.kind() == "type_identifier"
                    && p.kind() == "parameter_declaration"
                    && p.child_by_field_name("declarator").is_none()
            });
            let Some(t) = t else {
                return Err(self.unsupported(*p, src, "this `dim3` component"));
            };
            let span = self.span(*p, src);
            values[k] = match self.lookup(self.text(t, src)) {
                Some(Var { local, ty: CTy::S(s) }) if !matches!(s, ScalarTy::F32 | ScalarTy::F64) => {
                    cast(Expr::Load(Place::local(local, span)), s, ScalarTy::U32)
                }
                Some(_) => return Err(self.unsupported(*p, src, "a `dim3` component that is not an integer")),
                None => int(u128::from(self.constant(t, src)? as u32), ScalarTy::U32),
            };
        }
        let name = self.text(name_node, src);
        let span = self.span(name_node, src);
        let level = self.level();
        let first = self.f.locals.len();
        for (k, v) in values.into_iter().enumerate() {
            let l = self.new_local(&format!("{name}.{}", ["x", "y", "z"][k]), Ty::Scalar(ir::ScalarTy::U32), level);
            out.push(Stmt::Let { local: l, init: Some(v), span });
        }
        self.bind(name, Var { local: first, ty: CTy::Dim3 });
        Ok(())
    }

    /// The three components (as `unsigned`) of the arguments of `dim3(…)`: missing ones are 1.
    fn dim3_parts(&mut self, n: Node, parts: &[Node], src: &Src) -> R<[Expr; 3]> {
        if parts.len() > 3 {
            return Err(self.unsupported(n, src, "`dim3` with more than three components"));
        }
        let mut out = [int(1, ScalarTy::U32), int(1, ScalarTy::U32), int(1, ScalarTy::U32)];
        for (k, p) in parts.iter().enumerate() {
            let (e, t) = self.rvalue(*p, src)?;
            if !matches!(t, CTy::S(s) if !matches!(s, ScalarTy::F32 | ScalarTy::F64)) {
                return Err(self.unsupported(*p, src, "a `dim3` component that is not an integer"));
            }
            out[k] = self.convert(e, t, CTy::S(ScalarTy::U32), *p, src)?;
        }
        Ok(out)
    }

    /// A `dim3` value: `dim3(…)`, a `dim3` variable, or an integer `n` (`dim3(n)`).
    pub(crate) fn dim3_value(&mut self, n: Node, src: &Src) -> R<[Expr; 3]> {
        match n.kind() {
            "parenthesized_expression" => {
                let inner = n.named_child(0).ok_or_else(|| self.unsupported(n, src, "empty parentheses"))?;
                self.dim3_value(inner, src)
            }
            "call_expression" if self.text(self.child(n, "function", src)?, src) == "dim3" => {
                let args = self.args(n, src)?;
                self.dim3_parts(n, &args, src)
            }
            "identifier" if matches!(self.lookup(self.text(n, src)), Some(Var { ty: CTy::Dim3, .. })) => {
                let local = match self.lookup(self.text(n, src)) {
                    Some(Var { local, .. }) => local,
                    None => return Err(self.unsupported(n, src, "an unknown `dim3` variable")),
                };
                let span = self.span(n, src);
                Ok([0, 1, 2].map(|k| Expr::Load(Place::local(local + k, span))))
            }
            _ => {
                let (e, t) = self.rvalue(n, src)?;
                if !matches!(t, CTy::S(s) if !matches!(s, ScalarTy::F32 | ScalarTy::F64)) {
                    return Err(self.unsupported(n, src, "a launch dimension that is neither an integer nor a `dim3`"));
                }
                let e = self.convert(e, t, CTy::S(ScalarTy::U32), n, src)?;
                Ok([e, int(1, ScalarTy::U32), int(1, ScalarTy::U32)])
            }
        }
    }

    /// `v = dim3(…)` (or another `dim3`, or an integer) for a `dim3` variable `v`.
    pub(crate) fn dim3_assign(
        &mut self,
        local: LocalId,
        n: Node,
        right: Node,
        src: &Src,
        out: &mut Vec<Stmt>,
    ) -> R<()> {
        let values = self.dim3_value(right, src)?;
        let span = self.span(n, src);
        for (k, v) in values.into_iter().enumerate() {
            out.push(Stmt::Store { place: Place::local(local + k, span), value: v });
        }
        Ok(())
    }

    /// `v.x` (`.y`, `.z`) of a `dim3` variable, if `n` is one.
    pub(crate) fn dim3_field(&self, n: Node, src: &Src) -> R<Option<Place>> {
        let arg = self.child(n, "argument", src)?;
        if arg.kind() != "identifier" {
            return Ok(None);
        }
        let Some(Var { local, ty: CTy::Dim3 }) = self.lookup(self.text(arg, src)) else { return Ok(None) };
        let k = match self.text(self.child(n, "field", src)?, src) {
            "x" => 0,
            "y" => 1,
            "z" => 2,
            f => return Err(self.unsupported(n, src, format!("the field `{f}` of a `dim3`"))),
        };
        if self.text(self.child(n, "operator", src)?, src) != "." {
            return Err(self.unsupported(n, src, "`->` on a `dim3`"));
        }
        Ok(Some(Place::local(local + k, self.span(n, src))))
    }
}
