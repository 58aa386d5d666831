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

mod arrays;
mod cond;
mod control;
mod device;
mod dim3;
mod effects;
mod expr;
mod field_ptr;
mod func;
mod globals;
mod host;
mod macros;
mod math;
mod methods;
mod operators;
mod parse;
mod ptr;
mod ptr_fn;
mod shared_structs;
mod stmt;
mod streams;
mod strings;
mod structs;
mod templates;
mod types;

use expr::*;
use func::{Role, Sig};
use parse::*;
use std::collections::HashMap;
use std::rc::Rc;
use strata_diag::{codes, Diagnostic, FileId, Span};
use strata_ir::ir::{
    self, BinOp, Builtin, Expr, FnId, FnKind, IExpr, Level, Lit, LocalId, Mem, PathStep, Place, Stmt, Ty, UnOp,
};
use tree_sitter::{Node, Parser, Tree};
use types::*;

/// The size parameter of every lowered kernel: the bytes of dynamic shared memory of the launch.
pub const SMEM_PARAM: &str = "__dynamic_shared_bytes";

type R<T> = Result<T, Box<Diagnostic>>;

pub mod harness;

/// A header of the program's own (`#include "name.h"`), found and read by the caller (next to
/// the including file, or in an `-I` directory, as nvcc looks for it).
#[derive(Clone, Debug)]
pub struct Header {
    /// The name as the `#include` writes it.
    pub name: String,
    /// Its path as shown (`__FILE__` in it).
    pub path: String,
    pub file: FileId,
    pub text: String,
}

/// The names of the quoted `#include "…"`s of `text` that its conditional directives keep (the
/// headers the caller should find and read: [`Header`]); none if the directives are in error
/// (lowering reports that).
pub fn quoted_includes(file: FileId, text: &str) -> Vec<String> {
    let Ok(text) = cond::resolve(file, text) else { return Vec::new() };
    text.lines()
        .filter_map(|l| l.trim_start().strip_prefix('#'))
        .filter_map(|l| l.trim_start().strip_prefix("include"))
        .filter_map(|l| l.trim().strip_prefix('"')?.split('"').next().map(str::to_string))
        .collect()
}

/// Lowers the CUDA-C program `text` (file `file`) into an IR program whose entry is `main`.
pub fn lower(file: FileId, text: &str) -> R<ir::Program> {
    lower_with_headers(file, text, &[])
}

/// [`lower`], with the program's own headers.
pub fn lower_with_headers(file: FileId, text: &str, headers: &[Header]) -> R<ir::Program> {
    lower_all(file, "", text, headers).map_err(|mut e| Box::new(e.swap_remove(0)))
}

/// [`lower_with_headers`], with every diagnostic of a refused file (at least one): each
/// construct outside the subset once, in the order of the file (docs/cuda-c.md).
/// `name` is the file's path as shown (`__FILE__`; "" where unknown, and `__FILE__` is refused).
pub fn lower_all(file: FileId, name: &str, text: &str, headers: &[Header]) -> Result<ir::Program, Vec<Diagnostic>> {
    let p = lower_items_all(file, name, text, headers)?;
    if p.entry.is_none() {
        return Err(vec![Diagnostic::error(
            codes::NO_MAIN,
            "the program has no `main` function",
            Span::new(file, 0, 0),
            "",
        )
        .with_note(
            "a file of kernels is checked in kernel-only mode: `strata check FILE.cu --kernel NAME --grid G \
             --block B` (docs/cuda-c.md)",
        )]);
    }
    Ok(p)
}

/// [`lower`] of a file that may have no `main` (kernel-only mode, [`harness`]).
pub fn lower_items(file: FileId, text: &str) -> R<ir::Program> {
    lower_items_with_headers(file, text, &[])
}

/// [`lower_items`], with the program's own headers.
pub fn lower_items_with_headers(file: FileId, text: &str, headers: &[Header]) -> R<ir::Program> {
    lower_items_all(file, "", text, headers).map_err(|mut e| Box::new(e.swap_remove(0)))
}

/// [`lower_items_with_headers`], with every diagnostic of a refused file ([`lower_all`]).
pub fn lower_items_all(
    file: FileId,
    name: &str,
    text: &str,
    headers: &[Header],
) -> Result<ir::Program, Vec<Diagnostic>> {
    Ok(lower_with_globals(file, name, text, headers)?.0)
}

/// [`lower_items`], with the allocations of the globals (the start of `main`) and the locals of
/// the device globals there, in order: the hidden arguments of every kernel.
pub(crate) fn lower_with_globals(
    file: FileId,
    name: &str,
    text: &str,
    headers: &[Header],
) -> Result<(ir::Program, globals::Prologue, Vec<LocalId>), Vec<Diagnostic>> {
    let one = |d: Box<Diagnostic>| vec![*d];
    let mut parsed = HashMap::new();
    for h in headers {
        let text = cond::blank_attributes(&cond::resolve(h.file, &h.text).map_err(one)?);
        let tree = parse(&text).ok_or_else(|| {
            vec![Diagnostic::error(codes::UNEXPECTED_TOKEN, "cannot parse this file", Span::new(h.file, 0, 0), "")]
        })?;
        let line_starts = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
        parsed.insert(h.name.clone(), Rc::new(ParsedHeader { file: h.file, text, tree, line_starts }));
    }
    let text = &cond::blank_attributes(&cond::resolve(file, text).map_err(one)?);
    let tree = parse(text).ok_or_else(|| {
        vec![Diagnostic::error(codes::UNEXPECTED_TOKEN, "cannot parse this file", Span::new(file, 0, 0), "")]
    })?;
    let src = Src { text, base: 0, at: None };
    let mut lx = Lx {
        file,
        macros: HashMap::new(),
        functions: Vec::new(),
        sigs: HashMap::new(),
        fn_macros: HashMap::new(),
        macro_depth: 0,
        structs: Vec::new(),
        struct_names: HashMap::new(),
        typedefs: HashMap::new(),
        const_types: HashMap::new(),
        globals: Vec::new(),
        prologue: globals::Prologue::default(),
        file_shared: Vec::new(),
        root_file: file,
        next_fn: 0,
        headers: parsed,
        included: (Default::default(), Default::default()),
        line_starts: std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect(),
        f: FnState::default(),
        errors: Vec::new(),
        file_names: std::iter::once((file, name.to_string()))
            .chain(headers.iter().map(|h| (h.file, h.path.clone())))
            .collect(),
        poisoned: Default::default(),
        root_text: text.to_string(),
        root_tree: Some(tree.clone()),
        templates: HashMap::new(),
        pending: Default::default(),
        methods: Vec::new(),
        ptr_fns: HashMap::new(),
        header_templates: Default::default(),
    };
    lx.vector_types();
    lx.device_prop_type();
    syntax_errors(file, tree.root_node(), &src).map_err(one)?;
    let root = tree.root_node();
    lx.declare(root, &src).map_err(one)?;
    let mut c = root.walk();
    for item in root.named_children(&mut c) {
        let r = lx.item(item, &src);
        lx.recover(r, item, &src);
    }
    // The function templates' instantiations, after every other function (their ids follow).
    lx.instantiate_pending();
    if !lx.errors.is_empty() {
        // In the order of each file (the first pass meets some before the second meets others).
        let mut errors = lx.errors;
        errors.sort_by_key(|d| (d.primary.span.file, d.primary.span.lo));
        return Err(errors);
    }
    let entry = lx.functions.iter().position(|f| f.name == "main");
    let device_globals = lx.globals.iter().filter(|g| g.device).map(|g| g.local).collect();
    // C pointers carry no length: allocations know theirs at run time.
    let program = ir::Program { functions: lx.functions, entry, sources: Vec::new(), runtime_lengths: true };
    Ok((program, lx.prologue, device_globals))
}

/// Source text of a tree and where its byte 0 lies in the `.cu` file (macro bodies are parsed
/// from a wrapper text whose expression starts at the `#define`'s value).
struct Src<'a> {
    text: &'a str,
    base: i64,
    /// For a function-like macro's expansion: the span of the use, where everything in it points.
    at: Option<Span>,
}

/// A header of the program's own, resolved and parsed ([`Lx::include`]).
struct ParsedHeader {
    file: FileId,
    text: String,
    tree: Tree,
    line_starts: Vec<usize>,
}

struct Macro {
    tree: Tree,
    text: String,
    base: i64,
    /// The span of the whole `#define` value, for errors in it.
    span: Span,
}

/// What a pointer points to: scalars or structs ([`structs`]; laid out field by field in memory).
#[derive(Copy, Clone, Debug, PartialEq)]
enum Elem {
    S(ScalarTy),
    Struct(usize),
    /// Structs in `__shared__` memory ([`shared_structs`]): one buffer per field, the pointer
    /// variable (the root) the first field's and the others the locals after it. Never a value.
    Split(usize),
}

/// A C type of the subset: a scalar, or a pointer to scalars or structs.
#[derive(Copy, Clone, Debug, PartialEq)]
enum CTy {
    S(ScalarTy),
    Ptr(Elem),
    /// `dim3`: three `unsigned` locals, `.x` first ([`dim3`]).
    Dim3,
    /// A `__shared__` scalar variable or a scalar global (never the type of a value): the local
    /// points to the one-element buffer holding it.
    SharedScalar(ScalarTy),
    /// A struct variable (by value): one local per field, the first here ([`structs`]).
    Struct(usize),
    /// A `__shared__` struct variable ([`shared_structs`]): one local per field, each pointing to
    /// the one-element `__shared__` buffer holding that field, the first here.
    SharedStruct(usize),
    /// A C++ reference parameter to a scalar (`float &x`), as callers see it: the argument is
    /// passed as a pointer to it; inside the function the name is bound as a `SharedScalar`
    /// (every use through the pointer, at offset 0).
    RefS(ScalarTy),
    /// `NULL` (`nullptr`): converts to every pointer type ([`Builtin::NullPtr`]).
    Null,
    /// `cudaStream_t` and `cudaEvent_t` host variables ([`streams`]), and arrays of them (of a
    /// constant length, on the host heap).
    Stream,
    Event,
    StreamArray,
    EventArray,
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
    /// GPU code: a kernel or a `__device__` function.
    gpu: bool,
    role: Role,
    /// What the function returns (`None`: `void`).
    ret: Option<ScalarTy>,
    shared: Vec<(LocalId, ir::ScalarTy, IExpr)>,
    /// Statements the expression being lowered needs before it ([`control`]).
    pre: Vec<Stmt>,
    /// The loops and `switch`es around the statement being lowered, innermost last.
    jumps: Vec<control::Jump>,
    /// `p - q` of two pointers, found by [`Lx::ptr_expr`] (which then gives no pointer), with
    /// the id of its node.
    ptr_diff: Option<(usize, Expr)>,
    /// The local holding each global in this function (`None`: not on this side).
    global_locals: Vec<Option<LocalId>>,
    /// The element type and lengths (outermost first) of each pointer local that is a declared
    /// array ([`arrays`]).
    arrays: HashMap<LocalId, (Elem, Vec<u64>)>,
    /// The value of each local `const` integer with a constant initialiser (`const int n = 16;`),
    /// a constant as C++ makes it: usable in array lengths ([`Lx::constant`]).
    consts: HashMap<LocalId, u64>,
    /// The name of `main`'s `argv` parameter, in `main` ([`strings`]).
    argv: Option<String>,
    /// The function's name (`__func__`).
    name: String,
    /// The label of the function's outermost block (`end:`), its flag and where it is
    /// ([`Lx::goto`]).
    label: Option<(String, LocalId, Span)>,
    /// The constant each integer local declared with one was initialised with (valid where
    /// nothing assigns it: [`Lx::full_mask`]).
    init_consts: HashMap<LocalId, u64>,
    /// Set just before the function's own body is lowered ([`Lx::block`]: its label).
    at_body: bool,
}

struct Lx {
    file: FileId,
    macros: HashMap<String, Rc<Macro>>,
    functions: Vec<ir::Function>,
    /// User functions (kernels included) by name.
    sigs: HashMap<String, Sig>,
    /// Function-like macros by name.
    fn_macros: HashMap<String, Rc<macros::FnMacro>>,
    /// Function-like macro expansions in progress.
    macro_depth: u32,
    /// Struct types, and their names (`struct P` and `typedef` names) to them.
    structs: Vec<structs::StructDef>,
    struct_names: HashMap<String, usize>,
    /// `typedef float real;`: scalar type names.
    typedefs: HashMap<String, ScalarTy>,
    /// File-level `const` scalars (macros of their values, [`globals`]) and their types.
    const_types: HashMap<String, ScalarTy>,
    /// Global variables ([`globals`]), and the start of `main` that allocates them.
    globals: Vec<globals::GlobalDef>,
    prologue: globals::Prologue,
    /// The byte ranges of the file-level `__shared__` declarations ([`globals`]).
    file_shared: Vec<(usize, usize, String)>,
    /// The `.cu` file itself (`file` is the header being lowered, inside one).
    root_file: FileId,
    /// The id the next function `declare` meets gets (headers' functions included).
    next_fn: FnId,
    /// The program's own headers by name, and those already gone through by the first pass and
    /// by the second (each once, as with include guards).
    headers: HashMap<String, Rc<ParsedHeader>>,
    included: (std::collections::HashSet<String>, std::collections::HashSet<String>),
    /// The byte offset of each line of the file (for `__LINE__`).
    line_starts: Vec<usize>,
    f: FnState,
    /// Every construct refused so far ([`Lx::recover`]), in the order met.
    errors: Vec<Diagnostic>,
    /// The paths of the file and its headers, as shown (`__FILE__`).
    file_names: HashMap<FileId, String>,
    /// Names declared by a declaration or function that was refused: errors at their uses follow
    /// from the first and are not reported again.
    poisoned: std::collections::HashSet<String>,
    /// The `.cu` file's syntax tree, for instantiating its function templates ([`templates`]).
    root_tree: Option<Tree>,
    /// Function templates by name, and the instantiations waiting to be lowered.
    templates: HashMap<String, templates::Template>,
    pending: std::collections::VecDeque<templates::Instance>,
    root_text: String,
    methods: Vec<methods::Method>,
    /// Functions returning pointers, inlined where called ([`ptr_fn`]).
    ptr_fns: HashMap<String, ptr_fn::PtrFn>,
    /// Function templates of headers: refused where called, not where defined.
    header_templates: std::collections::HashSet<String>,
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

    /// The declarators of a declaration (`int a, b = 2, *p;`), each with its initialiser.
    fn declarators<'t>(&self, n: Node<'t>, src: &Src) -> R<Vec<(Node<'t>, Option<Node<'t>>)>> {
        let mut c = n.walk();
        let decls: Vec<Node> = n.children_by_field_name("declarator", &mut c).collect();
        decls
            .into_iter()
            .map(|d| {
                if d.kind() == "init_declarator" {
                    Ok((self.child(d, "declarator", src)?, Some(self.child(d, "value", src)?)))
                } else {
                    Ok((d, None))
                }
            })
            .collect()
    }

    fn new_local(&mut self, name: &str, ty: Ty, level: Level) -> LocalId {
        self.f.locals.push(ir::Local { name: name.to_string(), ty, level });
        self.f.locals.len() - 1
    }

    fn level(&self) -> Level {
        if self.f.gpu {
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

    fn unknown(&self, n: Node, src: &Src) -> Box<Diagnostic> {
        let name = self.text(n, src);
        if self.f.argv.as_deref() == Some(name) {
            return self.unsupported(n, src, "`argv` other than as `argv[i]`, a string");
        }
        if self.is_file_shared(name) {
            return self.unsupported(n, src, "a file-level `__shared__` variable outside a kernel's own body");
        }
        Box::new(Diagnostic::error(
            codes::UNKNOWN_NAME,
            format!("cannot find `{name}` in this scope"),
            self.span(n, src),
            "not declared (or not supported in CUDA-C yet)",
        ))
    }
}

impl Lx {
    /// `#include "name.h"` of a header of the program's own: its items, in the first pass
    /// (`declare`) or the second, as if written here; each header once. `Ok(false)`: not such a
    /// header.
    pub(crate) fn include(&mut self, n: Node, src: &Src, first_pass: bool) -> R<bool> {
        let path = self.child(n, "path", src)?;
        let written = self.text(path, src);
        let Some(name) = written.strip_prefix('"').and_then(|w| w.strip_suffix('"')) else { return Ok(false) };
        let Some(h) = self.headers.get(name).cloned() else {
            if parse::STD_HEADERS.contains(&name) {
                // `#include "cuda.h"`: not the program's own, the standard one (as nvcc finds it).
                return Ok(true);
            }
            if first_pass {
                return Ok(true); // reported by the second pass
            }
            return Err(self.unsupported(
                path,
                src,
                format!("`#include \"{name}\"`: no such file next to this one or in an `-I` directory"),
            ));
        };
        let done = if first_pass { &mut self.included.0 } else { &mut self.included.1 };
        if !done.insert(name.to_string()) {
            return Ok(true);
        }
        let saved_file = std::mem::replace(&mut self.file, h.file);
        let saved_lines = std::mem::replace(&mut self.line_starts, h.line_starts.clone());
        let hsrc = Src { text: &h.text, base: 0, at: None };
        let root = h.tree.root_node();
        let r = if first_pass {
            syntax_errors(h.file, root, &hsrc).and_then(|()| self.declare(root, &hsrc))
        } else {
            let mut c = root.walk();
            let items: Vec<Node> = root.named_children(&mut c).collect();
            for item in items {
                let r = self.item(item, &hsrc);
                self.recover(r, item, &hsrc);
            }
            Ok(())
        };
        self.file = saved_file;
        self.line_starts = saved_lines;
        r.map(|()| true)
    }
}

impl Lx {
    /// Keeps going after the refusal of item or statement `n`: records its diagnostic (unless it
    /// repeats one, or follows from a name an earlier refusal left undeclared) and the names `n`
    /// declares, so that a refusal lists every construct of the file, not only the first.
    pub(crate) fn recover(&mut self, r: R<()>, n: Node, src: &Src) {
        let Err(d) = r else { return };
        let cascade = {
            let s = d.primary.span;
            let text = if s.file == self.root_file {
                Some(self.root_text.as_str())
            } else {
                self.headers.values().find(|h| h.file == s.file).map(|h| h.text.as_str())
            };
            let words = text.and_then(|t| t.get(s.lo as usize..s.hi as usize)).unwrap_or("");
            words.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).any(|w| self.poisoned.contains(w))
        };
        let repeat = self.errors.iter().any(|e| e.message == d.message && e.primary.span == d.primary.span);
        if !cascade && !repeat {
            self.errors.push(*d);
        }
        // What `n` declares: a declaration's names, a function's name.
        let mut names = Vec::new();
        let mut c = n.walk();
        let decls: Vec<Node> = n.children_by_field_name("declarator", &mut c).collect();
        for mut d in decls {
            while let Some(inner) = d.child_by_field_name("declarator") {
                d = inner;
            }
            if matches!(d.kind(), "identifier" | "type_identifier") {
                names.push(self.text(d, src).to_string());
            }
        }
        if let Some(name) = n.child_by_field_name("name") {
            names.push(self.text(name, src).to_string());
        }
        self.poisoned.extend(names);
    }
}
