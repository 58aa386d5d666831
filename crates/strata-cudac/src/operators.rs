//! C++ operators of small structs and struct temporaries, as CUDA code written as C++ uses them
//! (CUDA by Example's `cuComplex`):
//!
//! ```c++
//! struct cuComplex {
//!     float r, i;
//!     __device__ cuComplex(float a, float b) : r(a), i(b) {}
//!     __device__ cuComplex operator*(const cuComplex &a) { return cuComplex(r*a.r - i*a.i, i*a.r + r*a.i); }
//! };
//! a = a * a + c;
//! ```
//!
//! A binary operator `x OP y` on structs of type `T` with a member `T operatorOP(const T &a)` (or
//! `T a`) whose body is one `return E;` is inlined where used as a struct value (an
//! initialiser, the right side of an assignment, an argument): its members are bound to `x`'s
//! (a variable, or a temporary holding `x`'s value), `a` to a copy of `y`, and E's value is kept
//! in a new temporary, so `a = a * a + c` reads every member of `a` before it assigns any. A
//! temporary `T(args)` runs `T`'s constructor on new locals.
//!
//! Refused (E0801): operators used as numbers (`bool operator==`, a result that is not `T`),
//! unary and compound-assignment operators (`-x`, `x += y`), operators whose body is more than
//! one `return`, non-`const` reference parameters, and temporaries of structs with pointer
//! or array members.

use super::*;

impl Lx {
    /// `x OP y` as a value of struct `id`, through `id`'s `operatorOP`.
    pub(crate) fn struct_operator(&mut self, n: Node, id: usize, src: &Src) -> R<Vec<Expr>> {
        let op = self.text(self.child(n, "operator", src)?, src).to_string();
        let tname = self.structs[id].name.clone();
        let Some(k) = self.method_index(id, &format!("operator{op}")) else {
            return Err(self.unsupported(n, src, format!("`{op}` on a `{tname}` (it has no `operator{op}`)")));
        };
        let (left, right) = (self.child(n, "left", src)?, self.child(n, "right", src)?);
        let span = self.span(n, src);
        let left = self.strip_parens(left);
        let recv = match (left.kind() == "identifier").then(|| self.lookup(self.text(left, src))).flatten() {
            Some(Var { local, ty: CTy::Struct(other) }) if other == id => local,
            _ => {
                let values = self.struct_value(left, id, src)?;
                self.temp_struct(id, values, left, src)?
            }
        };
        let pname = self.with_method(k, |lx, d, msrc| lx.operator_param(d, id, msrc))?;
        let values = self.struct_value(right, id, src)?;
        let operand = self.temp_struct(id, values, right, src)?;
        let fields = self.structs[id].fields.clone();
        let result = self.with_method(k, |lx, d, msrc| {
            let body = lx.child(d, "body", msrc)?;
            let stmts: Vec<Node> = body.named_children(&mut body.walk()).filter(|x| x.kind() != "comment").collect();
            let e = match &stmts[..] {
                [ret] if ret.kind() == "return_statement" => ret.named_child(0),
                _ => None,
            };
            let Some(e) = e else {
                return Err(lx.unsupported(d, msrc, "an operator whose body is not one `return E;`"));
            };
            // The body sees its members and its parameter, not the caller's locals.
            let saved = std::mem::replace(&mut lx.f.scopes, vec![HashMap::new()]);
            for (f, (name, t)) in fields.iter().enumerate() {
                if let structs::FTy::S(s) = t {
                    lx.bind(name, Var { local: recv + f, ty: CTy::S(*s) });
                }
            }
            lx.bind(&pname, Var { local: operand, ty: CTy::Struct(id) });
            let r = lx.struct_value(e, id, msrc);
            lx.f.scopes = saved;
            r
        })?;
        let l = self.temp_struct_at(id, result, span)?;
        Ok((0..fields.len()).map(|f| Expr::Load(Place::local(l + f, span))).collect())
    }

    /// The name of an operator's one parameter, which must be a `T` or a `const T &`; its result
    /// must be a `T` too.
    fn operator_param(&mut self, d: Node, id: usize, src: &Src) -> R<String> {
        let ret = self.child(d, "type", src)?;
        if self.struct_type(ret, src) != Some(id) {
            return Err(self.unsupported(ret, src, "an operator whose result is not its own struct"));
        }
        let decl = self.child(d, "declarator", src)?;
        let plist = self.child(decl, "parameters", src)?;
        let params: Vec<Node> = plist.named_children(&mut plist.walk()).filter(|x| x.kind() != "comment").collect();
        let [p] = params[..] else {
            return Err(self.unsupported(plist, src, "an operator with other than one parameter"));
        };
        let tn = self.child(p, "type", src)?;
        let is_const = p.children(&mut p.walk()).any(|x| x.kind() == "type_qualifier" && self.text(x, src) == "const");
        let name = match p.child_by_field_name("declarator") {
            Some(x) if x.kind() == "identifier" => Some(x),
            Some(x) if x.kind() == "reference_declarator" && is_const => {
                x.named_child(0).filter(|i| i.kind() == "identifier")
            }
            _ => None,
        };
        match name {
            Some(name) if self.struct_type(tn, src) == Some(id) => Ok(self.text(name, src).to_string()),
            _ => Err(self.unsupported(p, src, "this operator parameter (a `T` or a `const T &` of its own struct)")),
        }
    }

    /// A temporary `T(a, b)`: new locals that `T`'s constructor runs on.
    pub(crate) fn struct_temporary(&mut self, n: Node, id: usize, src: &Src) -> R<Vec<Expr>> {
        let Some(k) = self.method_index(id, "") else {
            return Err(self.unsupported(n, src, format!("`{}` has no constructor", self.structs[id].name)));
        };
        self.plain_fields(id, n, src)?;
        let args = self.args(n, src)?;
        let span = self.span(n, src);
        let level = self.level();
        let name = format!("{} temporary", self.structs[id].name);
        let first = self.struct_locals(&name, id, level, true);
        let nfields = self.structs[id].fields.len();
        for f in 0..nfields {
            self.f.pre.push(Stmt::Let { local: first + f, init: None, span });
        }
        let mut body = Vec::new();
        self.inline_method(k, first, &args, n, src, Some(&mut body))?;
        self.f.pre.extend(body);
        Ok((0..nfields).map(|f| Expr::Load(Place::local(first + f, span))).collect())
    }

    /// Whether `n` is `T(args)` of a struct type `T` (a temporary).
    pub(crate) fn is_temporary_of(&self, n: Node, id: usize, src: &Src) -> bool {
        n.child_by_field_name("function")
            .is_some_and(|f| f.kind() == "identifier" && self.struct_names.get(self.text(f, src)) == Some(&id))
    }

    /// A new temporary of struct `id` holding `values`; returns its first local.
    fn temp_struct(&mut self, id: usize, values: Vec<Expr>, n: Node, src: &Src) -> R<LocalId> {
        self.plain_fields(id, n, src)?;
        self.temp_struct_at(id, values, self.span(n, src))
    }

    fn temp_struct_at(&mut self, id: usize, values: Vec<Expr>, span: Span) -> R<LocalId> {
        let level = self.level();
        let name = format!("{} temporary", self.structs[id].name);
        let first = self.struct_locals(&name, id, level, true);
        for (f, v) in values.into_iter().enumerate() {
            self.f.pre.push(Stmt::Let { local: first + f, init: Some(v), span });
        }
        Ok(first)
    }

    /// Refuses a temporary of a struct with pointer or array members (whose copies would need
    /// ownership this front end does not track for temporaries).
    fn plain_fields(&self, id: usize, n: Node, src: &Src) -> R<()> {
        if self.structs[id].fields.iter().all(|(_, t)| matches!(t, structs::FTy::S(_))) {
            Ok(())
        } else {
            Err(self.unsupported(
                n,
                src,
                format!("a temporary `{}` (a struct with pointer or array members)", self.structs[id].name),
            ))
        }
    }

    /// Whether declarator `d` of a `T` is C++'s "most vexing parse": `T a(x, y);` in a function,
    /// with `x` and `y` names that are not types, which the grammar reads as a function
    /// declaration but C++ as a construction (the names are variables or macros).
    pub(crate) fn is_vexing_construction(&self, d: Node, id: usize, src: &Src) -> bool {
        if self.f.scopes.is_empty() || self.method_index(id, "").is_none() {
            return false;
        }
        let Some(plist) = d.child_by_field_name("parameters") else { return false };
        let params: Vec<Node> = plist.named_children(&mut plist.walk()).filter(|x| x.kind() != "comment").collect();
        !params.is_empty()
            && d.child_by_field_name("declarator").is_some_and(|x| x.kind() == "identifier")
            && params.iter().all(|p| {
                p.kind() == "parameter_declaration"
                    && p.child_by_field_name("declarator").is_none()
                    && p.named_child_count() == 1
                    && p.child_by_field_name("type").is_some_and(|t| {
                        let name = self.text(t, src);
                        t.kind() == "type_identifier"
                            && !self.struct_names.contains_key(name)
                            && !self.typedefs.contains_key(name)
                            && (self.lookup(name).is_some() || self.macros.contains_key(name))
                    })
            })
    }

    /// [`Lx::construct`] of `T a(x, y);` read as a function declarator: its text parsed again as
    /// the call `a(x, y)`, with spans into the file.
    pub(crate) fn construct_reparsed(&mut self, d: Node, id: usize, src: &Src, out: &mut Vec<Stmt>) -> R<()> {
        let prefix = "int __strata_construct = ";
        let text = format!("{prefix}{};", self.text(d, src));
        let tree = parse(&text).ok_or_else(|| self.unsupported(d, src, "this declaration"))?;
        let call = tree
            .root_node()
            .named_child(0)
            .and_then(|x| x.child_by_field_name("declarator"))
            .and_then(|x| x.child_by_field_name("value"))
            .filter(|x| x.kind() == "call_expression" && !x.has_error());
        let Some(call) = call else { return Err(self.unsupported(d, src, "this declaration")) };
        let base = d.start_byte() as i64 + src.base - prefix.len() as i64;
        let csrc = Src { text: &text, base, at: src.at };
        let name = self.child(call, "function", &csrc)?;
        let args = self.child(call, "arguments", &csrc)?;
        let list: Vec<Node> = args.named_children(&mut args.walk()).filter(|x| x.kind() != "comment").collect();
        self.construct(name, &list, args, id, &csrc, out)
    }
}
