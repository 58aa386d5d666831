//! IR to the C family: one emitter, two dialects. This module is what both share: the program's
//! layout (runtime, tuple structs, prototypes, printing helpers, functions, `main`), names,
//! host code, statements, index arithmetic, places and expressions. The dialects differ in how a
//! kernel executes the thread hierarchy and how host code launches it: [`c`] (the cpu device:
//! blocks as OpenMP loop iterations, threads as loops) and [`cuda`] (`__global__` functions).

mod atomics;
mod c;
mod checked;
mod cuda;
mod lanes;
mod streams;

use crate::names::Names;
use crate::range::Env;
use cuda::static_shared;
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::fmt::Write;
use strata_diag::{codes, Diagnostic, Span};
use strata_ir::ir::{
    leaf, AtomicAtOp, AtomicOp, BinOp, Builtin, DimName, Expr, FnId, FnKind, Function, IExpr, IntFn, Level, Lit,
    LocalId, MathFn, PathStep, Place, Program, ScalarTy, ShuffleOp, Stmt, Ty, UnOp,
};

pub(crate) const RUNTIME: &str = include_str!("runtime.h");

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
            Expr::Unary(_, x) | Expr::Cast(x, _) => self.expr(x),
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
                write!(fields, " {} f{i};", c_type(t, Span::DUMMY)?).ok();
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
            Stmt::For { counter, lo, hi, body, .. } => {
                // A per-thread counter lives in a `uint64_t` array: its loop stays 64-bit.
                let declare = !cx.per_thread.contains(counter) && !predeclared(cx, *counter);
                let (t, lo, hi) = self.loop_head(cx, *counter, lo, hi, declare)?;
                let c = self.local(cx, *counter);
                let decl = if declare { format!("{t} ") } else { String::new() };
                writeln!(self.out, "{pad}for ({decl}{c} = {lo}; {c} < {hi}; {c}++) {{").ok();
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
                self.fill(cx, target, e, ind + 1)?;
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

    fn fill(&mut self, cx: &Cx, target: &str, e: &Expr, ind: usize) -> Result<(), E> {
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
                self.fill(cx, target, x, ind + 1)?;
                writeln!(self.out, "{pad}}}").ok();
            }
            Expr::ArrayList(xs) => {
                for x in xs {
                    self.fill(cx, target, x, ind)?;
                }
            }
            scalar => {
                let v = self.expr(cx, scalar)?;
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

    /// The C name of a block or thread coordinate or extent: CUDA's built-in variables, or the
    /// cpu device's loop variables and constants (`bx_`, `tx_`, `BX_`, `GX_`).
    fn coordinate(&self, e: &IExpr) -> Option<String> {
        let lower = |d: &DimName| d.letter().to_ascii_lowercase();
        Some(match e {
            IExpr::BlockIdx(x) if self.cuda => format!("blockIdx.{}", lower(x)),
            IExpr::ThreadIdx(x) if self.cuda => format!("threadIdx.{}", lower(x)),
            IExpr::BlockDim(x) if self.cuda => format!("blockDim.{}", lower(x)),
            IExpr::GridDim(x) if self.cuda => format!("gridDim.{}", lower(x)),
            IExpr::BlockIdx(x) => format!("b{}_", lower(x)),
            IExpr::ThreadIdx(x) => format!("t{}_", lower(x)),
            IExpr::BlockDim(x) => format!("B{}_", x.letter()),
            IExpr::GridDim(x) => format!("G{}_", x.letter()),
            _ => return None,
        })
    }

    /// A host size expression in checked 128-bit arithmetic (`strata_wide`); its other
    /// operations (division, powers, leaves) are computed as sizes and widened.
    fn wide_iexpr(&self, cx: &Cx, e: &IExpr) -> Result<String, E> {
        let f = match e {
            IExpr::Add(..) => "strata_wadd",
            IExpr::Sub(..) => "strata_wsub",
            IExpr::Mul(..) => "strata_wmul",
            _ => return Ok(format!("((strata_wide){})", self.iexpr(cx, e)?)),
        };
        let Some((a, b)) = e.operands() else { return Err(unsupported(cx.span, "this size expression")) };
        Ok(format!("{f}({}, {}, {})", self.wide_iexpr(cx, a)?, self.wide_iexpr(cx, b)?, self.at(cx.span)))
    }

    fn iexpr(&self, cx: &Cx, e: &IExpr) -> Result<String, E> {
        if let Some(name) = self.coordinate(e) {
            // CUDA's built-ins are `unsigned`: widen them; the cpu device's are `uint64_t` already.
            return Ok(if self.cuda { format!("((uint64_t){name})") } else { name });
        }
        // Host code computes the sizes everything else is bounded by, possibly from data:
        // checked, as `sim` checks every size.
        let host = matches!(cx.f.kind, FnKind::Host);
        if host && e.has_sub() && matches!(e, IExpr::Add(..) | IExpr::Sub(..) | IExpr::Mul(..)) {
            // A subtraction may cancel what a step before it took beyond 64 bits (the checker
            // normalises `n * (m - k)` to `n*m - n*k`): exact 128-bit steps, and only the result
            // must be a size, as on `sim`.
            return Ok(format!("strata_nfit({}, {})", self.wide_iexpr(cx, e)?, self.at(cx.span)));
        }
        match e {
            IExpr::Add(a, b) | IExpr::Mul(a, b) | IExpr::Pow(a, b) if host || !cx.env.fits_u64(e) => {
                // GPU code: only where the ranges in scope do not rule out wrap-around (sizes
                // without a `where` bound); everything with known ranges stays plain arithmetic.
                let f = match (e, host) {
                    (IExpr::Add(..), true) => "strata_nadd",
                    (IExpr::Mul(..), true) => "strata_nmul",
                    (_, true) => "strata_npow",
                    (IExpr::Add(..), false) => "strata_kadd",
                    (IExpr::Mul(..), false) => "strata_kmul",
                    (_, false) => "strata_kpow",
                };
                return Ok(format!("{f}({}, {}, {})", self.iexpr(cx, a)?, self.iexpr(cx, b)?, self.at(cx.span)));
            }
            _ => {}
        }
        if let Some((a, op, b)) = e.infix() {
            return Ok(format!("({} {op} {})", self.iexpr(cx, a)?, self.iexpr(cx, b)?));
        }
        Ok(match e {
            IExpr::Const(c) => format!("UINT64_C({c})"),
            IExpr::Param(p) => nat_name(&cx.names, p),
            // Keeps the 64-bit type (and unsigned semantics) of every use outside narrowed code.
            IExpr::Counter(l) if cx.narrow32.contains(l) => format!("((uint64_t){})", self.local(cx, *l)),
            IExpr::Counter(l) => self.local(cx, *l),
            // Powers of two are the common case (tree levels): a shift the C compiler can hoist.
            IExpr::Pow(a, b) if matches!(**a, IExpr::Const(2)) => {
                let b = self.iexpr(cx, b)?;
                format!("(({b}) < 64 ? UINT64_C(1) << ({b}) : UINT64_C(0))")
            }
            IExpr::Pow(a, b) => format!("strata_ipow({}, {})", self.iexpr(cx, a)?, self.iexpr(cx, b)?),
            IExpr::Value(v) => {
                let s = self.expr(cx, v)?;
                match self.checked_value(e, &s) {
                    Some(checked) => checked,
                    None => format!("strata_idx((int64_t)({s}), {})", self.at(cx.span)),
                }
            }
            // Coordinates and infix operations are handled above.
            _ => return Err(unsupported(cx.span, "this index expression")),
        })
    }

    /// Can `e` be emitted in signed 32 bits ([`Env::range`] proves every intermediate fits)?
    fn narrowable(&self, cx: &Cx, e: &IExpr) -> bool {
        self.narrow && cx.env.range(e).is_some()
    }

    /// An element offset: in 32 bits where provably equal, otherwise in 64.
    fn index(&self, cx: &Cx, e: &IExpr) -> Result<String, E> {
        if self.narrowable(cx, e) {
            self.iexpr32(cx, e)
        } else {
            self.iexpr(cx, e)
        }
    }

    /// The C type and bounds of `for counter in lo..hi`, and the counter's range entered into
    /// the environment for the body. `int32_t` when both bounds are narrowable and the counter is
    /// declared here (`declare`), `uint64_t` otherwise.
    fn loop_head(
        &self,
        cx: &mut Cx,
        counter: LocalId,
        lo: &IExpr,
        hi: &IExpr,
        declare: bool,
    ) -> Result<(&'static str, String, String), E> {
        // The counter's range is entered on both dialects: on the cpu device too it proves index
        // arithmetic free of 64-bit wrap-around, which is then not checked at run time.
        let range = cx.env.loop_range(lo, hi);
        let head = match range {
            Some(_) if declare && self.narrow => {
                cx.narrow32.insert(counter);
                ("int32_t", self.iexpr32(cx, lo)?, self.iexpr32(cx, hi)?)
            }
            _ => ("uint64_t", self.iexpr(cx, lo)?, self.iexpr(cx, hi)?),
        };
        // The counter's values are the same whatever its C type.
        if let Some(r) = range {
            cx.env.counters.insert(counter, r);
        }
        Ok(head)
    }

    /// `e` in signed 32-bit arithmetic; only for expressions [`Env::range`] accepts, where it is
    /// equal to the 64-bit result (no intermediate overflows or goes negative).
    fn iexpr32(&self, cx: &Cx, e: &IExpr) -> Result<String, E> {
        if let Some(name) = self.coordinate(e) {
            return Ok(format!("((int32_t){name})"));
        }
        if let Some((a, op, b)) = e.infix() {
            return Ok(format!("({} {op} {})", self.iexpr32(cx, a)?, self.iexpr32(cx, b)?));
        }
        Ok(match e {
            IExpr::Const(c) => format!("INT32_C({c})"),
            IExpr::Counter(l) if cx.narrow32.contains(l) => self.local(cx, *l),
            IExpr::Counter(l) => format!("((int32_t){})", self.local(cx, *l)),
            // A size parameter its `where` clauses bound (`Function::nat_max`).
            IExpr::Param(p) => format!("((int32_t){})", nat_name(&cx.names, p)),
            // The range proof bounds the exponent by 30: a plain shift.
            IExpr::Pow(a, b) if matches!(**a, IExpr::Const(2)) => format!("(INT32_C(1) << ({}))", self.iexpr32(cx, b)?),
            // The range proof refuses the rest, so they never reach here: a compiler bug if they do.
            _ => return Err(unsupported(cx.span, "32-bit index arithmetic over a value of unknown range")),
        })
    }

    /// Total number of scalars in a value of type `t`.
    fn flat_len(&self, cx: &Cx, t: &Ty) -> Result<String, E> {
        Ok(match t {
            Ty::Array { elem, len } => match &**elem {
                Ty::Array { .. } if matches!(cx.f.kind, FnKind::Host) => {
                    format!("strata_nmul({}, {}, {})", self.iexpr(cx, len)?, self.flat_len(cx, elem)?, self.at(cx.span))
                }
                _ => format!("({} * {})", self.iexpr(cx, len)?, self.flat_len(cx, elem)?),
            },
            _ => "UINT64_C(1)".to_string(),
        })
    }

    /// The number of scalars a copy moves: its explicit count (a part of an array, whose pointer's
    /// type says only its first scalar), else all of the referent's type `t`.
    fn copy_len(&self, cx: &Cx, t: &Ty, count: Option<&Expr>) -> Result<String, E> {
        match count {
            Some(Expr::Nat(n)) => self.iexpr(cx, n),
            _ => self.flat_len(cx, t),
        }
    }

    /// The number of scalars of an array value (`[x; n]`, `[a, b, …]`), for allocations whose
    /// type has no length ([`Program::runtime_lengths`]).
    fn value_len(&self, cx: &Cx, e: &Expr) -> Result<String, E> {
        Ok(match e {
            Expr::ArrayRepeat(x, n) => {
                let n = self.iexpr(cx, n)?;
                match **x {
                    Expr::ArrayRepeat(..) | Expr::ArrayList(_) => {
                        format!("strata_nmul({n}, {}, {})", self.value_len(cx, x)?, self.at(cx.span))
                    }
                    _ => n,
                }
            }
            Expr::ArrayList(xs) => match xs.first() {
                Some(x @ (Expr::ArrayRepeat(..) | Expr::ArrayList(_))) => {
                    format!("strata_nmul(UINT64_C({}), {}, {})", xs.len(), self.value_len(cx, x)?, self.at(cx.span))
                }
                _ => format!("UINT64_C({})", xs.len()),
            },
            _ => {
                return Err(unsupported(
                    cx.span,
                    "an allocation whose length is known neither from its type nor its value",
                ))
            }
        })
    }

    /// The type of the memory a place denotes.
    fn place_ty(&self, cx: &Cx, p: &Place) -> Ty {
        cx.f.place_ty(p)
    }

    /// An lvalue for a place; array-valued places are pointers to their first scalar.
    fn place(&self, cx: &Cx, p: &Place) -> Result<String, E> {
        let mut s = self.local(cx, p.root);
        let mut t = cx.f.locals[p.root].ty.clone();
        let mut pointer = false; // `s` points at scalars (after a dereference)

        // The run-time checks of the place not yet emitted: each at its index (see `checked`).
        let mut checks: Vec<usize> = (0..p.checks.len()).collect();
        let last_elem = p.path.iter().rposition(|s| matches!(s, PathStep::Elem(_)));
        for (k, step) in p.path.iter().enumerate() {
            match step {
                PathStep::Deref => {
                    t = match t {
                        Ty::Ref(x, _) | Ty::Owned(x, _) => *x,
                        _ => return Err(unsupported(p.span, "dereferencing a non-pointer")),
                    };
                    if !matches!(t, Ty::Array { .. }) {
                        s = format!("(*{s})");
                    } else {
                        pointer = true;
                    }
                }
                // An index through a pointer may be negative where the pointer points into the
                // middle of its allocation (`strata_sidx` checks it stays inside, as `sim` does).
                PathStep::Elem(IExpr::Value(v)) if pointer && checks.is_empty() => {
                    let i = self.expr(cx, v)?;
                    s = format!(
                        "{s}[strata_sidx((int64_t)({i}), (const void *)({s}), sizeof(*({s})), {})]",
                        self.at(p.span)
                    );
                    t = leaf(&t).clone();
                    pointer = false;
                }
                PathStep::Elem(e) => {
                    let off = self.checked_offset(cx, p, e, &mut checks, Some(k) == last_elem)?;
                    if !pointer && !matches!(t, Ty::Array { .. }) {
                        return Err(unsupported(p.span, "indexing a non-array"));
                    }
                    s = format!("{s}[{off}]");
                    t = leaf(&t).clone();
                    pointer = false;
                }
                PathStep::Field(i) => {
                    let Ty::Tuple(ts) = t else { return Err(unsupported(p.span, "a field of a non-tuple")) };
                    s = format!("{s}.f{i}");
                    t = ts.get(*i as usize).cloned().unwrap_or(Ty::Nat);
                    pointer = false;
                }
            }
        }
        Ok(s)
    }

    /// A pointer to the memory a place denotes (for `&p`).
    fn place_ref(&self, cx: &Cx, p: &Place) -> Result<String, E> {
        match p.path.last() {
            Some(PathStep::Deref) => {
                let mut q = p.clone();
                q.path.pop();
                self.place(cx, &q)
            }
            // An array (a local, or a row of per-thread storage) decays to its first scalar.
            _ if matches!(self.place_ty(cx, p), Ty::Array { .. }) => self.place(cx, p),
            _ => Ok(format!("(&{})", self.place(cx, p)?)),
        }
    }

    /// The type of an expression (enough to print it and to convert operands like `sim` does).
    fn expr_ty(&self, cx: &Cx, e: &Expr) -> Ty {
        match e {
            Expr::Lit(Lit::Bool(_)) => Ty::Scalar(ScalarTy::Bool),
            Expr::Lit(Lit::Int(_, s) | Lit::Float(_, s)) => Ty::Scalar(*s),
            Expr::Lit(_) => Ty::Scalar(ScalarTy::Unit),
            Expr::Nat(_) => Ty::Nat,
            Expr::Load(p) => self.place_ty(cx, p),
            Expr::Ref(p) => Ty::Ref(Box::new(self.place_ty(cx, p)), cx.f.place_mem(p)),
            Expr::Unary(_, x) => self.expr_ty(cx, x),
            Expr::Binary(op, a, b) => {
                if op.is_comparison() || matches!(op, BinOp::And | BinOp::Or) {
                    return Ty::Scalar(ScalarTy::Bool);
                }
                match (self.expr_ty(cx, a), self.expr_ty(cx, b)) {
                    (Ty::Nat, t) | (t, Ty::Nat) => t,
                    (t, _) => t,
                }
            }
            Expr::Cast(_, s) => Ty::Scalar(*s),
            Expr::Tuple(xs) => Ty::Tuple(xs.iter().map(|x| self.expr_ty(cx, x)).collect()),
            Expr::Call { func, .. } => self.p.functions[*func].ret.clone(),
            Expr::Builtin(Builtin::Sqrt(t) | Builtin::Shuffle(_, t), _, _) => Ty::Scalar(*t),
            Expr::Builtin(Builtin::Ballot, _, _) => Ty::Scalar(ScalarTy::U32),
            Expr::Builtin(Builtin::AtomicRmw(_, t) | Builtin::Math(_, t), _, _) => Ty::Scalar(*t),
            Expr::Builtin(Builtin::AtomicAt(op, t), _, _) if *op != AtomicAtOp::Store => Ty::Scalar(*t),
            Expr::Builtin(Builtin::ArgCount | Builtin::ArgU64 | Builtin::NpyLen | Builtin::NpyDim, _, _) => {
                Ty::Scalar(ScalarTy::U64)
            }
            Expr::Builtin(Builtin::ArgF64, _, _) => Ty::Scalar(ScalarTy::F64),
            Expr::Builtin(Builtin::ArgByte | Builtin::Rand, _, _) => Ty::Scalar(ScalarTy::I32),
            Expr::Builtin(Builtin::PtrEq | Builtin::IsNan(_) | Builtin::IsFinite(_), _, _) => {
                Ty::Scalar(ScalarTy::Bool)
            }
            Expr::Builtin(Builtin::IntMath(_, t), _, _) => Ty::Scalar(*t),
            Expr::Builtin(Builtin::PtrDiff, _, _) => Ty::Scalar(ScalarTy::I64),
            Expr::Builtin(Builtin::LoadNpy(t), args, _) => Ty::Owned(
                Box::new(strata_ir::ir::npy_array_ty(*t, &strata_ir::ir::npy_dims(args, 1))),
                strata_ir::ir::Mem::Cpu,
            ),
            Expr::Builtin(Builtin::AtomicFetchAdd | Builtin::AtomicFetchAddAt | Builtin::AtomicLoad, args, _) => {
                match args.first().map(|a| self.expr_ty(cx, a)) {
                    Some(Ty::Ref(t, _)) => match leaf(&t) {
                        Ty::Scalar(ScalarTy::AtomicI32) => Ty::Scalar(ScalarTy::I32),
                        _ => Ty::Scalar(ScalarTy::U32),
                    },
                    _ => Ty::Scalar(ScalarTy::U32),
                }
            }
            _ => Ty::Scalar(ScalarTy::Unit),
        }
    }

    /// `e` converted to `want` where it is a natural number (as `sim` converts on store).
    fn typed_expr(&self, cx: &Cx, e: &Expr, want: &Ty) -> Result<String, E> {
        if let (Expr::Tuple(xs), Ty::Tuple(ts)) = (e, want) {
            // A compound literal of the wanted struct, each field converted like a store.
            let mut fields = Vec::new();
            for (x, t) in xs.iter().zip(ts) {
                fields.push(self.typed_expr(cx, x, t)?);
            }
            // C++ (CUDA) has no compound literals, but aggregate initialisation.
            let name = tuple_name(ts, cx.span)?;
            return Ok(if self.cuda {
                format!("({name}{{{}}})", fields.join(", "))
            } else {
                format!("(({name}){{{}}})", fields.join(", "))
            });
        }
        let v = self.expr(cx, e)?;
        Ok(match (self.expr_ty(cx, e), want) {
            (Ty::Nat, Ty::Scalar(s)) => format!("(({}){v})", scalar_c(*s)),
            _ => v,
        })
    }

    fn expr(&self, cx: &Cx, e: &Expr) -> Result<String, E> {
        Ok(match e {
            Expr::Lit(l) => match l {
                Lit::Bool(b) => b.to_string(),
                Lit::Unit => "0".into(),
                Lit::Int(v, s) => match s {
                    ScalarTy::I32 | ScalarTy::AtomicI32 => format!("INT32_C({v})"),
                    ScalarTy::I64 | ScalarTy::AtomicI64 => format!("INT64_C({v})"),
                    ScalarTy::U32 | ScalarTy::AtomicU32 => format!("UINT32_C({v})"),
                    ScalarTy::U64 | ScalarTy::AtomicU64 => format!("UINT64_C({v})"),
                    ScalarTy::F32 | ScalarTy::AtomicF32 => format!("{v}.0f"),
                    ScalarTy::F64 | ScalarTy::AtomicF64 => format!("{v}.0"),
                    ScalarTy::Bool => (*v != 0).to_string(),
                    ScalarTy::Unit => "0".into(),
                },
                Lit::Float(v, s) => {
                    let text = if v.is_finite() {
                        format!("{v:?}")
                    } else if v.is_nan() {
                        "NAN".into()
                    } else if *v > 0.0 {
                        "INFINITY".into()
                    } else {
                        "(-INFINITY)".into()
                    };
                    if *s == ScalarTy::F32 && v.is_finite() {
                        format!("{text}f")
                    } else {
                        text
                    }
                }
                Lit::Str(_) => "0".into(),
            },
            Expr::Nat(i) => self.iexpr(cx, i)?,
            Expr::Load(p) => self.place(cx, p)?,
            Expr::Ref(p) => self.place_ref(cx, p)?,
            Expr::Unary(op, x) => {
                let v = self.expr(cx, x)?;
                match op {
                    UnOp::Neg => format!("(-{v})"),
                    UnOp::Not if self.expr_ty(cx, x) == Ty::Scalar(ScalarTy::Bool) => format!("(!{v})"),
                    UnOp::Not => format!("(~{v})"),
                }
            }
            Expr::Binary(op, a, b) => {
                let (ta, tb) = (self.expr_ty(cx, a), self.expr_ty(cx, b));
                // A natural number adopts the type of the other operand, as in `sim`.
                let conv = |me: &Self, x: &Expr, t: &Ty, other: &Ty| -> Result<String, E> {
                    let v = me.expr(cx, x)?;
                    Ok(match (t, other) {
                        (Ty::Nat, Ty::Scalar(s)) => format!("(({}){v})", scalar_c(*s)),
                        _ => v,
                    })
                };
                let (x, y) = (conv(self, a, &ta, &tb)?, conv(self, b, &tb, &ta)?);
                let int = |t: &Ty| {
                    matches!(t, Ty::Scalar(ScalarTy::I32 | ScalarTy::I64 | ScalarTy::U32 | ScalarTy::U64) | Ty::Nat)
                };
                match op {
                    // Checked (a zero divisor, and the one quotient of signed integers that
                    // overflows) by a runtime helper of the operands' type.
                    BinOp::Div | BinOp::Rem if int(&ta) && int(&tb) => {
                        let which = if *op == BinOp::Div { "div" } else { "rem" };
                        let t = match (&ta, &tb) {
                            (Ty::Nat, t) | (t, _) => t,
                        };
                        let suffix = match t {
                            Ty::Scalar(ScalarTy::I32) => "i32",
                            Ty::Scalar(ScalarTy::I64) => "i64",
                            Ty::Scalar(ScalarTy::U32) => "u32",
                            _ => "u64",
                        };
                        format!("strata_{which}_{suffix}({x}, {y}, {})", self.at(cx.span))
                    }
                    BinOp::Rem if !int(&ta) => format!("fmod({x}, {y})"),
                    // The amount is taken modulo the width, as `sim` does: C leaves a shift by the
                    // width or more undefined.
                    BinOp::Shl | BinOp::Shr if int(&ta) => {
                        let bits = if matches!(ta, Ty::Scalar(ScalarTy::I32 | ScalarTy::U32)) { 31 } else { 63 };
                        format!("({x} {} (int)(({y}) & {bits}))", op.symbol())
                    }
                    _ => format!("({x} {} {y})", op.symbol()),
                }
            }
            // A float converted to an integer saturates (NaN gives 0), as on `sim`: a plain C cast
            // of an out-of-range value is undefined behaviour.
            Expr::Cast(x, s)
                if matches!(self.expr_ty(cx, x), Ty::Scalar(ScalarTy::F32 | ScalarTy::F64))
                    && matches!(s, ScalarTy::I32 | ScalarTy::I64 | ScalarTy::U32 | ScalarTy::U64) =>
            {
                format!("strata_f2{}((double)({}))", scalar_suffix(*s), self.expr(cx, x)?)
            }
            Expr::Cast(x, s) => format!("(({})({}))", scalar_c(*s), self.expr(cx, x)?),
            Expr::Call { func, nats, args, .. } => {
                let mut a = Vec::new();
                for n in nats {
                    a.push(self.iexpr(cx, n)?);
                }
                let callee = &self.p.functions[*func];
                for (x, p) in args.iter().zip(&callee.params) {
                    a.push(self.typed_expr(cx, x, &callee.locals[*p].ty)?);
                }
                format!("{}({})", self.fn_names[*func], a.join(", "))
            }
            Expr::Builtin(b, args, span) => self.builtin(cx, *b, args, *span)?,
            Expr::Tuple(xs) => {
                let ts: Vec<Ty> = xs.iter().map(|x| self.expr_ty(cx, x)).collect();
                return self.typed_expr(cx, e, &Ty::Tuple(ts));
            }
            Expr::ArrayList(_) | Expr::ArrayRepeat(..) => {
                return Err(unsupported(cx.f.span, "array values outside `CpuHeap::new`"))
            }
        })
    }

    fn referent(&self, cx: &Cx, e: &Expr) -> Ty {
        match self.expr_ty(cx, e) {
            Ty::Ref(t, _) | Ty::Owned(t, _) => *t,
            t => t,
        }
    }

    fn builtin(&self, cx: &Cx, b: Builtin, args: &[Expr], span: Span) -> Result<String, E> {
        let arg = |i: usize| args.get(i).map(|a| self.expr(cx, a)).unwrap_or(Ok("0".into()));
        let at = self.at(span);
        // `&a[i]` for `atomic_fetch_add_at(a, i, v)`, the index checked against `a`'s length.
        // The length is the call's argument 3 (the referenced array's, which a pointer to a row
        // does not say), else the referent's type's.
        let elem_at = || -> Result<String, E> {
            let len = match args.get(3) {
                Some(n) => format!("(uint64_t)({})", self.expr(cx, n)?),
                None => self.flat_len(cx, &args.first().map_or(Ty::Nat, |a| self.referent(cx, a)))?,
            };
            Ok(format!("&({})[strata_index((uint64_t)({}), {len}, {at})]", arg(0)?, arg(1)?))
        };
        // The scalar type an atomic operation works on (its argument is a pointer to it).
        let atomic_ty = || match args.first().map(|a| self.referent(cx, a)).as_ref().map(leaf) {
            Some(Ty::Scalar(ScalarTy::AtomicI32 | ScalarTy::I32)) => "i32",
            _ => "u32",
        };
        Ok(match b {
            Builtin::HeapNew => return Err(unsupported(span, "`CpuHeap::new` outside a `let`")),
            Builtin::GlobalAllocCopy if self.p.runtime_lengths && !self.cuda => {
                let ct = c_type(leaf(&self.referent(cx, &args[0])), span)?;
                format!("(({ct} *)strata_rt_alloc_copy({}, sizeof({ct}), {at}))", arg(0)?)
            }
            Builtin::GlobalAllocCopy => {
                let t = self.referent(cx, &args[0]);
                let (ct, len) = (c_type(leaf(&t), span)?, self.copy_len(cx, &t, args.get(1))?);
                let f = if self.cuda { "strata_cuda_alloc_copy" } else { "strata_alloc_copy" };
                format!("(({ct} *){f}({}, {len}, sizeof({ct}), {at}))", arg(0)?)
            }
            Builtin::CopyToHost | Builtin::CopyToGpu if self.cuda => {
                let (dst, src, kind) = if b == Builtin::CopyToHost {
                    (1, 0, "cudaMemcpyDeviceToHost")
                } else {
                    (0, 1, "cudaMemcpyHostToDevice")
                };
                let t = self.referent(cx, &args[dst]);
                let (ct, len) = (c_type(leaf(&t), span)?, self.copy_len(cx, &t, args.get(2))?);
                format!(
                    "strata_cuda_check(cudaMemcpy({}, {}, ({len}) * sizeof({ct}), {kind}), {at})",
                    arg(dst)?,
                    arg(src)?
                )
            }
            Builtin::StreamNew
            | Builtin::StreamSync
            | Builtin::StreamDestroy
            | Builtin::DeviceSync
            | Builtin::EventNew
            | Builtin::EventRecord
            | Builtin::EventSync
            | Builtin::EventDestroy
            | Builtin::StreamWaitEvent
            | Builtin::CopyAsync => self.stream_builtin(cx, b, args, span)?,
            Builtin::CopyElems { dst_gpu, src_gpu } => {
                let t = self.referent(cx, &args[0]);
                let ct = c_type(leaf(&t), span)?;
                let bytes = format!("({}) * sizeof({ct})", arg(2)?);
                match (dst_gpu, src_gpu) {
                    (true, true) if self.cuda => format!(
                        "strata_cuda_check(cudaMemcpy({}, {}, {bytes}, cudaMemcpyDeviceToDevice), {at})",
                        arg(0)?,
                        arg(1)?
                    ),
                    (true, false) if self.cuda => format!(
                        "strata_cuda_check(cudaMemcpy({}, {}, {bytes}, cudaMemcpyHostToDevice), {at})",
                        arg(0)?,
                        arg(1)?
                    ),
                    (false, true) if self.cuda => format!(
                        "strata_cuda_check(cudaMemcpy({}, {}, {bytes}, cudaMemcpyDeviceToHost), {at})",
                        arg(0)?,
                        arg(1)?
                    ),
                    // CUDA-C on the cpu device: both sides must hold the `n` elements (their
                    // lengths are known only at run time), as `sim` checks.
                    _ if self.p.runtime_lengths => format!(
                        "strata_rt_copy_n({}, {}, (uint64_t)({}), sizeof({ct}), {at})",
                        arg(0)?,
                        arg(1)?,
                        arg(2)?
                    ),
                    // One address space (the `cpu` device), or host to host: the ranges may overlap.
                    _ => format!("memmove({}, {}, {bytes})", arg(0)?, arg(1)?),
                }
            }
            Builtin::AtomicFetchAdd if self.cuda => format!("atomicAdd({}, {})", arg(0)?, arg(1)?),
            // Relaxed atomic loads and stores of an aligned 32-bit word: PTX treats `volatile`
            // accesses as relaxed at system scope, so no read-modify-write is needed.
            Builtin::AtomicLoad if self.cuda => format!("strata_atomic_load_{}({})", atomic_ty(), arg(0)?),
            Builtin::AtomicStore if self.cuda => {
                format!("strata_atomic_store_{}({}, {})", atomic_ty(), arg(0)?, arg(1)?)
            }
            Builtin::AtomicFetchAddAt if self.cuda => format!("atomicAdd({}, {})", elem_at()?, arg(2)?),
            Builtin::CopyToHost | Builtin::CopyToGpu if self.p.runtime_lengths => {
                let (dst, src) = if b == Builtin::CopyToHost { (1, 0) } else { (0, 1) };
                let ct = c_type(leaf(&self.referent(cx, &args[dst])), span)?;
                format!("strata_rt_copy({}, {}, sizeof({ct}), {at})", arg(dst)?, arg(src)?)
            }
            Builtin::CopyToHost | Builtin::CopyToGpu => {
                let (dst, src) = if b == Builtin::CopyToHost { (1, 0) } else { (0, 1) };
                let t = self.referent(cx, &args[dst]);
                let (ct, len) = (c_type(leaf(&t), span)?, self.copy_len(cx, &t, args.get(2))?);
                format!("memcpy({}, {}, ({len}) * sizeof({ct}))", arg(dst)?, arg(src)?)
            }
            // A block's threads run one after another on one OS thread, so atomics on the block's
            // own shared memory need no locked instruction; global memory stays atomic.
            Builtin::AtomicFetchAdd if args.first().is_some_and(|a| block_private(cx, a)) => {
                format!("strata_fetch_add_plain_{}({}, {})", atomic_ty(), arg(0)?, arg(1)?)
            }
            Builtin::AtomicFetchAddAt if args.first().is_some_and(|a| block_private(cx, a)) => {
                format!("strata_fetch_add_plain_{}({}, {})", atomic_ty(), elem_at()?, arg(2)?)
            }
            Builtin::AtomicFetchAdd => format!("__atomic_fetch_add({}, {}, __ATOMIC_RELAXED)", arg(0)?, arg(1)?),
            Builtin::AtomicLoad => format!("__atomic_load_n({}, __ATOMIC_RELAXED)", arg(0)?),
            Builtin::AtomicStore => format!("__atomic_store_n({}, {}, __ATOMIC_RELAXED)", arg(0)?, arg(1)?),
            Builtin::AtomicFetchAddAt => format!("__atomic_fetch_add({}, {}, __ATOMIC_RELAXED)", elem_at()?, arg(2)?),
            Builtin::AtomicAt(op, t) => self.atomic_at(cx, op, t, args, span)?,
            Builtin::AtomicRmw(op, t) if self.cuda => {
                // CUDA declares its 64-bit atomics on `(unsigned) long long`, not on `(u)int64_t`.
                let (p, v) = match t {
                    ScalarTy::U64 | ScalarTy::AtomicU64 => ("(unsigned long long *)", "(unsigned long long)"),
                    ScalarTy::I64 | ScalarTy::AtomicI64 => ("(long long *)", "(long long)"),
                    _ => ("", ""),
                };
                let rest = if op == AtomicOp::Cas { format!(", {v}({})", arg(2)?) } else { String::new() };
                format!("{}({p}({}), {v}({}){rest})", op.cuda_name(), arg(0)?, arg(1)?)
            }
            Builtin::AtomicRmw(op, t) => {
                let name = self.atomic_helper(op, t, span)?;
                let rest = if op == AtomicOp::Cas { format!(", {}", arg(2)?) } else { String::new() };
                format!("{name}({}, {}{rest})", arg(0)?, arg(1)?)
            }
            Builtin::PrintFormatted => {
                let Some(Expr::Lit(Lit::Str(spec))) = args.first() else {
                    return Err(unsupported(span, "`printf` without its conversion"));
                };
                let conv = spec.chars().last().unwrap_or('?');
                let length = spec.trim_end_matches(conv).trim_start_matches(|c: char| !c.is_ascii_alphabetic());
                let ct = match (conv, length) {
                    ('d' | 'i' | 'c', "") => "int",
                    ('d' | 'i', "l") => "long",
                    ('d' | 'i', "ll") => "long long",
                    ('u' | 'x' | 'X' | 'o', "") => "unsigned",
                    ('u' | 'x' | 'X' | 'o', "l") => "unsigned long",
                    ('u' | 'x' | 'X' | 'o', "ll") => "unsigned long long",
                    ('u' | 'x' | 'X' | 'o', "z") => "size_t",
                    ('f' | 'F' | 'e' | 'E' | 'g' | 'G', "" | "l") => "double",
                    _ => return Err(unsupported(span, format!("the `printf` conversion `{spec}`"))),
                };
                format!("printf({}, ({ct})({}))", c_string(spec), arg(1)?)
            }
            Builtin::Assert => {
                format!("(({}) ? (void)0 : strata_fail(908, {at}, \"assertion failed\"))", arg(0)?)
            }
            Builtin::FillRandom => {
                let t = self.referent(cx, &args[0]);
                let len = if self.p.runtime_lengths {
                    format!("strata_rt_left({}, sizeof({}), {at})", arg(0)?, c_type(leaf(&t), span)?)
                } else {
                    self.flat_len(cx, &t)?
                };
                let name = match leaf(&t) {
                    Ty::Scalar(s) => format!("strata_fill_random_{}", scalar_suffix(*s)),
                    Ty::Tuple(ts) => self.fill_random_tuple_helper(ts, span)?,
                    _ => "strata_fill_random_i32".to_string(),
                };
                format!("{name}({}, {len}, (uint64_t)({}))", arg(0)?, arg(1)?)
            }
            Builtin::Print | Builtin::PrintInline if args.len() > 1 => {
                self.print_nested(cx, &args[0], &args[1..], b == Builtin::Print)?
            }
            Builtin::Print | Builtin::PrintInline => self.print(cx, &args[0], b == Builtin::Print)?,
            Builtin::Math(MathFn::Rsqrt, t) if !self.cuda => {
                // C has no `rsqrt`: `sim` computes `1 / sqrt(x)` likewise (CUDA's is approximate).
                if t == ScalarTy::F32 {
                    format!("(1.0f / sqrtf({}))", arg(0)?)
                } else {
                    format!("(1.0 / sqrt({}))", arg(0)?)
                }
            }
            Builtin::Math(m, t) => {
                let f = if t == ScalarTy::F32 { "f" } else { "" };
                let rest = (1..m.arity()).map(|i| Ok(format!(", {}", arg(i)?))).collect::<Result<String, E>>()?;
                let name = format!("{}{f}", m.c_name());
                let exact = m.exact();
                if exact || self.cuda {
                    format!("{name}({}{rest})", arg(0)?)
                } else {
                    // The C compiler would compute a call on constants itself, correctly rounded,
                    // where `sim` calls the C library: through `volatile`, both call the library.
                    let helper = format!("strata_libm_{name}");
                    if !self.helpers.borrow().iter().any(|(n, _)| *n == helper) {
                        let ct = scalar_c(t);
                        let (params, call) = if m.arity() >= 2 {
                            (format!("{ct} x, {ct} y"), "volatile {ct} a = x, b = y;\n    return NAME(a, b);")
                        } else {
                            (format!("{ct} x"), "volatile {ct} a = x;\n    return NAME(a);")
                        };
                        let call = call.replace("{ct}", ct).replace("NAME", &name);
                        let def = format!("static {ct} {helper}({params}) {{\n    {call}\n}}\n\n");
                        self.helpers.borrow_mut().push((helper.clone(), def));
                    }
                    format!("{helper}({}{rest})", arg(0)?)
                }
            }
            Builtin::IntMath(f, t) => format!(
                "strata_{}_{}({}{})",
                f.name(),
                scalar_suffix(t),
                arg(0)?,
                if f == IntFn::Abs { String::new() } else { format!(", {}", arg(1)?) }
            ),
            Builtin::IsNan(t) => format!("strata_is_nan_{}({})", scalar_suffix(t), arg(0)?),
            Builtin::IsFinite(t) => format!("strata_is_finite_{}({})", scalar_suffix(t), arg(0)?),
            Builtin::Sqrt(ScalarTy::F32) => format!("sqrtf({})", arg(0)?),
            Builtin::Sqrt(_) => format!("sqrt({})", arg(0)?),
            Builtin::Shuffle(op, t) if self.cuda => {
                let f = match op {
                    ShuffleOp::Down => "__shfl_down_sync",
                    ShuffleOp::Up => "__shfl_up_sync",
                    ShuffleOp::Xor => "__shfl_xor_sync",
                    ShuffleOp::Idx => "__shfl_sync",
                };
                // A delta of 32 or more keeps every lane's own value, as on `sim`; the hardware
                // adds the delta in 32 bits, so a run-time delta is clamped (a literal one is not).
                let a = match (op, args.get(1)) {
                    // (`shfl_up`/`shfl_xor` by 32 also keep the lane's own value: the hardware reads
                    // the low five bits, so 32 is a shift or mask of 0.)
                    (ShuffleOp::Down | ShuffleOp::Up | ShuffleOp::Xor, Some(Expr::Lit(Lit::Int(d, _)))) if *d < 32 => {
                        arg(1)?
                    }
                    (ShuffleOp::Down | ShuffleOp::Up | ShuffleOp::Xor, _) => {
                        format!("min((unsigned)({}), 32u)", arg(1)?)
                    }
                    _ => format!("(unsigned)({})", arg(1)?),
                };
                // The intrinsics have no `bool` overload: exchange it as an `int`.
                match t {
                    ScalarTy::Bool => format!("((bool){f}(0xffffffffu, (int)({}), {a}))", arg(0)?),
                    _ => format!("{f}(0xffffffffu, {}, {a})", arg(0)?),
                }
            }
            Builtin::ArgCount => "strata_arg_count()".to_string(),
            Builtin::ArgU64 => format!("strata_arg_u64((uint64_t)({}), {at})", arg(0)?),
            Builtin::ArgF64 => format!("strata_arg_f64((uint64_t)({}), {at})", arg(0)?),
            Builtin::ArgByte => format!("strata_arg_byte((uint64_t)({}), (uint64_t)({}), {at})", arg(0)?, arg(1)?),
            Builtin::NpyLen => format!("strata_npy_dim((uint64_t)({}), 0, {at})", arg(0)?),
            Builtin::NpyDim => format!("strata_npy_dim((uint64_t)({}), (uint64_t)({}), {at})", arg(0)?, arg(1)?),
            Builtin::LoadNpy(t) => {
                let (rank, d0, d1) = self.npy_dims(cx, args, 1)?;
                let ct = c_type(&Ty::Scalar(t), span)?;
                let kind = scalar_suffix(t).to_ascii_uppercase();
                format!("(({ct} *)strata_load_npy((uint64_t)({}), STRATA_{kind}, {rank}, {d0}, {d1}, {at}))", arg(0)?)
            }
            Builtin::SaveNpy(t) => {
                let (rank, d0, d1) = self.npy_dims(cx, args, 2)?;
                let kind = scalar_suffix(t).to_ascii_uppercase();
                format!(
                    "strata_save_npy((uint64_t)({}), STRATA_{kind}, {}, {rank}, {d0}, {d1}, {at})",
                    arg(0)?,
                    arg(1)?
                )
            }
            Builtin::Ballot if self.cuda => format!("__ballot_sync(0xffffffffu, {})", arg(0)?),
            Builtin::Shuffle(..) | Builtin::Ballot => {
                return Err(unsupported(span, "a warp collective that was not expanded into an exchange"))
            }
            // Only CUDA-C input makes these, and its references are plain C pointers on the cpu
            // device (`runtime_lengths`); `sim` is what checks that two pointers share an allocation.
            Builtin::NullPtr if self.p.runtime_lengths && !self.cuda => "NULL".to_string(),
            Builtin::PtrEq if self.p.runtime_lengths && !self.cuda => format!("({} == {})", arg(0)?, arg(1)?),
            Builtin::PtrDiff if self.p.runtime_lengths && !self.cuda => {
                format!("((int64_t)({} - {}))", arg(0)?, arg(1)?)
            }
            Builtin::NullPtr | Builtin::PtrEq | Builtin::PtrDiff => {
                return Err(unsupported(span, "null pointers and pointer comparisons (CUDA-C input)"))
            }
            // CUDA-C's `__threadfence()`: on the cpu device, the C11 fence that orders the
            // thread's memory accesses before it before those after it for every other thread.
            Builtin::OutputToStderr => format!("strata_output_to_stderr({})", arg(0)?),
            Builtin::Rand => "strata_rand()".to_string(),
            Builtin::Exit => format!("strata_exit((int32_t)({}))", arg(0)?),
            Builtin::SeedRand => format!("strata_srand((uint32_t)({}))", arg(0)?),
            Builtin::Fence if self.cuda => "__threadfence()".to_string(),
            Builtin::Fence => "__atomic_thread_fence(__ATOMIC_SEQ_CST)".to_string(),
        })
    }

    /// The rank and the two dimensions (the second 1 for one dimension) of a `load_npy` or
    /// `save_npy` call, whose dimensions follow its first `skip` arguments.
    /// The C function (made on first use) for `AtomicRmw(op, t)`: a compare-and-swap loop on the
    /// element's bits, integers computed unsigned so that they wrap as on `sim`.
    fn atomic_helper(&self, op: AtomicOp, t: ScalarTy, span: Span) -> Result<String, E> {
        let name = format!("strata_atomic_{}_{}", format!("{op:?}").to_lowercase(), scalar_suffix(t));
        if self.helpers.borrow().iter().any(|(n, _)| *n == name) {
            return Ok(name);
        }
        let ct = scalar_c(t);
        let float = matches!(t, ScalarTy::F32 | ScalarTy::F64);
        let bits = if matches!(t, ScalarTy::I64 | ScalarTy::U64 | ScalarTy::F64) { "uint64_t" } else { "uint32_t" };
        let wrap = |o: &str| if float { format!("o {o} v") } else { format!("({ct})(({bits})o {o} ({bits})v)") };
        let new = match op {
            AtomicOp::Add => wrap("+"),
            AtomicOp::Sub => wrap("-"),
            AtomicOp::And => format!("({ct})(o & v)"),
            AtomicOp::Or => format!("({ct})(o | v)"),
            AtomicOp::Xor => format!("({ct})(o ^ v)"),
            AtomicOp::Exch => "v".to_string(),
            AtomicOp::Min => "v < o ? v : o".to_string(),
            AtomicOp::Max => "v > o ? v : o".to_string(),
            AtomicOp::Cas => "o == v ? w : o".to_string(),
        };
        if float && matches!(op, AtomicOp::And | AtomicOp::Or | AtomicOp::Xor | AtomicOp::Cas) {
            return Err(unsupported(span, format!("`{}` on floating-point numbers", op.cuda_name())));
        }
        let w = if op == AtomicOp::Cas { format!(", {ct} w") } else { String::new() };
        let def = format!(
            "static inline {ct} {name}({ct} *p, {ct} v{w}) {{\n    {bits} old_ = __atomic_load_n(({bits} *)p, __ATOMIC_RELAXED), new_;\n    {ct} o, n;\n    do {{\n        memcpy(&o, &old_, sizeof o);\n        n = {new};\n        memcpy(&new_, &n, sizeof n);\n    }} while (!__atomic_compare_exchange_n(({bits} *)p, &old_, new_, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED));\n    return o;\n}}\n\n"
        );
        self.helpers.borrow_mut().push((name.clone(), def));
        Ok(name)
    }

    /// The C function (made on first use) that fills an array of tuples of scalars (a CUDA-C
    /// struct buffer) as `sim` does: one splitmix64 output per field, field by field.
    fn fill_random_tuple_helper(&self, ts: &[Ty], span: Span) -> Result<String, E> {
        let tuple = tuple_name(ts, span)?;
        let name = format!("strata_fill_random_{}", tuple.trim_start_matches("strata_"));
        if self.helpers.borrow().iter().any(|(n, _)| *n == name) {
            return Ok(name);
        }
        let mut fields = String::new();
        for (i, t) in ts.iter().enumerate() {
            let Ty::Scalar(st) = t else { return Err(unsupported(span, "`fill_random` of nested tuples")) };
            let value = match st {
                ScalarTy::F32 | ScalarTy::AtomicF32 => "(float)((double)(x >> 11) / 9007199254740992.0)".to_string(),
                ScalarTy::F64 | ScalarTy::AtomicF64 => "((double)(x >> 11) / 9007199254740992.0)".to_string(),
                ScalarTy::Bool => "((x & 1) == 1)".to_string(),
                other => format!("({})(x % 100)", scalar_c(*other)),
            };
            fields.push_str(&format!("        x = strata_splitmix(&s);\n        v[k].f{i} = {value};\n"));
        }
        let def = format!(
            "static inline void {name}({tuple} *v, uint64_t n, uint64_t seed) {{\n    uint64_t s = seed, x;\n    for (uint64_t k = 0; k < n; k++) {{\n{fields}    }}\n}}\n\n"
        );
        self.helpers.borrow_mut().push((name.clone(), def));
        Ok(name)
    }

    fn npy_dims(&self, cx: &Cx, args: &[Expr], skip: usize) -> Result<(usize, String, String), E> {
        let dims = &args[skip.min(args.len())..];
        let c = |i: usize| {
            dims.get(i).map_or(Ok("1".to_string()), |d| self.expr(cx, d).map(|v| format!("(uint64_t)({v})")))
        };
        Ok((dims.len(), c(0)?, c(1)?))
    }

    /// Prints the array of dimensions `dims` (outermost first) that starts at pointer `e`, as
    /// nested lists (`strata_print_nested` of the runtime).
    fn print_nested(&self, cx: &Cx, e: &Expr, dims: &[Expr], newline: bool) -> Result<String, E> {
        if let Some(fail) = self.prints_gpu_memory(cx, e) {
            return Ok(fail);
        }
        let v = self.expr(cx, e)?;
        let t = self.expr_ty(cx, e);
        let inner = match &t {
            Ty::Ref(x, _) | Ty::Owned(x, _) => (**x).clone(),
            other => other.clone(),
        };
        let kind = match leaf(&inner) {
            Ty::Scalar(s) if *s != ScalarTy::Unit => scalar_suffix(*s).to_ascii_uppercase(),
            Ty::Nat => "U64".to_string(),
            _ => return Err(unsupported(cx.f.span, "printing this value")),
        };
        let mut parts = vec![format!("STRATA_{kind}"), v, (newline as u8).to_string(), dims.len().to_string()];
        for d in dims {
            parts.push(format!("(uint64_t)({})", self.expr(cx, d)?));
        }
        Ok(format!("strata_print_nested({})", parts.join(", ")))
    }

    /// Host code that would read GPU memory to print `e` (what `sim` reports as E0905): the
    /// printer follows pointers, and host code must never index a device pointer.
    fn prints_gpu_memory(&self, cx: &Cx, e: &Expr) -> Option<String> {
        // A kernel or device function prints GPU memory as CUDA's device `printf` does.
        if !matches!(cx.f.kind, FnKind::Host) {
            return None;
        }
        let place_gpu = matches!(e, Expr::Load(p) | Expr::Ref(p) if cx.f.place_mem(p).is_gpu());
        let pointee_gpu = matches!(self.expr_ty(cx, e), Ty::Ref(_, m) | Ty::Owned(_, m) if m.is_gpu());
        (place_gpu || pointee_gpu).then(|| {
            format!(
                "(strata_fail(905, {}, \"host code read GPU memory (print it after `copy_mem_to_host`)\"), 0)",
                self.at(cx.span)
            )
        })
    }

    fn print(&self, cx: &Cx, e: &Expr, newline: bool) -> Result<String, E> {
        if let Expr::Lit(Lit::Str(text)) = e {
            let put = if newline { "puts" } else { "strata_put" };
            return Ok(format!("{put}({})", c_string(text)));
        }
        if let Some(fail) = self.prints_gpu_memory(cx, e) {
            return Ok(fail);
        }
        let nl = if newline { "putchar('\\n')" } else { "0" };
        Ok(format!("({}, {nl})", self.print_expr(cx, e)?))
    }

    /// A C expression printing `e`; a tuple or array written out (`(a, b)`, `[a, b]`) is printed
    /// element by element (it need not have a C value).
    fn print_expr(&self, cx: &Cx, e: &Expr) -> Result<String, E> {
        if let Expr::Tuple(xs) | Expr::ArrayList(xs) = e {
            let (open, close) = if matches!(e, Expr::Tuple(_)) { ('(', ')') } else { ('[', ']') };
            let mut parts = vec![format!("putchar('{open}')")];
            for (i, x) in xs.iter().enumerate() {
                if i > 0 {
                    parts.push("fputs(\", \", stdout)".to_string());
                }
                parts.push(self.print_expr(cx, x)?);
            }
            parts.push(format!("putchar('{close}')"));
            return Ok(format!("({})", parts.join(", ")));
        }
        let v = self.expr(cx, e)?;
        self.print_value(cx, &v, &self.expr_ty(cx, e))
    }

    /// A C expression printing the value `v` of type `t` like `sim` does: a reference or owning
    /// pointer prints what it points to, an array its elements, a tuple its fields. Arrays and
    /// tuples are printed by helper functions ([`Emitter::show_helper`]), which get the lengths
    /// of the arrays in `t` as arguments.
    fn print_value(&self, cx: &Cx, v: &str, t: &Ty) -> Result<String, E> {
        if let Some(f) = scalar_printer(t) {
            return Ok(format!("{f}({v})"));
        }
        if let Ty::Ref(x, _) | Ty::Owned(x, _) = t {
            if !matches!(**x, Ty::Array { .. }) {
                return self.print_value(cx, &format!("(*({v}))"), x);
            }
        }
        let name = self.show_helper(t, cx.span)?;
        let mut args = vec![v.to_string()];
        self.array_lengths(cx, t, &mut args)?;
        Ok(format!("{name}({})", args.join(", ")))
    }

    /// The lengths of the arrays in `t`, in the order the parameters of its printing helper take
    /// them.
    fn array_lengths(&self, cx: &Cx, t: &Ty, out: &mut Vec<String>) -> Result<(), E> {
        match t {
            Ty::Ref(x, _) | Ty::Owned(x, _) if !matches!(**x, Ty::Array { .. }) => self.array_lengths(cx, x, out),
            Ty::Ref(x, _) | Ty::Owned(x, _) | Ty::Array { elem: x, .. } => {
                let arr = if matches!(t, Ty::Array { .. }) { t } else { &**x };
                out.push(self.flat_len(cx, arr)?);
                self.array_lengths(cx, leaf(arr), out)
            }
            Ty::Tuple(ts) => ts.iter().try_for_each(|x| self.array_lengths(cx, x, out)),
            Ty::Scalar(_) | Ty::Nat | Ty::Stream | Ty::Event => Ok(()),
        }
    }

    /// The name of a function that prints a value of the array or tuple type `t` (made on first
    /// use): `strata_show_` and the type's shape, e.g. `strata_show_Ad` for an array of `f64` or a
    /// reference to one, `strata_show_TdiE` for `(f64, i32)`. Its parameters: the value, then
    /// the lengths of the arrays in `t` ([`Emitter::array_lengths`]). Arrays print flat, element
    /// by element, as `sim` prints them.
    fn show_helper(&self, t: &Ty, span: Span) -> Result<String, E> {
        let name = format!("strata_show_{}", shape_mangle(t, span)?);
        if self.helpers.borrow().iter().any(|(n, _)| *n == name) {
            return Ok(name);
        }
        // Parameters and body, with lengths `n0_`, `n1_`, … in order.
        let mut lens = 0usize;
        let mut body = String::new();
        match t {
            Ty::Tuple(ts) => {
                body.push_str("    putchar('(');\n");
                for (i, x) in ts.iter().enumerate() {
                    if i > 0 {
                        body.push_str("    fputs(\", \", stdout);\n");
                    }
                    let call = self.show_call(x, &format!("v.f{i}"), &mut lens, span)?;
                    writeln!(body, "    {call};").ok();
                }
                body.push_str("    putchar(')');\n");
            }
            _ => {
                let n = lens;
                lens += 1;
                let elem = match t {
                    Ty::Ref(x, _) | Ty::Owned(x, _) | Ty::Array { elem: x, .. } => leaf(x),
                    _ => t,
                };
                let call = self.show_call(elem, "v[k_]", &mut lens, span)?;
                writeln!(body, "    putchar('[');").ok();
                writeln!(body, "    for (uint64_t k_ = 0; k_ < n{n}_; k_++) {{").ok();
                writeln!(body, "        if (k_) fputs(\", \", stdout);").ok();
                writeln!(body, "        {call};").ok();
                writeln!(body, "    }}").ok();
                writeln!(body, "    putchar(']');").ok();
            }
        }
        let mut params = vec![format!("{} v", c_type(t, span)?)];
        params.extend((0..lens).map(|k| format!("uint64_t n{k}_")));
        let def = format!("STRATA_INLINE void {name}({}) {{\n{body}}}\n", params.join(", "));
        self.helpers.borrow_mut().push((name.clone(), def));
        Ok(name)
    }

    /// Inside a printing helper: the call printing `v` of type `t`, whose array lengths are the
    /// helper's parameters from `n<lens>_` on.
    fn show_call(&self, t: &Ty, v: &str, lens: &mut usize, span: Span) -> Result<String, E> {
        if let Some(f) = scalar_printer(t) {
            return Ok(format!("{f}({v})"));
        }
        if let Ty::Ref(x, _) | Ty::Owned(x, _) = t {
            if !matches!(**x, Ty::Array { .. }) {
                return self.show_call(x, &format!("(*({v}))"), lens, span);
            }
        }
        let name = self.show_helper(t, span)?;
        let mut args = vec![v.to_string()];
        for _ in 0..Self::count_lengths(t) {
            args.push(format!("n{}_", *lens));
            *lens += 1;
        }
        Ok(format!("{name}({})", args.join(", ")))
    }

    /// The number of arrays in `t`, as [`Emitter::array_lengths`] lists them.
    fn count_lengths(t: &Ty) -> usize {
        match t {
            Ty::Ref(x, _) | Ty::Owned(x, _) if !matches!(**x, Ty::Array { .. }) => Self::count_lengths(x),
            Ty::Ref(x, _) | Ty::Owned(x, _) | Ty::Array { elem: x, .. } => 1 + Self::count_lengths(leaf(x)),
            Ty::Tuple(ts) => ts.iter().map(Self::count_lengths).sum(),
            Ty::Scalar(_) | Ty::Nat | Ty::Stream | Ty::Event => 0,
        }
    }
}

/// The runtime function printing a scalar of type `t`, if `t` is one.
fn scalar_printer(t: &Ty) -> Option<&'static str> {
    Some(match t {
        Ty::Scalar(ScalarTy::Unit) => return None,
        Ty::Scalar(s) => match scalar_suffix(*s) {
            "f32" => "strata_print_f32",
            "f64" => "strata_print_f64",
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
        Stmt::For { counter, lo, hi, body, .. } => {
            out.insert(*counter);
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
        Expr::Unary(_, x) | Expr::Cast(x, _) => locals_in_expr(x, out),
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
                span: Span::DUMMY,
            },
        ];
        let kernel = Function {
            name: "k".into(),
            kind: FnKind::Kernel {
                grid: [grid, IExpr::Const(1), IExpr::Const(1)],
                block: [IExpr::Const(256), IExpr::Const(1), IExpr::Const(1)],
                shared: Vec::new(),
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
