//! IR to the C family: one emitter, two dialects. This module is what both share: the program's
//! layout (runtime, tuple structs, prototypes, printing helpers, functions, `main`), names,
//! host code, statements, index arithmetic, places and expressions. The dialects differ in how a
//! kernel executes the thread hierarchy and how host code launches it: [`c`] (the cpu device:
//! blocks as OpenMP loop iterations, threads as loops) and [`cuda`] (`__global__` functions).

mod atomics;
mod builtins;
mod c;
mod checked;
mod cuda;
mod deferred;
mod exprs;
mod lanes;
mod print;
mod streams;

use crate::names::Names;
use crate::range::Env;
use cuda::static_shared;
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::fmt::Write;
use strata_diag::{codes, Diagnostic, Span};
use strata_ir::ir::{
    leaf, AtomicAtOp, AtomicOp, BinOp, Builtin, DimName, Expr, FnId, FnKind, Function, IExpr, Level, Lit, LocalId,
    MathFn, PathStep, Place, Program, ScalarTy, ShuffleOp, Stmt, Ty, UnOp,
};

pub(crate) const RUNTIME: &str = include_str!("runtime.h");
/// Runtime helpers of the C dialect only (the emitted CUDA does not change with them).
const RUNTIME_CPU: &str = include_str!("runtime_cpu.h");

type E = Box<Diagnostic>;

fn unsupported(span: Span, what: impl Into<String>) -> E {
    Box::new(Diagnostic::error(
        codes::UNSUPPORTED,
        format!("not supported by the cpu device yet: {}", what.into()),
        span,
        "run it with `--device sim`",
    ))
}

pub(crate) fn scalar_c(s: ScalarTy) -> &'static str {
    match s {
        ScalarTy::Bool => "bool",
        ScalarTy::I8 => "int8_t",
        ScalarTy::U8 => "uint8_t",
        ScalarTy::I16 => "int16_t",
        ScalarTy::U16 => "uint16_t",
        ScalarTy::I32 | ScalarTy::AtomicI32 => "int32_t",
        ScalarTy::I64 | ScalarTy::AtomicI64 => "int64_t",
        ScalarTy::U32 | ScalarTy::AtomicU32 => "uint32_t",
        ScalarTy::U64 | ScalarTy::AtomicU64 => "uint64_t",
        ScalarTy::F32 | ScalarTy::AtomicF32 => "float",
        ScalarTy::F64 | ScalarTy::AtomicF64 => "double",
        ScalarTy::Unit => "int",
    }
}

/// The C type of a value of `t`: arrays are pointers to their scalars, tuples structs
/// ([`tuple_name`]).
pub(crate) fn c_type(t: &Ty, span: Span) -> Result<String, E> {
    Ok(match t {
        Ty::Scalar(s) => scalar_c(*s).to_string(),
        Ty::Nat => "uint64_t".to_string(),
        // `cudaStream_t`/`cudaEvent_t` on `cuda`, an unused id on `cpu` (runtime.h).
        Ty::Stream => "strata_stream".to_string(),
        Ty::Event => "strata_event".to_string(),
        Ty::Ref(inner, _) | Ty::Owned(inner, _) => format!("{}*", c_type(leaf(inner), span)?),
        Ty::Array { .. } => format!("{}*", c_type(leaf(t), span)?),
        Ty::Tuple(ts) => tuple_name(ts, span)?,
    })
}

/// The C struct of a tuple type, named after its fields so that equal tuple types are one C
/// type (fields `f0`, `f1`, …). A tuple holding an array by value is not supported: C arrays
/// are not values.
fn tuple_name(ts: &[Ty], span: Span) -> Result<String, E> {
    fn mangle(t: &Ty, span: Span, out: &mut String) -> Result<(), E> {
        match t {
            Ty::Scalar(s) => out.push_str(match s {
                ScalarTy::Bool => "b",
                ScalarTy::I8 => "c",
                ScalarTy::U8 => "h",
                ScalarTy::I16 => "s",
                ScalarTy::U16 => "t",
                ScalarTy::I32 | ScalarTy::AtomicI32 => "i",
                ScalarTy::I64 | ScalarTy::AtomicI64 => "l",
                ScalarTy::U32 | ScalarTy::AtomicU32 => "u",
                ScalarTy::U64 | ScalarTy::AtomicU64 => "m",
                ScalarTy::F32 | ScalarTy::AtomicF32 => "f",
                ScalarTy::F64 | ScalarTy::AtomicF64 => "d",
                ScalarTy::Unit => "v",
            }),
            Ty::Nat => out.push('n'),
            Ty::Stream => out.push('q'),
            Ty::Event => out.push('k'),
            Ty::Ref(inner, _) | Ty::Owned(inner, _) => {
                out.push('p');
                mangle(leaf(inner), span, out)?;
            }
            Ty::Tuple(ts) => {
                out.push('T');
                for t in ts {
                    mangle(t, span, out)?;
                }
                out.push('E');
            }
            // An array of a constant length held by value (a C array member: CUDA-C's
            // `float v[3];` in a struct).
            Ty::Array { elem, len: IExpr::Const(n) } => {
                write!(out, "A{n}").ok();
                mangle(elem, span, out)?;
                out.push('E');
            }
            Ty::Array { .. } => return Err(unsupported(span, "a tuple holding an array")),
        }
        Ok(())
    }
    let mut name = String::from("strata_tuple_");
    mangle(&Ty::Tuple(ts.to_vec()), span, &mut name)?;
    Ok(name)
}

/// The tuple types in `t`, innermost first.
fn tuples_in(t: &Ty, out: &mut Vec<Vec<Ty>>) {
    match t {
        Ty::Tuple(ts) => {
            ts.iter().for_each(|x| tuples_in(x, out));
            if !out.contains(ts) {
                out.push(ts.clone());
            }
        }
        Ty::Ref(x, _) | Ty::Owned(x, _) | Ty::Array { elem: x, .. } => tuples_in(x, out),
        _ => {}
    }
}

pub(crate) struct Emitter<'p> {
    p: &'p Program,
    out: String,
    labels: usize,
    /// Emit CUDA C++ (kernels as `__global__` functions) instead of C for the cpu device.
    cuda: bool,
    /// Emit index arithmetic in signed 32 bits where [`Env::range`] proves it fits.
    narrow: bool,
    /// The C name of each function ([`crate::names`]).
    fn_names: Vec<String>,
    /// The C names of each function's locals and size parameters.
    local_names: Vec<FnNames>,
    /// For each kernel whose shared memory is dynamic ([`static_shared`] is false) on CUDA: the
    /// host function that computes its size in bytes from the size parameters.
    smem_fns: Vec<Option<String>>,
    /// The pointer parameters of each function that are `const` ([`const_params`]).
    const_params: Vec<HashSet<LocalId>>,
    /// Printing helpers made on demand (name, definition), in the order they were first needed.
    helpers: RefCell<Vec<(String, String)>>,
    /// The run-time indices of the places being emitted, innermost last ([`checked`]).
    checked: RefCell<Vec<checked::CheckedIndex>>,
    /// The overflow check deferred to the end of the thread loop being emitted ([`deferred`]).
    deferred: RefCell<Option<deferred::Deferred>>,
    /// Emit Strata's integer arithmetic checked for overflow ([`Expr::Checked`]); off only with
    /// `STRATA_ARITH_CHECKS=0` in the environment (to measure what the checks cost).
    arith_checks: bool,
    /// Emitting a CUDA kernel of an ordered grid: its block coordinates are `obid_`, the block
    /// number it took when it started, not `blockIdx` ([`Emitter::cuda_kernel_body`]).
    ordered_cuda: bool,
    /// Overflow checks of thread loops may be deferred to the loop's end ([`deferred`]);
    /// `STRATA_DEFER_CHECKS=0` keeps every check in place (to measure what deferring changes).
    defer_checks: bool,
}

/// The C names of one function's locals (by id) and size parameters (by Strata name).
#[derive(Clone, Debug, Default)]
struct FnNames {
    locals: Vec<String>,
    nats: HashMap<String, String>,
}

/// Per-function context.
struct Cx<'f> {
    f: &'f Function,
    /// The C names of `f`'s locals and size parameters.
    names: FnNames,
    kernel: bool,
    /// Inside a thread loop (`tid_`, `tx_`… are in scope).
    in_threads: bool,
    /// Locals stored per thread (`x_pt_[tid_]`).
    per_thread: HashSet<LocalId>,
    /// Counters of loops hoisted to block level: scalar even though declared in thread code.
    hoisted: HashSet<LocalId>,
    /// Label that ends the current thread's iteration (for `return` in thread code).
    next_thread: Option<String>,
    /// Label that ends the current block's iteration of a kernel on the cpu device (for `return`
    /// in block-level code: the block is done, the OS thread goes on with its next block).
    block_end: Option<String>,
    /// The innermost statement with a span: where run-time errors of expressions are reported.
    span: Span,
    /// The kernel has a `return` in thread code: threads that returned are marked in `done_[]`.
    returns: bool,
    /// Bounds of the coordinates and of the counters in scope, for narrowing index arithmetic.
    env: Env,
    /// Counters declared `int32_t` (the others are `uint64_t`).
    narrow32: HashSet<LocalId>,
    /// Host code: the array locals of each enclosing C block, allocated on the heap (a length
    /// from data may not fit the stack) and freed at the block's end.
    heap_arrays: Vec<Vec<String>>,
    /// Every scalar or pointer local is declared once, at the top of its function (or of its
    /// thread loop), and each `let` of it is an assignment: the CUDA-C front end binds a local
    /// with `let` again wherever C assigns it (`p += i`, a flag set in both branches), which a
    /// C declaration there would shadow. Set for [`Program::runtime_lengths`] programs.
    predeclared: bool,
    /// The values of a kernel that are the same in every thread of a block.
    uniform: strata_ir::uniform::Uniformity,
    /// Within control flow around warp barriers that the cpu device runs one warp at a time: the
    /// C name of the warp's number in its block (thread loops cover that warp's threads only).
    warp: Option<String>,
    /// The cpu device's threads as SIMD lanes ([`lanes`]): counters of thread-level loops run at
    /// block level around thread loops, and of loops considered and kept inside them, each with
    /// the comment that says why.
    lanes: HashMap<LocalId, String>,
    kept: HashMap<LocalId, String>,
    /// Thread loops are emitted with `#pragma omp simd` (inside a region split at such loops).
    simd: bool,
    /// A run-time check was emitted in a kernel with interchanged loops (it is emitted again
    /// without them, so that the first failure is the one `sim` reports).
    lane_checks: bool,
    /// Within the outermost interchanged loop of a region tiled by rows of threads: the C name
    /// of the first row of the tile (thread loops cover [`LANE_TILE`] rows from it).
    lane_tile: Option<String>,
}

/// The C names of every function and local of `p` ([`crate::names`]), and of the shared-memory
/// size helpers of kernels with dynamic shared memory (on CUDA).
fn assign_names(p: &Program, cuda: bool) -> (Vec<String>, Vec<FnNames>, Vec<Option<String>>) {
    let mut globals = Names::default();
    // The entry point is C's `main`, which calls the Strata `main` under the runtime's name.
    globals.reserve("strata_main");
    let fn_names: Vec<String> = p
        .functions
        .iter()
        .enumerate()
        .map(|(i, f)| if Some(i) == p.entry { "strata_main".to_string() } else { globals.take(&f.name, true) })
        .collect();
    let smem_fns: Vec<Option<String>> = p
        .functions
        .iter()
        .zip(&fn_names)
        .map(|(f, name)| {
            (cuda && matches!(f.kind, FnKind::Kernel { .. }) && !static_shared(f))
                .then(|| globals.take(&format!("{name}_smem_bytes"), true))
        })
        .collect();
    let mut locals = Vec::new();
    for f in &p.functions {
        let mut names = globals.clone();
        let nats = f.nat_params.iter().map(|n| (n.clone(), names.take(n, false))).collect();
        let mut by_id: Vec<Option<String>> = vec![None; f.locals.len()];
        for &l in &f.params {
            if let Some(slot) = by_id.get_mut(l) {
                *slot = Some(names.take(&f.locals[l].name, false));
            }
        }
        let locals_named =
            f.locals.iter().zip(by_id).map(|(l, given)| given.unwrap_or_else(|| names.take(&l.name, false))).collect();
        locals.push(FnNames { locals: locals_named, nats });
    }
    (fn_names, locals, smem_fns)
}

/// The pointer parameters of each function that can be `const`: `&shrd` references to memory
/// without atomics (`Function::shrd_params`) that the body only reads elements through, or passes
/// on to a parameter of a called function that is `const` itself. (A `&shrd` parameter the body
/// copies into a local or takes a reference of stays non-const: the IR does not say whether that
/// local is shared, so a `const` pointer could not be stored in it.)
fn const_params(p: &Program) -> Vec<HashSet<LocalId>> {
    let mut out: Vec<HashSet<LocalId>> = p
        .functions
        .iter()
        .map(|f| {
            f.shrd_params
                .iter()
                .copied()
                .filter(|l| matches!(f.locals.get(*l).map(|x| &x.ty), Some(Ty::Ref(inner, _)) if !has_atomics(inner)))
                .collect()
        })
        .collect();
    // Remove parameters whose uses do not allow `const` until nothing changes (a parameter passed
    // on depends on the callee's).
    loop {
        let mut changed = false;
        for (i, f) in p.functions.iter().enumerate() {
            let candidates: Vec<LocalId> = out[i].iter().copied().collect();
            for l in candidates {
                if !only_read(p, f, l, &out) {
                    out[i].remove(&l);
                    changed = true;
                }
            }
        }
        if !changed {
            return out;
        }
    }
}

fn has_atomics(t: &Ty) -> bool {
    match t {
        Ty::Scalar(s) => s.is_atomic(),
        Ty::Array { elem, .. } => has_atomics(elem),
        Ty::Tuple(ts) => ts.iter().any(has_atomics),
        Ty::Ref(x, _) | Ty::Owned(x, _) => has_atomics(x),
        Ty::Nat | Ty::Stream | Ty::Event => false,
    }
}

/// Whether `f` uses its parameter `l` only to read scalars through it, or as the argument of a
/// parameter of a called function that is `const` itself (`consts`).
fn only_read(p: &Program, f: &Function, l: LocalId, consts: &[HashSet<LocalId>]) -> bool {
    let u = Uses { p, f, l, consts };
    f.body.iter().all(|s| u.stmt(s))
}

/// The walk of [`only_read`].
struct Uses<'a> {
    p: &'a Program,
    f: &'a Function,
    l: LocalId,
    consts: &'a [HashSet<LocalId>],
}

impl Uses<'_> {
    fn scalar(&self, p: &Place) -> bool {
        matches!(self.f.place_ty(p), Ty::Scalar(_) | Ty::Nat)
    }

    /// The indices of a place (which may read `l` themselves).
    fn indices(&self, p: &Place) -> bool {
        p.path.iter().all(|step| !matches!(step, PathStep::Elem(i) if !self.iexpr(i)))
            && p.checks.iter().all(|(i, b)| self.iexpr(i) && self.iexpr(b))
    }

    fn iexpr(&self, i: &IExpr) -> bool {
        match i {
            IExpr::Value(v) => self.expr(v),
            IExpr::Counter(c) => *c != self.l,
            other => other.operands().is_none_or(|(a, b)| self.iexpr(a) && self.iexpr(b)),
        }
    }

    fn expr(&self, e: &Expr) -> bool {
        let l = self.l;
        match e {
            // A scalar read through `*l`.
            Expr::Load(p) if p.root == l => {
                matches!(p.path.first(), Some(PathStep::Deref)) && self.scalar(p) && self.indices(p)
            }
            Expr::Ref(p) if p.root == l => false,
            Expr::Call { func, args, .. } => args.iter().enumerate().all(|(k, a)| match a {
                // `l` itself (or a part of what it refers to) passed on: the callee's parameter
                // must be `const` too.
                Expr::Load(q) | Expr::Ref(q) if q.root == l && !self.scalar(q) => {
                    let param = self.p.functions.get(*func).and_then(|c| c.params.get(k));
                    param.is_some_and(|q| self.consts[*func].contains(q)) && self.indices(q)
                }
                other => self.expr(other),
            }),
            Expr::Load(p) | Expr::Ref(p) => self.indices(p),
            Expr::Lit(_) => true,
            Expr::Nat(i) => self.iexpr(i),
            Expr::Unary(_, x) | Expr::Cast(x, _) | Expr::Checked(x, _) => self.expr(x),
            Expr::ArrayRepeat(x, n) => self.expr(x) && self.iexpr(n),
            Expr::Binary(_, a, b) => self.expr(a) && self.expr(b),
            Expr::Tuple(xs) | Expr::ArrayList(xs) | Expr::Builtin(_, xs, _) => xs.iter().all(|x| self.expr(x)),
        }
    }

    fn stmt(&self, s: &Stmt) -> bool {
        let l = self.l;
        let all = |body: &[Stmt]| body.iter().all(|x| self.stmt(x));
        match s {
            Stmt::Store { place, value } => place.root != l && self.indices(place) && self.expr(value),
            Stmt::Let { local, init, .. } => *local != l && init.as_ref().is_none_or(|e| self.expr(e)),
            Stmt::Eval(e) | Stmt::Return(Some(e)) => self.expr(e),
            Stmt::For { counter, lo, hi, body, .. } => *counter != l && self.iexpr(lo) && self.iexpr(hi) && all(body),
            Stmt::While { cond, body, .. } => self.expr(cond) && all(body),
            Stmt::If { cond, then, els, .. } => self.expr(cond) && all(then) && all(els),
            Stmt::Threads { set, body } => {
                set.iter().all(|(a, b, c)| self.iexpr(a) && self.iexpr(b) && self.iexpr(c)) && all(body)
            }
            Stmt::Launch { args, .. } => args.iter().all(|a| self.expr(a)),
            Stmt::Free { local, .. } => *local != l,
            Stmt::Sync { .. } | Stmt::Return(None) => true,
        }
    }
}

impl<'p> Emitter<'p> {
    pub(crate) fn new(p: &'p Program) -> Self {
        Self::with_dialect(p, false)
    }

    /// An emitter of CUDA C++: the same host code, kernels for a real GPU.
    pub(crate) fn new_cuda(p: &'p Program) -> Self {
        Self::with_dialect(p, true)
    }

    fn with_dialect(p: &'p Program, cuda: bool) -> Self {
        let (fn_names, local_names, smem_fns) = assign_names(p, cuda);
        Emitter {
            p,
            out: String::new(),
            labels: 0,
            cuda,
            narrow: cuda,
            fn_names,
            local_names,
            smem_fns,
            const_params: const_params(p),
            helpers: RefCell::new(Vec::new()),
            checked: RefCell::new(Vec::new()),
            deferred: RefCell::new(None),
            arith_checks: std::env::var_os("STRATA_ARITH_CHECKS").is_none_or(|v| v != "0"),
            ordered_cuda: false,
            defer_checks: std::env::var_os("STRATA_DEFER_CHECKS").is_none_or(|v| v != "0"),
        }
    }

    /// Sets whether index arithmetic is narrowed to 32 bits where provable. On by default for
    /// CUDA only: in C (built with `-fwrapv`, so signed overflow wraps and gives the compiler no
    /// licence) it measured up to 20% slower on the cpu device (scan, histogram).
    pub(crate) fn narrow_indices(mut self, on: bool) -> Self {
        self.narrow = on;
        self
    }

    /// `STRATA_AT(line, col, lo, hi)`: where `span` starts in the program's main source file (line
    /// 0 where unknown) and its byte range, for a run-time error reported there (see runtime.h).
    fn at(&self, span: Span) -> String {
        let main = self.p.sources.first().map(|f| f.file);
        let (line, col) = match self.p.position(span) {
            Some((_, line, col)) if Some(span.file) == main => (line, col),
            _ => (0, 0),
        };
        format!("STRATA_AT({line}, {col}, {}, {})", span.lo, span.hi)
    }

    fn cx<'f>(&self, i: usize, f: &'f Function) -> Cx<'f> {
        Cx {
            f,
            names: self.local_names[i].clone(),
            kernel: matches!(f.kind, FnKind::Kernel { .. }),
            in_threads: matches!(f.kind, FnKind::Device),
            per_thread: HashSet::new(),
            hoisted: HashSet::new(),
            next_thread: None,
            block_end: None,
            span: Span::DUMMY,
            returns: false,
            env: Env::for_function(f, self.cuda),
            narrow32: HashSet::new(),
            heap_arrays: Vec::new(),
            predeclared: self.p.runtime_lengths,
            uniform: Default::default(),
            warp: None,
            lanes: HashMap::new(),
            kept: HashMap::new(),
            simd: false,
            lane_checks: false,
            lane_tile: None,
        }
    }

    pub(crate) fn emit(mut self) -> Result<String, E> {
        let source = self.p.sources.first().map_or("<unknown>", |f| f.name.as_str());
        writeln!(self.out, "/* Generated by `strata` from {}. */", comment_text(source)).ok();
        writeln!(self.out, "#define STRATA_SOURCE {}", c_string(source)).ok();
        if self.cuda {
            self.out.push_str("#define STRATA_CUDA 1\n#include <cuda_runtime.h>\n");
        }
        self.out.push_str(RUNTIME);
        if !self.cuda {
            self.out.push_str(RUNTIME_CPU);
        }
        self.out.push('\n');
        // Tuples are C structs, declared before everything that uses them.
        let mut tuples = Vec::new();
        for f in &self.p.functions {
            f.locals.iter().for_each(|l| tuples_in(&l.ty, &mut tuples));
            tuples_in(&f.ret, &mut tuples);
        }
        // One C struct per C type (tuples that differ only in memory spaces are one).
        let mut declared = HashSet::new();
        for ts in &tuples {
            let name = tuple_name(ts, Span::DUMMY)?;
            if !declared.insert(name.clone()) {
                continue;
            }
            let mut fields = String::new();
            for (i, t) in ts.iter().enumerate() {
                match t {
                    Ty::Array { len: IExpr::Const(n), .. } => {
                        let n = (*n).max(1);
                        write!(fields, " {} f{i}[{n}];", c_type(leaf(t), Span::DUMMY)?).ok()
                    }
                    _ => write!(fields, " {} f{i};", c_type(t, Span::DUMMY)?).ok(),
                };
            }
            writeln!(self.out, "typedef struct {{{fields} }} {name};").ok();
        }
        // CUDA C++ warns about unused internal functions; C needs them internal.
        let linkage = if self.cuda { "" } else { "static " };
        for (i, f) in self.p.functions.iter().enumerate() {
            let sig = self.signature(i, f)?;
            writeln!(self.out, "{linkage}{sig};").ok();
        }
        for (i, f) in self.p.functions.iter().enumerate() {
            self.smem_size_function(i, f)?;
        }
        // The functions go after the printing helpers they need, which are made while they are.
        let head = std::mem::take(&mut self.out);
        for (i, f) in self.p.functions.iter().enumerate() {
            self.function(i, f)?;
        }
        let body = std::mem::replace(&mut self.out, head);
        for (_, def) in self.helpers.borrow().iter() {
            self.out.push_str(def);
        }
        self.out.push_str(&body);
        // Without `main` this is a kernel library: `library.rs` adds the launch functions (and
        // `emit_c`/`emit_cuda` refuse programs without `main` before they get here).
        let Some(entry) = self.p.entry else { return Ok(self.out) };
        // The program's arguments are those after the executable's name (`arg_u64`, `load_npy`).
        writeln!(
            self.out,
            "int main(int argc, char **argv) {{\n    strata_argc = argc > 0 ? argc - 1 : 0;\n    strata_argv = argv + (argc > 0);\n    {}();",
            self.fn_names[entry]
        )
        .ok();
        if self.cuda {
            // Launches do not wait for their kernels: a kernel that failed after the last CUDA
            // call that waited is reported here, at the end of `main`.
            let at = self.at(self.p.functions[entry].span);
            writeln!(self.out, "    strata_cuda_check(cudaDeviceSynchronize(), {at});").ok();
        }
        writeln!(self.out, "    fflush(stdout);\n    return 0;\n}}").ok();
        Ok(self.out)
    }

    /// The C name of function `i` (what `library.rs` calls a kernel by).
    pub(crate) fn c_name(&self, i: usize) -> String {
        self.fn_names[i].clone()
    }

    /// The host function computing the dynamic shared memory of kernel `i` in bytes from its size
    /// parameters, if the kernel has dynamic shared memory on CUDA (see `emit/cuda.rs`).
    pub(crate) fn smem_fn(&self, i: usize) -> Option<&str> {
        self.smem_fns[i].as_deref()
    }

    fn signature(&self, i: usize, f: &Function) -> Result<String, E> {
        let names = &self.local_names[i];
        let mut params: Vec<String> = f.nat_params.iter().map(|n| format!("uint64_t {}", nat_name(names, n))).collect();
        let kernel_cuda = self.cuda && matches!(f.kind, FnKind::Kernel { .. });
        for l in &f.params {
            let t = &f.locals[*l].ty;
            let pointer = matches!(t, Ty::Ref(..) | Ty::Owned(..) | Ty::Array { .. });
            // `const`: a `&shrd` parameter the function only reads through ([`const_params`]).
            let konst = if pointer && self.const_params[i].contains(l) { "const " } else { "" };
            // `__restrict__` tells nvcc that memory written through one kernel parameter is
            // reached through no other, so it may use read-only loads and reorder loads across
            // stores. The checker guarantees it at every launch (`check_argument_aliasing`): a
            // `&uniq` argument overlaps no other argument, and `&shrd` arguments are only read, so
            // two that overlap are still never written. Except `&shrd` references to atomics: they
            // are written (atomically) and may overlap one another, so they get no `__restrict__`.
            let shared_atomics = f.shrd_params.contains(l) && has_atomics(t);
            let restrict = if kernel_cuda && pointer && !shared_atomics { " __restrict__" } else { "" };
            params.push(format!("{konst}{}{restrict} {}", c_type(t, f.span)?, names.locals[*l]));
        }
        let ret = if matches!(f.kind, FnKind::Kernel { .. }) && self.cuda {
            "__global__ void".to_string()
        } else if matches!(f.kind, FnKind::Kernel { .. }) {
            for d in ["GX_", "GY_", "GZ_", "BX_", "BY_", "BZ_"] {
                params.push(format!("uint64_t {d}"));
            }
            "void".to_string()
        } else if matches!(f.kind, FnKind::Device) && self.cuda {
            let r = match &f.ret {
                Ty::Scalar(ScalarTy::Unit) => "void".to_string(),
                t => c_type(t, f.span)?,
            };
            format!("__device__ {r}")
        } else {
            match &f.ret {
                Ty::Scalar(ScalarTy::Unit) => "void".to_string(),
                t => c_type(t, f.span)?,
            }
        };
        if params.is_empty() {
            params.push("void".into());
        }
        Ok(format!("{ret} {}({})", self.fn_names[i], params.join(", ")))
    }

    fn function(&mut self, i: usize, f: &Function) -> Result<(), E> {
        let sig = self.signature(i, f)?;
        let kernel = matches!(f.kind, FnKind::Kernel { .. });
        if matches!(f.kind, FnKind::Device) && f.locals.iter().any(|l| l.level == Level::Block) {
            return Err(unsupported(f.span, "functions executed by a block"));
        }
        let mut cx = self.cx(i, f);
        let linkage = if self.cuda { "" } else { "static " };
        self.ordered_cuda = self.cuda && matches!(f.kind, FnKind::Kernel { ordered: true, .. });
        if self.ordered_cuda {
            // The counter an ordered grid's blocks take their numbers from (every launch takes
            // exactly one number per block, so the number modulo the grid's size is the block).
            writeln!(self.out, "__device__ unsigned long long strata_ticket_{} = 0;", self.fn_names[i]).ok();
        }
        writeln!(self.out, "{linkage}{sig} {{").ok();
        if kernel && self.cuda {
            self.cuda_kernel_body(&mut cx, i, f)?;
        } else if kernel {
            self.cpu_kernel(&mut cx, f)?;
        } else {
            if cx.predeclared {
                let locals: Vec<LocalId> = (0..f.locals.len()).filter(|l| !f.params.contains(l)).collect();
                self.declare_locals(&cx, &locals, "    ")?;
            }
            self.stmts(&mut cx, &f.body, 1)?;
        }
        writeln!(self.out, "}}\n").ok();
        Ok(())
    }

    /// `T name;` for each of `locals` that [`predeclared`] says is declared up front.
    fn declare_locals(&mut self, cx: &Cx, locals: &[LocalId], pad: &str) -> Result<(), E> {
        for &l in locals {
            if predeclared(cx, l) && !cx.per_thread.contains(&l) {
                let t = c_type(&cx.f.locals[l].ty, cx.f.span)?;
                writeln!(self.out, "{pad}{t} {};", cx.names.locals[l]).ok();
            }
        }
        Ok(())
    }

    // --------------------------------------------------------------------------------------------
    // Statements

    fn stmts(&mut self, cx: &mut Cx, body: &[Stmt], ind: usize) -> Result<(), E> {
        let host = matches!(cx.f.kind, FnKind::Host);
        if host {
            cx.heap_arrays.push(Vec::new());
        }
        for s in body {
            self.stmt(cx, s, ind)?;
        }
        if host {
            let pad = "    ".repeat(ind);
            for name in cx.heap_arrays.pop().unwrap_or_default().iter().rev() {
                writeln!(self.out, "{pad}free({name});").ok();
            }
        }
        Ok(())
    }

    fn stmt(&mut self, cx: &mut Cx, s: &Stmt, ind: usize) -> Result<(), E> {
        let outer = cx.span;
        if s.span() != Span::DUMMY {
            cx.span = s.span();
        }
        let r = self.stmt_inner(cx, s, ind);
        cx.span = outer;
        r
    }

    fn stmt_inner(&mut self, cx: &mut Cx, s: &Stmt, ind: usize) -> Result<(), E> {
        let pad = "    ".repeat(ind);
        match s {
            Stmt::Let { local, init, .. } => {
                let l = &cx.f.locals[*local];
                let name = self.local(cx, *local);
                let declare = !cx.per_thread.contains(local) && !predeclared(cx, *local);
                match (&l.ty, init) {
                    (Ty::Owned(inner, _), Some(Expr::Builtin(Builtin::HeapNew, args, span))) => {
                        let t = c_type(leaf(inner), *span)?;
                        let decl = if declare { format!("{t} *") } else { String::new() };
                        let at = self.at(*span);
                        // Without static lengths the value says how long the allocation is.
                        let (len, alloc) = match args.first() {
                            Some(a) if self.p.runtime_lengths => (self.value_len(cx, a)?, "strata_rt_alloc"),
                            _ => (self.flat_len(cx, inner)?, "strata_alloc"),
                        };
                        writeln!(self.out, "{pad}{decl}{name} = ({t} *){alloc}({len}, sizeof({t}), {at});").ok();
                        if let Some(a) = args.first() {
                            self.assign_array(cx, &name, inner, a, ind)?;
                        }
                    }
                    // GPU memory of the cpu device is host memory: a new allocation, registered
                    // with its length (of the value, or of what the source pointer has left).
                    (Ty::Owned(inner, _), Some(Expr::Builtin(Builtin::GlobalAllocCopy, args, span)))
                        if self.p.runtime_lengths && !self.cuda =>
                    {
                        let t = c_type(leaf(inner), *span)?;
                        let decl = if declare { format!("{t} *") } else { String::new() };
                        let at = self.at(*span);
                        match args.first() {
                            Some(Expr::Builtin(Builtin::HeapNew, value, _)) if !value.is_empty() => {
                                let len = self.value_len(cx, &value[0])?;
                                writeln!(
                                    self.out,
                                    "{pad}{decl}{name} = ({t} *)strata_rt_alloc({len}, sizeof({t}), {at});"
                                )
                                .ok();
                                self.assign_array(cx, &name, inner, &value[0], ind)?;
                            }
                            Some(a) => {
                                let v = self.expr(cx, a)?;
                                writeln!(
                                    self.out,
                                    "{pad}{decl}{name} = ({t} *)strata_rt_alloc_copy({v}, sizeof({t}), {at});"
                                )
                                .ok();
                            }
                            None => return Err(unsupported(*span, "an allocation without a value")),
                        }
                    }
                    (ty @ Ty::Array { .. }, init) if matches!(cx.f.kind, FnKind::Host) => {
                        // A local array of host code: on the heap, whatever its length.
                        let (t, len) = (c_type(leaf(ty), cx.f.span)?, self.flat_len(cx, ty)?);
                        let at = self.at(cx.span);
                        writeln!(self.out, "{pad}{t} *{name} = ({t} *)strata_alloc({len}, sizeof({t}), {at});").ok();
                        if let Some(frees) = cx.heap_arrays.last_mut() {
                            frees.push(name.clone());
                        }
                        if let Some(e) = init {
                            self.assign_array(cx, &name, ty, e, ind)?;
                        }
                    }
                    (Ty::Array { len, .. }, _) if self.cuda && !matches!(len, IExpr::Const(_)) => {
                        return Err(Box::new(Diagnostic::error(
                            codes::UNSUPPORTED,
                            "not supported by the cuda target: an array in GPU-local memory whose length is not a constant",
                            cx.span,
                            "CUDA has no variable-length arrays: use a constant length, or shared or global memory (the cpu device and sim run it)",
                        )));
                    }
                    (ty @ Ty::Array { .. }, init) => {
                        // A local array (per thread in kernels): a C array, filled from its value.
                        if declare {
                            let (t, len) = (c_type(leaf(ty), cx.f.span)?, self.flat_len(cx, ty)?);
                            writeln!(self.out, "{pad}{t} {name}[{len}];").ok();
                        }
                        if let Some(e) = init {
                            self.assign_array(cx, &name, ty, e, ind)?;
                        }
                    }
                    (ty, Some(e)) => {
                        let v = self.typed_expr(cx, e, ty)?;
                        let decl = if declare { format!("{} ", c_type(ty, cx.f.span)?) } else { String::new() };
                        writeln!(self.out, "{pad}{decl}{name} = {v};").ok();
                    }
                    (ty, None) => {
                        if declare {
                            writeln!(self.out, "{pad}{} {name};", c_type(ty, cx.f.span)?).ok();
                        }
                    }
                }
            }
            Stmt::Store { place, value } if matches!(self.place_ty(cx, place), Ty::Array { .. }) => {
                let ty = self.place_ty(cx, place);
                let lv = self.place(cx, place)?;
                self.assign_array(cx, &lv, &ty, value, ind)?;
            }
            Stmt::Store { place, value } => {
                let ty = self.place_ty(cx, place);
                let lv = self.place(cx, place)?;
                let v = self.typed_expr(cx, value, &ty)?;
                writeln!(self.out, "{pad}{lv} = {v};").ok();
            }
            Stmt::Eval(e) => {
                let v = self.expr(cx, e)?;
                writeln!(self.out, "{pad}(void)({v});").ok();
            }
            Stmt::For { counter, lo, hi, body, exit, span } => {
                // A per-thread counter lives in a `uint64_t` array: its loop stays 64-bit.
                let declare = !cx.per_thread.contains(counter) && !predeclared(cx, *counter);
                let (t, lo, hi) = self.loop_head(cx, *counter, lo, hi, declare)?;
                let c = self.local(cx, *counter);
                let decl = if declare { format!("{t} ") } else { String::new() };
                // A loop left by `break` stops at its flag (its later iterations would do nothing).
                let stop = match exit {
                    Some(flag) => format!(" && !{}", self.expr(cx, &Expr::Load(Place::local(*flag, *span)))?),
                    None => String::new(),
                };
                writeln!(self.out, "{pad}for ({decl}{c} = {lo}; {c} < {hi}{stop}; {c}++) {{").ok();
                self.stmts(cx, body, ind + 1)?;
                cx.env.counters.remove(counter);
                writeln!(self.out, "{pad}}}").ok();
            }
            Stmt::While { cond, body, .. } => {
                let c = self.expr(cx, cond)?;
                writeln!(self.out, "{pad}while ({c}) {{").ok();
                self.stmts(cx, body, ind + 1)?;
                writeln!(self.out, "{pad}}}").ok();
            }
            Stmt::If { cond, then, els, .. } => {
                let c = self.expr(cx, cond)?;
                writeln!(self.out, "{pad}if ({c}) {{").ok();
                self.stmts(cx, then, ind + 1)?;
                writeln!(self.out, "{pad}}} else {{").ok();
                self.stmts(cx, els, ind + 1)?;
                writeln!(self.out, "{pad}}}").ok();
            }
            // A region of the whole block (a block-level statement about per-thread copies of a
            // variable): its declarations are visible to the code after it.
            Stmt::Threads { set, body } if self.cuda && set.is_empty() => self.stmts(cx, body, ind)?,
            Stmt::Threads { set, body } if self.cuda => {
                // On a GPU every thread runs the kernel: a region is the threads of its set.
                let mut conds = Vec::new();
                for (on, lo, hi) in set {
                    let zero = *lo == IExpr::Const(0);
                    // Stays 64-bit: measured, 32-bit conditions cost scan 2 registers (ptxas
                    // folds the 64-bit compare of a 32-bit `threadIdx` itself).
                    let (on, lo, hi) = (self.iexpr(cx, on)?, self.iexpr(cx, lo)?, self.iexpr(cx, hi)?);
                    if zero {
                        conds.push(format!("({on}) < ({hi})"));
                    } else {
                        conds.push(format!("({on}) >= ({lo}) && ({on}) < ({hi})"));
                    }
                }
                let cond = if conds.is_empty() { "1".to_string() } else { conds.join(" && ") };
                writeln!(self.out, "{pad}if ({cond}) {{").ok();
                self.stmts(cx, body, ind + 1)?;
                writeln!(self.out, "{pad}}}").ok();
            }
            Stmt::Sync { warp, .. } if self.cuda => {
                let b = if *warp { "__syncwarp()" } else { "__syncthreads()" };
                writeln!(self.out, "{pad}{b};").ok();
            }
            Stmt::Launch { kernel, nats, grid, block, args, stream, span } if self.cuda => {
                self.cuda_launch(cx, *kernel, (nats, grid, block, stream.as_ref()), args, *span, ind)?
            }
            Stmt::Threads { set, body } => {
                if cx.in_threads || !cx.kernel {
                    return Err(unsupported(cx.f.span, "nested thread regions"));
                }
                self.region(cx, set, body, ind)?;
            }
            Stmt::Sync { span, .. } => {
                if cx.in_threads {
                    return Err(unsupported(
                        *span,
                        "a barrier under control flow that depends on the thread (only `unsafe` code can say this)",
                    ));
                }
            }
            Stmt::Free { local, gpu, span } => {
                let name = self.local(cx, *local);
                if self.p.runtime_lengths && !self.cuda {
                    writeln!(self.out, "{pad}strata_rt_free({name}, {});", self.at(*span)).ok();
                } else if self.cuda && *gpu {
                    writeln!(self.out, "{pad}strata_cuda_check(cudaFree({name}), {});", self.at(*span)).ok();
                } else {
                    writeln!(self.out, "{pad}free({name});").ok();
                }
            }
            Stmt::Launch { kernel, nats, grid, block, args, .. } => {
                self.c_launch(cx, *kernel, (nats, grid, block), args, ind)?
            }
            Stmt::Return(v) => match (&cx.next_thread, v) {
                (Some(label), _) => {
                    writeln!(self.out, "{pad}done_[tid_] = 1; nreturned_++; goto {label};").ok();
                }
                // Block-level code of a kernel: the block ends, not the OS thread's other blocks.
                (None, _) if cx.block_end.is_some() => {
                    writeln!(self.out, "{pad}goto {};", cx.block_end.as_deref().unwrap_or_default()).ok();
                }
                (None, Some(e)) => {
                    let v = self.typed_expr(cx, e, &cx.f.ret)?;
                    writeln!(self.out, "{pad}return {v};").ok();
                }
                (None, None) => {
                    writeln!(self.out, "{pad}return;").ok();
                }
            },
        }
        Ok(())
    }

    /// Fills `target[fill++]` with the scalars of an array literal.
    /// `target = e` for an array `target` of type `ty`: element by element from an array value,
    /// or a copy of another array.
    fn assign_array(&mut self, cx: &Cx, target: &str, ty: &Ty, e: &Expr, ind: usize) -> Result<(), E> {
        let pad = "    ".repeat(ind);
        // An empty array value fills nothing: no code (nvcc warns about an unused counter).
        fn empty(e: &Expr) -> bool {
            match e {
                Expr::ArrayRepeat(_, IExpr::Const(0)) => true,
                Expr::ArrayRepeat(x, _) => empty(x),
                Expr::ArrayList(xs) => xs.iter().all(empty),
                _ => false,
            }
        }
        match e {
            Expr::ArrayRepeat(..) | Expr::ArrayList(_) if empty(e) => {}
            Expr::ArrayRepeat(..) | Expr::ArrayList(_) => {
                writeln!(self.out, "{pad}{{").ok();
                writeln!(self.out, "{pad}    uint64_t fill_ = 0;").ok();
                self.fill(cx, target, e, ind + 1, leaf(ty))?;
                writeln!(self.out, "{pad}    (void)fill_;").ok();
                writeln!(self.out, "{pad}}}").ok();
            }
            // A cell holding a scalar or a tuple (`CpuHeap::new((&shrd h, 0))`): one value.
            other if !matches!(ty, Ty::Array { .. }) => {
                let src = self.typed_expr(cx, other, ty)?;
                writeln!(self.out, "{pad}{target}[0] = {src};").ok();
            }
            other => {
                let (t, len) = (c_type(leaf(ty), cx.f.span)?, self.flat_len(cx, ty)?);
                let src = self.expr(cx, other)?;
                writeln!(self.out, "{pad}memcpy({target}, {src}, ({len}) * sizeof({t}));").ok();
            }
        }
        Ok(())
    }

    /// Fills `target` with the scalars of `e`, each an element of type `elem` (a tuple literal
    /// is built as that type: a null pointer in it has no type of its own).
    fn fill(&mut self, cx: &Cx, target: &str, e: &Expr, ind: usize, elem: &Ty) -> Result<(), E> {
        let pad = "    ".repeat(ind);
        match e {
            // An empty array has nothing to fill (and `i < 0` on an unsigned counter is a
            // warning, an error under nvcc's -Werror).
            Expr::ArrayRepeat(_, IExpr::Const(0)) => {}
            Expr::ArrayRepeat(x, n) => {
                let n = self.iexpr(cx, n)?;
                let r = format!("rep{}_", self.labels);
                self.labels += 1;
                writeln!(self.out, "{pad}for (uint64_t {r} = 0; {r} < {n}; {r}++) {{").ok();
                self.fill(cx, target, x, ind + 1, elem)?;
                writeln!(self.out, "{pad}}}").ok();
            }
            Expr::ArrayList(xs) => {
                for x in xs {
                    self.fill(cx, target, x, ind, elem)?;
                }
            }
            scalar => {
                let v = self.typed_expr(cx, scalar, elem)?;
                writeln!(self.out, "{pad}{target}[fill_++] = {v};").ok();
            }
        }
        Ok(())
    }

    fn local(&self, cx: &Cx, l: LocalId) -> String {
        if cx.per_thread.contains(&l) {
            format!("{}[tid_]", per_thread_name(cx, l))
        } else {
            cx.names.locals[l].clone()
        }
    }

    // --------------------------------------------------------------------------------------------
    // Expressions
}

/// The runtime function printing a scalar of type `t`, if `t` is one.
fn scalar_printer(t: &Ty) -> Option<&'static str> {
    Some(match t {
        Ty::Scalar(ScalarTy::Unit) => return None,
        Ty::Scalar(s) => match scalar_suffix(*s) {
            "f32" => "strata_print_f32",
            "f64" => "strata_print_f64",
            "i8" => "strata_print_i8",
            "u8" => "strata_print_u8",
            "i16" => "strata_print_i16",
            "u16" => "strata_print_u16",
            "i32" => "strata_print_i32",
            "i64" => "strata_print_i64",
            "u32" => "strata_print_u32",
            "u64" => "strata_print_u64",
            _ => "strata_print_bool",
        },
        Ty::Nat => "strata_print_u64",
        _ => return None,
    })
}

/// The runtime's name for a scalar type (`strata_print_f32`, `strata_fill_random_u64`, …).
fn scalar_suffix(s: ScalarTy) -> &'static str {
    match s {
        ScalarTy::Bool => "bool",
        ScalarTy::I8 => "i8",
        ScalarTy::U8 => "u8",
        ScalarTy::I16 => "i16",
        ScalarTy::U16 => "u16",
        ScalarTy::I32 | ScalarTy::AtomicI32 | ScalarTy::Unit => "i32",
        ScalarTy::I64 | ScalarTy::AtomicI64 => "i64",
        ScalarTy::U32 | ScalarTy::AtomicU32 => "u32",
        ScalarTy::U64 | ScalarTy::AtomicU64 => "u64",
        ScalarTy::F32 | ScalarTy::AtomicF32 => "f32",
        ScalarTy::F64 | ScalarTy::AtomicF64 => "f64",
    }
}

/// The shape of a printed type, in letters only: scalars as in [`tuple_name`], `A…E` for an
/// array (or a reference to one) of what it holds, `p` for a reference to a non-array, `T…E` for
/// a tuple.
fn shape_mangle(t: &Ty, span: Span) -> Result<String, E> {
    Ok(match t {
        Ty::Ref(x, _) | Ty::Owned(x, _) if !matches!(**x, Ty::Array { .. }) => format!("p{}", shape_mangle(x, span)?),
        Ty::Ref(x, _) | Ty::Owned(x, _) | Ty::Array { elem: x, .. } => format!("A{}E", shape_mangle(leaf(x), span)?),
        Ty::Tuple(ts) => {
            let mut s = String::from("T");
            for x in ts {
                s.push_str(&shape_mangle(x, span)?);
            }
            s.push('E');
            s
        }
        scalar => tuple_name(std::slice::from_ref(scalar), span)?
            .trim_start_matches("strata_tuple_T")
            .trim_end_matches('E')
            .to_string(),
    })
}

/// The C name of size parameter `n` of the function whose names are `names`.
fn nat_name(names: &FnNames, n: &str) -> String {
    names.nats.get(n).cloned().unwrap_or_else(|| c_ident(n))
}

/// Whether local `l` is declared up front ([`Cx::predeclared`]): not arrays held by value,
/// which keep their declaration (with its allocation) where they are bound.
fn predeclared(cx: &Cx, l: LocalId) -> bool {
    cx.predeclared && cx.f.locals.get(l).is_some_and(|x| !matches!(x.ty, Ty::Array { .. }))
}

/// The per-thread array of a local of a kernel on the cpu device: `<name>_pt_`.
fn per_thread_name(cx: &Cx, l: LocalId) -> String {
    format!("{}_pt_", cx.names.locals[l])
}

/// `text` safe inside a C comment.
fn comment_text(text: &str) -> String {
    text.replace("*/", "* /").chars().filter(|c| !c.is_control()).collect()
}

pub(crate) fn c_ident(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect()
}

fn c_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if c.is_ascii() && !c.is_ascii_control() => out.push(c),
            c => {
                let mut b = [0u8; 4];
                for byte in c.encode_utf8(&mut b).bytes() {
                    out.push_str(&format!("\\{byte:03o}"));
                }
            }
        }
    }
    out.push('"');
    out
}

fn locals_in_stmt(s: &Stmt, out: &mut HashSet<LocalId>) {
    match s {
        Stmt::Let { local, init, .. } => {
            out.insert(*local);
            if let Some(e) = init {
                locals_in_expr(e, out);
            }
        }
        Stmt::Store { place, value } => {
            locals_in_place(place, out);
            locals_in_expr(value, out);
        }
        Stmt::Eval(e) => locals_in_expr(e, out),
        Stmt::Free { local, .. } => {
            out.insert(*local);
        }
        Stmt::For { counter, lo, hi, body, exit, .. } => {
            out.insert(*counter);
            out.extend(*exit);
            locals_in_iexpr(lo, out);
            locals_in_iexpr(hi, out);
            body.iter().for_each(|b| locals_in_stmt(b, out));
        }
        Stmt::While { cond, body, .. } => {
            locals_in_expr(cond, out);
            body.iter().for_each(|b| locals_in_stmt(b, out));
        }
        Stmt::If { cond, then, els, .. } => {
            locals_in_expr(cond, out);
            then.iter().chain(els).for_each(|b| locals_in_stmt(b, out));
        }
        Stmt::Threads { body, .. } => body.iter().for_each(|b| locals_in_stmt(b, out)),
        Stmt::Launch { args, stream, .. } => args.iter().chain(stream).for_each(|a| locals_in_expr(a, out)),
        Stmt::Return(Some(e)) => locals_in_expr(e, out),
        Stmt::Return(None) | Stmt::Sync { .. } => {}
    }
}

fn locals_in_place(p: &Place, out: &mut HashSet<LocalId>) {
    out.insert(p.root);
    for step in &p.path {
        if let PathStep::Elem(e) = step {
            locals_in_iexpr(e, out);
        }
    }
    for (i, b) in &p.checks {
        locals_in_iexpr(i, out);
        locals_in_iexpr(b, out);
    }
}

fn locals_in_expr(e: &Expr, out: &mut HashSet<LocalId>) {
    match e {
        Expr::Lit(_) => {}
        Expr::Nat(i) => locals_in_iexpr(i, out),
        Expr::Load(p) | Expr::Ref(p) => locals_in_place(p, out),
        Expr::Unary(_, x) | Expr::Cast(x, _) | Expr::Checked(x, _) => locals_in_expr(x, out),
        Expr::ArrayRepeat(x, n) => {
            locals_in_expr(x, out);
            locals_in_iexpr(n, out);
        }
        Expr::Binary(_, a, b) => {
            locals_in_expr(a, out);
            locals_in_expr(b, out);
        }
        Expr::Tuple(xs) | Expr::ArrayList(xs) | Expr::Builtin(_, xs, _) => {
            xs.iter().for_each(|x| locals_in_expr(x, out))
        }
        Expr::Call { args, nats, .. } => {
            args.iter().for_each(|x| locals_in_expr(x, out));
            nats.iter().for_each(|n| locals_in_iexpr(n, out));
        }
    }
}

fn locals_in_iexpr(e: &IExpr, out: &mut HashSet<LocalId>) {
    match e {
        IExpr::Counter(l) => {
            out.insert(*l);
        }
        IExpr::Value(v) => locals_in_expr(v, out),
        other => {
            if let Some((a, b)) = other.operands() {
                locals_in_iexpr(a, out);
                locals_in_iexpr(b, out);
            }
        }
    }
}

/// Does `s`, or any statement nested in it, satisfy `pred`?
fn stmt_any(s: &Stmt, pred: &dyn Fn(&Stmt) -> bool) -> bool {
    pred(s)
        || match s {
            Stmt::For { body, .. } | Stmt::While { body, .. } | Stmt::Threads { body, .. } => {
                body.iter().any(|x| stmt_any(x, pred))
            }
            Stmt::If { then, els, .. } => then.iter().chain(els).any(|x| stmt_any(x, pred)),
            _ => false,
        }
}

/// Does `e` point into the current kernel's shared memory (private to one block)?
fn block_private(cx: &Cx, e: &Expr) -> bool {
    let FnKind::Kernel { shared, .. } = &cx.f.kind else { return false };
    matches!(e, Expr::Ref(p) | Expr::Load(p) if shared.iter().any(|(l, _, _)| *l == p.root))
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_ir::ir::{Local, Mem};

    fn b(e: IExpr) -> Box<IExpr> {
        Box::new(e)
    }

    /// A program whose kernel (grid `grid`, 256 threads, size parameters `nats`) stores to
    /// `a[blockIdx.x * 256 + threadIdx.x]` and, in a loop `for i in 0..4`, to `a[i]`, plus a
    /// `main` that does nothing.
    fn program(grid: IExpr, nats: Vec<String>) -> Program {
        let array = Ty::Ref(
            Box::new(Ty::Array { elem: Box::new(Ty::Scalar(ScalarTy::F32)), len: IExpr::Const(1 << 20) }),
            Mem::GpuGlobal,
        );
        let store = |off: IExpr| Stmt::Store {
            place: Place {
                root: 0,
                path: vec![PathStep::Deref, PathStep::Elem(off)],
                checks: Vec::new(),
                span: Span::DUMMY,
            },
            value: Expr::Lit(Lit::Float(1.0, ScalarTy::F32)),
        };
        let global = IExpr::Add(
            b(IExpr::Mul(b(IExpr::BlockIdx(DimName::X)), b(IExpr::Const(256)))),
            b(IExpr::ThreadIdx(DimName::X)),
        );
        let body = vec![
            store(global),
            Stmt::For {
                counter: 1,
                lo: IExpr::Const(0),
                hi: IExpr::Const(4),
                body: vec![store(IExpr::Counter(1))],
                exit: None,
                span: Span::DUMMY,
            },
        ];
        let kernel = Function {
            name: "k".into(),
            kind: FnKind::Kernel {
                grid: [grid, IExpr::Const(1), IExpr::Const(1)],
                block: [IExpr::Const(256), IExpr::Const(1), IExpr::Const(1)],
                shared: Vec::new(),
                ordered: false,
            },
            nat_params: nats,
            nat_max: Default::default(),
            params: vec![0],
            locals: vec![
                Local { name: "a".into(), ty: array, level: Level::Block },
                Local { name: "i".into(), ty: Ty::Nat, level: Level::Thread },
            ],
            body: vec![Stmt::Threads { set: Vec::new(), body }],
            ret: Ty::Scalar(ScalarTy::Unit),
            span: Span::DUMMY,
            shrd_params: Vec::new(),
        };
        let main = Function::host_main(Vec::new(), Vec::new());
        Program { functions: vec![kernel, main], entry: Some(1), ..Default::default() }
    }

    #[test]
    fn null_pointers_and_pointer_comparisons_are_refused_with_a_diagnostic() {
        // CUDA-C's `NULL`, `p == q` and `p - q` exist only with run-time lengths on the cpu device.
        for builtin in [Builtin::NullPtr, Builtin::PtrEq, Builtin::PtrDiff] {
            let body = vec![Stmt::Eval(Expr::Builtin(builtin, Vec::new(), Span::DUMMY)), Stmt::Return(None)];
            let p = Program {
                functions: vec![Function::host_main(Vec::new(), body)],
                entry: Some(0),
                ..Default::default()
            };
            for emitted in [crate::emit_c(&p), crate::emit_cuda(&p)] {
                let d = emitted.expect_err("refused");
                assert!(d.message.contains("null pointers and pointer comparisons"), "{}", d.message);
            }
        }
    }

    fn cuda(p: &Program) -> String {
        Emitter::new_cuda(p).emit().unwrap_or_default()
    }

    #[test]
    fn constant_launch_shape_gives_32_bit_indices() {
        let out = cuda(&program(IExpr::Const(4096), Vec::new()));
        assert!(out.contains("a[((((int32_t)blockIdx.x) * INT32_C(256)) + ((int32_t)threadIdx.x))]"), "{out}");
        assert!(out.contains("for (int32_t i = INT32_C(0); i < INT32_C(4); i++)"), "{out}");
        assert!(out.contains("a[i]"), "{out}");
    }

    #[test]
    fn run_time_grid_keeps_64_bits_where_the_limits_do_not_suffice() {
        // blockIdx.x < 2^31 - 1 under the CUDA limits, so blockIdx.x * 256 may overflow 32 bits.
        let out = cuda(&program(IExpr::Param("n".into()), vec!["n".into()]));
        assert!(out.contains("a[((((uint64_t)blockIdx.x) * UINT64_C(256)) + ((uint64_t)threadIdx.x))]"), "{out}");
        // The loop's bounds are constants: still 32-bit.
        assert!(out.contains("for (int32_t i = INT32_C(0); i < INT32_C(4); i++)"), "{out}");
    }

    #[test]
    fn host_code_never_prints_through_a_device_pointer() {
        // main: let d: [i32; 4] @ gpu.global = <param>; println(d); println(&d[1..]) as a reference.
        let arr = Ty::Array { elem: Box::new(Ty::Scalar(ScalarTy::I32)), len: IExpr::Const(4) };
        let local = Place::local(0, Span::DUMMY);
        let elem = Place {
            root: 0,
            path: vec![PathStep::Deref, PathStep::Elem(IExpr::Const(1))],
            checks: Vec::new(),
            span: Span::DUMMY,
        };
        let print = |e: Expr| Stmt::Eval(Expr::Builtin(Builtin::Print, vec![e], Span::DUMMY));
        let f = Function {
            name: "show".into(),
            kind: FnKind::Host,
            nat_params: Vec::new(),
            nat_max: Default::default(),
            params: vec![0],
            locals: vec![Local { name: "d".into(), ty: Ty::Owned(Box::new(arr), Mem::GpuGlobal), level: Level::Host }],
            body: vec![print(Expr::Load(local)), print(Expr::Ref(elem.clone())), print(Expr::Load(elem))],
            ret: Ty::Scalar(ScalarTy::Unit),
            span: Span::DUMMY,
            shrd_params: Vec::new(),
        };
        let main = Function::host_main(Vec::new(), Vec::new());
        let p = Program { functions: vec![f, main], entry: Some(1), ..Default::default() };
        for out in [cuda(&p), Emitter::new(&p).emit().unwrap_or_default()] {
            let body = &out[out.find("void show(int32_t* d) {").unwrap_or(0)..];
            let body = &body[..body.find("\n}").unwrap_or(body.len())];
            assert_eq!(body.matches("strata_fail(905").count(), 3, "{body}");
            assert!(!body.contains("d["), "{body}");
        }
    }

    #[test]
    fn only_read_only_shared_references_are_const_and_atomics_are_not_restrict() {
        // kernel(ro: &shrd [f32], atoms: &shrd [AtomicU32], out: &uniq [f32], copied: &shrd [f32]):
        // out[0] = ro[0]; a local takes `copied` as a pointer (so it cannot be const).
        let arr = |s: ScalarTy| {
            Ty::Ref(Box::new(Ty::Array { elem: Box::new(Ty::Scalar(s)), len: IExpr::Const(8) }), Mem::GpuGlobal)
        };
        let elem = |root: LocalId| Place {
            root,
            path: vec![PathStep::Deref, PathStep::Elem(IExpr::Const(0))],
            checks: Vec::new(),
            span: Span::DUMMY,
        };
        let local = |name: &str, ty: Ty| Local { name: name.into(), ty, level: Level::Block };
        let kernel = Function {
            name: "k".into(),
            kind: FnKind::Kernel {
                grid: [IExpr::Const(1), IExpr::Const(1), IExpr::Const(1)],
                block: [IExpr::Const(1), IExpr::Const(1), IExpr::Const(1)],
                shared: Vec::new(),
                ordered: false,
            },
            nat_params: Vec::new(),
            nat_max: Default::default(),
            params: vec![0, 1, 2, 3],
            locals: vec![
                local("ro", arr(ScalarTy::F32)),
                local("atoms", arr(ScalarTy::AtomicU32)),
                local("out", arr(ScalarTy::F32)),
                local("copied", arr(ScalarTy::F32)),
                local("alias", arr(ScalarTy::F32)),
            ],
            body: vec![Stmt::Threads {
                set: Vec::new(),
                body: vec![
                    Stmt::Store { place: elem(2), value: Expr::Load(elem(0)) },
                    Stmt::Let { local: 4, init: Some(Expr::Load(Place::local(3, Span::DUMMY))), span: Span::DUMMY },
                ],
            }],
            ret: Ty::Scalar(ScalarTy::Unit),
            span: Span::DUMMY,
            shrd_params: vec![0, 1, 3],
        };
        let main = Function::host_main(Vec::new(), Vec::new());
        let p = Program { functions: vec![kernel, main], entry: Some(1), ..Default::default() };
        let out = cuda(&p);
        assert!(
            out.contains(
                "__global__ void k(const float* __restrict__ ro, uint32_t* atoms, float* __restrict__ out, float* __restrict__ copied)"
            ),
            "{out}"
        );
    }

    #[test]
    fn c_narrows_only_when_asked() {
        let p = program(IExpr::Const(4096), Vec::new());
        let plain = Emitter::new(&p).emit().unwrap_or_default();
        assert!(plain.contains("a[((bx_ * UINT64_C(256)) + tx_)]"), "{plain}");
        assert!(!plain.contains("int32_t i"), "{plain}");
        let narrow = Emitter::new(&p).narrow_indices(true).emit().unwrap_or_default();
        assert!(narrow.contains("a[((((int32_t)bx_) * INT32_C(256)) + ((int32_t)tx_))]"), "{narrow}");
        assert!(narrow.contains("int32_t i = INT32_C(0)"), "{narrow}");
    }
}
