//! Lowering from checked syntax to the IR ([`crate::ir`]).
//!
//! The checker has proven the program safe; lowering only makes it explicit. Places become a
//! root, a path and one flat offset: each view contributes an *inverse index function* (from the
//! indices of the view to those of what it views) and the functions are composed, the last view
//! applied first, exactly once for every backend. `sched` binds coordinates (`blockIdx`,
//! `threadIdx` minus the start of a `split` part, warp and lane numbers); a selection consumes
//! them as indices. A reference known when lowering (an immutable `let` of a borrow, a copy of
//! one) is bound to its resolved place, which is substituted where it is used, as the checker
//! does; any other reference is a run-time pointer to the first scalar of a contiguous part.
//!
//! The IR has no views, so a function cannot receive an arbitrary view as a pointer. Calls of a
//! function executed by a block or a warp, or with a view-array parameter (`[[T; n]]`), are
//! therefore inlined: the callee's body is lowered at the call site, its reference parameters
//! bound to the (already resolved) places of the arguments, its resource to the caller's and its
//! size parameters to the call's sizes. Such functions are not lowered on their own.

use crate::ir::{
    self, Builtin, Expr, FnKind, IExpr, Level, Lit, Local, LocalId, PathStep, Place, ShuffleOp, Stmt, ThreadSet, Ty,
};
use std::collections::HashMap;
use std::ops::{Add, Div, Mul, Rem, Sub};
use std::rc::Rc;
use strata_check::exec::Root;
use strata_check::nat::{Atom, Nat};
use strata_check::program::{FnSig, Program as Env, PATH_ALIASES};
use strata_check::ty as cty;
use strata_check::TypeTable;
use strata_diag::{codes, Diagnostic, Span};
use strata_syntax::ast::{self, DimName, ExprKind, ScalarTy};

mod calls;
mod exec;
mod jumps;
mod places;

type Inv = Rc<dyn Fn(Vec<IExpr>) -> Vec<IExpr>>;
/// A dimension of a collection: its name, the coordinate of the executing resource, the size.
type Coord = (DimName, IExpr, IExpr);

/// Which collection a `sched` binder distributes over; selections consume the dimensions of one
/// collection in the order they were scheduled.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Coll {
    Blocks,
    Threads,
    GridThreads,
    Warps,
    Lanes,
}

/// An execution resource in scope: its coordinates and sizes along its dimensions.
#[derive(Clone, Debug)]
struct ExecB {
    name: String,
    coll: Option<Coll>,
    /// Dimensions this binder scheduled (in order), with coordinate and size.
    scheduled: Vec<(DimName, IExpr, IExpr)>,
    /// For a collection: dimensions still to schedule.
    remaining: Vec<(DimName, IExpr, IExpr)>,
    /// A collection's kind when `remaining` is not empty, or the kind of the single resource.
    what: What,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum What {
    Grid,
    Block,
    Warp,
    Thread,
    Collection,
}

#[derive(Clone)]
enum Binding {
    Local(LocalId),
    Counter(LocalId),
    Exec(usize),
    /// A reference known when lowering: the place it refers to, resolved where the reference was
    /// made (so later names cannot capture the borrowed place's). An immutable `let` of a borrow,
    /// of a copy of such a reference or of a block that yields one, and a reference parameter of
    /// an inlined call, are bound this way: uses of the variable are uses of the place, with its
    /// views and selections. As a value it is a pointer to the place's first scalar (see
    /// [`FnLower::finish`]).
    Ref(Rc<PState>),
    /// A size parameter of an inlined call, bound to the call's size argument.
    Nat(IExpr),
    /// A function parameter of an inlined call, bound to the function the call passes.
    Func(String),
}

/// A value of reference type, as [`FnLower::ref_value`] lowers it.
enum RefValue {
    Static(PState),
    Pointer(Expr),
}

/// How deep inlined calls may nest (bounds the size of the inlined code).
const MAX_INLINE_DEPTH: usize = 32;

/// The view machinery while lowering one place.
#[derive(Clone)]
struct ArrState {
    base_dims: Vec<IExpr>,
    dims: Vec<IExpr>,
    fixed: Vec<IExpr>,
    inv: Inv,
    leaf: Ty,
    viewed: bool,
}

#[derive(Clone)]
struct PState {
    root: LocalId,
    path: Vec<PathStep>,
    arr: Option<ArrState>,
    ty: Ty,
    checks: Vec<(IExpr, IExpr)>,
}

pub struct Lowering<'a> {
    env: &'a Env,
    types: &'a TypeTable,
    fn_ids: HashMap<String, usize>,
    /// The functions with a body, by name (inlined calls lower their callee's body).
    decls: HashMap<String, &'a ast::FnDecl>,
    module: &'a ast::Module,
    pub errors: Vec<Diagnostic>,
}

/// Lowers a checked module. Errors are constructs the IR cannot express yet (E0801).
pub fn lower(module: &ast::Module, env: &Env, types: &TypeTable) -> Result<ir::Program, Vec<Diagnostic>> {
    let mut fn_ids = HashMap::new();
    let mut decls = HashMap::new();
    let mut fns = Vec::new();
    for item in &module.items {
        if let ast::Item::Fn(f) = item {
            if f.body.is_some() {
                decls.insert(f.name.name.clone(), f);
                // A function whose calls are all inlined is not an IR function of its own.
                if env.fns.get(&f.name.name).is_some_and(|sig| always_inlined(sig)) {
                    continue;
                }
                fn_ids.insert(f.name.name.clone(), fns.len());
                fns.push(f);
            }
        }
    }
    let mut l = Lowering { env, types, fn_ids, decls, module, errors: Vec::new() };
    let mut program = ir::Program::default();
    for f in fns {
        let func = l.function(f);
        if f.name.name == "main" {
            program.entry = Some(program.functions.len());
        }
        program.functions.push(func);
    }
    let _ = l.module;
    if !l.errors.is_empty() {
        return Err(l.errors);
    }
    // Lowering must produce valid IR; in debug builds (and so in every test) it is checked.
    if cfg!(debug_assertions) {
        if let Err(problems) = crate::validate::validate(&program) {
            return Err(problems
                .into_iter()
                .map(|p| {
                    Diagnostic::error(
                        codes::UNSUPPORTED,
                        format!("internal error: invalid IR: {p}"),
                        Span::DUMMY,
                        "please report this",
                    )
                })
                .collect());
        }
    }
    Ok(program)
}

fn unsupported(span: Span, what: impl Into<String>) -> Diagnostic {
    Diagnostic::error(
        codes::UNSUPPORTED,
        format!("not supported by the IR yet: {}", what.into()),
        span,
        "cannot be lowered yet",
    )
}

struct FnLower<'l, 'a> {
    l: &'l mut Lowering<'a>,
    locals: Vec<Local>,
    scopes: Vec<Vec<(String, Binding)>>,
    level: Level,
    binders: Vec<ExecB>,
    /// Threads of one block and blocks of the grid, as the signature states them.
    block_shape: Vec<(DimName, IExpr)>,
    grid_shape: Vec<(DimName, IExpr)>,
    /// Thread regions cannot nest: true inside one.
    in_region: bool,
    /// Initialised owning locals of host code (`T @ m`) whose scope is open: (local, in GPU
    /// memory, declaration). Each block releases its own at its end.
    owned: Vec<(LocalId, bool, Span)>,
    /// Shared memory declared in a kernel's body (`let [e] x: T @ gpu.shared;`).
    shared_decls: Vec<(LocalId, ScalarTy, IExpr)>,
    /// Statements an expression being lowered needs to run before it: a value `if` (or a block
    /// with statements) inside an expression becomes statements that store its value in a fresh
    /// local, and the expression loads that local. Whoever lowers an expression at statement
    /// level emits these first (see [`FnLower::hoisting`]).
    pre: Vec<Stmt>,
    /// The locals holding the values of hoisted `if`s: written once, before their only use.
    value_temps: Vec<LocalId>,
    /// The functions whose inlined bodies the code being lowered is nested in, outermost first.
    inlining: Vec<String>,
    /// The data-type generics of the inlined body being lowered, bound to the call's types (an
    /// instantiation: a `num` or `dty` generic of a function is lowered per call).
    ty_subst: HashMap<String, Ty>,
    /// Lowering a `while` condition: no statement can run before it, so [`FnLower::operands`]
    /// binds no operand to a local there.
    in_while_cond: bool,
    /// The flags of the enclosing loops with `break`/`continue`, innermost last (`jumps.rs`).
    jumps: Vec<jumps::LoopFlags>,
}

impl<'a> Lowering<'a> {
    fn function(&mut self, f: &ast::FnDecl) -> ir::Function {
        let sig = self.env.fns.get(&f.name.name).cloned();
        let Some(sig) = sig else {
            self.errors.push(unsupported(f.name.span, "a function without a signature"));
            return ir::Function {
                name: f.name.name.clone(),
                kind: FnKind::Host,
                nat_params: vec![],
                nat_max: Default::default(),
                params: vec![],
                locals: vec![],
                body: vec![],
                ret: Ty::Scalar(ScalarTy::Unit),
                span: f.span,
                shrd_params: vec![],
            };
        };
        let nat_params: Vec<String> =
            sig.generics.iter().filter(|(_, k)| *k == ast::Kind::Nat).map(|(n, _)| n.clone()).collect();
        let level = match sig.root {
            Root::CpuThread => Level::Host,
            Root::Grid { .. } | Root::Block { .. } => Level::Block,
            _ => Level::Thread,
        };
        let mut fl = FnLower {
            l: self,
            locals: Vec::new(),
            scopes: vec![Vec::new()],
            level,
            binders: Vec::new(),
            block_shape: Vec::new(),
            grid_shape: Vec::new(),
            in_region: level == Level::Thread,
            owned: Vec::new(),
            shared_decls: Vec::new(),
            pre: Vec::new(),
            value_temps: Vec::new(),
            in_while_cond: false,
            jumps: Vec::new(),
            inlining: Vec::new(),
            ty_subst: HashMap::new(),
        };
        match &sig.root {
            Root::Grid { blocks, threads } => {
                fl.grid_shape = blocks.iter().map(|(d, n)| (*d, fl.nat(n))).collect();
                fl.block_shape = threads.iter().map(|(d, n)| (*d, fl.nat(n))).collect();
            }
            Root::Block { threads } => fl.block_shape = threads.iter().map(|(d, n)| (*d, fl.nat(n))).collect(),
            _ => {}
        }
        let mut kind = FnKind::Host;
        if let Root::Grid { blocks, threads } = &sig.root {
            let grid = fl.shape3(blocks);
            let block = fl.shape3(threads);
            let dims = |shape: &[(DimName, Nat)], fl: &mut FnLower, idx: fn(DimName) -> IExpr| {
                shape.iter().map(|(d, n)| (*d, idx(*d), fl.nat(n))).collect::<Vec<_>>()
            };
            let blocks_dims = dims(blocks, &mut fl, IExpr::BlockIdx);
            let _ = threads;
            fl.binders.push(ExecB {
                name: sig.exec_name.clone(),
                coll: None,
                scheduled: vec![],
                remaining: blocks_dims,
                what: What::Grid,
            });
            fl.bind(&sig.exec_name, Binding::Exec(0));
            let ordered = f.exec.as_ref().is_some_and(|e| e.ty.ordered);
            kind = FnKind::Kernel { grid, block, shared: Vec::new(), ordered };
        } else if let Root::Block { threads } = &sig.root {
            let dims = threads.iter().map(|(d, n)| (*d, IExpr::ThreadIdx(*d), fl.nat(n))).collect();
            fl.binders.push(ExecB {
                name: sig.exec_name.clone(),
                coll: None,
                scheduled: vec![],
                remaining: dims,
                what: What::Block,
            });
            fl.bind(&sig.exec_name, Binding::Exec(0));
            kind = FnKind::Device;
        } else if level == Level::Thread {
            fl.binders.push(ExecB {
                name: sig.exec_name.clone(),
                coll: None,
                scheduled: vec![],
                remaining: vec![],
                what: What::Thread,
            });
            fl.bind(&sig.exec_name, Binding::Exec(0));
            kind = FnKind::Device;
        }
        let mut params = Vec::new();
        let mut shrd_params = Vec::new();
        let mut shared = Vec::new();
        for (p, ps) in f.params.iter().zip(&sig.params) {
            let ty = fl.ty(&ps.ty, p.span);
            // A function one GPU thread calls has per-thread parameters; a kernel's or a block
            // function's are the same for the whole block.
            let local = fl.new_local(&ps.name, ty.clone(), level);
            fl.bind(&ps.name, Binding::Local(local));
            if let Some(owner) = &p.exec {
                // A shared-memory buffer the launch allocates for each block. Memory declared for
                // each warp or thread of a block would need one buffer each: not lowered yet.
                let below_block = owner.path.iter().any(|s| {
                    matches!(
                        s,
                        ast::ExecStep::Threads | ast::ExecStep::Warps | ast::ExecStep::Lanes | ast::ExecStep::ToWarps
                    )
                });
                if below_block {
                    fl.l.errors.push(unsupported(p.span, "shared memory declared for each warp or thread of a block"));
                }
                match &ty {
                    Ty::Ref(inner, _) => {
                        let (len, scalar) = flat_len(inner);
                        match scalar {
                            Some(s) => shared.push((local, s, len)),
                            None => fl.l.errors.push(unsupported(p.span, "shared memory of non-scalar elements")),
                        }
                    }
                    _ => fl.l.errors.push(unsupported(p.span, "a shared parameter that is not a reference")),
                }
            } else {
                params.push(local);
                if matches!(ps.ty, cty::Ty::Ref { own: ast::Ownership::Shrd, .. }) {
                    shrd_params.push(local);
                }
                // A host function owns the buffers passed to it by value.
                if let (cty::Ty::At(_, mem), Level::Host) = (&ps.ty, level) {
                    fl.owned.push((local, mem.is_gpu(), p.span));
                }
            }
        }
        if let FnKind::Kernel { shared: s, .. } = &mut kind {
            *s = shared;
        }
        let ret = fl.ty(&sig.ret, f.span);
        let body = match &f.body {
            Some(b) => {
                // The body releases the by-value parameters registered above, too.
                // The value of the body's last expression is the function's result.
                let returns_value = !matches!(ret, Ty::Scalar(ScalarTy::Unit));
                let mut out = fl.block_releasing(b, 0, Some(&ret), returns_value);
                let tail = matches!(b.stmts.last(), Some(ast::Stmt::Expr { semi: false, expr }) if !matches!(expr.kind, ExprKind::Return(_)));
                if returns_value && tail {
                    if let Some(Stmt::Eval(e)) = out.pop() {
                        out.push(Stmt::Return(Some(e)));
                    }
                }
                out
            }
            None => Vec::new(),
        };
        if let FnKind::Kernel { shared, .. } = &mut kind {
            shared.append(&mut fl.shared_decls);
        }
        let nat_max = nat_params.iter().filter_map(|n| Some((n.clone(), proven_max(&sig.facts, n)?))).collect();
        let mut func = ir::Function {
            name: f.name.name.clone(),
            kind,
            nat_params,
            nat_max,
            params,
            locals: fl.locals,
            body,
            ret,
            span: f.span,
            shrd_params,
        };
        crate::thread_dep::per_thread_copies(&mut func);
        func
    }
}

/// How many scalars a value of type `t` holds (an array of arrays of scalars), for a copy.
fn scalar_count(t: &cty::Ty) -> Option<Nat> {
    match t {
        cty::Ty::Scalar(_) => Some(Nat::lit(1)),
        cty::Ty::Array(e, n) => n.mul(&scalar_count(e)?).ok(),
        _ => None,
    }
}

/// Whether every call of the function is inlined: it is executed by a block or a warp, or it has
/// a view-array parameter, which the IR cannot pass as a pointer (kernels excepted: a launch
/// passes whole buffers), or it takes or returns an array by value.
fn always_inlined(sig: &FnSig) -> bool {
    fn has_view(t: &cty::Ty) -> bool {
        match t {
            cty::Ty::ViewArray(..) => true,
            cty::Ty::Array(e, _) | cty::Ty::At(e, _) | cty::Ty::Ref { ty: e, .. } => has_view(e),
            cty::Ty::Tuple(ts) => ts.iter().any(has_view),
            _ => false,
        }
    }
    fn has_array(t: &cty::Ty) -> bool {
        match t {
            cty::Ty::Array(..) | cty::Ty::ViewArray(..) => true,
            cty::Ty::Tuple(ts) => ts.iter().any(has_array),
            _ => false,
        }
    }
    // A function with function parameters or data-type generics is instantiated per call: its
    // body is lowered at each call with the call's functions and types.
    // (A kernel is launched, not called: one generic over a data type is E0801.)
    let generic = !matches!(sig.root, Root::Grid { .. })
        && (!sig.fn_params.is_empty() || sig.generics.iter().any(|(_, k)| *k == ast::Kind::DataTy));
    !sig.builtin
        && (generic
            || match sig.root {
                Root::Block { .. } | Root::Warp => true,
                Root::Grid { .. } => false,
                // Arrays passed or returned by value: C passes a pointer, which would let the callee
                // write the caller's array, return a pointer to its own (gone) stack, or leak the
                // returned buffer. Such calls are inlined: parameters and value are the caller's
                // own locals, copied like any `let`.
                _ if has_array(&sig.ret) || sig.params.iter().any(|p| has_array(&p.ty)) => true,
                Root::CpuThread | Root::Thread | Root::Any => sig.params.iter().any(|p| has_view(&p.ty)),
            })
}

/// The body of an inlined function with a final `return` turned into its tail value; `None`
/// where a `return` stands anywhere else (it would have to leave the callee only).
fn inline_body(b: &ast::Block) -> Option<std::borrow::Cow<'_, ast::Block>> {
    let mut body = std::borrow::Cow::Borrowed(b);
    if let Some(ast::Stmt::Expr { expr, .. }) = b.stmts.last() {
        if let ExprKind::Return(v) = &expr.kind {
            let owned = body.to_mut();
            owned.stmts.pop();
            if let Some(v) = v {
                owned.stmts.push(ast::Stmt::Expr { expr: (**v).clone(), semi: false });
            }
        }
    }
    (!block_returns(&body)).then_some(body)
}

fn block_returns(b: &ast::Block) -> bool {
    b.stmts.iter().any(|s| match s {
        ast::Stmt::Let(l) => l.init.as_ref().is_some_and(expr_returns),
        ast::Stmt::Expr { expr, .. } => expr_returns(expr),
    })
}

/// Whether `e` contains a `return`.
fn expr_returns(e: &ast::Expr) -> bool {
    use ExprKind as K;
    match &e.kind {
        K::Return(_) => true,
        K::Lit(_) | K::Path(_) | K::Sync(_) | K::Break | K::Continue | K::Error => false,
        K::Unary(_, x)
        | K::Cast(x, _)
        | K::Field(x, _)
        | K::Deref(x)
        | K::Select(x, _)
        | K::View(x, _)
        | K::Unsafe(x)
        | K::Paren(x)
        | K::ArrayRepeat(x, _)
        | K::Borrow { place: x, .. } => expr_returns(x),
        K::Binary(_, a, b) | K::Index(a, b) | K::Assign(a, b) | K::CompoundAssign(_, a, b) => {
            expr_returns(a) || expr_returns(b)
        }
        K::Block(b) | K::For { body: b, .. } | K::Sched { body: b, .. } => block_returns(b),
        K::While { cond, body } => expr_returns(cond) || block_returns(body),
        K::If { cond, then, els } => {
            expr_returns(cond) || block_returns(then) || els.as_deref().is_some_and(expr_returns)
        }
        K::Split { arms, .. } => arms.iter().any(|a| expr_returns(&a.body)),
        K::Call { args, .. } | K::Tuple(args) | K::ArrayList(args) => args.iter().any(expr_returns),
    }
}

/// Whether `s` assigns to a variable named `name` as a whole (`name = …`), anywhere inside.
fn stmt_assigns(s: &ast::Stmt, name: &str) -> bool {
    match s {
        ast::Stmt::Let(l) => l.init.as_ref().is_some_and(|e| expr_assigns(e, name)),
        ast::Stmt::Expr { expr, .. } => expr_assigns(expr, name),
    }
}

fn expr_assigns(e: &ast::Expr, name: &str) -> bool {
    use ExprKind as K;
    let block = |b: &ast::Block| b.stmts.iter().any(|s| stmt_assigns(s, name));
    match &e.kind {
        K::Assign(lhs, rhs) | K::CompoundAssign(_, lhs, rhs) => {
            matches!(&lhs.kind, K::Path(segs) if segs.len() == 1 && segs[0].name == name) || expr_assigns(rhs, name)
        }
        K::Lit(_) | K::Path(_) | K::Sync(_) | K::Break | K::Continue | K::Error => false,
        K::Return(x) => x.as_deref().is_some_and(|x| expr_assigns(x, name)),
        K::Unary(_, x)
        | K::Cast(x, _)
        | K::Field(x, _)
        | K::Deref(x)
        | K::Select(x, _)
        | K::View(x, _)
        | K::Unsafe(x)
        | K::Paren(x)
        | K::ArrayRepeat(x, _)
        | K::Borrow { place: x, .. } => expr_assigns(x, name),
        K::Binary(_, a, b) | K::Index(a, b) => expr_assigns(a, name) || expr_assigns(b, name),
        K::Block(b) | K::For { body: b, .. } | K::Sched { body: b, .. } => block(b),
        K::While { cond, body } => expr_assigns(cond, name) || block(body),
        K::If { cond, then, els } => {
            expr_assigns(cond, name) || block(then) || els.as_deref().is_some_and(|x| expr_assigns(x, name))
        }
        K::Split { arms, .. } => arms.iter().any(|a| expr_assigns(&a.body, name)),
        K::Call { args, .. } | K::Tuple(args) | K::ArrayList(args) => args.iter().any(|a| expr_assigns(a, name)),
    }
}

/// The tail expression of a block whose value is used: its last statement when that is an
/// expression without `;` (and not a `return`).
fn tail_value(b: &ast::Block) -> Option<&ast::Expr> {
    match b.stmts.last() {
        Some(ast::Stmt::Expr { expr, semi: false }) if !matches!(expr.kind, ExprKind::Return(_)) => Some(expr),
        _ => None,
    }
}

/// Strata's integer arithmetic, checked for overflow ([`Expr::Checked`]): `+ - * / % << >>`
/// and unary `-`; every other operator as it is.
fn checked(e: Expr, span: Span) -> Expr {
    match &e {
        Expr::Binary(
            ast::BinOp::Add
            | ast::BinOp::Sub
            | ast::BinOp::Mul
            | ast::BinOp::Div
            | ast::BinOp::Rem
            | ast::BinOp::Shl
            | ast::BinOp::Shr,
            ..,
        ) => Expr::Checked(Box::new(e), span),
        // A negative literal (`-5`, `-2.5`): its value fits, as the checker made sure.
        Expr::Unary(ast::UnOp::Neg, x)
            if matches!(**x, Expr::Lit(Lit::Float(..)))
                || matches!(**x, Expr::Lit(Lit::Int(_, t)) if t.is_signed_int()) =>
        {
            e
        }
        Expr::Unary(ast::UnOp::Neg, _) => Expr::Checked(Box::new(e), span),
        _ => e,
    }
}

/// The math library of the prelude (`exp_f32`, `min_u64`, `is_nan_f64`, …): its builtin, by the
/// name's type suffix. `clamp_f32`/`clamp_f64` give `Fmin` here; `call` nests an `Fmax` in it.
fn math_builtin(name: &str) -> Option<Builtin> {
    use ir::{IntFn, MathFn as M};
    let (base, suffix) = name.rsplit_once('_')?;
    let t = match suffix {
        "f32" => ScalarTy::F32,
        "f64" => ScalarTy::F64,
        "i8" => ScalarTy::I8,
        "u8" => ScalarTy::U8,
        "i16" => ScalarTy::I16,
        "u16" => ScalarTy::U16,
        "i32" => ScalarTy::I32,
        "u32" => ScalarTy::U32,
        "i64" => ScalarTy::I64,
        "u64" => ScalarTy::U64,
        _ => return None,
    };
    if !matches!(t, ScalarTy::F32 | ScalarTy::F64) {
        let f = IntFn::ALL.into_iter().find(|f| f.name() == base)?;
        return Some(Builtin::IntMath(f, t));
    }
    let m = match base {
        "is_nan" => return Some(Builtin::IsNan(t)),
        "is_finite" => return Some(Builtin::IsFinite(t)),
        "powi" => return Some(Builtin::Powi(t)),
        "abs" => M::Fabs,
        "min" | "clamp" => M::Fmin,
        "max" => M::Fmax,
        _ => M::ALL.into_iter().find(|m| m.c_name() == base && !matches!(m, M::Fabs | M::Fmin | M::Fmax))?,
    };
    Some(Builtin::Math(m, t))
}

/// Whether the expression calls a function (or launches a kernel) anywhere.
fn ast_has_call(e: &ast::Expr) -> bool {
    e.any(&|x| matches!(x.kind, ExprKind::Call { .. }))
}

/// Whether a builtin computes a value from its arguments alone (the math library).
fn pure_builtin(b: &Builtin) -> bool {
    matches!(
        b,
        Builtin::Sqrt(_)
            | Builtin::Math(..)
            | Builtin::IntMath(..)
            | Builtin::Powi(_)
            | Builtin::IsNan(_)
            | Builtin::IsFinite(_)
    )
}

/// Whether evaluating `e` has a side effect (or is a warp collective): a call, an atomic,
/// printing, an assertion, an allocation or copy.
fn expr_has_effects(e: &Expr) -> bool {
    let mut effects = false;
    e.visit(&mut |x| {
        effects |= matches!(x, Expr::Call { .. }) || matches!(x, Expr::Builtin(b, _, _) if !pure_builtin(b));
    });
    effects
}

/// Whether evaluating `e` may write memory: an atomic, a copy or allocation, a warp collective,
/// or a call that is passed a reference.
fn expr_writes(e: &Expr) -> bool {
    let mut writes = false;
    e.visit(&mut |x| match x {
        Expr::Builtin(b, _, _) => {
            writes |= !pure_builtin(b) && !matches!(b, Builtin::Print | Builtin::PrintInline | Builtin::Assert)
        }
        Expr::Call { args, .. } => {
            for a in args {
                a.visit(&mut |y| writes |= matches!(y, Expr::Ref(_)));
            }
        }
        _ => {}
    });
    writes
}

/// The IR's memory space of a checker's.
fn mem_of(m: &cty::Mem) -> ir::Mem {
    match m {
        cty::Mem::CpuMem => ir::Mem::Cpu,
        cty::Mem::GpuGlobal => ir::Mem::GpuGlobal,
        cty::Mem::GpuShared => ir::Mem::GpuShared,
        cty::Mem::GpuLocal => ir::Mem::GpuLocal,
        cty::Mem::Var(_) => ir::Mem::Generic,
    }
}

/// `body`, run only where every constraint of `set` holds (`lo <= on < hi`).
fn guarded(set: &ThreadSet, body: Vec<Stmt>, span: Span, out: &mut Vec<Stmt>) {
    match crate::thread_dep::condition(set) {
        Some(cond) if !body.is_empty() => out.push(Stmt::If { cond, then: body, els: Vec::new(), span }),
        Some(_) => {}
        None => out.extend(body),
    }
}

/// Total scalar count and scalar element type of a (nested) array type.
fn flat_len(t: &Ty) -> (IExpr, Option<ScalarTy>) {
    match t {
        Ty::Array { elem, len } => {
            let (inner, s) = flat_len(elem);
            (IExpr::mul(len.clone(), inner), s)
        }
        Ty::Scalar(s) => (IExpr::Const(1), Some(*s)),
        _ => (IExpr::Const(1), None),
    }
}

impl<'a> FnLower<'_, 'a> {
    fn err(&mut self, span: Span, what: impl Into<String>) {
        let d = unsupported(span, what);
        // The body of a function inlined at several calls is lowered once per call.
        if !self.l.errors.iter().any(|e| e.primary.span == span && e.message == d.message) {
            self.l.errors.push(d);
        }
    }

    fn bind(&mut self, name: &str, b: Binding) {
        if let Some(s) = self.scopes.last_mut() {
            s.push((name.to_string(), b));
        }
    }

    fn lookup(&self, name: &str) -> Option<Binding> {
        self.scopes.iter().rev().flat_map(|s| s.iter().rev()).find(|(n, _)| n == name).map(|(_, b)| b.clone())
    }

    fn new_local(&mut self, name: &str, ty: Ty, level: Level) -> LocalId {
        self.locals.push(Local { name: name.to_string(), ty, level });
        self.locals.len() - 1
    }

    fn local_level(&self) -> Level {
        if self.in_region {
            Level::Thread
        } else {
            self.level
        }
    }

    // --------------------------------------------------------------------------------------------
    // Sizes and types

    /// The innermost *size* named `name`: a variable of the same name may shadow a size in value
    /// positions (`let n = 5;`), but sizes (`[f32; n]`, `0..n`) still mean the size, as the
    /// checker reads them.
    fn lookup_size(&self, name: &str) -> Option<Binding> {
        self.scopes
            .iter()
            .rev()
            .flat_map(|s| s.iter().rev())
            .find(|(n, b)| n == name && matches!(b, Binding::Counter(_) | Binding::Nat(_)))
            .map(|(_, b)| b.clone())
    }

    fn name_to_iexpr(&self, name: &str) -> IExpr {
        match self.lookup_size(name) {
            Some(Binding::Counter(c)) => IExpr::Counter(c),
            Some(Binding::Nat(n)) => n,
            _ => {
                if let Some(v) = self.l.env.consts.get(name) {
                    IExpr::Const(*v)
                } else {
                    IExpr::Param(name.to_string())
                }
            }
        }
    }

    /// A checker nat (a polynomial) as index arithmetic.
    fn nat(&self, n: &Nat) -> IExpr {
        let mut pos = IExpr::Const(0);
        let mut neg = IExpr::Const(0);
        for (mono, coeff) in n.terms() {
            let mut term = IExpr::Const(coeff.unsigned_abs() as u64);
            for (atom, power) in mono.factors() {
                let a = match atom {
                    Atom::Var(v) => self.name_to_iexpr(v),
                    Atom::Div(x, y) => IExpr::div(self.nat(x), self.nat(y)),
                    Atom::Rem(x, y) => IExpr::rem(self.nat(x), self.nat(y)),
                    Atom::Pow(x, y) => IExpr::Pow(Box::new(self.nat(x)), Box::new(self.nat(y))),
                    Atom::Call(..) => IExpr::Const(0),
                };
                for _ in 0..power {
                    term = IExpr::mul(term, a.clone());
                }
            }
            if coeff >= 0 {
                pos = IExpr::add(pos, term);
            } else {
                neg = IExpr::add(neg, term);
            }
        }
        IExpr::sub(pos, neg)
    }

    /// An AST nat with extra names (a named view's parameters).
    fn ast_nat(&mut self, n: &ast::Nat, env: &HashMap<String, IExpr>) -> IExpr {
        match &n.kind {
            ast::NatKind::Lit(v) => IExpr::Const(*v),
            ast::NatKind::Var(id) => env.get(&id.name).cloned().unwrap_or_else(|| self.name_to_iexpr(&id.name)),
            ast::NatKind::Bin(op, a, b) => {
                let (a, b) = (self.ast_nat(a, env), self.ast_nat(b, env));
                match op {
                    ast::NatOp::Add => IExpr::add(a, b),
                    ast::NatOp::Sub => IExpr::sub(a, b),
                    ast::NatOp::Mul => IExpr::mul(a, b),
                    ast::NatOp::Div => IExpr::div(a, b),
                    ast::NatOp::Rem => IExpr::rem(a, b),
                    ast::NatOp::Pow => match (&a, &b) {
                        (IExpr::Const(x), IExpr::Const(y)) if *y < 64 => x
                            .checked_pow(*y as u32)
                            .map_or(IExpr::Pow(Box::new(a.clone()), Box::new(b.clone())), IExpr::Const),
                        _ => IExpr::Pow(Box::new(a), Box::new(b)),
                    },
                }
            }
            ast::NatKind::Call(f, _) => {
                self.err(f.span, "size functions");
                IExpr::Const(0)
            }
        }
    }

    fn shape3(&self, shape: &[(DimName, Nat)]) -> [IExpr; 3] {
        let get = |d| shape.iter().find(|(n, _)| *n == d).map_or(IExpr::Const(1), |(_, s)| self.nat(s));
        [get(DimName::X), get(DimName::Y), get(DimName::Z)]
    }

    fn ty(&mut self, t: &cty::Ty, span: Span) -> Ty {
        match t {
            cty::Ty::Scalar(s) => Ty::Scalar(*s),
            cty::Ty::IntLit => Ty::Scalar(ScalarTy::I32),
            cty::Ty::FloatLit => Ty::Scalar(ScalarTy::F64),
            cty::Ty::Nat => Ty::Nat,
            cty::Ty::Tuple(ts) => Ty::Tuple(ts.iter().map(|t| self.ty(t, span)).collect()),
            cty::Ty::Array(e, n) | cty::Ty::ViewArray(e, n) => {
                Ty::Array { elem: Box::new(self.ty(e, span)), len: self.nat(n) }
            }
            cty::Ty::Ref { ty, mem, .. } => Ty::Ref(Box::new(self.ty(ty, span)), mem_of(mem)),
            cty::Ty::At(ty, mem) => Ty::Owned(Box::new(self.ty(ty, span)), mem_of(mem)),
            cty::Ty::Stream => Ty::Stream,
            cty::Ty::Var(v) if self.ty_subst.contains_key(v) => {
                self.ty_subst.get(v).cloned().unwrap_or(Ty::Scalar(ScalarTy::Unit))
            }
            cty::Ty::Var(_) | cty::Ty::Error => {
                self.err(span, "generic data types");
                Ty::Scalar(ScalarTy::Unit)
            }
        }
    }

    // --------------------------------------------------------------------------------------------
    // Statements

    fn block(&mut self, b: &ast::Block) -> Vec<Stmt> {
        let owned_before = self.owned.len();
        self.block_releasing(b, owned_before, None, false)
    }

    /// A block that releases, at its end, the owning locals registered from `owned_from` on
    /// (its own `let`s, and a function's by-value parameters). `value_ty` is the type of the
    /// block's value where known (a function body), so a value computed from a released buffer
    /// can be computed first. With `tail_value`, the block's value is used: a tail expression
    /// (see [`tail_value`]) is lowered as a value and the block ends with `Stmt::Eval` of it.
    fn block_releasing(
        &mut self,
        b: &ast::Block,
        owned_before: usize,
        value_ty: Option<&Ty>,
        tail_value: bool,
    ) -> Vec<Stmt> {
        self.scopes.push(Vec::new());
        let mut out = Vec::new();
        let value = if tail_value { self::tail_value(b) } else { None };
        let n = b.stmts.len() - usize::from(value.is_some());
        for (i, s) in b.stmts[..n].iter().enumerate() {
            match s {
                ast::Stmt::Let(l) => self.let_stmt(l, &b.stmts[i + 1..], &mut out),
                ast::Stmt::Expr { expr, .. } => self.stmt_expr(expr, &mut out),
            }
        }
        if let Some(tail) = value {
            self.tail_into(tail, value_ty, &mut out);
        }
        self.scopes.pop();
        let owned = self.owned.split_off(owned_before);
        self.release(owned, b, value_ty, &mut out);
        out
    }

    /// Releases the buffers of the block's owning locals at its end, as Rust drops them. A local
    /// the block moves out of (a by-value use: `let b = a;`, `f(a)`, `return a`) is not released
    /// here; nor is one the block's value (its tail expression) still uses.
    fn release(
        &mut self,
        owned: Vec<(LocalId, bool, Span)>,
        b: &ast::Block,
        value_ty: Option<&Ty>,
        out: &mut Vec<Stmt>,
    ) {
        if owned.is_empty() {
            return;
        }
        // The block's value (a tail expression whose value is used, or a final `return`) is
        // computed before the release; a tail of type `()` is an ordinary last statement.
        let value_used = value_ty.is_some_and(|t| *t != Ty::Scalar(ScalarTy::Unit));
        let mut tail = match (b.stmts.last(), out.last()) {
            (Some(ast::Stmt::Expr { semi: false, .. }), Some(Stmt::Return(_))) => out.pop(),
            (Some(ast::Stmt::Expr { semi: false, .. }), Some(Stmt::Eval(_))) if value_used => out.pop(),
            _ => None,
        };
        // Whole-value reads that move nothing: `println(h)`, and a reference bound to a local of
        // reference type (`let s = &shrd h; let a = s;` reads `h` as a reference copy).
        let mut printed: Vec<*const Expr> = Vec::new();
        for s in out.iter().chain(tail.iter()) {
            s.visit_exprs(&mut |e| {
                if let Expr::Builtin(Builtin::Print | Builtin::PrintInline, args, _) = e {
                    printed.extend(args.iter().map(|a| a as *const Expr));
                }
            });
            if let Stmt::Let { local, init: Some(init), .. } = s {
                if matches!(self.locals.get(*local).map(|l| &l.ty), Some(Ty::Ref(..))) {
                    printed.push(init as *const Expr);
                }
            }
        }
        for (local, gpu, span) in owned {
            let mut kept = false;
            for s in out.iter().chain(tail.iter()) {
                s.visit_exprs(&mut |e| match e {
                    Expr::Load(p) if p.root == local && p.path.is_empty() => {
                        kept |= !printed.contains(&(e as *const Expr));
                    }
                    _ => {}
                });
            }
            let mut in_value = false;
            if let Some(t) = &tail {
                t.visit_exprs(&mut |e| {
                    if let Expr::Load(p) | Expr::Ref(p) = e {
                        in_value |= p.root == local;
                    }
                });
            }
            // A scalar value read from the buffer (`h[0] + h[1]`) is computed before the release.
            if in_value && !kept {
                if let (Some(ty @ Ty::Scalar(_)), Some(Stmt::Eval(e))) = (value_ty, tail.as_mut()) {
                    let tmp = self.new_local("value", ty.clone(), Level::Host);
                    let value = std::mem::replace(e, Expr::Load(Place::local(tmp, span)));
                    out.push(Stmt::Let { local: tmp, init: Some(value), span });
                    in_value = false;
                }
            }
            if !kept && !in_value {
                out.push(Stmt::Free { local, gpu, span });
            }
        }
        out.extend(tail);
    }

    /// A `let` followed by the statements `rest` of its block.
    fn let_stmt(&mut self, l: &ast::LetStmt, rest: &[ast::Stmt], out: &mut Vec<Stmt>) {
        let cty = self.l.types.lets.get(&l.name.span).cloned().unwrap_or(cty::Ty::Error);
        let ty = self.ty(&cty, l.name.span);
        let reassigned = l.mutable && rest.iter().any(|s| stmt_assigns(s, &l.name.name));
        if let (Some(init), false, Ty::Ref(..)) = (&l.init, reassigned, &ty) {
            // A reference never reassigned: bound to its place where that is known statically;
            // else (the value of an `if`, a call, a tuple field) a pointer in a local.
            match self.ref_value(init, out) {
                // A run-time index (`unsafe`) is read when the reference is made, not at each use:
                // such a reference is a pointer where it can be.
                RefValue::Static(st) if !st.checks.is_empty() && self.contiguous(&st) => {
                    let Some(p) = self.finish(st, init.span) else { return };
                    let local = self.new_local(&l.name.name, ty, self.local_level());
                    self.bind(&l.name.name, Binding::Local(local));
                    out.push(Stmt::Let { local, init: Some(Expr::Ref(p)), span: l.span });
                }
                RefValue::Static(st) => self.bind(&l.name.name, Binding::Ref(Rc::new(st))),
                RefValue::Pointer(v) => {
                    let local = self.new_local(&l.name.name, ty, self.local_level());
                    self.bind(&l.name.name, Binding::Local(local));
                    out.push(Stmt::Let { local, init: Some(v), span: l.span });
                }
            }
            return;
        }
        if l.exec.is_some() {
            // `let [grid.blocks.forall(X)] tmp: [T; n] @ gpu.shared;`: a buffer every block of the
            // launch allocates, exactly like a shared-memory parameter.
            if let (cty::Ty::At(_, cty::Mem::GpuShared), Ty::Owned(inner, _), None, Level::Block) =
                (&cty, &ty, &l.init, self.level)
            {
                if let (len, Some(scalar)) = flat_len(inner) {
                    let local = self.new_local(&l.name.name, Ty::Ref(inner.clone(), ir::Mem::GpuShared), Level::Block);
                    self.shared_decls.push((local, scalar, len));
                    self.bind(&l.name.name, Binding::Local(local));
                    return;
                }
            }
            self.err(l.span, "declarations for a sub-resource (`let [e] x: T;`) other than shared memory in a kernel");
        }
        if let (cty::Ty::At(_, cty::Mem::GpuShared), Ty::Owned(inner, _), None) = (&cty, &ty, &l.init) {
            // `let x: T @ gpu.shared;` executed by one block: its own buffer, allocated by the
            // launch for every block like a shared-memory parameter.
            // A warp or a thread is refused by the checker (E0502).
            if let ((len, Some(scalar)), Level::Block, false) = (flat_len(inner), self.level, self.in_region) {
                let local = self.new_local(&l.name.name, Ty::Ref(inner.clone(), ir::Mem::GpuShared), Level::Block);
                self.shared_decls.push((local, scalar, len));
                self.bind(&l.name.name, Binding::Local(local));
                return;
            }
            self.err(l.span, "shared memory declared by a warp or a thread, or of non-scalar elements");
        }
        if let (cty::Ty::Nat, Some(e)) = (&cty, &l.init) {
            // `let n: nat = e;`, a size bound at run time: a host local holding the value, which
            // sizes read like a `for` counter's.
            let local = self.new_local(&l.name.name, Ty::Nat, self.local_level());
            let v = self.value_into(e, out);
            self.bind(&l.name.name, Binding::Counter(local));
            out.push(Stmt::Let { local, init: Some(Expr::Cast(Box::new(v), ScalarTy::U64)), span: l.span });
            return;
        }
        let local = self.new_local(&l.name.name, ty, self.local_level());
        let init = l.init.as_ref().map(|e| self.value_into(e, out));
        if let (cty::Ty::At(_, mem), Some(_), Level::Host) = (&cty, &init, self.level) {
            self.owned.push((local, mem.is_gpu(), l.span));
        }
        self.bind(&l.name.name, Binding::Local(local));
        out.push(Stmt::Let { local, init, span: l.span });
    }

    /// A value of reference type: the place it refers to where that is known when lowering (a
    /// borrow, a static reference, a block whose value is one of these; the block's statements
    /// are emitted into `out`), else the pointer it evaluates to.
    fn ref_value(&mut self, e: &ast::Expr, out: &mut Vec<Stmt>) -> RefValue {
        match &e.kind {
            ExprKind::Paren(x) | ExprKind::Unsafe(x) => self.ref_value(x, out),
            ExprKind::Borrow { place, .. } => match self.borrowed(place) {
                Some(st) => RefValue::Static(st),
                None => RefValue::Pointer(Expr::Lit(Lit::Unit)),
            },
            ExprKind::Path(segs) if segs.len() == 1 => match self.lookup(&segs[0].name) {
                Some(Binding::Ref(st)) => RefValue::Static((*st).clone()),
                _ => RefValue::Pointer(self.value_into(e, out)),
            },
            ExprKind::Block(b) if tail_value(b).is_some() => {
                let owned_before = self.owned.len();
                self.scopes.push(Vec::new());
                for (i, s) in b.stmts[..b.stmts.len() - 1].iter().enumerate() {
                    match s {
                        ast::Stmt::Let(l) => self.let_stmt(l, &b.stmts[i + 1..], out),
                        ast::Stmt::Expr { expr, .. } => self.stmt_expr(expr, out),
                    }
                }
                let v = match tail_value(b) {
                    Some(tail) => self.ref_value(tail, out),
                    None => RefValue::Pointer(Expr::Lit(Lit::Unit)),
                };
                self.scopes.pop();
                // Buffers the block owns (none can be referred to: E0505) end with it.
                let owned = self.owned.split_off(owned_before);
                out.extend(owned.into_iter().map(|(local, gpu, span)| Stmt::Free { local, gpu, span }));
                v
            }
            _ => RefValue::Pointer(self.value_into(e, out)),
        }
    }

    /// The memory `&place` refers to: borrowing an owning pointer `T @ m` borrows what it owns.
    fn borrowed(&mut self, place: &ast::Expr) -> Option<PState> {
        let mut inner = place;
        while let ExprKind::Paren(x) = &inner.kind {
            inner = x;
        }
        if let ExprKind::Path(segs) = &inner.kind {
            if let Some(Binding::Ref(_)) = self.lookup(&segs[0].name) {
                // A reference bound to its place has no storage of its own to refer to.
                self.err(place.span, "a reference to a variable holding a reference (bind it with `let mut`)");
                return None;
            }
        }
        let mut st = self.pstate(place)?;
        // `let s: T @ gpu.shared;` is lowered as a local pointing to the block's buffer: a borrow
        // of `s` (or a part) is a borrow of the buffer, as for any owned `T @ m`, never of the
        // local holding its address.
        let shared_buffer = st.path.is_empty() && self.shared_decls.iter().any(|(l, _, _)| *l == st.root);
        if st.arr.is_none() && (matches!(st.ty, Ty::Owned(..)) || shared_buffer) {
            self.deref(&mut st, place.span)?;
        }
        Some(st)
    }

    /// The value of a block's tail expression `tail`, ending `out` with `Stmt::Eval` of it (a
    /// nested block's statements and value `if`s become statements first).
    fn tail_into(&mut self, tail: &ast::Expr, value_ty: Option<&Ty>, out: &mut Vec<Stmt>) {
        match &tail.kind {
            ExprKind::Paren(x) | ExprKind::Unsafe(x) => self.tail_into(x, value_ty, out),
            ExprKind::Block(b) => {
                let owned_before = self.owned.len();
                let body = self.block_releasing(b, owned_before, value_ty, true);
                out.extend(body);
            }
            ExprKind::If { .. } if self.l.types.value_types.contains_key(&tail.span) => {
                let v = self.hoisting(out, |s| s.expr(tail));
                out.push(Stmt::Eval(v));
            }
            // An inlined call's value is the block's (as a statement, its value is dropped).
            ExprKind::Call { launch: None, .. }
                if value_ty.is_some_and(|t| !matches!(t, Ty::Scalar(ScalarTy::Unit))) =>
            {
                let v = self.hoisting(out, |s| s.expr(tail));
                out.push(Stmt::Eval(v));
            }
            _ => self.stmt_expr(tail, out),
        }
    }

    /// Lowers `if cond { then } else { els }` whose value is stored in local `temp` (of type
    /// `ty`) by each branch; an `else if` stores into the same local.
    #[allow(clippy::too_many_arguments)]
    fn if_into(
        &mut self,
        cond: &ast::Expr,
        then: &ast::Block,
        els: Option<&ast::Expr>,
        span: Span,
        temp: LocalId,
        ty: &Ty,
        out: &mut Vec<Stmt>,
    ) {
        let cond = self.hoisting(out, |s| s.expr(cond));
        let then = self.branch_into(then, temp, ty);
        let mut other = Vec::new();
        match els {
            Some(x) => self.else_into(x, temp, ty, &mut other),
            None => self.err(span, "an `if` with a value but no `else`"),
        }
        out.push(Stmt::If { cond, then, els: other, span });
    }

    fn else_into(&mut self, x: &ast::Expr, temp: LocalId, ty: &Ty, out: &mut Vec<Stmt>) {
        match &x.kind {
            ExprKind::Paren(y) | ExprKind::Unsafe(y) => self.else_into(y, temp, ty, out),
            ExprKind::If { cond, then, els } => self.if_into(cond, then, els.as_deref(), x.span, temp, ty, out),
            ExprKind::Block(b) => out.extend(self.branch_into(b, temp, ty)),
            _ => {
                let value = self.value_into(x, out);
                out.push(Stmt::Store { place: Place::local(temp, x.span), value });
            }
        }
    }

    /// The statements of one branch of a value `if`, ending with the store of its value into
    /// `temp` (a branch that ends in `return` stores nothing).
    fn branch_into(&mut self, b: &ast::Block, temp: LocalId, ty: &Ty) -> Vec<Stmt> {
        let owned_before = self.owned.len();
        let mut body = self.block_releasing(b, owned_before, Some(ty), true);
        if tail_value(b).is_some() {
            if let Some(Stmt::Eval(value)) = body.pop() {
                let span = b.stmts.last().map_or(b.span, |s| match s {
                    ast::Stmt::Expr { expr, .. } => expr.span,
                    ast::Stmt::Let(l) => l.span,
                });
                body.push(Stmt::Store { place: Place::local(temp, span), value });
            }
        }
        body
    }

    /// Lowers operands that are evaluated in order. A value `if` in one of them becomes
    /// statements run before the whole expression; that is only the same as evaluating in order
    /// where nothing can tell: the hoisted statements neither write what an earlier operand reads
    /// nor have an effect (or a run-time error) to order against an earlier operand's effect, and
    /// no earlier operand writes what they read. Otherwise the program is refused (E0801) rather
    /// than reordered.
    ///
    /// The C of the `cpu` and `cuda` devices evaluates a call's arguments, an operator's operands
    /// and an aggregate's elements in an unspecified order. So a call (of a scalar value) followed
    /// by an operand that calls something is bound to a local first, in order: its effect (an
    /// atomic, printing) happens before the later call's on every device, as on `sim`.
    fn operands<'e>(&mut self, es: impl Iterator<Item = &'e ast::Expr>) -> Vec<Expr> {
        let es: Vec<&ast::Expr> = es.collect();
        let calls: Vec<bool> = es.iter().map(|e| ast_has_call(e)).collect();
        let mut done: Vec<Expr> = Vec::new();
        for (k, e) in es.iter().copied().enumerate() {
            let (before, locals_before) = (self.pre.len(), self.locals.len());
            let v = self.expr(e);
            if self.pre.len() > before && !done.is_empty() {
                let hoisted = &self.pre[before..];
                let hoisted_effects = hoisted.iter().any(|s| self.stmt_has_effects(s, locals_before));
                let (mut hoisted_reads, mut hoisted_fails) = (false, false);
                for s in hoisted {
                    s.visit_exprs(&mut |x| match x {
                        Expr::Load(p) | Expr::Ref(p) => {
                            hoisted_reads |= matches!(x, Expr::Load(_))
                                && p.root < locals_before
                                && !self.value_temps.contains(&p.root);
                            hoisted_fails |= !p.checks.is_empty();
                        }
                        Expr::Binary(ast::BinOp::Div | ast::BinOp::Rem, _, d) => {
                            hoisted_fails |= !matches!(**d, Expr::Lit(_));
                        }
                        _ => {}
                    });
                }
                let earlier_effects = done.iter().any(expr_has_effects);
                let earlier_writes = done.iter().any(expr_writes);
                let earlier_reads = done.iter().any(|x| self.reads_memory(x));
                if (earlier_effects && (hoisted_effects || hoisted_fails))
                    || (earlier_writes && hoisted_reads)
                    || (hoisted_effects && earlier_reads)
                {
                    self.err(
                        e.span,
                        "a value `if` (or block with statements) after an operand it would have to be \
                         evaluated before (one with a call or atomic, or that reads what the `if` changes); \
                         bind the earlier operand or the `if` to a variable with `let` first",
                    );
                }
            }
            let later_call = calls[k + 1..].iter().any(|c| *c);
            // A value read from memory a later call may write is read first as well.
            let ty = self.scalar_call_type(e).or_else(|| self.scalar_ty(&v).filter(|_| self.reads_memory(&v)));
            let v = match ty {
                Some(s) if later_call && !self.in_while_cond && (expr_has_effects(&v) || self.reads_memory(&v)) => {
                    let temp = self.new_local("operand", Ty::Scalar(s), self.local_level());
                    self.value_temps.push(temp);
                    self.pre.push(Stmt::Let { local: temp, init: Some(v), span: e.span });
                    Expr::Load(Place::local(temp, e.span))
                }
                _ => v,
            };
            done.push(v);
        }
        done
    }

    /// The scalar type of a lowered value, where it is plain: a literal, a scalar read from a
    /// place, and arithmetic, comparisons and casts of those.
    fn scalar_ty(&self, e: &Expr) -> Option<ScalarTy> {
        match e {
            Expr::Lit(Lit::Bool(_)) => Some(ScalarTy::Bool),
            Expr::Lit(Lit::Int(_, s) | Lit::Float(_, s)) => Some(*s),
            Expr::Load(p) => {
                let mut t = self.locals.get(p.root)?.ty.clone();
                for step in &p.path {
                    t = match (step, t) {
                        (PathStep::Deref, Ty::Ref(x, _) | Ty::Owned(x, _)) => *x,
                        (PathStep::Field(i), Ty::Tuple(ts)) => ts.get(*i as usize)?.clone(),
                        (PathStep::Elem(_), Ty::Array { elem, .. }) => {
                            // Nested arrays are flattened: an element is a leaf.
                            let mut x = *elem;
                            while let Ty::Array { elem, .. } = x {
                                x = *elem;
                            }
                            x
                        }
                        _ => return None,
                    };
                }
                match t {
                    Ty::Scalar(s) if s != ScalarTy::Unit => Some(s),
                    _ => None,
                }
            }
            Expr::Cast(_, s) => Some(*s),
            Expr::Unary(_, x) | Expr::Checked(x, _) => self.scalar_ty(x),
            Expr::Binary(op, a, b) if op.is_comparison() || matches!(op, ast::BinOp::And | ast::BinOp::Or) => {
                self.scalar_ty(a).and(self.scalar_ty(b)).map(|_| ScalarTy::Bool)
            }
            // Both operands of arithmetic have one type (a shift: its left operand's).
            Expr::Binary(ast::BinOp::Shl | ast::BinOp::Shr, a, _) => self.scalar_ty(a),
            Expr::Binary(_, a, b) => self.scalar_ty(a).or_else(|| self.scalar_ty(b)),
            _ => None,
        }
    }

    /// The scalar type of `e` when it is a call (not a launch) whose value is a scalar.
    fn scalar_call_type(&self, e: &ast::Expr) -> Option<ScalarTy> {
        let mut e = e;
        while let ExprKind::Paren(x) = &e.kind {
            e = x;
        }
        if !matches!(e.kind, ExprKind::Call { launch: None, .. }) {
            return None;
        }
        match self.l.types.call_types.get(&e.span) {
            Some(cty::Ty::Scalar(s)) if *s != ScalarTy::Unit => Some(*s),
            _ => None,
        }
    }

    /// `a && b`, `a || b`: where `b` needs statements (a value `if`), they run only when `a`
    /// does not decide the result.
    fn short_circuit(&mut self, op: ast::BinOp, a: &ast::Expr, b: &ast::Expr, span: Span) -> Expr {
        let x = self.expr(a);
        let before = self.pre.len();
        let y = self.expr(b);
        if self.pre.len() == before {
            return Expr::Binary(op, Box::new(x), Box::new(y));
        }
        let mut then = self.pre.split_off(before);
        let temp = self.new_local("cond_value", Ty::Scalar(ScalarTy::Bool), self.local_level());
        self.value_temps.push(temp);
        self.pre.push(Stmt::Let { local: temp, init: Some(x), span });
        let known = Expr::Load(Place::local(temp, span));
        let cond = if op == ast::BinOp::And { known.clone() } else { Expr::Unary(ast::UnOp::Not, Box::new(known)) };
        then.push(Stmt::Store { place: Place::local(temp, span), value: y });
        self.pre.push(Stmt::If { cond, then, els: Vec::new(), span });
        Expr::Load(Place::local(temp, span))
    }

    /// Whether hoisted statement `s` has an effect an earlier operand could observe or order
    /// against: a call, an atomic, printing, a barrier, a return, or a store into a local that
    /// existed before it (locals from `locals_before` on are its own).
    fn stmt_has_effects(&self, s: &Stmt, locals_before: usize) -> bool {
        let mut effects = false;
        s.visit_exprs(&mut |e| effects |= expr_has_effects(e));
        effects
            || match s {
                Stmt::Store { place, .. } => place.root < locals_before,
                Stmt::For { body, .. } | Stmt::While { body, .. } | Stmt::Threads { body, .. } => {
                    body.iter().any(|s| self.stmt_has_effects(s, locals_before))
                }
                Stmt::If { then, els, .. } => then.iter().chain(els).any(|s| self.stmt_has_effects(s, locals_before)),
                Stmt::Let { .. } | Stmt::Eval(_) => false,
                Stmt::Sync { .. } | Stmt::Launch { .. } | Stmt::Return(_) | Stmt::Free { .. } => true,
            }
    }

    /// Whether evaluating `e` reads memory (other than the locals of hoisted `if` values, which
    /// nothing writes after their `if`).
    fn reads_memory(&self, e: &Expr) -> bool {
        let mut reads = false;
        e.visit(&mut |x| {
            if let Expr::Load(p) = x {
                reads |= !self.value_temps.contains(&p.root) || !p.path.is_empty();
            }
        });
        reads
    }

    /// Runs `f`, which lowers an expression, and emits the statements that expression needs
    /// first (its hoisted value `if`s) into `out`.
    fn hoisting<T>(&mut self, out: &mut Vec<Stmt>, f: impl FnOnce(&mut Self) -> T) -> T {
        let saved = std::mem::take(&mut self.pre);
        let v = f(self);
        out.append(&mut self.pre);
        self.pre = saved;
        v
    }

    fn stmt_expr(&mut self, e: &ast::Expr, out: &mut Vec<Stmt>) {
        match &e.kind {
            ExprKind::Assign(lhs, rhs) => {
                if let ExprKind::Path(segs) = &lhs.kind {
                    if let Some(Binding::Ref(_)) = self.lookup(&segs[0].name) {
                        // Only immutable references and parameters of inlined calls are static.
                        self.err(lhs.span, "assigning to a reference parameter of an inlined function");
                        return;
                    }
                }
                // A run-time index with an effect is bound to a local (`run_time_index`): that
                // statement runs after the right-hand side.
                let mut lhs_pre = Vec::new();
                let Some(st) = self.hoisting(&mut lhs_pre, |s| s.pstate(lhs)) else { return };
                if st.arr.is_some() {
                    // A part of an array assigned (`h[0] = h[1];`): element by element.
                    let value = self.hoisting(out, |s| s.expr(rhs));
                    out.append(&mut lhs_pre);
                    self.store_part(st, value, lhs.span, out);
                } else if let Some(place) = self.finish(st, lhs.span) {
                    // As in Rust, the right-hand side is evaluated before the assigned place.
                    let mut value = self.hoisting(out, |s| s.expr(rhs));
                    if !lhs_pre.is_empty() {
                        if let Some(t) = self.scalar_call_type(rhs).or_else(|| self.scalar_ty(&value)) {
                            let temp = self.new_local("value", Ty::Scalar(t), self.local_level());
                            self.value_temps.push(temp);
                            out.push(Stmt::Let { local: temp, init: Some(value), span: rhs.span });
                            value = Expr::Load(Place::local(temp, rhs.span));
                        }
                        out.append(&mut lhs_pre);
                    }
                    out.push(Stmt::Store { place, value });
                }
            }
            ExprKind::CompoundAssign(op, lhs, rhs) => {
                if let Some(place) = self.hoisting(out, |s| s.place(lhs)) {
                    let rhs = self.hoisting(out, |s| s.expr(rhs));
                    let value = checked(Expr::Binary(*op, Box::new(Expr::Load(place.clone())), Box::new(rhs)), e.span);
                    out.push(Stmt::Store { place, value });
                }
            }
            ExprKind::Block(b) => {
                let body = self.block(b);
                out.extend(body);
            }
            ExprKind::Unsafe(inner) | ExprKind::Paren(inner) => self.stmt_expr(inner, out),
            ExprKind::For { var, start, end, body } => {
                let lo = self.ast_nat(start, &HashMap::new());
                let hi = self.ast_nat(end, &HashMap::new());
                let counter = self.new_local(&var.name, Ty::Nat, self.local_level());
                self.scopes.push(vec![(var.name.clone(), Binding::Counter(counter))]);
                let flags = self.enter_loop_jumps(body);
                let body = self.block(body);
                self.scopes.pop();
                let (body, exit) = self.for_body_with_jumps(flags, body, e.span, out);
                out.push(Stmt::For { counter, lo, hi, body, exit, span: e.span });
            }
            ExprKind::While { cond: c, body } => {
                let mut hoisted = Vec::new();
                let outer = std::mem::replace(&mut self.in_while_cond, true);
                let cond = self.hoisting(&mut hoisted, |s| s.expr(c));
                self.in_while_cond = outer;
                if !hoisted.is_empty() {
                    self.err(
                        c.span,
                        "an `if` or a block with statements in a `while` condition (compute it in a variable \
                         updated at the end of the body)",
                    );
                }
                let flags = self.enter_loop_jumps(body);
                let body = self.block(body);
                match flags {
                    Some(flags) => self.while_with_jumps(flags, cond, body, e.span, out),
                    None => out.push(Stmt::While { cond, body, span: e.span }),
                }
            }
            ExprKind::If { cond, then, els } => {
                let cond = self.hoisting(out, |s| s.expr(cond));
                let then = self.block(then);
                let mut e2 = Vec::new();
                if let Some(x) = els {
                    self.stmt_expr(x, &mut e2);
                }
                out.push(Stmt::If { cond, then, els: e2, span: e.span });
            }
            ExprKind::Sched { dims, var, exec, body } => self.sched(dims, var, exec, body, e.span, out),
            ExprKind::Split { dim, exec, at, arms } => self.split(*dim, exec, at, arms, e.span, out),
            ExprKind::Sync(target) => {
                let warp =
                    target.as_ref().is_some_and(|t| self.exec_is_warp(t)) || self.l.types.warp_syncs.contains(&e.span);
                if self.level == Level::Host {
                    return;
                }
                out.push(Stmt::Sync { warp, span: e.span });
            }
            ExprKind::Return(v) => {
                let v = v.as_ref().map(|x| self.hoisting(out, |s| s.expr(x)));
                out.push(Stmt::Return(v));
            }
            ExprKind::Break => self.jump_stmt(true, e.span, out),
            ExprKind::Continue => self.jump_stmt(false, e.span, out),
            ExprKind::Call { launch: Some(l), func, args, .. } => self.launch(func, l, args, e.span, out),
            ExprKind::Call { launch: None, func, args, exec, .. } if self.inlined_callee(func).is_some() => {
                if let Some((decl, sig)) = self.inlined_callee(func) {
                    // The callee's value, if any, is unused.
                    self.inline_call(decl, &sig, exec.as_ref(), args, e.span, out);
                }
            }
            _ => {
                let x = self.hoisting(out, |s| s.expr(e));
                out.push(Stmt::Eval(x));
            }
        }
    }

    /// A value whose computation may need statements first: `{ let s = …; *s }` emits the block's
    /// statements into `out` and yields its last expression.
    fn value_into(&mut self, e: &ast::Expr, out: &mut Vec<Stmt>) -> Expr {
        match &e.kind {
            ExprKind::Block(b) if b.stmts.len() > 1 => {
                if let Some(ast::Stmt::Expr { expr: tail, semi: false }) = b.stmts.last() {
                    self.scopes.push(Vec::new());
                    for (i, s) in b.stmts[..b.stmts.len() - 1].iter().enumerate() {
                        match s {
                            ast::Stmt::Let(l) => self.let_stmt(l, &b.stmts[i + 1..], out),
                            ast::Stmt::Expr { expr, .. } => self.stmt_expr(expr, out),
                        }
                    }
                    let v = self.value_into(tail, out);
                    self.scopes.pop();
                    return v;
                }
                self.hoisting(out, |s| s.expr(e))
            }
            ExprKind::Paren(x) | ExprKind::Unsafe(x) => self.value_into(x, out),
            _ => self.hoisting(out, |s| s.expr(e)),
        }
    }

    fn expr(&mut self, e: &ast::Expr) -> Expr {
        match &e.kind {
            ExprKind::Lit(lit) => {
                let ty = self.l.types.literals.get(&e.span).cloned();
                let scalar = match ty {
                    Some(cty::Ty::Scalar(s)) => Some(s),
                    _ => None,
                };
                match lit {
                    ast::Lit::Bool(b) => Expr::Lit(Lit::Bool(*b)),
                    ast::Lit::Unit => Expr::Lit(Lit::Unit),
                    ast::Lit::Int(v, _) => match scalar {
                        Some(s @ (ScalarTy::F32 | ScalarTy::F64)) => Expr::Lit(Lit::Float(*v as f64, s)),
                        Some(s) => Expr::Lit(Lit::Int(*v, s)),
                        None => Expr::Lit(Lit::Int(*v, ScalarTy::I32)),
                    },
                    ast::Lit::Float(text, _) => {
                        let v: f64 = text.replace('_', "").parse().unwrap_or(0.0);
                        Expr::Lit(Lit::Float(v, scalar.unwrap_or(ScalarTy::F64)))
                    }
                    ast::Lit::Str(text) => Expr::Lit(Lit::Str(text.clone())),
                }
            }
            ExprKind::Path(segs) if segs.len() == 1 => match self.lookup(&segs[0].name) {
                Some(Binding::Counter(c)) => Expr::Nat(IExpr::Counter(c)),
                Some(Binding::Local(_)) => match self.place(e) {
                    Some(p) => Expr::Load(p),
                    None => Expr::Lit(Lit::Unit),
                },
                // A reference known statically, used as a value: a pointer to its place.
                Some(Binding::Ref(st)) => match self.finish((*st).clone(), e.span) {
                    Some(p) => Expr::Ref(p),
                    None => Expr::Lit(Lit::Unit),
                },
                _ => Expr::Nat(self.name_to_iexpr(&segs[0].name)),
            },
            ExprKind::View(base, v) if self.coordinate(base, v).is_some() => {
                self.coordinate(base, v).unwrap_or(Expr::Lit(Lit::Unit))
            }
            ExprKind::Field(..)
            | ExprKind::Index(..)
            | ExprKind::Select(..)
            | ExprKind::View(..)
            | ExprKind::Deref(_) => match self.pstate(e) {
                // A part of an array (a row, a view) as a value: a copy, made element by element.
                Some(st) if st.arr.is_some() => self.part_value(st, e.span),
                Some(st) => match self.finish(st, e.span) {
                    Some(p) => Expr::Load(p),
                    None => Expr::Lit(Lit::Unit),
                },
                None => Expr::Lit(Lit::Unit),
            },
            ExprKind::Paren(x) | ExprKind::Unsafe(x) => self.expr(x),
            ExprKind::Unary(op, x) => checked(Expr::Unary(*op, Box::new(self.expr(x))), e.span),
            ExprKind::Binary(op @ (ast::BinOp::And | ast::BinOp::Or), a, b) => self.short_circuit(*op, a, b, e.span),
            ExprKind::Binary(op, a, b) => {
                let mut v = self.operands([&**a, &**b].into_iter());
                let y = v.pop().unwrap_or(Expr::Lit(Lit::Unit));
                let x = v.pop().unwrap_or(Expr::Lit(Lit::Unit));
                checked(Expr::Binary(*op, Box::new(x), Box::new(y)), e.span)
            }
            ExprKind::Cast(x, t) => {
                let inner = self.expr(x);
                match &t.kind {
                    ast::TyKind::Scalar(s) => Expr::Cast(Box::new(inner), *s),
                    _ => {
                        self.err(e.span, "casts to non-scalar types");
                        inner
                    }
                }
            }
            ExprKind::Borrow { place, .. } => {
                let Some(st) = self.borrowed(place) else { return Expr::Lit(Lit::Unit) };
                match self.finish(st, place.span) {
                    Some(p) => Expr::Ref(p),
                    None => Expr::Lit(Lit::Unit),
                }
            }
            ExprKind::Call { func, args, launch: None, exec, .. } => self.call(func, exec.as_ref(), args, e.span),
            ExprKind::Tuple(xs) => Expr::Tuple(self.operands(xs.iter())),
            ExprKind::ArrayList(xs) => Expr::ArrayList(self.operands(xs.iter())),
            ExprKind::ArrayRepeat(x, n) => {
                let v = self.expr(x);
                let v = self.evaluated_once(x, v, "the element of `[e; n]`");
                Expr::ArrayRepeat(Box::new(v), self.ast_nat(n, &HashMap::new()))
            }
            ExprKind::Block(b) if b.stmts.len() == 1 => match &b.stmts[0] {
                ast::Stmt::Expr { expr, semi: false } => self.expr(expr),
                _ => {
                    self.err(e.span, "blocks as values");
                    Expr::Lit(Lit::Unit)
                }
            },
            ExprKind::Block(b) if b.stmts.len() > 1 && tail_value(b).is_some() => {
                // Its statements run first; the expression is its tail's value.
                let mut pre = std::mem::take(&mut self.pre);
                let v = self.value_into(e, &mut pre);
                self.pre = pre;
                v
            }
            ExprKind::If { cond, then, els } => match self.l.types.value_types.get(&e.span).cloned() {
                Some(t) => {
                    let ty = self.ty(&t, e.span);
                    let temp = self.new_local("if_value", ty.clone(), self.local_level());
                    self.value_temps.push(temp);
                    let mut pre = std::mem::take(&mut self.pre);
                    pre.push(Stmt::Let { local: temp, init: None, span: e.span });
                    self.if_into(cond, then, els.as_deref(), e.span, temp, &ty, &mut pre);
                    self.pre = pre;
                    Expr::Load(Place::local(temp, e.span))
                }
                None => {
                    // An `if` without a value (of type `()`): a statement.
                    let mut pre = std::mem::take(&mut self.pre);
                    self.stmt_expr(e, &mut pre);
                    self.pre = pre;
                    Expr::Lit(Lit::Unit)
                }
            },
            _ => {
                self.err(e.span, "this expression as a value");
                Expr::Lit(Lit::Unit)
            }
        }
    }

    // --------------------------------------------------------------------------------------------
    // Places

    /// For `println(e)` where `e` is a sub-array (`h[1]` of a 2-D `h`) or a reference to a
    /// multi-dimensional array: a pointer to its first element and its dimensions, outermost
    /// first. `None` (and no diagnostics) for everything else, which prints as before.
    fn printed_array(&mut self, e: &ast::Expr) -> Option<(Expr, Vec<IExpr>)> {
        use ExprKind as K;
        if !matches!(
            e.kind,
            K::Path(_) | K::Index(..) | K::Select(..) | K::Deref(_) | K::Field(..) | K::Paren(_) | K::Borrow { .. }
        ) {
            return None;
        }
        // A reference (a borrow, or a variable bound to one statically) prints what it refers to.
        let reference = match &e.kind {
            K::Path(segs) => matches!(self.lookup(&segs[0].name), Some(Binding::Ref(_))),
            K::Borrow { .. } => true,
            _ => false,
        };
        let errors = self.l.errors.len();
        let st = match &e.kind {
            K::Borrow { place, .. } => self.borrowed(place),
            _ => self.pstate(e),
        };
        let result = st.and_then(|st| match &st.arr {
            // A part of an array (a view, a row): its dimensions, from a pointer to its start.
            Some(a) if a.fixed.len() < a.dims.len() => {
                let dims = a.dims[a.fixed.len()..].to_vec();
                Some((Expr::Ref(self.finish(st, e.span)?), dims))
            }
            Some(_) => None,
            // A reference, or a local array of arrays (printed through a pointer to it).
            None if reference || matches!(&st.ty, Ty::Array { elem, .. } if matches!(**elem, Ty::Array { .. })) => {
                let mut dims = Vec::new();
                let mut t = &st.ty;
                while let Ty::Array { elem, len } = t {
                    dims.push(len.clone());
                    t = elem;
                }
                (dims.len() >= 2).then_some(())?;
                Some((Expr::Ref(self.finish(st, e.span)?), dims))
            }
            None => {
                let (Ty::Ref(inner, _) | Ty::Owned(inner, _)) = &st.ty else { return None };
                let mut dims = Vec::new();
                let mut t = &**inner;
                while let Ty::Array { elem, len } = t {
                    dims.push(len.clone());
                    t = elem;
                }
                (dims.len() >= 2).then_some(())?;
                Some((Expr::Load(self.finish(st, e.span)?), dims))
            }
        });
        self.l.errors.truncate(errors);
        result
    }
}

/// Whether the elements of a part of an array (`arr` with its fixed indices; its first scalar at
/// flat offset `start`) lie contiguously and in row-major order in the underlying array: the
/// offset of element `idx` is `start + offset(idx)` for symbolic indices (named so that they
/// cannot be a program's names), compared as polynomials. True for `group::<k>[[b]]`,
/// `take_left`, `take_right` and sub-arrays; false for `reverse`, `transpose` and strided parts.
fn is_contiguous(arr: &ArrState, start: &IExpr) -> bool {
    let k = arr.fixed.len();
    let sym: Vec<IExpr> = (k..arr.dims.len()).map(|i| IExpr::Param(format!("#{i}"))).collect();
    let mut full = arr.fixed.clone();
    full.extend(sym.iter().cloned());
    let actual = offset(&(arr.inv)(full), &arr.base_dims);
    let expected = IExpr::add(start.clone(), offset(&sym, &arr.dims[k..]));
    matches!((poly(&actual), poly(&expected)), (Some(a), Some(b)) if a == b)
}

/// Index arithmetic as a polynomial over its other parts (coordinates, sizes, divisions, …)
/// taken as opaque atoms: monomials (sorted atoms) with their coefficients, zeros dropped.
/// `None` on overflow.
fn poly(e: &IExpr) -> Option<std::collections::BTreeMap<Vec<String>, i128>> {
    use std::collections::BTreeMap;
    type P = BTreeMap<Vec<String>, i128>;
    fn add(mut a: P, b: P, sign: i128) -> Option<P> {
        for (m, c) in b {
            let v = a.get(&m).copied().unwrap_or(0).checked_add(c.checked_mul(sign)?)?;
            if v == 0 {
                a.remove(&m);
            } else {
                a.insert(m, v);
            }
        }
        Some(a)
    }
    Some(match e {
        IExpr::Const(0) => P::new(),
        IExpr::Const(c) => P::from([(Vec::new(), i128::from(*c))]),
        IExpr::Add(a, b) => add(poly(a)?, poly(b)?, 1)?,
        IExpr::Sub(a, b) => add(poly(a)?, poly(b)?, -1)?,
        IExpr::Mul(a, b) => {
            let (a, b) = (poly(a)?, poly(b)?);
            let mut out = P::new();
            for (ma, ca) in &a {
                for (mb, cb) in &b {
                    let mut m: Vec<String> = ma.iter().chain(mb).cloned().collect();
                    m.sort();
                    out = add(out, P::from([(m, ca.checked_mul(*cb)?)]), 1)?;
                }
            }
            out
        }
        atom => P::from([(vec![format!("{atom:?}")], 1)]),
    })
}

/// A value of type `t` that is all zeros (`false`, `0`, `0.0`), for a local that is filled element
/// by element; `None` for types that have no such value (references, atomics).
fn zero_value(t: &Ty) -> Option<Expr> {
    Some(match t {
        Ty::Scalar(ScalarTy::Bool) => Expr::Lit(Lit::Bool(false)),
        Ty::Scalar(s @ (ScalarTy::F32 | ScalarTy::F64)) => Expr::Lit(Lit::Float(0.0, *s)),
        Ty::Scalar(ScalarTy::Unit) => Expr::Lit(Lit::Unit),
        Ty::Scalar(s) if s.is_int() => Expr::Lit(Lit::Int(0, *s)),
        Ty::Array { elem, len } => Expr::ArrayRepeat(Box::new(zero_value(elem)?), len.clone()),
        Ty::Tuple(ts) => Expr::Tuple(ts.iter().map(zero_value).collect::<Option<_>>()?),
        _ => return None,
    })
}

/// Row-major flat offset of `idx` in an array with dimensions `dims`.
fn offset(idx: &[IExpr], dims: &[IExpr]) -> IExpr {
    let mut off = IExpr::Const(0);
    for (i, x) in idx.iter().enumerate() {
        let stride = dims[i + 1..].iter().fold(IExpr::Const(1), |acc, d| IExpr::mul(acc, d.clone()));
        off = IExpr::add(off, IExpr::mul(x.clone(), stride));
    }
    off
}

/// The least `c <= 2^31 - 1` with `n <= c` proven by `facts`, if there is one.
fn proven_max(facts: &strata_check::nat::Facts, n: &str) -> Option<u64> {
    let v = Nat::var(n);
    let proven = |c: u64| facts.le(&v, &Nat::lit(c)) == strata_check::nat::Truth::Proven;
    let (mut lo, mut hi) = (0u64, (1u64 << 31) - 1);
    if !proven(hi) {
        return None;
    }
    // Invariant: `n <= hi` is proven; every bound below `lo` is not.
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if proven(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Some(hi)
}
