//! The CUDA-C front end: parses a `.cu` file with the `tree-sitter-cuda` grammar and lowers its
//! syntax tree straight into Strata's IR ([`strata_ir::ir`]), so that the `sim` device runs real
//! CUDA-C programs with all of its checks (races, barrier divergence, bounds, uninitialised reads).
//!
//! The supported subset is small and listed in `docs/cuda-c.md`; everything outside it is refused
//! with E0801 ("not supported in CUDA-C yet: …") at the construct's span, never misrun.
//!
//! Shape of the lowering:
//! * A `__global__` function becomes a kernel whose body is **one thread region**
//!   ([`Stmt::Threads`] over every thread of the block): each thread runs the whole C body as its
//!   own program, and `__syncthreads()` is a [`Stmt::Sync`] inside it. `sim` stops each thread at
//!   barriers and checks they all wait at the same one, which is exactly CUDA's rule.
//! * C pointers are IR pointers to flat arrays (`Ty::Ref`/`Ty::Owned`); `p[i]` is the place
//!   `*p` at element offset `i`, a run-time index ([`IExpr::Value`]) that `sim` checks against the
//!   buffer's length. Local arrays (`int a[N]`) live on the host heap.
//! * `extern __shared__ T s[]` is a shared buffer of the kernel whose length is the launch's
//!   third `<<<…>>>` argument (bytes) divided by `sizeof(T)`, passed as the size parameter
//!   [`SMEM_PARAM`].
//! * Object-like `#define`s are parsed as C expressions (with spans in the `#define` line).

use std::collections::HashMap;
use std::rc::Rc;
use strata_diag::{codes, Diagnostic, FileId, Span};
use strata_ir::ir::{
    self, BinOp, Builtin, Expr, FnId, FnKind, IExpr, Level, Lit, LocalId, Mem, PathStep, Place, ScalarTy, Stmt, Ty,
    UnOp,
};
use tree_sitter::{Node, Parser, Tree};

/// The size parameter of every lowered kernel: the bytes of dynamic shared memory of the launch.
pub const SMEM_PARAM: &str = "__dynamic_shared_bytes";

type R<T> = Result<T, Box<Diagnostic>>;

pub mod harness;

/// Lowers the CUDA-C program `text` (file `file`) into an IR program whose entry is `main`.
pub fn lower(file: FileId, text: &str) -> R<ir::Program> {
    let p = lower_items(file, text)?;
    if p.entry.is_none() {
        return Err(Box::new(
            Diagnostic::error(codes::NO_MAIN, "the program has no `main` function", Span::new(file, 0, 0), "")
                .with_note(
                    "a file of kernels is checked in kernel-only mode: `strata check FILE.cu --kernel NAME --grid G \
                     --block B` (docs/cuda-c.md)",
                ),
        ));
    }
    Ok(p)
}

/// [`lower`] of a file that may have no `main` (kernel-only mode, [`harness`]).
pub fn lower_items(file: FileId, text: &str) -> R<ir::Program> {
    let tree = parse(text).ok_or_else(|| {
        Box::new(Diagnostic::error(codes::UNEXPECTED_TOKEN, "cannot parse this file", Span::new(file, 0, 0), ""))
    })?;
    let src = Src { text, base: 0 };
    let mut lx =
        Lx { file, macros: HashMap::new(), functions: Vec::new(), kernels: HashMap::new(), f: FnState::default() };
    syntax_errors(file, tree.root_node(), &src)?;
    let root = tree.root_node();
    let mut c = root.walk();
    for item in root.named_children(&mut c) {
        lx.item(item, &src)?;
    }
    let entry = lx.functions.iter().position(|f| f.name == "main");
    Ok(ir::Program { functions: lx.functions, entry, sources: Vec::new() })
}

fn parse(text: &str) -> Option<Tree> {
    let mut p = Parser::new();
    p.set_language(&tree_sitter_cuda::LANGUAGE.into()).ok()?;
    p.parse(text, None)
}

/// Source text of a tree and where its byte 0 lies in the `.cu` file (macro bodies are parsed
/// from a wrapper text whose expression starts at the `#define`'s value).
struct Src<'a> {
    text: &'a str,
    base: i64,
}

struct Macro {
    tree: Tree,
    text: String,
    base: i64,
    /// The span of the whole `#define` value, for errors in it.
    span: Span,
}

/// A C type of the subset: a scalar, or a pointer to scalars.
#[derive(Copy, Clone, Debug, PartialEq)]
enum CTy {
    S(ScalarTy),
    Ptr(ScalarTy),
}

#[derive(Copy, Clone)]
struct Var {
    local: LocalId,
    ty: CTy,
}

#[derive(Default)]
struct FnState {
    locals: Vec<ir::Local>,
    scopes: Vec<HashMap<String, Var>>,
    kernel: bool,
    shared: Vec<(LocalId, ScalarTy, IExpr)>,
    main: bool,
}

struct Lx {
    file: FileId,
    macros: HashMap<String, Rc<Macro>>,
    functions: Vec<ir::Function>,
    /// Kernels by name: their id and parameter types.
    kernels: HashMap<String, (FnId, Vec<CTy>)>,
    f: FnState,
}

fn size_of(t: ScalarTy) -> u64 {
    match t {
        ScalarTy::I64 | ScalarTy::U64 | ScalarTy::F64 => 8,
        ScalarTy::Bool => 1,
        _ => 4,
    }
}

fn zero(t: ScalarTy) -> Expr {
    match t {
        ScalarTy::F32 | ScalarTy::F64 => Expr::Lit(Lit::Float(0.0, t)),
        _ => Expr::Lit(Lit::Int(0, t)),
    }
}

fn int(v: u128, t: ScalarTy) -> Expr {
    Expr::Lit(Lit::Int(v, t))
}

fn cast(e: Expr, from: ScalarTy, to: ScalarTy) -> Expr {
    if from == to {
        e
    } else {
        Expr::Cast(Box::new(e), to)
    }
}

/// C's usual arithmetic conversions, on the scalar types of the subset.
fn arith(a: ScalarTy, b: ScalarTy) -> ScalarTy {
    use ScalarTy::*;
    for t in [F64, F32, U64, I64, U32] {
        if a == t || b == t {
            return t;
        }
    }
    I32
}

fn syntax_errors(file: FileId, n: Node, src: &Src) -> R<()> {
    if n.is_error() || n.is_missing() {
        let span = span_of(file, n, src);
        let what =
            if n.is_missing() { format!("expected `{}`", n.kind()) } else { "this is not valid CUDA-C".to_string() };
        return Err(Box::new(Diagnostic::error(codes::UNEXPECTED_TOKEN, "syntax error", span, what)));
    }
    if n.has_error() {
        let mut c = n.walk();
        for ch in n.children(&mut c) {
            syntax_errors(file, ch, src)?;
        }
    }
    Ok(())
}

fn span_of(file: FileId, n: Node, src: &Src) -> Span {
    let lo = (n.start_byte() as i64 + src.base).max(0) as u32;
    let hi = (n.end_byte() as i64 + src.base).max(0) as u32;
    Span::new(file, lo, hi.max(lo))
}

impl Lx {
    fn span(&self, n: Node, src: &Src) -> Span {
        span_of(self.file, n, src)
    }

    fn unsupported(&self, n: Node, src: &Src, what: impl Into<String>) -> Box<Diagnostic> {
        let what = what.into();
        Box::new(
            Diagnostic::error(
                codes::UNSUPPORTED,
                format!("not supported in CUDA-C yet: {what}"),
                self.span(n, src),
                "this construct",
            )
            .with_note("docs/cuda-c.md lists the CUDA-C subset that `strata run` accepts"),
        )
    }

    fn text<'a>(&self, n: Node, src: &Src<'a>) -> &'a str {
        src.text.get(n.byte_range()).unwrap_or("")
    }

    fn child<'t>(&self, n: Node<'t>, field: &str, src: &Src) -> R<Node<'t>> {
        n.child_by_field_name(field).ok_or_else(|| self.unsupported(n, src, format!("`{}` without {field}", n.kind())))
    }

    // --------------------------------------------------------------------------------------------
    // Items

    fn item(&mut self, n: Node, src: &Src) -> R<()> {
        match n.kind() {
            "comment" => Ok(()),
            "preproc_include" => {
                let path = self.child(n, "path", src)?;
                let name = self.text(path, src).trim_matches(|c| c == '<' || c == '>' || c == '"');
                if ["stdio.h", "stdlib.h", "cuda.h", "cuda_runtime.h"].contains(&name) {
                    Ok(())
                } else {
                    Err(self.unsupported(path, src, format!("`#include` of `{name}`")))
                }
            }
            "preproc_def" => {
                let name = self.text(self.child(n, "name", src)?, src).to_string();
                let Some(value) = n.child_by_field_name("value") else {
                    return Err(self.unsupported(n, src, "a `#define` without a value"));
                };
                let body = self.text(value, src);
                let prefix = "int __strata_macro = (";
                let text = format!("{prefix}{body});");
                let tree = parse(&text).ok_or_else(|| self.unsupported(value, src, "this macro body"))?;
                let base = value.start_byte() as i64 + src.base - prefix.len() as i64;
                let span = self.span(value, src);
                if tree.root_node().has_error() {
                    return Err(self.unsupported(value, src, "a macro whose value is not a C expression"));
                }
                self.macros.insert(name, Rc::new(Macro { tree, text, base, span }));
                Ok(())
            }
            "function_definition" => self.function(n, src),
            "preproc_function_def" => Err(self.unsupported(n, src, "function-like macros")),
            other => Err(self.unsupported(n, src, format!("`{other}` at file level"))),
        }
    }

    fn scalar_type(&self, n: Node, src: &Src) -> R<ScalarTy> {
        let t = self.text(n, src).split_whitespace().collect::<Vec<_>>().join(" ");
        Ok(match t.as_str() {
            "int" | "signed" | "signed int" => ScalarTy::I32,
            "unsigned" | "unsigned int" => ScalarTy::U32,
            "long long" | "long long int" | "long" | "long int" => ScalarTy::I64,
            "unsigned long long" | "unsigned long" | "size_t" | "unsigned long long int" => ScalarTy::U64,
            "float" => ScalarTy::F32,
            "double" => ScalarTy::F64,
            _ => return Err(self.unsupported(n, src, format!("the type `{t}`"))),
        })
    }

    fn new_local(&mut self, name: &str, ty: Ty, level: Level) -> LocalId {
        self.f.locals.push(ir::Local { name: name.to_string(), ty, level });
        self.f.locals.len() - 1
    }

    fn level(&self) -> Level {
        if self.f.kernel {
            Level::Thread
        } else {
            Level::Host
        }
    }

    fn bind(&mut self, name: &str, var: Var) {
        if let Some(s) = self.f.scopes.last_mut() {
            s.insert(name.to_string(), var);
        }
    }

    fn lookup(&self, name: &str) -> Option<Var> {
        self.f.scopes.iter().rev().find_map(|s| s.get(name).copied())
    }

    fn function(&mut self, n: Node, src: &Src) -> R<()> {
        let mut kernel = false;
        let mut c = n.walk();
        for ch in n.children(&mut c) {
            match ch.kind() {
                "__global__" => kernel = true,
                "__host__" => {}
                "__device__" | "storage_class_specifier" | "type_qualifier" | "attribute_specifier" => {
                    return Err(self.unsupported(ch, src, format!("functions with `{}`", self.text(ch, src))));
                }
                _ => {}
            }
        }
        let decl = self.child(n, "declarator", src)?;
        if decl.kind() != "function_declarator" {
            return Err(self.unsupported(decl, src, "this function declarator"));
        }
        let name_node = self.child(decl, "declarator", src)?;
        let name = self.text(name_node, src).to_string();
        let ret = self.child(n, "type", src)?;
        let ret_text = self.text(ret, src);
        if kernel && ret_text != "void" {
            return Err(self.unsupported(ret, src, "a kernel must return `void`"));
        }
        if !kernel && name != "main" {
            return Err(self.unsupported(name_node, src, "host or device functions other than `main` and kernels"));
        }
        if name == "main" && ret_text != "int" {
            return Err(self.unsupported(ret, src, "`main` must return `int`"));
        }
        self.f = FnState { kernel, main: !kernel, scopes: vec![HashMap::new()], ..FnState::default() };
        let mut params = Vec::new();
        let mut param_tys = Vec::new();
        let plist = self.child(decl, "parameters", src)?;
        let mut c = plist.walk();
        for p in plist.named_children(&mut c) {
            if p.kind() == "comment" {
                continue;
            }
            if p.kind() != "parameter_declaration" {
                return Err(self.unsupported(p, src, "this parameter"));
            }
            let ty_node = self.child(p, "type", src)?;
            if !kernel {
                // `int main(void)` or `int main(int argc, char **argv)`: the arguments are not
                // available to the program (a use of them is an unknown name).
                continue;
            }
            let t = self.scalar_type(ty_node, src)?;
            let d = self.child(p, "declarator", src)?;
            let (pname, cty) = match d.kind() {
                "identifier" => (self.text(d, src), CTy::S(t)),
                "pointer_declarator" => {
                    let inner = self.child(d, "declarator", src)?;
                    if inner.kind() != "identifier" {
                        return Err(self.unsupported(inner, src, "pointers to pointers"));
                    }
                    (self.text(inner, src), CTy::Ptr(t))
                }
                _ => return Err(self.unsupported(d, src, "this parameter declarator")),
            };
            let ty = match cty {
                CTy::S(t) => Ty::Scalar(t),
                CTy::Ptr(t) => array_ptr(t, Mem::GpuGlobal, false),
            };
            let l = self.new_local(pname, ty, Level::Block);
            self.bind(pname, Var { local: l, ty: cty });
            params.push(l);
            param_tys.push(cty);
        }
        let id = self.functions.len();
        if kernel {
            self.kernels.insert(name.clone(), (id, param_tys));
        }
        let body_node = self.child(n, "body", src)?;
        let mut body = Vec::new();
        self.block(body_node, src, &mut body)?;
        let fs = std::mem::take(&mut self.f);
        let kind = if kernel {
            let one = || [IExpr::Const(1), IExpr::Const(1), IExpr::Const(1)];
            body = vec![Stmt::Threads { set: Vec::new(), body }];
            FnKind::Kernel { grid: one(), block: one(), shared: fs.shared }
        } else {
            FnKind::Host
        };
        self.functions.push(ir::Function {
            name,
            kind,
            nat_params: if kernel { vec![SMEM_PARAM.to_string()] } else { Vec::new() },
            nat_max: HashMap::new(),
            params,
            locals: fs.locals,
            body,
            ret: Ty::Scalar(ScalarTy::Unit),
            span: self.span(n, src),
            shrd_params: Vec::new(),
        });
        Ok(())
    }

    // --------------------------------------------------------------------------------------------
    // Statements

    fn block(&mut self, n: Node, src: &Src, out: &mut Vec<Stmt>) -> R<()> {
        self.f.scopes.push(HashMap::new());
        let mut c = n.walk();
        let r = n.named_children(&mut c).try_for_each(|s| self.stmt(s, src, out));
        self.f.scopes.pop();
        r
    }

    fn stmt(&mut self, n: Node, src: &Src, out: &mut Vec<Stmt>) -> R<()> {
        match n.kind() {
            "comment" => {}
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
                let cond = self.cond(self.child(self.child(n, "condition", src)?, "value", src)?, src)?;
                let mut body = Vec::new();
                self.scoped(self.child(n, "body", src)?, src, &mut body)?;
                out.push(Stmt::While { cond, body, span: self.span(n, src) });
            }
            "for_statement" => {
                self.f.scopes.push(HashMap::new());
                let r = self.for_stmt(n, src, out);
                self.f.scopes.pop();
                r?;
            }
            "return_statement" => {
                let value = n.named_child(0);
                if self.f.main {
                    // `return 0;` ends the program; another status is not supported yet.
                    match value {
                        Some(v) if self.text(v, src).trim() == "0" => out.push(Stmt::Return(None)),
                        None => out.push(Stmt::Return(None)),
                        Some(v) => return Err(self.unsupported(v, src, "`main` returning a status other than 0")),
                    }
                } else if let Some(v) = value {
                    return Err(self.unsupported(v, src, "a kernel returning a value"));
                } else {
                    out.push(Stmt::Return(None));
                }
            }
            other => return Err(self.unsupported(n, src, format!("the statement `{other}`"))),
        }
        Ok(())
    }

    /// A statement in a scope of its own (a branch or loop body).
    fn scoped(&mut self, n: Node, src: &Src, out: &mut Vec<Stmt>) -> R<()> {
        self.f.scopes.push(HashMap::new());
        let r = self.stmt(n, src, out);
        self.f.scopes.pop();
        r
    }

    fn for_stmt(&mut self, n: Node, src: &Src, out: &mut Vec<Stmt>) -> R<()> {
        if let Some(init) = n.child_by_field_name("initializer") {
            if init.kind() == "declaration" {
                self.declaration(init, src, out)?;
            } else {
                self.expr_stmt(init, src, out)?;
            }
        }
        let cond = match n.child_by_field_name("condition") {
            Some(c) => self.cond(c, src)?,
            None => Expr::Lit(Lit::Bool(true)),
        };
        let mut body = Vec::new();
        self.scoped(self.child(n, "body", src)?, src, &mut body)?;
        if let Some(u) = n.child_by_field_name("update") {
            self.expr_stmt(u, src, &mut body)?;
        }
        out.push(Stmt::While { cond, body, span: self.span(n, src) });
        Ok(())
    }

    fn declaration(&mut self, n: Node, src: &Src, out: &mut Vec<Stmt>) -> R<()> {
        let mut shared = false;
        let mut ext = false;
        let mut c = n.walk();
        for ch in n.children(&mut c) {
            match (ch.kind(), self.text(ch, src)) {
                ("type_qualifier", "__shared__") => shared = true,
                ("type_qualifier", "const") => {}
                ("storage_class_specifier", "extern") => ext = true,
                ("type_qualifier" | "storage_class_specifier" | "attribute_specifier", t) => {
                    return Err(self.unsupported(ch, src, format!("`{t}` declarations")));
                }
                _ => {}
            }
        }
        if shared && !self.f.kernel {
            return Err(self.unsupported(n, src, "`__shared__` outside a kernel"));
        }
        if ext && !shared {
            return Err(self.unsupported(n, src, "`extern` declarations"));
        }
        let t = self.scalar_type(self.child(n, "type", src)?, src)?;
        let mut c = n.walk();
        let decls: Vec<Node> = n.children_by_field_name("declarator", &mut c).collect();
        for d in decls {
            let (d, init) = if d.kind() == "init_declarator" {
                (self.child(d, "declarator", src)?, Some(self.child(d, "value", src)?))
            } else {
                (d, None)
            };
            let span = self.span(d, src);
            match d.kind() {
                "identifier" if !shared => {
                    let name = self.text(d, src);
                    let l = self.new_local(name, Ty::Scalar(t), self.level());
                    let init = match init {
                        Some(v) => {
                            let (e, et) = self.rvalue(v, src)?;
                            Some(self.convert(e, et, CTy::S(t), v, src)?)
                        }
                        None => None,
                    };
                    out.push(Stmt::Let { local: l, init, span });
                    self.bind(name, Var { local: l, ty: CTy::S(t) });
                }
                "pointer_declarator" if !shared => {
                    let inner = self.child(d, "declarator", src)?;
                    if inner.kind() != "identifier" {
                        return Err(self.unsupported(inner, src, "pointers to pointers"));
                    }
                    let name = self.text(inner, src);
                    let l = self.new_local(name, array_ptr(t, Mem::Cpu, !self.f.kernel), self.level());
                    let init = match init {
                        Some(v) => Some(self.pointer_init(v, t, src)?),
                        None => None,
                    };
                    out.push(Stmt::Let { local: l, init, span });
                    self.bind(name, Var { local: l, ty: CTy::Ptr(t) });
                }
                "array_declarator" => {
                    if let Some(v) = init {
                        return Err(self.unsupported(v, src, "array initialisers"));
                    }
                    let inner = self.child(d, "declarator", src)?;
                    if inner.kind() != "identifier" {
                        return Err(self.unsupported(inner, src, "multi-dimensional arrays"));
                    }
                    let name = self.text(inner, src);
                    let size = d.child_by_field_name("size");
                    if shared {
                        let len = match (size, ext) {
                            (None, true) => IExpr::Param(SMEM_PARAM.to_string()) / IExpr::Const(size_of(t)),
                            (Some(s), false) => IExpr::Const(self.constant(s, src)?),
                            _ => return Err(self.unsupported(d, src, "this `__shared__` array")),
                        };
                        let l = self.new_local(name, array_ptr(t, Mem::GpuShared, false), Level::Block);
                        self.f.shared.push((l, t, len));
                        self.bind(name, Var { local: l, ty: CTy::Ptr(t) });
                    } else if self.f.kernel {
                        return Err(self.unsupported(d, src, "local arrays in kernels"));
                    } else {
                        let Some(s) = size else {
                            return Err(self.unsupported(d, src, "an array without a size"));
                        };
                        let len = IExpr::Const(self.constant(s, src)?);
                        let l = self.new_local(name, array_ptr(t, Mem::Cpu, true), Level::Host);
                        let init =
                            Expr::Builtin(Builtin::HeapNew, vec![Expr::ArrayRepeat(Box::new(zero(t)), len)], span);
                        out.push(Stmt::Let { local: l, init: Some(init), span });
                        self.bind(name, Var { local: l, ty: CTy::Ptr(t) });
                    }
                }
                _ => return Err(self.unsupported(d, src, "this declaration")),
            }
        }
        Ok(())
    }

    /// The value of a pointer variable's initialiser: `malloc(bytes)` (cast or not) or another
    /// pointer variable.
    fn pointer_init(&mut self, v: Node, t: ScalarTy, src: &Src) -> R<Expr> {
        let inner = if v.kind() == "cast_expression" { self.child(v, "value", src)? } else { v };
        if inner.kind() == "call_expression" {
            let f = self.child(inner, "function", src)?;
            if self.text(f, src) == "malloc" && !self.f.kernel {
                let args = self.args(inner, src)?;
                if args.len() != 1 {
                    return Err(self.unsupported(inner, src, "`malloc` takes one argument"));
                }
                let len = self.elements(args[0], t, src)?;
                let span = self.span(inner, src);
                return Ok(Expr::Builtin(Builtin::HeapNew, vec![Expr::ArrayRepeat(Box::new(zero(t)), len)], span));
            }
        }
        let (e, et) = self.rvalue(v, src)?;
        if et != CTy::Ptr(t) {
            return Err(self.unsupported(v, src, "this pointer initialiser"));
        }
        Ok(e)
    }

    /// `bytes / sizeof(t)` as a run-time element count.
    fn elements(&mut self, bytes: Node, t: ScalarTy, src: &Src) -> R<IExpr> {
        let (e, et) = self.rvalue(bytes, src)?;
        let e = self.convert(e, et, CTy::S(ScalarTy::U64), bytes, src)?;
        Ok(IExpr::Value(Box::new(Expr::Binary(
            BinOp::Div,
            Box::new(e),
            Box::new(int(size_of(t).into(), ScalarTy::U64)),
        ))))
    }

    fn args<'t>(&self, call: Node<'t>, src: &Src) -> R<Vec<Node<'t>>> {
        let a = self.child(call, "arguments", src)?;
        let mut c = a.walk();
        Ok(a.named_children(&mut c).filter(|x| x.kind() != "comment").collect())
    }

    /// A constant expression (array sizes): literals and macros, `+ - * / %`.
    fn constant(&self, n: Node, src: &Src) -> R<u64> {
        let bad = || self.unsupported(n, src, "this constant expression");
        match n.kind() {
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
            "identifier" => {
                let m = self.macros.get(self.text(n, src)).cloned().ok_or_else(bad)?;
                let msrc = Src { text: &m.text, base: m.base };
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
            "sizeof_expression" => {
                let t = self.child(self.child(n, "type", src)?, "type", src)?;
                Ok(size_of(self.scalar_type(t, src)?))
            }
            _ => Err(bad()),
        }
    }

    fn expr_stmt(&mut self, n: Node, src: &Src, out: &mut Vec<Stmt>) -> R<()> {
        match n.kind() {
            "assignment_expression" => {
                let left = self.child(n, "left", src)?;
                let right = self.child(n, "right", src)?;
                let op = self.text(self.child(n, "operator", src)?, src);
                // `p = malloc(...)` / `p = q` for a pointer variable.
                if left.kind() == "identifier" {
                    if let Some(Var { local, ty: CTy::Ptr(t) }) = self.lookup(self.text(left, src)) {
                        if op != "=" {
                            return Err(self.unsupported(n, src, "pointer arithmetic"));
                        }
                        let init = self.pointer_init(right, t, src)?;
                        out.push(Stmt::Let { local, init: Some(init), span: self.span(n, src) });
                        return Ok(());
                    }
                }
                let (place, pt) = self.place(left, src)?;
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
                let (place, pt) = self.place(arg, src)?;
                let bop = if op == "++" { BinOp::Add } else { BinOp::Sub };
                let one = cast(int(1, ScalarTy::I32), ScalarTy::I32, pt);
                let value = Expr::Binary(bop, Box::new(Expr::Load(place.clone())), Box::new(one));
                out.push(Stmt::Store { place, value });
            }
            "call_expression" => self.call_stmt(n, src, out)?,
            "comma_expression" => {
                self.expr_stmt(self.child(n, "left", src)?, src, out)?;
                self.expr_stmt(self.child(n, "right", src)?, src, out)?;
            }
            _ => {
                let (e, _) = self.rvalue(n, src)?;
                out.push(Stmt::Eval(e));
            }
        }
        Ok(())
    }

    fn call_stmt(&mut self, n: Node, src: &Src, out: &mut Vec<Stmt>) -> R<()> {
        let fnode = self.child(n, "function", src)?;
        let name = self.text(fnode, src).to_string();
        let span = self.span(n, src);
        let args = self.args(n, src)?;
        let mut c = n.walk();
        let launch = n.children(&mut c).find(|x| x.kind() == "kernel_call_syntax");
        if let Some(cfg) = launch {
            return self.launch(n, cfg, &name, &args, src, out);
        }
        let host_only = |lx: &Self| -> R<()> {
            if lx.f.kernel {
                Err(lx.unsupported(n, src, format!("`{name}` in GPU code")))
            } else {
                Ok(())
            }
        };
        let want = |lx: &Self, k: usize| -> R<()> {
            if args.len() == k {
                Ok(())
            } else {
                Err(lx.unsupported(n, src, format!("`{name}` with {} arguments (it takes {k})", args.len())))
            }
        };
        match name.as_str() {
            "__syncthreads" => {
                if !self.f.kernel {
                    return Err(self.unsupported(n, src, "`__syncthreads` outside a kernel"));
                }
                want(self, 0)?;
                out.push(Stmt::Sync { warp: false, span });
            }
            "printf" => self.printf(n, &args, src, out)?,
            "cudaDeviceSynchronize" => {
                // Launches and copies run to completion in order on `sim`: nothing to wait for.
                host_only(self)?;
                want(self, 0)?;
            }
            "cudaMalloc" => {
                host_only(self)?;
                want(self, 2)?;
                let target = args[0];
                let var = (target.kind() == "pointer_expression"
                    && self.text(self.child(target, "operator", src)?, src) == "&")
                    .then(|| target.child_by_field_name("argument"))
                    .flatten()
                    .filter(|a| a.kind() == "identifier")
                    .and_then(|a| self.lookup(self.text(a, src)));
                let Some(Var { local, ty: CTy::Ptr(t) }) = var else {
                    return Err(self.unsupported(target, src, "`cudaMalloc` of anything but `&pointer_variable`"));
                };
                let len = self.elements(args[1], t, src)?;
                let host = Expr::Builtin(Builtin::HeapNew, vec![Expr::ArrayRepeat(Box::new(zero(t)), len)], span);
                let init = Expr::Builtin(Builtin::GlobalAllocCopy, vec![host], span);
                self.f.locals[local].ty = array_ptr(t, Mem::GpuGlobal, true);
                out.push(Stmt::Let { local, init: Some(init), span });
            }
            "cudaFree" | "free" => {
                host_only(self)?;
                want(self, 1)?;
                let v = (args[0].kind() == "identifier").then(|| self.lookup(self.text(args[0], src))).flatten();
                let Some(Var { local, ty: CTy::Ptr(_) }) = v else {
                    return Err(self.unsupported(args[0], src, format!("`{name}` of anything but a pointer variable")));
                };
                out.push(Stmt::Free { local, gpu: name == "cudaFree", span });
            }
            "cudaMemcpy" => {
                host_only(self)?;
                want(self, 4)?;
                self.memcpy(n, &args, src, out)?;
            }
            _ => return Err(self.unsupported(fnode, src, format!("calls of `{name}`"))),
        }
        Ok(())
    }

    /// A pointer variable given to a CUDA API call: its value and element type.
    fn pointer_arg(&self, n: Node, src: &Src) -> R<(LocalId, ScalarTy)> {
        let v = (n.kind() == "identifier").then(|| self.lookup(self.text(n, src))).flatten();
        match v {
            Some(Var { local, ty: CTy::Ptr(t) }) => Ok((local, t)),
            _ => Err(self.unsupported(n, src, "a pointer argument other than a pointer or array variable")),
        }
    }

    /// `cudaMemcpy(dst, src, bytes, kind)`: exactly `bytes / sizeof(T)` elements, through a host
    /// buffer of that length (the IR's copies copy as much as both sides hold). A device side
    /// shorter than the count is an out-of-bounds error (E0903) at the call.
    fn memcpy(&mut self, n: Node, args: &[Node], src: &Src, out: &mut Vec<Stmt>) -> R<()> {
        let span = self.span(n, src);
        let kind = self.text(args[3], src);
        let h2d = match kind {
            "cudaMemcpyHostToDevice" => true,
            "cudaMemcpyDeviceToHost" => false,
            _ => return Err(self.unsupported(args[3], src, format!("`cudaMemcpy` of kind `{kind}`"))),
        };
        let (dst, dt) = self.pointer_arg(args[0], src)?;
        let (from, st) = self.pointer_arg(args[1], src)?;
        if dt != st {
            return Err(self.unsupported(n, src, "`cudaMemcpy` between pointers of different element types"));
        }
        let count = self.elements(args[2], dt, src)?;
        let (gpu, host) = if h2d { (dst, from) } else { (from, dst) };
        let tmp = self.new_local("cudaMemcpy buffer", array_ptr(dt, Mem::Cpu, true), Level::Host);
        let probe = self.new_local("cudaMemcpy probe", array_ptr(dt, Mem::Cpu, true), Level::Host);
        let k = self.new_local("cudaMemcpy index", Ty::Scalar(ScalarTy::U64), Level::Host);
        let heap = |len: IExpr| Expr::Builtin(Builtin::HeapNew, vec![Expr::ArrayRepeat(Box::new(zero(dt)), len)], span);
        let elem = |l: LocalId, i: IExpr| Place {
            root: l,
            path: vec![PathStep::Deref, PathStep::Elem(i)],
            checks: Vec::new(),
            span,
        };
        let load = |l: LocalId| Expr::Load(Place::local(l, span));
        let kv = || IExpr::Value(Box::new(load(k)));
        // The device buffer must hold `count` elements: a pointer at offset `count` is past its end
        // otherwise (E0903); copying from there reads at most one element, into the probe.
        out.push(Stmt::Let { local: probe, init: Some(heap(IExpr::Const(1))), span });
        out.push(Stmt::Eval(Expr::Builtin(
            Builtin::CopyToHost,
            vec![Expr::Ref(elem(gpu, count.clone())), load(probe)],
            span,
        )));
        out.push(Stmt::Free { local: probe, gpu: false, span });
        out.push(Stmt::Let { local: tmp, init: Some(heap(count.clone())), span });
        out.push(Stmt::Let { local: k, init: Some(int(0, ScalarTy::U64)), span });
        let (to, fro) = if h2d { (tmp, host) } else { (host, tmp) };
        let step = vec![
            Stmt::Store { place: elem(to, kv()), value: Expr::Load(elem(fro, kv())) },
            Stmt::Store {
                place: Place::local(k, span),
                value: Expr::Binary(BinOp::Add, Box::new(load(k)), Box::new(int(1, ScalarTy::U64))),
            },
        ];
        let cond = Expr::Binary(BinOp::Lt, Box::new(Expr::Nat(kv())), Box::new(Expr::Nat(count)));
        let copy_loop = Stmt::While { cond, body: step, span };
        if h2d {
            out.push(copy_loop);
            out.push(Stmt::Eval(Expr::Builtin(Builtin::CopyToGpu, vec![load(gpu), load(tmp)], span)));
        } else {
            out.push(Stmt::Eval(Expr::Builtin(Builtin::CopyToHost, vec![load(gpu), load(tmp)], span)));
            out.push(copy_loop);
        }
        out.push(Stmt::Free { local: tmp, gpu: false, span });
        Ok(())
    }

    fn launch(&mut self, n: Node, cfg: Node, name: &str, args: &[Node], src: &Src, out: &mut Vec<Stmt>) -> R<()> {
        if self.f.kernel {
            return Err(self.unsupported(n, src, "kernel launches from GPU code"));
        }
        let Some((kernel, ptys)) = self.kernels.get(name).cloned() else {
            return Err(self.unsupported(n, src, format!("a launch of `{name}`, which is not a kernel defined above")));
        };
        let mut c = cfg.walk();
        let conf: Vec<Node> = cfg.named_children(&mut c).filter(|x| x.kind() != "comment").collect();
        if conf.len() < 2 || conf.len() > 3 {
            return Err(self.unsupported(
                cfg,
                src,
                "a launch configuration other than `<<<grid, block[, shared bytes]>>>`",
            ));
        }
        let mut dims = Vec::new();
        for d in &conf {
            let (e, t) = self.rvalue(*d, src)?;
            if matches!(t, CTy::Ptr(_) | CTy::S(ScalarTy::F32 | ScalarTy::F64)) {
                return Err(self.unsupported(
                    *d,
                    src,
                    "a launch dimension that is not an integer (`dim3` is not supported yet)",
                ));
            }
            let e = self.convert(e, t, CTy::S(ScalarTy::U64), *d, src)?;
            dims.push(IExpr::Value(Box::new(e)));
        }
        let smem = dims.get(2).cloned().unwrap_or(IExpr::Const(0));
        if args.len() != ptys.len() {
            return Err(self.unsupported(
                n,
                src,
                format!("`{name}` takes {} arguments, not {}", ptys.len(), args.len()),
            ));
        }
        let mut values = Vec::new();
        for (a, pt) in args.iter().zip(&ptys) {
            let (e, t) = self.rvalue(*a, src)?;
            values.push(self.convert(e, t, *pt, *a, src)?);
        }
        let one = IExpr::Const(1);
        out.push(Stmt::Launch {
            kernel,
            nats: vec![smem],
            grid: [dims[0].clone(), one.clone(), one.clone()],
            block: [dims[1].clone(), one.clone(), one],
            args: values,
            span: self.span(n, src),
        });
        Ok(())
    }

    fn printf(&mut self, n: Node, args: &[Node], src: &Src, out: &mut Vec<Stmt>) -> R<()> {
        let span = self.span(n, src);
        let Some(fmt) = args.first().filter(|f| f.kind() == "string_literal") else {
            return Err(self.unsupported(n, src, "`printf` without a literal format string"));
        };
        // The format string's text, with escapes resolved.
        let mut text = String::new();
        let mut c = fmt.walk();
        for part in fmt.named_children(&mut c) {
            let t = self.text(part, src);
            match part.kind() {
                "string_content" => text.push_str(t),
                "escape_sequence" => text.push(match t {
                    "\\n" => '\n',
                    "\\t" => '\t',
                    "\\\\" => '\\',
                    "\\\"" => '"',
                    "\\'" => '\'',
                    _ => return Err(self.unsupported(part, src, format!("the escape `{t}`"))),
                }),
                _ => return Err(self.unsupported(part, src, "this part of a string")),
            }
        }
        let print = |s: &str, out: &mut Vec<Stmt>| {
            if !s.is_empty() {
                out.push(Stmt::Eval(Expr::Builtin(
                    Builtin::PrintInline,
                    vec![Expr::Lit(Lit::Str(s.to_string()))],
                    span,
                )));
            }
        };
        let mut lit = String::new();
        let mut values = args[1..].iter();
        let mut chars = text.chars().peekable();
        while let Some(ch) = chars.next() {
            if ch != '%' {
                lit.push(ch);
                continue;
            }
            let mut conv = String::new();
            while let Some(&x) = chars.peek() {
                conv.push(x);
                chars.next();
                if x.is_ascii_alphabetic() && x != 'l' && x != 'z' || x == '%' {
                    break;
                }
            }
            let t = match conv.as_str() {
                "%" => {
                    lit.push('%');
                    continue;
                }
                "d" | "i" => ScalarTy::I32,
                "u" => ScalarTy::U32,
                "ld" | "lld" => ScalarTy::I64,
                "lu" | "llu" | "zu" => ScalarTy::U64,
                _ => return Err(self.unsupported(*fmt, src, format!("the `printf` conversion `%{conv}`"))),
            };
            let Some(v) = values.next() else {
                return Err(self.unsupported(n, src, "`printf` with fewer arguments than conversions"));
            };
            print(&std::mem::take(&mut lit), out);
            let (e, et) = self.rvalue(*v, src)?;
            let e = match et {
                CTy::S(s) if s != ScalarTy::F32 && s != ScalarTy::F64 => cast(e, s, t),
                _ => return Err(self.unsupported(*v, src, format!("printing this value with `%{conv}`"))),
            };
            out.push(Stmt::Eval(Expr::Builtin(Builtin::PrintInline, vec![e], span)));
        }
        if let Some(extra) = values.next() {
            return Err(self.unsupported(*extra, src, "`printf` arguments without a conversion"));
        }
        print(&lit, out);
        Ok(())
    }

    // --------------------------------------------------------------------------------------------
    // Expressions

    /// A memory location and the scalar type stored there.
    fn place(&mut self, n: Node, src: &Src) -> R<(Place, ScalarTy)> {
        let span = self.span(n, src);
        match n.kind() {
            "parenthesized_expression" => {
                let inner = n.named_child(0).ok_or_else(|| self.unsupported(n, src, "empty parentheses"))?;
                self.place(inner, src)
            }
            "identifier" => match self.lookup(self.text(n, src)) {
                Some(Var { local, ty: CTy::S(t) }) => Ok((Place::local(local, span), t)),
                Some(_) => Err(self.unsupported(n, src, "assigning to a pointer here")),
                None => Err(self.unknown(n, src)),
            },
            "subscript_expression" => {
                let base = self.child(n, "argument", src)?;
                let idx_list = self.child(n, "indices", src)?;
                let mut c = idx_list.walk();
                let idx: Vec<Node> = idx_list.named_children(&mut c).collect();
                if idx.len() != 1 {
                    return Err(self.unsupported(idx_list, src, "this subscript"));
                }
                let (local, t) = self.pointer_var(base, src)?;
                let (i, it) = self.rvalue(idx[0], src)?;
                let i = match it {
                    CTy::S(s) if s != ScalarTy::F32 && s != ScalarTy::F64 && s != ScalarTy::Bool => i,
                    _ => return Err(self.unsupported(idx[0], src, "an index that is not an integer")),
                };
                let path = vec![PathStep::Deref, PathStep::Elem(IExpr::Value(Box::new(i)))];
                Ok((Place { root: local, path, checks: Vec::new(), span }, t))
            }
            "pointer_expression" if self.text(self.child(n, "operator", src)?, src) == "*" => {
                let (local, t) = self.pointer_var(self.child(n, "argument", src)?, src)?;
                let path = vec![PathStep::Deref, PathStep::Elem(IExpr::Const(0))];
                Ok((Place { root: local, path, checks: Vec::new(), span }, t))
            }
            _ => Err(self.unsupported(n, src, format!("`{}` as an assignable place", n.kind()))),
        }
    }

    fn pointer_var(&self, n: Node, src: &Src) -> R<(LocalId, ScalarTy)> {
        if n.kind() != "identifier" {
            return Err(self.unsupported(n, src, "indexing anything but a pointer or array variable"));
        }
        match self.lookup(self.text(n, src)) {
            Some(Var { local, ty: CTy::Ptr(t) }) => Ok((local, t)),
            Some(_) => Err(self.unsupported(n, src, "indexing a variable that is not a pointer or array")),
            None => Err(self.unknown(n, src)),
        }
    }

    fn unknown(&self, n: Node, src: &Src) -> Box<Diagnostic> {
        let name = self.text(n, src);
        Box::new(Diagnostic::error(
            codes::UNKNOWN_NAME,
            format!("cannot find `{name}` in this scope"),
            self.span(n, src),
            "not declared (or not supported in CUDA-C yet)",
        ))
    }

    /// Converts a value between C types of the subset (implicitly, as an assignment does).
    fn convert(&self, e: Expr, from: CTy, to: CTy, n: Node, src: &Src) -> R<Expr> {
        match (from, to) {
            (CTy::S(a), CTy::S(b)) => Ok(cast(e, a, b)),
            (CTy::Ptr(a), CTy::Ptr(b)) if a == b => Ok(e),
            _ => Err(self.unsupported(n, src, "converting between pointers and numbers")),
        }
    }

    /// A condition: an integer compared with zero, as C does.
    fn cond(&mut self, n: Node, src: &Src) -> R<Expr> {
        let (e, t) = self.rvalue(n, src)?;
        match t {
            CTy::S(ScalarTy::Bool) => Ok(e),
            CTy::S(s) => Ok(Expr::Binary(BinOp::Ne, Box::new(e), Box::new(zero(s)))),
            CTy::Ptr(_) => Err(self.unsupported(n, src, "a pointer as a condition")),
        }
    }

    fn arith_op(&self, op: BinOp, a: (Expr, CTy), b: (Expr, CTy), n: Node, src: &Src) -> R<(Expr, CTy)> {
        let (CTy::S(ta), CTy::S(tb)) = (a.1, b.1) else {
            return Err(self.unsupported(n, src, "pointer arithmetic"));
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
    fn rvalue(&mut self, n: Node, src: &Src) -> R<(Expr, CTy)> {
        match n.kind() {
            "number_literal" => self.number(n, src),
            "parenthesized_expression" => {
                let inner = n.named_child(0).ok_or_else(|| self.unsupported(n, src, "empty parentheses"))?;
                self.rvalue(inner, src)
            }
            "identifier" => {
                let name = self.text(n, src);
                if let Some(v) = self.lookup(name) {
                    return Ok((Expr::Load(Place::local(v.local, self.span(n, src))), v.ty));
                }
                if let Some(m) = self.macros.get(name).cloned() {
                    let msrc = Src { text: &m.text, base: m.base };
                    let e = macro_expr(&m).ok_or_else(|| {
                        Box::new(Diagnostic::error(
                            codes::UNSUPPORTED,
                            "not supported in CUDA-C yet: this macro",
                            m.span,
                            "",
                        ))
                    })?;
                    return self.rvalue(e, &msrc);
                }
                Err(self.unknown(n, src))
            }
            "field_expression" => {
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
                if op != "." || !self.f.kernel {
                    return Err(self.unsupported(n, src, format!("`{arg}` outside a kernel")));
                }
                Ok((Expr::Cast(Box::new(Expr::Nat(i)), ScalarTy::U32), CTy::S(ScalarTy::U32)))
            }
            "binary_expression" => {
                let op_text = self.text(self.child(n, "operator", src)?, src);
                let op = binop(op_text).ok_or_else(|| self.unsupported(n, src, format!("the operator `{op_text}`")))?;
                let left = self.child(n, "left", src)?;
                let right = self.child(n, "right", src)?;
                if matches!(op, BinOp::And | BinOp::Or) {
                    let a = self.cond(left, src)?;
                    let b = self.cond(right, src)?;
                    // The IR evaluates both operands; C evaluates the right one only when
                    // needed, which matters when it can fail (a memory read, a division).
                    if !cannot_fail(&b) {
                        return Err(self.unsupported(
                            right,
                            src,
                            format!("a right operand of `{op_text}` that reads memory or divides"),
                        ));
                    }
                    return Ok((Expr::Binary(op, Box::new(a), Box::new(b)), CTy::S(ScalarTy::Bool)));
                }
                let a = self.rvalue(left, src)?;
                let b = self.rvalue(right, src)?;
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
                        let s2 = if s == ScalarTy::Bool { ScalarTy::I32 } else { s };
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
            "subscript_expression" | "pointer_expression" => {
                if n.kind() == "pointer_expression" && self.text(self.child(n, "operator", src)?, src) == "&" {
                    return Err(self.unsupported(n, src, "taking an address here"));
                }
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
            other => Err(self.unsupported(n, src, format!("the expression `{other}`"))),
        }
    }

    fn number(&self, n: Node, src: &Src) -> R<(Expr, CTy)> {
        let text = self.text(n, src);
        let lower = text.to_ascii_lowercase();
        let hex = lower.starts_with("0x");
        if !hex && (lower.contains('.') || lower.contains('e')) {
            let (body, t) = match lower.strip_suffix('f') {
                Some(b) => (b, ScalarTy::F32),
                None => (lower.as_str(), ScalarTy::F64),
            };
            let v: f64 = body.parse().map_err(|_| self.unsupported(n, src, "this number"))?;
            return Ok((Expr::Lit(Lit::Float(v, t)), CTy::S(t)));
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
}

/// The expression of a macro body (parsed inside `int __strata_macro = (…);`).
fn macro_expr(m: &Macro) -> Option<Node<'_>> {
    let root = m.tree.root_node();
    let decl = root.named_child(0)?;
    let init = decl.child_by_field_name("declarator")?;
    let value = init.child_by_field_name("value")?;
    // Skip the wrapper's own parentheses.
    if value.kind() == "parenthesized_expression" {
        value.named_child(0)
    } else {
        Some(value)
    }
}

/// An expression whose evaluation cannot fail (no memory reads, no division): it may be
/// evaluated even where C would skip it.
fn cannot_fail(e: &Expr) -> bool {
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

fn binop(op: &str) -> Option<BinOp> {
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

/// A pointer to a flat array of `t` in `mem`: owning for host variables (`malloc`, `cudaMalloc`,
/// local arrays), a reference for kernel parameters and shared memory. The length is not known
/// statically; `sim` checks every access against the buffer's real length.
fn array_ptr(t: ScalarTy, mem: Mem, owned: bool) -> Ty {
    let arr = Box::new(Ty::Array { elem: Box::new(Ty::Scalar(t)), len: IExpr::Const(0) });
    if owned {
        Ty::Owned(arr, mem)
    } else {
        Ty::Ref(arr, mem)
    }
}
