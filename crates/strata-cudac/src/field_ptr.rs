//! Pointers to struct fields: `&v.f`, `&s.f`, `&p->f`, `&a[i].f`, `&s[i].f`.
//!
//! A field of a struct *variable* (`&v.f`, also `&b.x` of a `dim3`) is a local of its own, so a
//! pointer to it is the IR's reference to that local, which `sim` moves into a one-element buffer
//! (as for `&x` of a scalar): sound everywhere. So is `&s.f` of a `__shared__` struct scalar,
//! whose field is a one-element buffer of its own ([`shared_structs`]).
//!
//! A field of a struct *in memory* (`&p->f`, `&a[i].f`, and `&s[i].f` of a `__shared__` array)
//! is a reference to a place inside a buffer of many values (the IR's `&(*p)[i].k`): an access
//! through it at offset 0 is exactly the field, with every check, but one at any other offset
//! (`q[1]`, `q + 1`) would reach the next field or element, which C forbids and `sim` could not
//! tell from a legal access (the IR's pointers carry no bounds of their own). Such a pointer is
//! therefore accepted only where every use of it is provably at offset 0:
//!
//! * as an argument of an atomic (`atomicAdd(&p->n, 1)`, [`device`]);
//! * as an argument of a user function or kernel whose parameter is used only as `*x`, `x[0]`,
//!   in `x == y` / `x != y`, or passed on to an atomic or to another such parameter, and never
//!   assigned (`swap(&a[i].x, &a[j].x)`, `accumulate(&p->sum, v)`);
//! * as the initialiser of a pointer variable used only so in the rest of its block
//!   (`int *count = &bins[b].n; *count += 1;`).
//!
//! Anywhere else it is refused (E0801), naming the use that is not at offset 0.

use super::*;

/// Where a use of a pointer at offset 0 only was not found: the node and what it is.
struct Escape {
    at: usize,
    what: &'static str,
}

impl Lx {
    /// `&x.f` of a struct or `dim3` variable, or `&s.f` of a `__shared__` struct, as a pointer
    /// expression (`None` for anything else).
    pub(crate) fn var_field_address(&mut self, arg: Node, src: &Src) -> R<Option<ptr::PtrE>> {
        let arg = self.strip_parens(arg);
        if arg.kind() != "field_expression" || self.text(self.child(arg, "operator", src)?, src) != "." {
            return Ok(None);
        }
        let base = self.strip_parens(self.child(arg, "argument", src)?);
        if base.kind() != "identifier" {
            return Ok(None);
        }
        let Some(var) = self.lookup(self.text(base, src)) else { return Ok(None) };
        if !matches!(var.ty, CTy::Struct(_) | CTy::SharedStruct(_) | CTy::Dim3) {
            return Ok(None);
        }
        let Some((place, t)) = self.var_field(arg, src)? else { return Ok(None) };
        let span = self.span(arg, src);
        if let CTy::SharedStruct(_) = var.ty {
            // The field's own one-element `__shared__` buffer.
            return Ok(Some(ptr::PtrE::at(place.root, Elem::S(t))));
        }
        Ok(Some(self.local_address(place.root, t, span)))
    }

    /// `&x` of scalar local `local`: a pointer local holding the IR's reference to it (which `sim`
    /// then keeps in a one-element buffer of its own: host memory, or the thread's `gpu.local`).
    pub(crate) fn local_address(&mut self, local: LocalId, t: ScalarTy, span: Span) -> ptr::PtrE {
        let mem = if self.f.gpu { Mem::GpuLocal } else { Mem::Cpu };
        let level = self.level();
        let p = self.new_local("&x", array_ptr(t, mem, false), level);
        self.f.pre.push(Stmt::Let { local: p, init: Some(Expr::Ref(Place::local(local, span))), span });
        ptr::PtrE::at(p, Elem::S(t))
    }

    /// `n` written as `&F` with `F` a field of a struct in memory: `F`'s node.
    pub(crate) fn memory_field_address<'t>(&self, n: Node<'t>, src: &Src) -> Option<Node<'t>> {
        let n = self.strip_parens(n);
        if n.kind() != "pointer_expression" || n.child_by_field_name("operator").map(|o| self.text(o, src)) != Some("&")
        {
            return None;
        }
        let f = self.strip_parens(n.child_by_field_name("argument")?);
        if f.kind() != "field_expression" {
            return None;
        }
        let op = self.text(f.child_by_field_name("operator")?, src);
        let base = self.strip_parens(f.child_by_field_name("argument")?);
        if op == "." && base.kind() == "identifier" {
            // A variable's field (`&v.f`, `&s.f`): not in memory, or a one-element buffer.
            return None;
        }
        Some(f)
    }

    /// The pointer `&F` to field `F` of a struct in memory, of type `want` (the parameter's or
    /// variable's), where the caller has shown every use of it is at offset 0.
    pub(crate) fn field_pointer(&mut self, f: Node, want: ScalarTy, src: &Src) -> R<Expr> {
        let (place, t) = self.place(f, src)?;
        if t != want {
            return Err(self.unsupported(f, src, "a pointer to a field of another type"));
        }
        Ok(Expr::Ref(place))
    }

    /// Refuses `&F` (node `amp`) unless parameter `k` of function `callee` uses its pointer at
    /// offset 0 only.
    pub(crate) fn field_pointer_to_param(&self, amp: Node, callee: &str, k: usize, src: &Src) -> R<()> {
        let mut visiting = Vec::new();
        match self.param_at_zero(amp, callee, k, src, &mut visiting) {
            Ok(()) => Ok(()),
            Err(e) => Err(self.escape_error(amp, e, &format!("parameter {} of `{callee}`", k + 1), src)),
        }
    }

    /// Refuses `T *name = &F;` (declarator `d`) unless every use of `name` in the rest of its
    /// block is at offset 0.
    pub(crate) fn field_pointer_to_local(&self, d: Node, amp: Node, name: &str, src: &Src) -> R<()> {
        let escape = || Escape { at: d.start_byte(), what: "a declaration that is not in a block" };
        let mut decl = Some(d);
        while let Some(x) = decl.filter(|x| x.kind() != "declaration") {
            decl = x.parent();
        }
        let r = match decl.and_then(|x| x.parent().map(|b| (x, b))) {
            Some(_) if self.macro_mentions(name) => Err(Escape { at: d.start_byte(), what: "a macro that names it" }),
            Some((decl, block)) if block.kind() == "compound_statement" && src.at.is_none() => {
                let mut c = block.walk();
                let after: Vec<Node> =
                    block.named_children(&mut c).skip_while(|s| s.id() != decl.id()).skip(1).collect();
                let mut visiting = Vec::new();
                after.into_iter().try_for_each(|s| self.uses_at_zero(s, name, src, &mut visiting))
            }
            _ => Err(escape()),
        };
        r.map_err(|e| self.escape_error(amp, e, &format!("`{name}`"), src))
    }

    fn escape_error(&self, amp: Node, e: Escape, whose: &str, src: &Src) -> Box<Diagnostic> {
        let line = self.line_starts.partition_point(|s| *s <= e.at);
        self.unsupported(
            amp,
            src,
            format!(
                "a pointer to a field of a struct in memory where {whose} is used other than at offset 0 ({} at line \
                 {line}): an access through it at another offset would reach the next field unchecked",
                e.what
            ),
        )
    }

    /// Whether parameter `k` of function `name` (defined in this file) uses its pointer at
    /// offset 0 only; `visiting` holds the parameters being checked (a recursive call passing
    /// the pointer on is fine if the rest is).
    fn param_at_zero(
        &self,
        near: Node,
        name: &str,
        k: usize,
        src: &Src,
        visiting: &mut Vec<(String, usize)>,
    ) -> Result<(), Escape> {
        if visiting.iter().any(|(f, i)| f == name && *i == k) {
            return Ok(());
        }
        let here = Escape { at: near.start_byte(), what: "a function whose body is not known here" };
        if src.at.is_some() {
            return Err(here);
        }
        let mut root = near;
        while let Some(p) = root.parent() {
            root = p;
        }
        let mut c = root.walk();
        let def = root.named_children(&mut c).find(|f| {
            f.kind() == "function_definition"
                && f.child_by_field_name("declarator")
                    .and_then(|d| d.child_by_field_name("declarator"))
                    .is_some_and(|d| self.text(d, src) == name)
        });
        let Some(def) = def else { return Err(here) };
        let params = def.child_by_field_name("declarator").and_then(|d| d.child_by_field_name("parameters"));
        let Some(params) = params else { return Err(here) };
        let mut c = params.walk();
        let param = params.named_children(&mut c).filter(|p| p.kind() == "parameter_declaration").nth(k);
        let Some(mut d) = param.and_then(|p| p.child_by_field_name("declarator")) else { return Err(here) };
        while d.kind() == "pointer_declarator" {
            match d.child_by_field_name("declarator") {
                Some(x) => d = x,
                None => return Err(here),
            }
        }
        let pname = self.text(d, src).to_string();
        let Some(body) = def.child_by_field_name("body") else { return Err(here) };
        if self.macro_mentions(&pname) {
            // A macro's body could name the pointer where the walk below does not see it.
            return Err(Escape { at: body.start_byte(), what: "a macro that names it" });
        }
        visiting.push((name.to_string(), k));
        let r = self.uses_at_zero(body, &pname, src, visiting);
        visiting.pop();
        r
    }

    /// Whether every use of pointer variable `name` in `n` is at offset 0 (see the module).
    fn uses_at_zero(&self, n: Node, name: &str, src: &Src, visiting: &mut Vec<(String, usize)>) -> Result<(), Escape> {
        if n.kind() == "identifier" && self.text(n, src) == name {
            return self.use_at_zero(n, src, visiting);
        }
        let mut c = n.walk();
        let children: Vec<Node> = n.named_children(&mut c).collect();
        children.into_iter().try_for_each(|x| self.uses_at_zero(x, name, src, visiting))
    }

    /// Whether a macro's body has `name` as a token.
    fn macro_mentions(&self, name: &str) -> bool {
        let mentions = |text: &str| text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).any(|w| w == name);
        self.macros.values().any(|m| mentions(&m.text)) || self.fn_macros.values().any(|m| mentions(&m.body))
    }

    /// Whether the use `id` of the pointer is at offset 0.
    fn use_at_zero(&self, id: Node, src: &Src, visiting: &mut Vec<(String, usize)>) -> Result<(), Escape> {
        let escape = |what| Escape { at: id.start_byte(), what };
        let mut n = id;
        while let Some(p) = n.parent().filter(|p| p.kind() == "parenthesized_expression") {
            n = p;
        }
        let Some(parent) = n.parent() else { return Err(escape("a use")) };
        let is = |field: &str| parent.child_by_field_name(field).is_some_and(|x| x.id() == n.id());
        let op = parent.child_by_field_name("operator").map(|o| self.text(o, src));
        // The access `*x` / `x[0]` itself must not have its address taken again (`&*x`).
        let not_addressed = |access: Node| {
            let mut a = access;
            while let Some(p) = a.parent().filter(|p| p.kind() == "parenthesized_expression") {
                a = p;
            }
            !a.parent().is_some_and(|p| {
                p.kind() == "pointer_expression"
                    && p.child_by_field_name("operator").is_some_and(|o| self.text(o, src) == "&")
            })
        };
        match parent.kind() {
            "pointer_expression" if op == Some("*") && not_addressed(parent) => Ok(()),
            "subscript_expression" if is("argument") && not_addressed(parent) => {
                let zero = parent.child_by_field_name("indices").is_some_and(|ix| {
                    let mut c = ix.walk();
                    let v: Vec<Node> = ix.named_children(&mut c).collect();
                    v.len() == 1 && matches!(self.text(v[0], src), "0" | "0u" | "0U")
                });
                if zero {
                    Ok(())
                } else {
                    Err(escape("an index other than 0"))
                }
            }
            "binary_expression" if matches!(op, Some("==" | "!=")) => Ok(()),
            "binary_expression" if matches!(op, Some("+" | "-")) => Err(escape("pointer arithmetic")),
            "update_expression" => Err(escape("`++` or `--`")),
            "assignment_expression" | "init_declarator" if is("right") || is("value") => {
                Err(escape("a copy into another variable"))
            }
            "assignment_expression" => Err(escape("an assignment")),
            "init_declarator" | "pointer_declarator" | "declaration" => Err(escape("a declaration of the name")),
            "argument_list" => {
                let Some(call) = parent.parent().filter(|c| c.kind() == "call_expression") else {
                    return Err(escape("a use"));
                };
                let f = call.child_by_field_name("function").map_or("", |f| self.text(f, src));
                let mut c = parent.walk();
                let k = parent.named_children(&mut c).position(|a| a.id() == n.id()).unwrap_or(usize::MAX);
                if f.starts_with("atomic") && k == 0 && device::atomic_op(f).is_some() {
                    return Ok(());
                }
                if self.sigs.contains_key(f) {
                    return self.param_at_zero(call, f, k, src, visiting);
                }
                Err(escape("an argument of a call"))
            }
            _ => Err(escape("a use")),
        }
    }
}
