//! Simple function templates: `template <typename T> __global__ void k(T *a, T v)`,
//! `template <unsigned int BLOCK> __device__ float sum(float *s)`, instantiated at each launch or
//! call with the template arguments written there (`k<float><<<g, b>>>(d, 2.0f)`,
//! `sum<256>(s)`) or deduced from the arguments' types (`k<<<g, b>>>(d_float, 2.0f)`), as C++
//! does for these forms.
//!
//! Each distinct instantiation is one function of its own (named `k<float>`, `sum<256>`), with
//! its type parameters bound as `typedef`s (scalars and structs) and its value parameters as
//! constants, lowered after the file's other functions ([`Lx::instantiate_pending`]). Only
//! templates of the `.cu` file itself (not of its headers) are instantiated; class templates,
//! template template parameters, default template arguments, explicit specialisations and
//! partial deduction are refused (E0801).

use super::*;

/// A template parameter: a type (`typename T`, `class T`) or a value of a scalar type
/// (`int N`, `unsigned int BLOCK`).
#[derive(Clone, Debug)]
pub(crate) enum TParam {
    Type(String),
    Value(String, ScalarTy),
}

/// A function template of the `.cu` file: the index of its item among the file's top-level
/// items, and its parameters.
#[derive(Clone, Debug)]
pub(crate) struct Template {
    item: u32,
    params: Vec<TParam>,
}

/// What a template parameter is bound to in one instantiation.
#[derive(Clone, Debug, PartialEq)]
enum Binding {
    Scalar(ScalarTy),
    Struct(usize),
    /// A value parameter: the constant and where the template argument was written.
    Value(u64, ScalarTy, u32),
}

/// An instantiation waiting to be lowered.
#[derive(Clone, Debug)]
pub(crate) struct Instance {
    item: u32,
    name: String,
    bindings: Vec<(String, Binding)>,
}

/// What a binding replaced, to restore after the instantiation.
type Saved = Vec<(String, Option<ScalarTy>, Option<usize>, Option<Rc<Macro>>)>;

impl Lx {
    /// The first pass over a `template <…> definition` at file level (item `index` of the `.cu`
    /// file): a function template is recorded; anything else is refused.
    pub(crate) fn declare_template(&mut self, n: Node, index: Option<u32>, src: &Src) -> R<()> {
        let def = n.named_children(&mut n.walk()).find(|c| c.kind() == "function_definition");
        let Some(def) = def else {
            return Err(self.unsupported(n, src, "templates other than function templates"));
        };
        let Some(item) = index else {
            // Refused where called (a header's templates are often not used).
            let name = self.child(def, "declarator", src)?.child_by_field_name("declarator");
            let Some(name) = name.filter(|x| x.kind() == "identifier") else {
                return Err(self.unsupported(n, src, "a function template in a header"));
            };
            self.header_templates.insert(self.text(name, src).to_string());
            return Ok(());
        };
        let plist = self.child(n, "parameters", src)?;
        let mut params = Vec::new();
        for p in plist.named_children(&mut plist.walk()) {
            match p.kind() {
                "comment" => {}
                "type_parameter_declaration" => {
                    let name = p.named_children(&mut p.walk()).find(|x| x.kind() == "type_identifier");
                    let Some(name) = name else {
                        return Err(self.unsupported(p, src, "a template type parameter without a name"));
                    };
                    params.push(TParam::Type(self.text(name, src).to_string()));
                }
                "parameter_declaration" => {
                    let t = self.scalar_type(self.child(p, "type", src)?, src)?;
                    let d = self.child(p, "declarator", src)?;
                    if d.kind() != "identifier" {
                        return Err(self.unsupported(d, src, "this template value parameter"));
                    }
                    params.push(TParam::Value(self.text(d, src).to_string(), t));
                }
                _ => {
                    return Err(self.unsupported(
                        p,
                        src,
                        "this template parameter (default template arguments, template template parameters and \
                         parameter packs are not supported)",
                    ))
                }
            }
        }
        let decl = self.child(def, "declarator", src)?;
        let name_node = self.child(decl, "declarator", src)?;
        if name_node.kind() != "identifier" {
            return Err(self.unsupported(name_node, src, "this function template's name"));
        }
        let name = self.text(name_node, src).to_string();
        if self.sigs.contains_key(&name) || self.templates.contains_key(&name) {
            return Err(self.unsupported(name_node, src, format!("a second definition of `{name}` (C++ overloading)")));
        }
        self.templates.insert(name, Template { item, params });
        Ok(())
    }

    /// The function a call or launch names: `name` itself, or for a function template the
    /// instantiation for the template arguments written (`k<float>`) or deduced from `args`,
    /// made on first use.
    pub(crate) fn callee_name(&mut self, fnode: Node, args: &[Node], src: &Src) -> R<String> {
        let (base, explicit) = match fnode.kind() {
            "template_function" => {
                let name = self.child(fnode, "name", src)?;
                let targs = self.child(fnode, "arguments", src)?;
                let list: Vec<Node> =
                    targs.named_children(&mut targs.walk()).filter(|x| x.kind() != "comment").collect();
                (self.text(name, src).to_string(), Some(list))
            }
            _ => {
                let name = self.text(fnode, src).to_string();
                if self.header_templates.contains(&name) && !self.sigs.contains_key(&name) {
                    return Err(self.unsupported(fnode, src, format!("`{name}`, a function template in a header")));
                }
                if !self.templates.contains_key(&name) {
                    return Ok(name);
                }
                (name, None)
            }
        };
        let Some(t) = self.templates.get(&base).cloned() else {
            return Err(self.unsupported(
                fnode,
                src,
                format!("template arguments of `{base}`, which is not a function template of this file"),
            ));
        };
        let mut bindings = Vec::new();
        let explicit = explicit.unwrap_or_default();
        if explicit.len() > t.params.len() {
            return Err(self.unsupported(fnode, src, format!("`{base}` with {} template arguments", explicit.len())));
        }
        for (k, p) in t.params.iter().enumerate() {
            let b = match (p, explicit.get(k)) {
                (TParam::Type(_), Some(a)) => self.type_argument(*a, src)?,
                (TParam::Value(_, ty), Some(a)) => {
                    // A name alone parses as a type (`k<threads>`).
                    let a = match a.kind() {
                        "type_descriptor" if a.child_by_field_name("declarator").is_none() => {
                            self.child(*a, "type", src)?
                        }
                        _ => *a,
                    };
                    let v = self.constant(a, src)?;
                    Binding::Value(v, *ty, self.span(a, src).lo)
                }
                (TParam::Type(name), None) => match self.deduce(&t, name, args, src)? {
                    Some(b) => b,
                    None => {
                        return Err(self.unsupported(
                            fnode,
                            src,
                            format!(
                            "a call of template `{base}` whose `{name}` cannot be deduced here (write `{base}<type>`)"
                        ),
                        ))
                    }
                },
                (TParam::Value(name, _), None) => {
                    return Err(self.unsupported(
                        fnode,
                        src,
                        format!("a call of template `{base}` without a value for `{name}`"),
                    ))
                }
            };
            let pname = match p {
                TParam::Type(n) | TParam::Value(n, _) => n.clone(),
            };
            bindings.push((pname, b));
        }
        let shown: Vec<String> = bindings
            .iter()
            .map(|(_, b)| match b {
                Binding::Scalar(s) => device::c_name(*s).to_string(),
                Binding::Struct(id) => self.structs.get(*id).map_or_else(String::new, |s| s.name.clone()),
                Binding::Value(v, t, _) => match t {
                    ScalarTy::I8 | ScalarTy::I16 | ScalarTy::I32 | ScalarTy::I64 => format!("{}", *v as i64),
                    _ => format!("{v}"),
                },
            })
            .collect();
        let name = format!("{base}<{}>", shown.join(", "));
        if !self.sigs.contains_key(&name) {
            self.declare_instance(Instance { item: t.item, name: name.clone(), bindings }, fnode, src)?;
        }
        Ok(name)
    }

    /// A type written as a template argument: a scalar type or a struct.
    fn type_argument(&self, a: Node, src: &Src) -> R<Binding> {
        let t = if a.kind() == "type_descriptor" {
            if a.child_by_field_name("declarator").is_some() {
                return Err(self.unsupported(a, src, "a pointer or array type as a template argument"));
            }
            self.child(a, "type", src)?
        } else {
            a
        };
        if let Some(id) = self.struct_type(t, src) {
            return Ok(Binding::Struct(id));
        }
        Ok(Binding::Scalar(self.scalar_type(t, src)?))
    }

    /// `T` deduced from the first argument whose parameter is written `T x`, `T *x`, `T x[]` or
    /// `T &x` (with `const`), from the argument's type where it is evident from its form.
    fn deduce(&mut self, t: &Template, tname: &str, args: &[Node], src: &Src) -> R<Option<Binding>> {
        let (tree, text) = (self.root_tree.clone(), self.root_text.clone());
        let Some(tree) = tree else { return Ok(None) };
        let root_src = Src { text: &text, base: 0, at: None };
        let Some(def) = tree
            .root_node()
            .named_child(t.item)
            .and_then(|n| n.named_children(&mut n.walk()).find(|c| c.kind() == "function_definition"))
        else {
            return Ok(None);
        };
        let Some(plist) = def.child_by_field_name("declarator").and_then(|d| d.child_by_field_name("parameters"))
        else {
            return Ok(None);
        };
        let params: Vec<Node> = plist.named_children(&mut plist.walk()).filter(|p| p.kind() != "comment").collect();
        for (p, a) in params.iter().zip(args) {
            let Some(ty) = p.child_by_field_name("type") else { continue };
            if self.text(ty, &root_src).trim() != tname {
                continue;
            }
            let pointer = p
                .child_by_field_name("declarator")
                .is_some_and(|d| matches!(d.kind(), "pointer_declarator" | "array_declarator"));
            let Some(at) = self.arg_type(*a, src) else { continue };
            return Ok(match (pointer, at) {
                (true, CTy::Ptr(Elem::S(s))) | (false, CTy::S(s) | CTy::SharedScalar(s)) => Some(Binding::Scalar(s)),
                (true, CTy::Ptr(Elem::Struct(id))) | (false, CTy::Struct(id)) => Some(Binding::Struct(id)),
                _ => None,
            });
        }
        Ok(None)
    }

    /// The type of an argument where its form shows it without lowering it: a variable, a
    /// literal, a cast, `&x`, `*p`, `a[i]`, `p + i` and arithmetic of those.
    fn arg_type(&self, a: Node, src: &Src) -> Option<CTy> {
        let a = self.strip_parens(a);
        match a.kind() {
            "identifier" => self.lookup(self.text(a, src)).map(|v| v.ty),
            "number_literal" => {
                let t = self.text(a, src).to_ascii_lowercase();
                let float = !t.starts_with("0x") && (t.contains('.') || t.contains('e'));
                Some(CTy::S(if float {
                    if t.ends_with('f') {
                        ScalarTy::F32
                    } else {
                        ScalarTy::F64
                    }
                } else if t.ends_with("ull") || t.ends_with("llu") || t.ends_with("ul") || t.ends_with("lu") {
                    ScalarTy::U64
                } else if t.ends_with('l') {
                    ScalarTy::I64
                } else if t.ends_with('u') {
                    ScalarTy::U32
                } else {
                    ScalarTy::I32
                }))
            }
            "char_literal" => Some(CTy::S(ScalarTy::I8)),
            "true" | "false" => Some(CTy::S(ScalarTy::Bool)),
            "cast_expression" => {
                let td = a.child_by_field_name("type")?;
                let ty = td.child_by_field_name("type")?;
                let elem = match self.struct_type(ty, src) {
                    Some(id) => Elem::Struct(id),
                    None => Elem::S(self.scalar_type(ty, src).ok()?),
                };
                match (td.child_by_field_name("declarator").map(|d| d.kind()), elem) {
                    (None, Elem::S(s)) => Some(CTy::S(s)),
                    (Some("abstract_pointer_declarator"), e) => Some(CTy::Ptr(e)),
                    _ => None,
                }
            }
            "pointer_expression" => {
                let inner = self.arg_type(a.child_by_field_name("argument")?, src)?;
                match (self.text(a.child_by_field_name("operator")?, src), inner) {
                    ("&", CTy::S(s) | CTy::SharedScalar(s)) => Some(CTy::Ptr(Elem::S(s))),
                    ("&", CTy::Struct(id)) => Some(CTy::Ptr(Elem::Struct(id))),
                    ("*", CTy::Ptr(Elem::S(s))) => Some(CTy::S(s)),
                    ("*", CTy::Ptr(Elem::Struct(id))) => Some(CTy::Struct(id)),
                    _ => None,
                }
            }
            "subscript_expression" => match self.arg_type(a.child_by_field_name("argument")?, src)? {
                CTy::Ptr(Elem::S(s)) => Some(CTy::S(s)),
                CTy::Ptr(Elem::Struct(id)) => Some(CTy::Struct(id)),
                _ => None,
            },
            "binary_expression" => {
                let l = self.arg_type(a.child_by_field_name("left")?, src);
                let r = self.arg_type(a.child_by_field_name("right")?, src);
                let op = self.text(a.child_by_field_name("operator")?, src);
                match (l, r) {
                    (Some(p @ CTy::Ptr(_)), _) | (_, Some(p @ CTy::Ptr(_))) if matches!(op, "+" | "-") => Some(p),
                    (Some(CTy::S(x)), Some(CTy::S(y))) if matches!(op, "+" | "-" | "*" | "/" | "%") => {
                        Some(CTy::S(types::arith(x, y)))
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// Binds an instantiation's parameters: type parameters as `typedef`s or struct names,
    /// value parameters as constants; what they replaced is returned for [`Lx::unbind`].
    fn bind_template(&mut self, inst: &Instance) -> R<Saved> {
        let mut saved = Vec::new();
        for (name, b) in &inst.bindings {
            let old =
                (name.clone(), self.typedefs.remove(name), self.struct_names.remove(name), self.macros.remove(name));
            saved.push(old);
            match b {
                Binding::Scalar(s) => {
                    self.typedefs.insert(name.clone(), *s);
                }
                Binding::Struct(id) => {
                    self.struct_names.insert(name.clone(), *id);
                }
                Binding::Value(v, t, at) => {
                    let prefix = "int __strata_macro = (";
                    let body = match t {
                        ScalarTy::I8 | ScalarTy::I16 | ScalarTy::I32 | ScalarTy::I64 => format!("{}", *v as i64),
                        _ => format!("{v}u"),
                    };
                    let text = format!("{prefix}{body});");
                    let span = Span::new(self.root_file, *at, at + 1);
                    let Some(tree) = parse(&text) else {
                        return Err(Box::new(Diagnostic::error(
                            codes::UNSUPPORTED,
                            "this template argument",
                            span,
                            "",
                        )));
                    };
                    let base = i64::from(*at) - prefix.len() as i64;
                    self.macros.insert(name.clone(), Rc::new(Macro { tree, text, base, span }));
                }
            }
        }
        Ok(saved)
    }

    fn unbind(&mut self, saved: Saved) {
        for (name, td, sn, m) in saved {
            self.typedefs.remove(&name);
            self.struct_names.remove(&name);
            self.macros.remove(&name);
            if let Some(t) = td {
                self.typedefs.insert(name.clone(), t);
            }
            if let Some(s) = sn {
                self.struct_names.insert(name.clone(), s);
            }
            if let Some(m) = m {
                self.macros.insert(name, m);
            }
        }
    }

    /// Gives a new instantiation its signature and ids (after every function of the file), and
    /// queues its body.
    fn declare_instance(&mut self, inst: Instance, at: Node, src: &Src) -> R<()> {
        let (tree, text) = (self.root_tree.clone(), self.root_text.clone());
        let Some(tree) = tree else {
            return Err(self.unsupported(at, src, "this function template"));
        };
        let root_src = Src { text: &text, base: 0, at: None };
        let Some(def) = tree
            .root_node()
            .named_child(inst.item)
            .and_then(|n| n.named_children(&mut n.walk()).find(|c| c.kind() == "function_definition"))
        else {
            return Err(self.unsupported(at, src, "this function template"));
        };
        let saved = self.bind_template(&inst)?;
        let head = self.head(def, &root_src);
        self.unbind(saved);
        let h = head?;
        let next = &mut self.next_fn;
        let mut id = || {
            *next += 1;
            *next - 1
        };
        // Numbered as `function` lowers them: the kernel, else host then device.
        let host = h.host.then(&mut id);
        let device = (h.device || h.kernel).then(&mut id);
        let params = h.params.iter().map(|p| p.1).collect();
        let sig = Sig { kernel: h.kernel, host, device, params, ret: h.ret, defaults: h.defaults.clone() };
        self.sigs.insert(inst.name.clone(), sig);
        self.pending.push_back(inst);
        Ok(())
    }

    /// Lowers the queued instantiations, in the order their ids were given (an instantiation's
    /// body may queue more).
    pub(crate) fn instantiate_pending(&mut self) {
        let (Some(tree), text) = (self.root_tree.clone(), self.root_text.clone()) else { return };
        let src = Src { text: &text, base: 0, at: None };
        while let Some(inst) = self.pending.pop_front() {
            let Some(item) = tree.root_node().named_child(inst.item) else { continue };
            let Some(def) = item.named_children(&mut item.walk()).find(|c| c.kind() == "function_definition") else {
                continue;
            };
            let r = self.bind_template(&inst).and_then(|saved| {
                let r = self.function_named(def, &inst.name, &src);
                self.unbind(saved);
                r
            });
            if let Err(d) = r {
                // (The program is refused then, so the ids of the functions after it do not matter.)
                let note = format!("in the instantiation `{}`", inst.name);
                self.recover(Err(Box::new(d.with_note(note))), item, &src);
            }
        }
    }
}
