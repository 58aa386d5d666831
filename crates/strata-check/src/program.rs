//! The program environment: every function signature, named view and constant, with types
//! lowered from the AST into the checker's representation.

use crate::exec::{Root, Shape};
use crate::nat::{Facts, IllFormed, Nat, SizeOp, Truth};
use crate::ty::{Mem, Ty};
use std::collections::HashMap;
use std::rc::Rc;
use strata_diag::{codes, Diagnostic, FileId, Span};
use strata_syntax::ast::{self, CmpOp, Kind, Ownership};

/// The prelude's source, parsed before every program.
pub const PRELUDE: &str = include_str!("prelude.strata");

/// Prelude functions every lane of a warp must execute together.
pub const WARP_COLLECTIVES: &[&str] = &["shfl_down", "shfl_up", "shfl_xor", "shfl_idx", "ballot"];

/// Paths that name prelude functions: `CpuHeap::new(v)` calls `cpu_heap_new(v)`.
pub const PATH_ALIASES: &[(&str, &str)] = &[
    ("CpuHeap::new", "cpu_heap_new"),
    ("GpuGlobal::alloc_copy", "gpu_global_alloc_copy"),
    ("Stream::new", "stream_new"),
    ("GpuGlobal::alloc_atomic_i32", "gpu_global_alloc_atomic_i32"),
    ("GpuGlobal::alloc_atomic_u32", "gpu_global_alloc_atomic_u32"),
    ("GpuGlobal::alloc_atomic_i64", "gpu_global_alloc_atomic_i64"),
    ("GpuGlobal::alloc_atomic_u64", "gpu_global_alloc_atomic_u64"),
    ("GpuGlobal::alloc_atomic_f32", "gpu_global_alloc_atomic_f32"),
    ("GpuGlobal::alloc_atomic_f64", "gpu_global_alloc_atomic_f64"),
];

#[derive(Debug)]
pub struct ParamSig {
    pub name: String,
    pub ty: Ty,
    /// `[grid.blocks.forall(X)] tmp: …`: owned by each such sub-resource; allocated by the launch.
    pub exec: Option<ast::ExecExpr>,
    pub mutable: bool,
    pub span: Span,
}

#[derive(Debug)]
pub struct FnSig {
    pub name: String,
    pub generics: Vec<(String, Kind)>,
    pub params: Vec<ParamSig>,
    pub exec_name: String,
    pub root: Root,
    pub ret: Ty,
    pub where_clauses: Vec<(Nat, CmpOp, Nat, Span)>,
    /// What the `where` clauses state: the facts inside the function ([`where_facts`]).
    pub facts: Facts,
    pub span: Span,
    pub builtin: bool,
    /// The data-type generics bounded by `num` (also listed in `generics` as `dty`).
    pub num_generics: Vec<String>,
    /// The parameters of function type, which are not in `params`: each call names a function
    /// for them, and the call is instantiated with it.
    pub fn_params: Vec<FnParamSig>,
    /// A kernel on a `gpu.ordered_grid` (its blocks start in index order).
    pub ordered: bool,
}

/// A parameter of function type (`op: fn(f32, f32) -> f32`).
#[derive(Debug)]
pub struct FnParamSig {
    /// Its position among the call's arguments.
    pub pos: usize,
    pub name: String,
    /// The signature a call of the parameter is checked against (named after the parameter).
    pub sig: Rc<FnSig>,
    pub span: Span,
}

impl FnSig {
    /// Whether `g` is a data-type generic bounded by `num`.
    pub fn is_num(&self, g: &str) -> bool {
        self.num_generics.iter().any(|n| n == g)
    }

    /// The parameter of function type called `name`.
    pub fn fn_param(&self, name: &str) -> Option<&FnParamSig> {
        self.fn_params.iter().find(|p| p.name == name)
    }
}

#[derive(Debug)]
pub struct ViewDef {
    pub generics: Vec<String>,
    pub body: Vec<ast::ViewRef>,
}

#[derive(Default)]
pub struct Program {
    pub fns: HashMap<String, Rc<FnSig>>,
    pub views: HashMap<String, Rc<ViewDef>>,
    pub consts: HashMap<String, u64>,
    /// How many more unknown names may get a "did you mean" (each compares the name with every
    /// name in scope): a bounded number per program, so that a program of n unknown names and n
    /// definitions is not checked in time n².
    pub suggestions_left: std::cell::Cell<usize>,
}

/// Unknown names of one program that get a "did you mean" (the first ones: the CLI shows 50
/// errors by default).
pub const MAX_SUGGESTIONS: usize = 100;

/// Lowers AST types, nats and execution types under a set of generic parameters.
pub struct Lower<'a> {
    pub consts: &'a HashMap<String, u64>,
    pub generics: HashMap<String, Kind>,
    /// Memory space of a reference type written without one.
    pub default_mem: Mem,
    pub diags: &'a mut Vec<Diagnostic>,
    /// The facts in scope: every `-`, `/` and `%` of a lowered size must give a natural number
    /// under them ([`Facts::well_formed`], E0301). `None` only where the facts are being
    /// collected (a signature's `where` clauses, lowered once more with them afterwards).
    pub facts: Option<&'a Facts>,
    /// Values of size parameters (a named view's), substituted as they are read, so that the
    /// side conditions are decided for the values at the use.
    pub env: Option<&'a HashMap<String, Nat>>,
}

impl Lower<'_> {
    fn unknown(&mut self, id: &ast::Ident, what: &str) {
        self.diags.push(Diagnostic::error(
            codes::UNKNOWN_NAME,
            format!("cannot find {what} `{}` in this scope", id.name),
            id.span,
            "not found in this scope",
        ));
    }

    fn wrong_kind(&mut self, id: &ast::Ident, want: Kind, got: Kind) {
        self.diags.push(Diagnostic::error(
            codes::KIND_MISMATCH,
            format!("`{}` is a `{}`, expected a `{}`", id.name, got.keyword(), want.keyword()),
            id.span,
            format!("expected a `{}`", want.keyword()),
        ));
    }

    pub fn nat(&mut self, n: &ast::Nat) -> Nat {
        self.nat_checked(n).unwrap_or_else(|| Nat::lit(0))
    }

    /// Lowers a nat; `None` after reporting an error.
    pub fn nat_checked(&mut self, n: &ast::Nat) -> Option<Nat> {
        let r = match &n.kind {
            ast::NatKind::Lit(v) => Ok(Nat::lit(*v)),
            ast::NatKind::Var(id) => {
                if let Some(v) = self.env.and_then(|env| env.get(&id.name)) {
                    Ok(v.clone())
                } else if let Some(k) = self.generics.get(&id.name) {
                    if *k != Kind::Nat {
                        self.wrong_kind(id, Kind::Nat, *k);
                        return None;
                    }
                    Ok(Nat::var(&id.name))
                } else if let Some(v) = self.consts.get(&id.name) {
                    Ok(Nat::lit(*v))
                } else {
                    self.unknown(id, "size");
                    return None;
                }
            }
            ast::NatKind::Bin(op, a, b) => {
                let a = self.nat_checked(a)?;
                let b = self.nat_checked(b)?;
                let side = match op {
                    ast::NatOp::Sub => Some(SizeOp::Sub),
                    ast::NatOp::Div => Some(SizeOp::Div),
                    ast::NatOp::Rem => Some(SizeOp::Rem),
                    ast::NatOp::Add | ast::NatOp::Mul | ast::NatOp::Pow => None,
                };
                if let (Some(side), Some(facts)) = (side, self.facts) {
                    if let Err(e) = facts.well_formed(side, &a, &b) {
                        self.diags.push(ill_formed(&e, n.span));
                        return None;
                    }
                }
                match op {
                    ast::NatOp::Add => a.add(&b),
                    ast::NatOp::Sub => a.sub(&b),
                    ast::NatOp::Mul => a.mul(&b),
                    ast::NatOp::Div => a.div(&b),
                    ast::NatOp::Rem => a.rem(&b),
                    ast::NatOp::Pow => a.pow(&b),
                }
            }
            ast::NatKind::Call(f, args) => {
                let mut out = Vec::new();
                for a in args {
                    out.push(self.nat_checked(a)?);
                }
                Ok(Nat::call(&f.name, out))
            }
        };
        match r {
            Ok(v) => Some(v),
            Err(e) => {
                self.diags.push(Diagnostic::error(
                    codes::SIZE_NOT_PROVEN,
                    format!("invalid size: {e}"),
                    n.span,
                    e.to_string(),
                ));
                None
            }
        }
    }

    pub fn mem(&mut self, m: &ast::Mem) -> Mem {
        match &m.kind {
            ast::MemKind::CpuMem => Mem::CpuMem,
            ast::MemKind::GpuGlobal => Mem::GpuGlobal,
            ast::MemKind::GpuShared => Mem::GpuShared,
            ast::MemKind::GpuLocal => Mem::GpuLocal,
            ast::MemKind::Var(id) => match self.generics.get(&id.name) {
                Some(Kind::Mem) => Mem::Var(id.name.clone()),
                Some(k) => {
                    let k = *k;
                    self.wrong_kind(id, Kind::Mem, k);
                    Mem::Var(id.name.clone())
                }
                None => {
                    self.unknown(id, "memory space");
                    Mem::Var(id.name.clone())
                }
            },
        }
    }

    pub fn ty(&mut self, t: &ast::Ty) -> Ty {
        match &t.kind {
            ast::TyKind::Scalar(s) => Ty::Scalar(*s),
            ast::TyKind::Var(id) => match self.generics.get(&id.name) {
                Some(Kind::DataTy) => Ty::Var(id.name.clone()),
                Some(k) => {
                    let k = *k;
                    self.wrong_kind(id, Kind::DataTy, k);
                    Ty::Error
                }
                // `Stream` names the type of streams (host code only) unless a generic shadows it.
                None if id.name == "Stream" => Ty::Stream,
                None => {
                    self.unknown(id, "type");
                    Ty::Error
                }
            },
            ast::TyKind::Tuple(ts) => Ty::Tuple(ts.iter().map(|t| self.ty(t)).collect()),
            // A size that is not a natural number was reported: no type, so no follow-up errors.
            ast::TyKind::Array(t, n) => match self.nat_checked(n) {
                Some(n) => Ty::Array(Box::new(self.ty(t)), n),
                None => Ty::Error,
            },
            ast::TyKind::ViewArray(t, n) => match self.nat_checked(n) {
                Some(n) => Ty::ViewArray(Box::new(self.ty(t)), n),
                None => Ty::Error,
            },
            ast::TyKind::Ref(r) => {
                if let Some(ast::Prv::Var(id)) = &r.prv {
                    match self.generics.get(&id.name) {
                        Some(Kind::Prv) => {}
                        Some(k) => {
                            let k = *k;
                            self.wrong_kind(id, Kind::Prv, k);
                        }
                        None => self.unknown(id, "provenance"),
                    }
                }
                let mem = match &r.mem {
                    Some(m) => self.mem(m),
                    None => self.default_mem.clone(),
                };
                Ty::Ref { own: r.own.unwrap_or(Ownership::Shrd), mem, ty: Box::new(self.ty(&r.ty)) }
            }
            ast::TyKind::At(t, m) => {
                let m = self.mem(m);
                Ty::At(Box::new(self.ty(t)), m)
            }
            ast::TyKind::Infer => Ty::Error,
            ast::TyKind::Fn(_) => {
                self.diags.push(Diagnostic::error(
                    codes::FN_NOT_VALUE,
                    "a function type is only allowed as the type of a parameter",
                    t.span,
                    "function values cannot be stored, returned or put in other types",
                ));
                Ty::Error
            }
        }
    }

    pub fn shape(&mut self, d: &ast::Dim) -> Shape {
        let mut s: Shape = d.dims.iter().map(|(n, v)| (*n, self.nat(v))).collect();
        s.sort_by_key(|(n, _)| *n);
        s
    }

    pub fn root(&mut self, e: &ast::ExecTy) -> Root {
        match &e.kind {
            ast::ExecTyKind::CpuThread => Root::CpuThread,
            ast::ExecTyKind::Grid(b, t) | ast::ExecTyKind::BlockGrp(b, t) => {
                Root::Grid { blocks: self.shape(b), threads: self.shape(t) }
            }
            ast::ExecTyKind::Block(t) | ast::ExecTyKind::ThreadGrp(t) => Root::Block { threads: self.shape(t) },
            ast::ExecTyKind::WarpGrp(_) | ast::ExecTyKind::Warp => Root::Warp,
            ast::ExecTyKind::Thread => Root::Thread,
            ast::ExecTyKind::Any => Root::Any,
        }
    }
}

impl Program {
    /// Collects the items of the prelude and of the user's module. `defines` override constants
    /// (`strata run -D N=4096`).
    pub fn collect(
        prelude: &ast::Module,
        module: &ast::Module,
        defines: &[(String, u64)],
        diags: &mut Vec<Diagnostic>,
    ) -> Program {
        let mut prog = Program::default();
        prog.suggestions_left.set(MAX_SUGGESTIONS);
        let mut seen: HashMap<String, Span> = HashMap::new();
        let item_name = |item: &ast::Item| match item {
            ast::Item::Fn(f) => f.name.name.clone(),
            ast::Item::Const(c) => c.name.name.clone(),
            ast::Item::View(v) => v.name.name.clone(),
        };
        // A program may define an item the prelude also defines; its own definition wins.
        let user_names: std::collections::HashSet<String> = module.items.iter().map(item_name).collect();
        for (builtin, m) in [(true, prelude), (false, module)] {
            for item in &m.items {
                let (name, span) = match item {
                    ast::Item::Fn(f) => (&f.name, f.span),
                    ast::Item::Const(c) => (&c.name, c.span),
                    ast::Item::View(v) => (&v.name, v.span),
                };
                if builtin && user_names.contains(&name.name) {
                    continue;
                }
                if let Some(prev) = seen.get(&name.name) {
                    diags.push(
                        Diagnostic::error(
                            codes::DUPLICATE_DEFINITION,
                            format!("`{}` is defined more than once", name.name),
                            name.span,
                            "defined again here",
                        )
                        .with_label(*prev, if builtin { "first defined here" } else { "previous definition here" }),
                    );
                    continue;
                }
                seen.insert(name.name.clone(), span);
                match item {
                    ast::Item::Const(c) => {
                        let value = match defines.iter().find(|(n, _)| *n == c.name.name) {
                            Some((_, v)) => *v,
                            None => {
                                let no_facts = Facts::new();
                                let mut lower = Lower {
                                    consts: &prog.consts,
                                    generics: HashMap::new(),
                                    default_mem: Mem::CpuMem,
                                    diags,
                                    facts: Some(&no_facts),
                                    env: None,
                                };
                                let n = lower.nat(&c.value);
                                match n.eval(&|_| None) {
                                    Ok(v) => v,
                                    Err(e) => {
                                        diags.push(Diagnostic::error(
                                            codes::SIZE_NOT_PROVEN,
                                            format!(
                                                "constant `{}` must be a natural number known at compile time",
                                                c.name.name
                                            ),
                                            c.value.span,
                                            e.to_string(),
                                        ));
                                        0
                                    }
                                }
                            }
                        };
                        prog.consts.insert(c.name.name.clone(), value);
                    }
                    ast::Item::View(v) => {
                        let generics = v.generics.iter().map(|g| g.name.name.clone()).collect();
                        prog.views.insert(v.name.name.clone(), Rc::new(ViewDef { generics, body: v.body.clone() }));
                    }
                    ast::Item::Fn(_) => {}
                }
            }
        }
        for (builtin, m) in [(true, prelude), (false, module)] {
            for item in &m.items {
                if let ast::Item::Fn(f) = item {
                    if prog.fns.contains_key(&f.name.name) || (builtin && user_names.contains(&f.name.name)) {
                        continue;
                    }
                    let sig = Self::signature(f, builtin, &prog.consts, diags);
                    prog.fns.insert(f.name.name.clone(), Rc::new(sig));
                }
            }
        }
        prog
    }

    fn signature(f: &ast::FnDecl, builtin: bool, consts: &HashMap<String, u64>, diags: &mut Vec<Diagnostic>) -> FnSig {
        let mut generics = HashMap::new();
        let mut list = Vec::new();
        let mut num_generics = Vec::new();
        for g in &f.generics {
            // A `num` generic is a data type with arithmetic: everywhere else it is a `dty`.
            let kind = if g.kind == Kind::Num {
                num_generics.push(g.name.name.clone());
                Kind::DataTy
            } else {
                g.kind
            };
            if generics.insert(g.name.name.clone(), kind).is_some() {
                diags.push(Diagnostic::error(
                    codes::DUPLICATE_DEFINITION,
                    format!("generic parameter `{}` is declared twice", g.name.name),
                    g.name.span,
                    "declared again here",
                ));
            }
            list.push((g.name.name.clone(), kind));
        }
        let on_gpu = !matches!(f.exec.as_ref().map(|e| &e.ty.kind), None | Some(ast::ExecTyKind::CpuThread));
        let default_mem = if on_gpu { Mem::GpuGlobal } else { Mem::CpuMem };
        // The `where` clauses are the facts under which the signature's sizes must be natural
        // numbers; collected first (their errors are reported by the lowering below).
        let facts = {
            let mut scratch = Vec::new();
            let mut lower = Lower {
                consts,
                generics: generics.clone(),
                default_mem: default_mem.clone(),
                diags: &mut scratch,
                facts: None,
                env: None,
            };
            let mut clauses = Vec::new();
            for c in &f.where_clauses {
                if let (Some(a), Some(b)) = (lower.nat_checked(&c.lhs), lower.nat_checked(&c.rhs)) {
                    clauses.push((a, c.op, b, c.span));
                }
            }
            where_facts(&clauses)
        };
        let mut lower = Lower { consts, generics, default_mem, diags, facts: Some(&facts), env: None };
        let root = f.exec.as_ref().map_or(Root::CpuThread, |e| lower.root(&e.ty));
        let exec_name = f.exec.as_ref().map_or_else(|| "t".to_string(), |e| e.name.name.clone());
        let mut params: Vec<ParamSig> = Vec::new();
        let mut fn_params: Vec<FnParamSig> = Vec::new();
        for (pos, p) in f.params.iter().enumerate() {
            if let ast::TyKind::Fn(ft) = &p.ty.kind {
                if params.iter().any(|q| q.name == p.name.name) || fn_params.iter().any(|q| q.name == p.name.name) {
                    lower.diags.push(Diagnostic::error(
                        codes::DUPLICATE_DEFINITION,
                        format!("parameter `{}` is declared twice", p.name.name),
                        p.name.span,
                        "declared again here",
                    ));
                }
                let fn_root = match &ft.exec {
                    Some(e) => lower.root(e),
                    None if matches!(root, Root::Any) => Root::Any,
                    None if on_gpu => Root::Thread,
                    None => Root::CpuThread,
                };
                let bad = if matches!(root, Root::Grid { .. }) {
                    Some("a kernel cannot take a function parameter (a launch passes data only)")
                } else if !matches!(fn_root, Root::Thread | Root::CpuThread | Root::Any) {
                    Some("a function parameter is executed by a single thread: `gpu.thread`, `cpu.thread` or `Any`")
                } else if p.exec.is_some() {
                    Some("a function parameter is not owned by a sub-resource")
                } else {
                    None
                };
                if let Some(why) = bad {
                    lower.diags.push(Diagnostic::error(
                        codes::FN_NOT_VALUE,
                        "a function parameter is not allowed here",
                        p.ty.span,
                        why,
                    ));
                }
                let fparams = ft
                    .params
                    .iter()
                    .enumerate()
                    .map(|(i, t)| ParamSig {
                        name: format!("_{i}"),
                        ty: lower.ty(t),
                        exec: None,
                        mutable: false,
                        span: t.span,
                    })
                    .collect();
                let fret = lower.ty(&ft.ret);
                let sig = FnSig {
                    name: p.name.name.clone(),
                    generics: Vec::new(),
                    params: fparams,
                    exec_name: "t".to_string(),
                    root: fn_root,
                    ret: fret,
                    where_clauses: Vec::new(),
                    facts: Facts::default(),
                    span: p.name.span,
                    builtin: false,
                    num_generics: Vec::new(),
                    fn_params: Vec::new(),
                    ordered: false,
                };
                fn_params.push(FnParamSig { pos, name: p.name.name.clone(), sig: Rc::new(sig), span: p.span });
                continue;
            }
            if params.iter().any(|q| q.name == p.name.name) || fn_params.iter().any(|q| q.name == p.name.name) {
                lower.diags.push(Diagnostic::error(
                    codes::DUPLICATE_DEFINITION,
                    format!("parameter `{}` is declared twice", p.name.name),
                    p.name.span,
                    "declared again here",
                ));
            }
            let ty = lower.ty(&p.ty);
            // A stream is passed to host functions by reference, and never to the GPU.
            if ty.mentions_stream() && !(ty.is_stream_handle() && root == Root::CpuThread) {
                lower.diags.push(stream_type_error(p.ty.span, root == Root::CpuThread));
            }
            params.push(ParamSig {
                name: p.name.name.clone(),
                ty,
                exec: p.exec.clone(),
                mutable: p.mutable,
                span: p.span,
            });
        }
        let ret = f.ret.as_ref().map_or(Ty::UNIT, |t| lower.ty(t));
        // Only the prelude's `Stream::new` makes a stream: a stream is never a returned value.
        if ret.mentions_stream() && !builtin {
            if let Some(t) = &f.ret {
                lower.diags.push(stream_type_error(t.span, root == Root::CpuThread));
            }
        }
        let mut where_clauses = Vec::new();
        for c in &f.where_clauses {
            if let (Some(a), Some(b)) = (lower.nat_checked(&c.lhs), lower.nat_checked(&c.rhs)) {
                where_clauses.push((a, c.op, b, c.span));
            }
        }
        FnSig {
            name: f.name.name.clone(),
            generics: list,
            params,
            exec_name,
            root,
            ret,
            where_clauses,
            facts,
            span: f.name.span,
            builtin,
            num_generics,
            fn_params,
            ordered: f.exec.as_ref().is_some_and(|e| e.ty.ordered),
        }
    }
}

/// E0509 for a stream where a type may not hold one.
pub fn stream_type_error(span: Span, host: bool) -> Diagnostic {
    let label = if host {
        "a stream is passed to a host function as a reference, `&Stream`, and is not part of other types"
    } else {
        "streams belong to host code: GPU code cannot use one"
    };
    Diagnostic::error(codes::STREAM_MISUSE, "a stream cannot be used in this type", span, label)
}

/// The E0301 error for a size operation that is not known to give a natural number.
pub fn ill_formed(e: &IllFormed, span: Span) -> Diagnostic {
    let (message, label) = match (e.op, e.truth) {
        (SizeOp::Sub, Truth::Disproven) => ("size is negative", format!("`{}` is false", e.goal)),
        (SizeOp::Sub, _) => ("size may be negative", format!("cannot prove `{}`", e.goal)),
        (_, Truth::Disproven) if e.goal == "0 >= 1" => ("size divides by zero", "division by zero".to_string()),
        (_, Truth::Disproven) => ("size is not a natural number", format!("`{}` is false", e.goal)),
        _ => ("size may not be a natural number", format!("cannot prove `{}`", e.goal)),
    };
    let mut d = Diagnostic::error(codes::SIZE_NOT_PROVEN, message, span, label);
    if !e.context.is_empty() {
        d = d.with_note(format!("in scope: {}", e.context));
    }
    d.with_note(format!("help: {}", e.help))
}

/// The E0302 error for an operation of a static index that is not known to give a natural
/// number (`a[(i - 1) / 2 + 1]` for `i` from 0, `a[8 / i]`).
pub fn ill_formed_index(e: &IllFormed, span: Span) -> Diagnostic {
    let label = match e.truth {
        Truth::Disproven => format!("`{}` is false", e.goal),
        _ => format!("cannot prove `{}`", e.goal),
    };
    let mut d = Diagnostic::error(codes::INDEX_OUT_OF_BOUNDS, "cannot prove that this index is in bounds", span, label);
    if !e.context.is_empty() {
        d = d.with_note(format!("in scope: {}", e.context));
    }
    d.with_note("every part of a static index is a natural number: every iteration of a loop is checked, the first one included")
}

/// The facts a signature's `where` clauses state (`n % k == 0` also states `k | n`; `!=` states
/// nothing).
pub fn where_facts(clauses: &[(Nat, CmpOp, Nat, Span)]) -> Facts {
    let mut facts = Facts::new();
    add_clauses(&mut facts, clauses);
    facts
}

/// Adds comparisons of sizes (a `where` clause, or a condition known to hold) to `facts`.
pub fn add_clauses(facts: &mut Facts, clauses: &[(Nat, CmpOp, Nat, Span)]) {
    for (a, op, b, _) in clauses {
        let _ = match op {
            CmpOp::Eq => facts.add_eq(a, b),
            CmpOp::Le => facts.add_le(a, b),
            CmpOp::Lt => facts.add_lt(a, b),
            CmpOp::Ge => facts.add_ge(a, b),
            CmpOp::Gt => facts.add_lt(b, a),
            CmpOp::Ne => Ok(()),
        };
        if *op == CmpOp::Eq && b.is_zero() {
            if let Some(crate::nat::Atom::Rem(x, k)) = a.as_atom() {
                let _ = facts.add_divides(k, x);
            }
        }
    }
}

/// Parses the prelude; it is part of the compiler, so an error in it is a bug caught by tests.
pub fn parse_prelude(file: FileId) -> ast::Module {
    strata_syntax::parse(file, PRELUDE).module
}
