//! Kernel libraries: the kernels of a lowered program as functions other programs call.
//!
//! A file without `main` (or any file, with `strata emit --lib`) is a *library*: its kernels
//! become C or CUDA C++ functions with one typed host launch function each, which a C, C++ or
//! Rust application calls with its own pointers. [`library`] cuts a lowered [`Program`] down to
//! what a library contains (every kernel and the device functions the kernels call; host code,
//! `main` included, belongs to the application) and describes the interface of each kernel: how
//! each parameter is passed (by value, read-only, written) and the `where` clauses on its sizes,
//! which the launch functions check at run time because the caller, unlike a Strata caller, was
//! never checked. The emitter (`strata-emit`, `library.rs`) writes the C from this description.

use crate::ir::{Expr, FnId, FnKind, IExpr, PathStep, Place, Program, Stmt, Ty};
use std::collections::{BTreeSet, HashMap};
use strata_check::nat::{Atom, Nat};
use strata_check::program::Program as Env;
use strata_check::ty as cty;
use strata_diag::{codes, Diagnostic, FileId, Span};
pub use strata_syntax::ast::CmpOp;
use strata_syntax::ast::{Kind, Ownership};

/// A lowered program cut down to its kernels, with the interface of each.
#[derive(Clone, Debug)]
pub struct Library {
    /// The kernels and the device functions they call; no host function, no entry.
    pub program: Program,
    /// One per kernel, in source order.
    pub kernels: Vec<LibKernel>,
}

/// The interface of one kernel of a library.
#[derive(Clone, Debug)]
pub struct LibKernel {
    /// The kernel in [`Library::program`].
    pub func: FnId,
    /// How each parameter of the kernel (`Function::params`, in order) is passed.
    pub params: Vec<LibParam>,
    /// The kernel's `where` clauses: `lhs op rhs` over its size parameters, which the launch
    /// function checks before launching.
    pub requires: Vec<(IExpr, CmpOp, IExpr)>,
}

#[derive(Clone, Debug)]
pub struct LibParam {
    /// The Strata name of the parameter.
    pub name: String,
    pub access: Access,
}

/// How a kernel parameter crosses the library boundary.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Access {
    /// A scalar, by value.
    Value,
    /// `&shrd gpu.global …`: a pointer the kernel only reads (`const T *`).
    Read,
    /// `&uniq gpu.global …` or an owning `… @ gpu.global`: a pointer the kernel writes, which no
    /// other argument may alias (`T *restrict`).
    Write,
}

fn unsupported(span: Span, what: impl Into<String>, label: impl Into<String>) -> Diagnostic {
    Diagnostic::error(
        codes::UNSUPPORTED,
        format!("not supported in a kernel library yet: {}", what.into()),
        span,
        label,
    )
}

/// The library of `program`: its kernels and the device functions they call, and the interface
/// of each kernel. `env` is the checker's environment the program was lowered with; `file` the
/// source, where the error for a file without kernels points (E0806).
pub fn library(program: &Program, env: &Env, file: FileId) -> Result<Library, Vec<Diagnostic>> {
    let kernels: Vec<FnId> =
        (0..program.functions.len()).filter(|&i| matches!(program.functions[i].kind, FnKind::Kernel { .. })).collect();
    if kernels.is_empty() {
        let d = Diagnostic::error(
            codes::NOTHING_TO_EMIT,
            "nothing to emit: the file has no kernel",
            Span::new(file, 0, 0),
            "a kernel library (a file without `main`, or `--lib`) needs a kernel",
        )
        .with_note(
            "a kernel is a function run by a grid, `fn k(…) -[grid: gpu.grid<X<4>, X<256>>]-> ()`; \
             add one, or add `fn main() -[t: cpu.thread]-> ()` to make the file a program",
        );
        return Err(vec![d]);
    }
    // Keep the kernels and every function they call, in their original order.
    let mut keep = BTreeSet::new();
    let mut work = kernels.clone();
    while let Some(f) = work.pop() {
        if !keep.insert(f) {
            continue;
        }
        for s in &program.functions[f].body {
            s.visit_exprs(&mut |e| {
                if let Expr::Call { func, .. } = e {
                    work.push(*func);
                }
            });
        }
    }
    let remap: HashMap<FnId, FnId> = keep.iter().enumerate().map(|(new, old)| (*old, new)).collect();
    let mut functions = Vec::new();
    for &old in &keep {
        let mut f = program.functions[old].clone();
        for s in &mut f.body {
            remap_stmt(s, &remap);
        }
        functions.push(f);
    }
    let lib_program =
        Program { functions, entry: None, sources: program.sources.clone(), runtime_lengths: program.runtime_lengths };

    let mut errors = Vec::new();
    let mut out = Vec::new();
    for &old in &kernels {
        let f = &program.functions[old];
        let Some(sig) = env.fns.get(&f.name) else {
            errors.push(unsupported(f.span, "a kernel without a signature", "no signature"));
            continue;
        };
        if let Some((name, kind)) = sig.generics.iter().find(|(_, k)| matches!(k, Kind::Mem | Kind::DataTy)) {
            errors.push(
                unsupported(
                    sig.span,
                    format!("a kernel generic over a {} (`{name}`)", kind_word(*kind)),
                    "a C function needs concrete types and memory spaces",
                )
                .with_note(
                    "write a kernel with concrete types (it may call the generic function); \
                     generic sizes (`n: nat`) are fine: they become `uint64_t` arguments",
                ),
            );
            continue;
        }
        // The caller's parameters: shared-memory buffers (`[grid.blocks…] tmp: …`) are the
        // launch's business.
        let caller_params: Vec<_> = sig.params.iter().filter(|p| p.exec.is_none()).collect();
        let mut params = Vec::new();
        for (local, ps) in f.params.iter().zip(&caller_params) {
            let ty = &f.locals[*local].ty;
            let access = match (&ps.ty, ty) {
                (_, Ty::Scalar(s)) if *s != strata_syntax::ast::ScalarTy::Unit => Some(Access::Value),
                (cty::Ty::Ref { own, mem: cty::Mem::GpuGlobal, .. }, Ty::Ref(inner, _)) if pointee_ok(inner) => {
                    Some(if *own == Ownership::Uniq { Access::Write } else { Access::Read })
                }
                (cty::Ty::At(_, cty::Mem::GpuGlobal), Ty::Owned(inner, _)) if pointee_ok(inner) => Some(Access::Write),
                _ => None,
            };
            match access {
                Some(access) => params.push(LibParam { name: ps.name.clone(), access }),
                None => errors.push(
                    unsupported(
                        ps.span,
                        format!("the kernel parameter `{}` cannot be passed from C", ps.name),
                        "not a scalar or a reference to `gpu.global` scalars or arrays of scalars",
                    )
                    .with_note(
                        "a library kernel takes scalars by value and references to arrays in `gpu.global` \
                         memory (`&shrd gpu.global [f32; n]` becomes `const float *`, `&uniq` `float *`)",
                    ),
                ),
            }
        }
        let mut requires = Vec::new();
        for (lhs, op, rhs, span) in &sig.where_clauses {
            match (nat_iexpr(lhs, env), nat_iexpr(rhs, env)) {
                // Over constants only: a Strata launch would check it, a library has no launch in
                // Strata, so it is checked here, once.
                (Some(a), Some(b)) if !has_param(&a) && !has_param(&b) => {
                    let values = (eval_const(&a), eval_const(&b));
                    let holds = match values {
                        (Some(x), Some(y)) => compare(x, *op, y),
                        _ => false,
                    };
                    if !holds {
                        let label = match values {
                            (Some(x), Some(y)) => format!("false: it says `{x} {} {y}`", op.symbol()),
                            _ => "a size here does not fit 64 bits".to_string(),
                        };
                        errors.push(
                            Diagnostic::error(
                                codes::SIZE_NOT_PROVEN,
                                format!("the `where` clause of kernel `{}` does not hold", f.name),
                                *span,
                                label,
                            )
                            .with_note(
                                "the kernel was checked assuming it; a library has no launch in Strata that \
                                 would check it, so it must hold for the constants (change them with `-D`)",
                            ),
                        );
                    }
                }
                (Some(a), Some(b)) => requires.push((a, *op, b)),
                _ => errors.push(unsupported(
                    *span,
                    "a `where` clause with a size function",
                    "the launch function cannot check this at run time",
                )),
            }
        }
        let launch = format!("{}_launch", f.name);
        if program.functions.iter().any(|g| g.name == launch) {
            errors.push(unsupported(
                f.span,
                format!(
                    "the launch function `{launch}` of kernel `{}` would clash with the function `{launch}`",
                    f.name
                ),
                "rename one of the two",
            ));
        }
        out.push(LibKernel { func: remap[&old], params, requires });
    }
    if errors.is_empty() {
        Ok(Library { program: lib_program, kernels: out })
    } else {
        Err(errors)
    }
}

fn kind_word(k: Kind) -> &'static str {
    match k {
        Kind::Mem => "memory space",
        Kind::DataTy | Kind::Num => "data type",
        Kind::Nat => "size",
        Kind::Prv => "provenance",
    }
}

/// What a pointer argument may point to: scalars or (nested) arrays of scalars.
fn pointee_ok(t: &Ty) -> bool {
    match t {
        Ty::Scalar(s) => *s != strata_syntax::ast::ScalarTy::Unit,
        Ty::Array { elem, .. } => pointee_ok(elem),
        _ => false,
    }
}

/// A checker size (a polynomial over the size parameters) as index arithmetic; `None` for the
/// size functions (`log2(n)`), which C cannot evaluate.
fn nat_iexpr(n: &Nat, env: &Env) -> Option<IExpr> {
    let mut pos = IExpr::Const(0);
    let mut neg = IExpr::Const(0);
    for (mono, coeff) in n.terms() {
        let mut term = IExpr::Const(u64::try_from(coeff.unsigned_abs()).ok()?);
        for (atom, power) in mono.factors() {
            let a = match atom {
                Atom::Var(v) => match env.consts.get(&**v) {
                    Some(c) => IExpr::Const(*c),
                    None => IExpr::Param(v.to_string()),
                },
                Atom::Div(x, y) => IExpr::Div(Box::new(nat_iexpr(x, env)?), Box::new(nat_iexpr(y, env)?)),
                Atom::Rem(x, y) => IExpr::Rem(Box::new(nat_iexpr(x, env)?), Box::new(nat_iexpr(y, env)?)),
                Atom::Pow(x, y) => IExpr::Pow(Box::new(nat_iexpr(x, env)?), Box::new(nat_iexpr(y, env)?)),
                Atom::Call(..) => return None,
            };
            for _ in 0..power {
                term = term * a.clone();
            }
        }
        if coeff >= 0 {
            pos = pos + term;
        } else {
            neg = neg + term;
        }
    }
    Some(pos - neg)
}

fn remap_stmt(s: &mut Stmt, m: &HashMap<FnId, FnId>) {
    match s {
        Stmt::Let { init, .. } => init.iter_mut().for_each(|e| remap_expr(e, m)),
        Stmt::Store { place, value } => {
            remap_place(place, m);
            remap_expr(value, m);
        }
        Stmt::Eval(e) | Stmt::Return(Some(e)) => remap_expr(e, m),
        Stmt::For { lo, hi, body, .. } => {
            remap_iexpr(lo, m);
            remap_iexpr(hi, m);
            body.iter_mut().for_each(|s| remap_stmt(s, m));
        }
        Stmt::While { cond, body, .. } => {
            remap_expr(cond, m);
            body.iter_mut().for_each(|s| remap_stmt(s, m));
        }
        Stmt::If { cond, then, els, .. } => {
            remap_expr(cond, m);
            then.iter_mut().chain(els.iter_mut()).for_each(|s| remap_stmt(s, m));
        }
        Stmt::Threads { set, body } => {
            for (on, lo, hi) in set {
                remap_iexpr(on, m);
                remap_iexpr(lo, m);
                remap_iexpr(hi, m);
            }
            body.iter_mut().for_each(|s| remap_stmt(s, m));
        }
        Stmt::Launch { kernel, nats, grid, block, args, stream, .. } => {
            if let Some(k) = m.get(kernel) {
                *kernel = *k;
            }
            nats.iter_mut().chain(grid.iter_mut()).chain(block.iter_mut()).for_each(|n| remap_iexpr(n, m));
            args.iter_mut().chain(stream.iter_mut()).for_each(|e| remap_expr(e, m));
        }
        Stmt::Sync { .. } | Stmt::Return(None) | Stmt::Free { .. } => {}
    }
}

fn remap_expr(e: &mut Expr, m: &HashMap<FnId, FnId>) {
    match e {
        Expr::Call { func, nats, args, .. } => {
            if let Some(f) = m.get(func) {
                *func = *f;
            }
            nats.iter_mut().for_each(|n| remap_iexpr(n, m));
            args.iter_mut().for_each(|a| remap_expr(a, m));
        }
        Expr::Load(p) | Expr::Ref(p) => remap_place(p, m),
        Expr::Nat(i) => remap_iexpr(i, m),
        Expr::ArrayRepeat(x, i) => {
            remap_expr(x, m);
            remap_iexpr(i, m);
        }
        Expr::Unary(_, x) | Expr::Cast(x, _) | Expr::Checked(x, _) => remap_expr(x, m),
        Expr::Binary(_, a, b) => {
            remap_expr(a, m);
            remap_expr(b, m);
        }
        Expr::Tuple(xs) | Expr::ArrayList(xs) | Expr::Builtin(_, xs, _) => xs.iter_mut().for_each(|x| remap_expr(x, m)),
        Expr::Lit(_) => {}
    }
}

fn remap_place(p: &mut Place, m: &HashMap<FnId, FnId>) {
    for step in &mut p.path {
        if let PathStep::Elem(i) = step {
            remap_iexpr(i, m);
        }
    }
    for (i, b) in &mut p.checks {
        remap_iexpr(i, m);
        remap_iexpr(b, m);
    }
}

fn remap_iexpr(e: &mut IExpr, m: &HashMap<FnId, FnId>) {
    if let IExpr::Value(v) = e {
        remap_expr(v, m);
    } else if let Some((a, b)) = e.operands_mut() {
        remap_iexpr(a, m);
        remap_iexpr(b, m);
    }
}

/// Whether `e` mentions a size parameter (else it is a constant).
pub fn has_param(e: &IExpr) -> bool {
    match e {
        IExpr::Param(_) => true,
        IExpr::Value(_) | IExpr::Counter(_) => true,
        _ => e.operands().is_some_and(|(a, b)| has_param(a) || has_param(b)),
    }
}

/// The value of a constant size, or `None` if it is not constant, does not fit 64 bits, divides
/// by zero or goes below zero.
pub fn eval_const(e: &IExpr) -> Option<u64> {
    Some(match e {
        IExpr::Const(c) => *c,
        IExpr::Add(a, b) => eval_const(a)?.checked_add(eval_const(b)?)?,
        IExpr::Sub(a, b) => eval_const(a)?.checked_sub(eval_const(b)?)?,
        IExpr::Mul(a, b) => eval_const(a)?.checked_mul(eval_const(b)?)?,
        IExpr::Div(a, b) => eval_const(a)?.checked_div(eval_const(b)?)?,
        IExpr::Rem(a, b) => eval_const(a)?.checked_rem(eval_const(b)?)?,
        IExpr::Pow(a, b) => eval_const(a)?.checked_pow(u32::try_from(eval_const(b)?).ok()?)?,
        _ => return None,
    })
}

fn compare(a: u64, op: CmpOp, b: u64) -> bool {
    match op {
        CmpOp::Eq => a == b,
        CmpOp::Ne => a != b,
        CmpOp::Lt => a < b,
        CmpOp::Le => a <= b,
        CmpOp::Gt => a > b,
        CmpOp::Ge => a >= b,
    }
}
