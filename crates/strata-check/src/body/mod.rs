//! The typing judgement for function bodies (section 4.3 of the paper).
//!
//! One [`FnCx`] checks one function. It walks the body once, in order, threading the typing
//! environment (variables, moves, live borrows) and the access environment (memory touched since
//! the last barrier). The execution context is a stack of frames: `sched` binders (which
//! distribute memory), `split` arms and thread-dependent conditions (which forbid barriers).
//! Loop bodies are checked twice so accesses of one iteration meet those of the next; nothing is
//! unrolled, so checking time does not depend on trip counts or array sizes.

use crate::exec::{Exec, Level, Root, Step};
use crate::nat::{Facts, Nat, Truth};
use crate::place::{conflicts, Access, PStep, Place, ViewApp};
use crate::program::{FnSig, Lower, Program, PATH_ALIASES, WARP_COLLECTIVES};
use crate::ty::{Mem, Ty};
pub use limits::{check_signature_limits, params_shared_use};
use std::collections::{HashMap, HashSet};
use strata_diag::{codes, Code, Diagnostic, Span};
use strata_syntax::ast::{self, BinOp, DimName, ExprKind, Kind, Ownership, ScalarTy, UnOp};
use streams::{union_pending, PendingUse, StreamLoan};
pub use summary::{Summaries, Summary};
use uniformity::Uni;

mod accesses;
mod calls;
mod conditions;
mod host;
mod jumps;
mod limits;
mod places;
mod resources;
mod rt_reads;
mod sizes;
mod streams;
mod summary;
mod uniformity;
mod views;

/// Who owns a variable's memory.
#[derive(Clone, Debug)]
enum Owner {
    /// Declared under this many `sched` binders.
    Chain(usize),
    /// A parameter declared for each `[e]`, e.g. per-block shared memory.
    Exec(Exec),
}

/// One loan a reference value may hold: the place it points to (in normal form, aliases
/// substituted), how it was borrowed, and the dimensions its selections distributed. Every
/// expression that yields a reference carries the set of loans it may hold (the union at joins,
/// of the arguments at calls, of the components in aggregates), as in Oxide and Polonius.
#[derive(Clone, Debug, PartialEq)]
struct Alias {
    place: Place,
    own: Ownership,
    consumed: Vec<(Exec, DimName)>,
}

/// Adds the loans of `more` that `into` does not hold yet.
fn union_loans(into: &mut Vec<Alias>, more: impl IntoIterator<Item = Alias>) {
    for l in more {
        if !into.contains(&l) {
            into.push(l);
        }
    }
}

#[derive(Clone, Debug)]
struct Var {
    name: String,
    ty: Ty,
    owner: Owner,
    /// Level of the resource that declared it; values declared by a single thread vary per thread.
    level: Level,
    mutable: bool,
    moved: Option<Span>,
    /// The loans a reference stored in this variable (or in any part of it) may hold. Empty for
    /// parameters: a reference parameter is its own loan, dereferenced in place.
    loans: Vec<Alias>,
    /// A natural-number variable (loop counter, generic, constant) usable in sizes.
    nat: Option<Nat>,
    span: Span,
    /// Scope depth of the declaration; 0 for parameters.
    depth: usize,
    /// How far its value may differ between threads: raised by every write made under a `split`
    /// arm or a varying condition, and by every varying value stored into it (whole or in part).
    varies: Uni,
    /// A `let` variable of a plain value type (no reference, no owning pointer, no atomic) in GPU
    /// code: its value changes only by writes, which raise `varies` (a `uniq` borrow of it makes it
    /// `Thread`), so a read need not also assume it varies at the level of the declaring resource.
    tracked: bool,
    /// How many `split` arms enclosed the declaration: a write inside a further arm is made by
    /// part of the declaring resource (Prism's write-down rule, T-WRITE-LOCAL).
    arms: usize,
}

#[derive(Clone, Debug)]
struct Binder {
    name: String,
    exec: Exec,
    /// Dimensions and sizes this binder distributes over, in the order scheduled.
    dims: Vec<(DimName, Nat)>,
    /// `sched` binders distribute memory; the function's resource and `split` arms do not.
    distributing: bool,
    span: Span,
    /// The collection this binder schedules over, without ranges (`grid.blocks`, `block.threads`):
    /// selections by binders with the same key share that collection's dimensions.
    key: Exec,
}

/// What an unknown name was looked up as, for "did you mean".
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum NameKind {
    Value,
    Function,
    Resource,
}

#[derive(Clone, Debug)]
enum Frame {
    Sched(usize),
    /// A `split` arm: `span` points at the split, `binder` is the arm's resource.
    Arm {
        binder: usize,
        span: Span,
        what: String,
        /// The members of the split collection run different arms.
        uni: Uni,
    },
    /// A branch or loop whose condition varies (see [`Uni`]).
    Cond {
        span: Span,
        uni: Uni,
    },
}

/// The result of typing a place expression.
#[derive(Clone)]
struct PlaceInfo {
    place: Place,
    ty: Ty,
    /// The memory space behind the last dereference, if any.
    mem: Option<Mem>,
    /// Dereferenced through a shared reference somewhere along the way.
    via_shared: bool,
    /// Reached through a `let`-bound borrow (an alias): a use of that borrow, not a new access.
    via_alias: bool,
    /// The dimensions distributed by the selections on the way, with the collection each belongs
    /// to, in order.
    consumed: Vec<(Exec, DimName)>,
    /// The other places the expression may denote, when a reference on the way may hold several
    /// loans: every rule that inspects the place applies to each of them too.
    alts: Vec<PlaceInfo>,
    /// How far the choice of this place may differ between threads: a reference variable on the
    /// way that was set under a varying condition points to different places for different
    /// threads, so what is read through it varies that far too.
    via_uni: Uni,
}

impl PlaceInfo {
    /// This place and every alternative.
    fn targets(&self) -> impl Iterator<Item = &PlaceInfo> {
        std::iter::once(self).chain(self.alts.iter())
    }

    /// Whether this is a variable's own memory (private to each thread that declared it), reached
    /// directly or through a borrow of it, rather than memory behind a reference or pointer.
    fn is_own_memory(&self) -> bool {
        !self.place.steps.iter().any(|s| matches!(s, PStep::Deref))
            && matches!(self.mem, None | Some(Mem::GpuLocal) | Some(Mem::CpuMem))
    }

    /// The place as a loan of a reference that points to it.
    fn as_loan(&self, own: Ownership) -> Alias {
        Alias { place: self.place.clone(), own, consumed: self.consumed.clone() }
    }
}

#[derive(Copy, Clone, PartialEq, Eq)]
enum Mode {
    Read,
    Write,
    Borrow(Ownership),
}

#[derive(Clone, Default)]
struct Subst {
    nats: HashMap<String, Nat>,
    tys: HashMap<String, Ty>,
    mems: HashMap<String, Mem>,
}

/// What the checker inferred that later phases need: the types it chose where the program did not
/// write them, and the size arguments of every call.
#[derive(Debug, Default)]
pub struct TypeTable {
    /// The type of every `let`-bound variable, by the span of its name.
    pub lets: HashMap<Span, Ty>,
    /// The type of every numeric literal, by its span.
    pub literals: HashMap<Span, Ty>,
    /// The callee's size (`nat`) arguments at every call and launch, by the call's span.
    pub call_nats: HashMap<Span, Vec<(String, Nat)>>,
    /// The result type of every call, by the call's span (the lowering keeps the order of
    /// operands with effects by binding a call's value to a local of this type).
    pub call_types: HashMap<Span, Ty>,
    /// The result type of every call of a warp shuffle, by the call's span (the lowering picks
    /// the exchanged scalar type from it).
    pub shuffle_types: HashMap<Span, ScalarTy>,
    /// The data type `d` of every call of `load_npy`/`save_npy`, by the call's span: an array
    /// the lowering reads the element type and dimensions from ([`crate::npy::npy_array`]).
    pub npy_types: HashMap<Span, Ty>,
    /// The data type `d` of every asynchronous copy, by the call's span (the lowering copies as
    /// many scalars as it holds).
    pub async_copy_types: HashMap<Span, Ty>,
    /// The type of every `if` expression that has a value, by its span (the lowering stores the
    /// value of each branch in a local of this type).
    pub value_types: HashMap<Span, Ty>,
    /// The dimensions every selection `p[[b]]` distributes, outermost first, by its span.
    pub selections: HashMap<Span, Vec<DimName>>,
    /// The spans of the `sync`s that synchronise a warp (a bare `sync` means the innermost block
    /// or warp: the lowering must emit the barrier the checker checked).
    pub warp_syncs: HashSet<Span>,
    /// The function passed for each function parameter at every call that passes one, by the
    /// call's span: (parameter, function or the caller's own function parameter).
    pub call_fns: HashMap<Span, Vec<(String, String)>>,
    /// The callee's data-type (`dty`, `num`) arguments at every call of a function generic over
    /// one, by the call's span (the lowering instantiates the callee with them).
    pub call_dtys: HashMap<Span, Vec<(String, Ty)>>,
    /// What tools may ask about positions ([`crate::query`]); empty unless recording.
    pub query: crate::query::Recorded,
}

pub struct FnCx<'p> {
    types: TypeTable,
    prog: &'p Program,
    sig: &'p FnSig,
    generics: HashMap<String, Kind>,
    facts: Facts,
    diags: Vec<Diagnostic>,
    seen: HashSet<(Code, Span)>,
    vars: Vec<Var>,
    scopes: Vec<Vec<usize>>,
    /// The variables in scope by name, innermost last (what `scopes` holds, indexed: a lookup
    /// that scanned every variable made a body of n statements take time n²).
    visible: HashMap<String, Vec<usize>>,
    binders: Vec<Binder>,
    frames: Vec<Frame>,
    current: Exec,
    accesses: Vec<Access>,
    /// Host borrows bound to variables: (place, ownership, span, scope depth).
    live_borrows: Vec<(Place, Ownership, Span, usize)>,
    /// Host borrows (by span) that were live at a call which may have stored a reference where
    /// [`crate::liveness`] does not follow it: they stay live to the end of their blocks.
    pinned_borrows: HashSet<Span>,
    /// Whether the value bound by a `let` (by the span of its name) or assigned to a place (by the
    /// place's span) may hold a reference, for [`crate::liveness`].
    holds_ref_at: HashMap<Span, bool>,
    /// The variable a `let` (by the span of its name) declared last: the same `let` checked
    /// again (a loop body's second pass) is the same memory.
    var_by_span: HashMap<Span, usize>,
    unsafe_depth: u32,
    /// The loans of the reference value (if any) of the expression typed last.
    val_loans: Vec<Alias>,
    /// The largest [`Uni`] of the data read while typing the current expression.
    varies: Uni,
    /// Nat variables introduced by `for` loops, by source name.
    loop_nats: Vec<String>,
    /// Sizes bound at run time by `let n: nat = e;` ([`sizes`]), with the scope depth of each.
    bound_sizes: Vec<(String, usize)>,
    /// Set while typing the borrow that initialises a `let`.
    binding_alias: bool,
    /// Nesting of named-view expansions (bounded: a view may be defined in terms of itself).
    view_depth: u32,
    /// A `return` under a varying condition or a `split` arm, and how far the threads that took it
    /// may differ: later barriers at a coarser level are not reached by all.
    divergent_return: Option<(Span, Uni)>,
    /// The enclosing loops, innermost last, for `break` and `continue` (`jumps.rs`).
    loops: Vec<jumps::LoopJumps>,
    /// How far the values a function returns may differ between its threads: its `return`
    /// values and its body's tail (a `gpu.block`/`gpu.warp` function's result is one value for
    /// the block or warp, see `check`).
    result_uni: Uni,
    /// The same for the values of its `return`s.
    returned_uni: Uni,
    /// Set while typing the arguments of `println`/`print`, which read and move nothing.
    reading_only: bool,
    /// Set while typing the arguments of a call (a `&uniq` argument is reborrowed, not moved).
    in_call_arg: bool,
    /// Set while resolving the place a borrow borrows (not its index expressions): on the host,
    /// `&uniq d[1]` of a GPU buffer `d` computes a pointer into device memory without touching
    /// it, so the dereference of `d` it goes through is no access of GPU memory (I7).
    borrowing_place: bool,
    /// Set while resolving a place that is only read (its value is read, or it is borrowed
    /// `shrd`): a run-time index in it is allowed outside `unsafe` and checked when it runs (see
    /// `rt_reads.rs`). Writes and `uniq` borrows clear it.
    rt_index_read: bool,
    /// The unsuffixed integer literals (span, value, negated) of the initialiser of each `let`
    /// whose type is still an open `{integer}`, by the span of the variable's name: they must fit
    /// the type the variable takes later.
    open_lits: HashMap<Span, Vec<(Span, u128, bool)>>,
    /// The summaries of the `gpu.block`/`gpu.warp` functions checked before this one.
    summaries: &'p Summaries,
    /// Calls of summarised functions so far: names the callee's sizes apart per call.
    fresh: u32,
    /// For each call site of a `gpu.block` function that leaves its own shared memory in use at
    /// its end: the variable standing for that memory in this body (see `callee_shared_memory`).
    site_shared: HashMap<Span, usize>,
    /// The GPU whose limits the program must respect ([`crate::target`]).
    profile: &'p crate::target::TargetProfile,
    /// The shared memory of the functions checked before this one.
    shared_uses: Option<&'p crate::target::SharedUses>,
    /// The shared memory this function's blocks use, collected as the body is checked.
    shared: limits::SharedCollect,
    /// The loans held by work pending on streams ([`streams`]).
    pending: Vec<StreamLoan>,
    /// Set while typing the initialiser of a `let` that is exactly a call (where
    /// `Stream::new()` may be).
    stream_let: bool,
    /// The streams of the work whose arguments are being typed (see [`FnCx::check_pending`]),
    /// and the span of the argument borrow that is exempt (`None`: every reference passed).
    issuing_on: Option<(Vec<usize>, Option<Span>)>,
    /// Record [`crate::query`] facts in `types.query` (for tools; off when compiling).
    recording: bool,
}

/// A loop body is checked until the loans of its references are stable, but at most this often.
const MAX_LOOP_PASSES: usize = 8;

fn dim_letter(d: DimName) -> char {
    d.letter()
}

impl<'p> FnCx<'p> {
    pub fn new(prog: &'p Program, sig: &'p FnSig, summaries: &'p Summaries) -> FnCx<'p> {
        let generics: HashMap<String, Kind> = sig.generics.iter().cloned().collect();
        let facts = sig.facts.clone();
        let current = Exec::new(sig.exec_name.clone(), sig.root.clone());
        let root_binder = Binder {
            name: sig.exec_name.clone(),
            exec: current.clone(),
            dims: Vec::new(),
            distributing: false,
            span: sig.span,
            key: current.clone(),
        };
        FnCx {
            types: TypeTable::default(),
            prog,
            sig,
            generics,
            facts,
            diags: Vec::new(),
            seen: HashSet::new(),
            vars: Vec::new(),
            scopes: vec![Vec::new()],
            visible: HashMap::new(),
            binders: vec![root_binder],
            frames: Vec::new(),
            current,
            accesses: Vec::new(),
            live_borrows: Vec::new(),
            pinned_borrows: HashSet::new(),
            holds_ref_at: HashMap::new(),
            var_by_span: HashMap::new(),
            unsafe_depth: 0,
            varies: Uni::Uniform,
            val_loans: Vec::new(),
            loop_nats: Vec::new(),
            bound_sizes: Vec::new(),
            binding_alias: false,
            view_depth: 0,
            divergent_return: None,
            loops: Vec::new(),
            result_uni: Uni::Uniform,
            returned_uni: Uni::Uniform,
            in_call_arg: false,
            borrowing_place: false,
            rt_index_read: false,
            open_lits: HashMap::new(),
            reading_only: false,
            summaries,
            fresh: 0,
            site_shared: HashMap::new(),
            profile: crate::target::TargetProfile::default_profile(),
            shared_uses: None,
            shared: limits::SharedCollect::default(),
            pending: Vec::new(),
            stream_let: false,
            issuing_on: None,
            recording: false,
        }
    }

    /// Records what [`crate::query`] answers from while checking (read-only: the diagnostics
    /// and the types are the same either way).
    pub fn recording(mut self, on: bool) -> Self {
        self.recording = on;
        self
    }

    /// Checks the function body and returns the diagnostics, the types lowering needs, the
    /// summary callers may use (see [`summary`]) and the shared memory its blocks use (see
    /// [`limits`]).
    pub fn check(mut self, f: &ast::FnDecl) -> (Vec<Diagnostic>, TypeTable, Option<Summary>, crate::target::SharedUse) {
        let level = self.level();
        if matches!(self.sig.root, Root::Grid { .. }) && self.sig.ret != Ty::UNIT {
            let span = f.ret.as_ref().map_or(f.name.span, |t| t.span);
            self.error(
                codes::MISMATCHED_TYPES,
                span,
                "mismatched types",
                format!("a kernel returns nothing to the host: expected `()`, found `{}`", self.sig.ret),
            );
        }
        for (i, p) in self.sig.params.iter().enumerate() {
            if f.params[i].exec.is_some() && !matches!(&p.ty, Ty::Ref { own: Ownership::Uniq, mem: Mem::GpuShared, .. })
            {
                self.error(
                    codes::MISMATCHED_TYPES,
                    f.params[i].ty.span,
                    "mismatched types",
                    format!("a parameter owned by a sub-resource is allocated by the launch and must be `&uniq gpu.shared …`, found `{}`", p.ty),
                );
            }
            if f.params[i].exec.is_none()
                && matches!(&p.ty, Ty::Ref { mem: Mem::GpuShared, .. })
                && matches!(self.sig.root, Root::Grid { .. })
            {
                self.error(
                    codes::MISMATCHED_TYPES,
                    f.params[i].ty.span,
                    "mismatched types",
                    "shared memory belongs to one block: declare the owner, e.g. `[grid.blocks.forall(X)] tmp: &uniq gpu.shared …`",
                );
            }
            self.check_sizes_natural(&p.ty, f.params[i].ty.span);
            let owner = match &f.params[i].exec {
                Some(e) => match self.resolve_exec(e) {
                    Some(ex) => {
                        self.check_memory_owner(&ex, e.span, &p.name, &p.ty);
                        Owner::Exec(ex)
                    }
                    None => Owner::Chain(0),
                },
                None => Owner::Chain(0),
            };
            let var = Var {
                name: p.name.clone(),
                ty: p.ty.clone(),
                owner,
                level,
                mutable: p.mutable,
                moved: None,
                loans: Vec::new(),
                nat: None,
                span: p.span,
                depth: 0,
                varies: Uni::Uniform,
                tracked: false,
                arms: 0,
            };
            self.declare(var);
        }
        for (name, kind) in &self.sig.generics {
            if *kind == Kind::Nat {
                let var = Var {
                    name: name.clone(),
                    ty: Ty::Nat,
                    owner: Owner::Chain(0),
                    level,
                    mutable: false,
                    moved: None,
                    loans: Vec::new(),
                    nat: Some(Nat::var(name)),
                    span: self.sig.span,
                    depth: 0,
                    varies: Uni::Uniform,
                    tracked: false,
                    arms: 0,
                };
                self.declare(var);
            }
        }
        if let Some(body) = &f.body {
            let ret = self.sig.ret.clone();
            let ty = self.block(body, Some(&ret));
            let tail_span = body.stmts.last().map_or(body.span, |s| s.span());
            let returns = body.stmts.last().is_some_and(|s| {
                matches!(s, ast::Stmt::Expr { expr: ast::Expr { kind: ExprKind::Return(_), .. }, .. })
            });
            if !returns && !self.compatible(&ret, &ty) {
                self.mismatch(tail_span, &ret, &ty);
            }
            if !returns && level == Level::Cpu {
                self.check_no_pending(body.span.end());
            }
            self.check_result_uniform(returns, tail_span);
        }
        let summary = self.summary(f);
        let shared = self.shared_use();
        (self.diags, self.types, summary, shared)
    }

    // --------------------------------------------------------------------------------------------
    // Diagnostics

    fn report(&mut self, d: Diagnostic) {
        if self.seen.insert((d.code, d.primary.span)) {
            self.diags.push(d);
        }
    }

    fn error(&mut self, code: Code, span: Span, message: impl Into<String>, label: impl Into<String>) {
        self.report(Diagnostic::error(code, message, span, label));
    }

    /// E0101 for `name`, with "did you mean" the most similar name of its kind in scope.
    /// Whether a value of `t` may hold a reference (a `num` generic of this function does not).
    fn holds_ref(&self, t: &Ty) -> bool {
        holds_ref_with(t, &|v| self.sig.is_num(v))
    }

    /// Whether values of `t` are copied, not moved: a `num` generic of this function is.
    fn copyable(&self, t: &Ty) -> bool {
        t.is_copy_with(&|v| self.sig.is_num(v))
    }

    fn unknown_name(&mut self, span: Span, name: &str, message: String, kind: NameKind) {
        if kind == NameKind::Value && self.sig.fn_param(name).is_some() {
            self.report(
                Diagnostic::error(
                    codes::FN_NOT_VALUE,
                    format!("the function parameter `{name}` is not a value"),
                    span,
                    "a function parameter can only be called or passed to a function parameter",
                )
                .with_note("function values cannot be stored, returned or compared: every call that passes a function is instantiated with it"),
            );
            return;
        }
        let mut d = Diagnostic::error(codes::UNKNOWN_NAME, message, span, "not found in this scope");
        let left = self.prog.suggestions_left.get();
        if left > 0 {
            self.prog.suggestions_left.set(left - 1);
            if let Some(similar) = self.similar_name(name, kind) {
                d = d.with_note(format!("help: a name in scope is similar: `{similar}`"));
            }
        }
        self.report(d);
    }

    /// The name of `kind` in scope most similar to `name` (innermost variables first, then
    /// constants, functions and paths in sorted order: ties are decided the same way every time).
    fn similar_name(&self, name: &str, kind: NameKind) -> Option<String> {
        let sorted = |mut names: Vec<&'p str>| {
            names.sort_unstable();
            names
        };
        let found = match kind {
            NameKind::Value => {
                let vars = self.scopes.iter().rev().flat_map(|s| s.iter().rev()).map(|&id| self.vars[id].name.as_str());
                let consts = sorted(self.prog.consts.keys().map(String::as_str).collect());
                strata_diag::suggest(name, vars.chain(consts))
            }
            NameKind::Function => {
                let mut fns: Vec<&str> = self.prog.fns.keys().map(String::as_str).collect();
                fns.extend(crate::program::PATH_ALIASES.iter().map(|(path, _)| *path));
                strata_diag::suggest(name, sorted(fns))
            }
            NameKind::Resource => strata_diag::suggest(
                name,
                self.binders.iter().rev().filter(|b| self.binder_in_scope(b)).map(|b| b.name.as_str()),
            ),
        };
        found.map(str::to_string)
    }

    fn mismatch(&mut self, span: Span, expected: &Ty, found: &Ty) {
        let label = match (expected, found) {
            (Ty::Ref { mem: m1, .. }, Ty::Ref { mem: m2, .. }) if m1 != m2 => {
                format!("expected reference to `{m1}`, found reference to `{m2}`")
            }
            _ => format!("expected `{}`, found `{}`", expected.defaulted(), found.defaulted()),
        };
        self.error(codes::MISMATCHED_TYPES, span, "mismatched types", label);
    }

    /// E0304 for a split position `pos` that is not known to be at most `len` (`truth` says
    /// whether it is false or only unproven), with a note on why: `fits` describes the constant
    /// case ("`take_left::<300>` takes 300 elements of 256"), `may_exceed` ends the others ("so
    /// `take_left::<i + 1>` may exceed the length 64"), after the size variables the bound
    /// depends on and what is known of them (a loop variable's range), or that nothing is.
    fn take_out_of_bounds(
        &self,
        truth: Truth,
        (pos, len): (&Nat, &Nat),
        span: Span,
        fits: String,
        may_exceed: String,
    ) -> Diagnostic {
        let label = match truth {
            Truth::Disproven => format!("`{pos} <= {len}` is false"),
            _ => format!("cannot prove `{pos} <= {len}`"),
        };
        let d = Diagnostic::error(codes::TAKE_OUT_OF_BOUNDS, "split position out of bounds", span, label);
        let mut vars = pos.vars();
        vars.extend(len.vars());
        if vars.is_empty() {
            return d.with_note(fits);
        }
        let context = self.facts.describe(&vars);
        let names = vars.iter().map(|v| format!("`{v}`")).collect::<Vec<_>>().join(", ");
        let known = if context.is_empty() { format!("nothing in scope bounds {names}") } else { context };
        let verb = if truth == Truth::Disproven { "exceeds" } else { "may exceed" };
        d.with_note(format!("{known}, so {}", may_exceed.replacen("{}", verb, 1)))
    }

    /// [`FnCx::mismatch`] for the expression `e`: an integer literal where a float is expected
    /// gets the float literal to write instead (`1` → `1.0`).
    fn mismatch_expr(&mut self, e: &ast::Expr, expected: &Ty, found: &Ty) {
        let before = self.diags.len();
        self.mismatch(e.span, expected, found);
        if self.diags.len() == before || !matches!(expected, Ty::FloatLit | Ty::Scalar(ScalarTy::F32 | ScalarTy::F64)) {
            return;
        }
        let literal = match &e.kind {
            ExprKind::Lit(ast::Lit::Int(v, None)) => Some(format!("{v}.0")),
            ExprKind::Unary(ast::UnOp::Neg, x) => match &x.kind {
                ExprKind::Lit(ast::Lit::Int(v, None)) => Some(format!("-{v}.0")),
                _ => None,
            },
            _ => None,
        };
        if let (Some(lit), Some(d)) = (literal, self.diags.last_mut()) {
            d.notes.push(format!("help: use a floating-point literal: `{lit}`"));
        }
    }

    fn in_unsafe(&self) -> bool {
        self.unsafe_depth > 0
    }

    // --------------------------------------------------------------------------------------------
    // Scopes and variables

    fn declare(&mut self, var: Var) -> usize {
        let id = self.vars.len();
        if self.recording && var.span != self.sig.span {
            let fact = crate::query::DeclFact {
                name: var.name.clone(),
                ty: var.ty.clone(),
                level: var.level,
                mutable: var.mutable,
            };
            self.types.query.decls.insert(var.span, fact);
        }
        if let Some(scope) = self.scopes.last_mut() {
            scope.push(id);
            self.visible.entry(var.name.clone()).or_default().push(id);
        }
        self.vars.push(var);
        id
    }

    /// The innermost variable named `name` in scope.
    fn lookup(&self, name: &str) -> Option<usize> {
        self.visible.get(name).and_then(|ids| ids.last()).copied()
    }

    fn push_scope(&mut self) {
        self.scopes.push(Vec::new());
    }

    fn pop_scope(&mut self) {
        self.end_bound_sizes(self.scopes.len());
        if let Some(scope) = self.scopes.pop() {
            for id in scope.into_iter().rev() {
                if let Some(ids) = self.visible.get_mut(&self.vars[id].name) {
                    ids.pop();
                }
            }
        }
        let depth = self.scopes.len();
        self.live_borrows.retain(|b| b.3 <= depth);
    }

    fn level(&self) -> Level {
        self.current.shape().map(|s| s.level).unwrap_or(Level::Any)
    }

    fn on_gpu(&self) -> bool {
        !matches!(self.level(), Level::Cpu)
    }

    /// The `sched` binders enclosing the current point, outermost first.
    fn chain(&self) -> Vec<usize> {
        self.frames.iter().filter_map(|f| if let Frame::Sched(b) = f { Some(*b) } else { None }).collect()
    }

    fn lower(&mut self) -> Lower<'_> {
        let mut generics = self.generics.clone();
        for n in self.loop_nats.iter().chain(self.bound_sizes.iter().map(|(n, _)| n)) {
            generics.insert(n.clone(), Kind::Nat);
        }
        let default_mem = if self.on_gpu() { Mem::GpuGlobal } else { Mem::CpuMem };
        Lower {
            consts: &self.prog.consts,
            generics,
            default_mem,
            diags: &mut self.diags,
            facts: Some(&self.facts),
            env: None,
        }
    }

    fn lower_nat(&mut self, n: &ast::Nat) -> Option<Nat> {
        self.lower().nat_checked(n)
    }

    fn lower_ty(&mut self, t: &ast::Ty) -> Ty {
        self.lower().ty(t)
    }

    // --------------------------------------------------------------------------------------------
    // Execution resources

    // --------------------------------------------------------------------------------------------
    // Blocks and statements

    fn block(&mut self, b: &ast::Block, expected: Option<&Ty>) -> Ty {
        self.push_scope();
        let mut ty = Ty::UNIT;
        let n = b.stmts.len();
        // Host borrows bound by `let` end after the last statement that may use them (non-lexical
        // lifetimes, as in Rust); GPU code keeps lexical borrows.
        let uses = (self.level() == Level::Cpu).then(|| crate::liveness::BlockUses::new(&b.stmts));
        let mut pending: Vec<(Span, crate::liveness::Flow)> = Vec::new();
        for (i, s) in b.stmts.iter().enumerate() {
            let last = i + 1 == n;
            match s {
                ast::Stmt::Let(l) => {
                    self.let_stmt(l);
                    ty = Ty::UNIT;
                }
                ast::Stmt::Expr { expr, semi } => {
                    let exp = if last && !semi { expected } else { None };
                    let (t, uni) = self.expr_uni(expr, exp);
                    if last && !semi {
                        // The outermost block is the last to set it: the function's tail.
                        self.result_uni = uni.max(self.context_uni());
                        let depth = self.scopes.len() - 1;
                        let loans = self.val_loans.clone();
                        self.check_loans_outlive(expr, &loans, depth, "escapes the block that frees it");
                        self.check_no_escaping_size(&t, expr.span);
                    }
                    ty = if last && !semi { t } else { Ty::UNIT };
                }
            }
            if let (Some(uses), false) = (&uses, last) {
                let holds = |s: Span| self.holds_ref_at.get(&s).copied().unwrap_or(true);
                for (_, flow) in &mut pending {
                    flow.step(&b.stmts, i, uses, &holds);
                }
                if let ast::Stmt::Let(ast::LetStmt { name, init: Some(init), .. }) = s {
                    if matches!(init.kind, ExprKind::Borrow { .. }) {
                        pending.push((init.span, crate::liveness::Flow::new(&name.name)));
                    }
                }
                // `r = &… p;` re-points a reference variable of this block: the new borrow was made
                // to live as long as `r` (`assign`); it ends after its last use, as a `let`'s.
                if let Some((x, rhs)) = crate::liveness::overwritten(s) {
                    if matches!(rhs.kind, ExprKind::Borrow { .. }) && uses.declared_before(x, i) {
                        pending.push((rhs.span, crate::liveness::Flow::new(x)));
                    }
                }
                let (ended, live): (Vec<_>, Vec<_>) = pending.into_iter().partition(|(_, f)| f.dead_after(i, uses));
                pending = live;
                for (span, _) in ended {
                    self.end_borrow(span);
                }
            }
        }
        if !self.pending.is_empty() {
            let scope = self.scopes.last().cloned().unwrap_or_default();
            let end = Span { lo: b.span.hi.saturating_sub(1).max(b.span.lo), ..b.span };
            self.end_scope_streams(&scope, end);
        }
        self.pop_scope();
        ty
    }

    fn let_stmt(&mut self, l: &ast::LetStmt) {
        if self.is_size_binding(l) {
            self.size_let(l);
            return;
        }
        let declared = l.ty.as_ref().map(|t| self.lower_ty(t));
        if let (Some(d), Some(t)) = (&declared, &l.ty) {
            self.check_sizes_natural(d, t.span);
        }
        let owner_exec = l.exec.as_ref().and_then(|e| self.resolve_exec(e));
        let mut loans = Vec::new();
        let mut init_uni = Uni::Uniform;
        let ty = match &l.init {
            Some(init) => {
                // Borrowing to bind a reference is not an access, however the borrow reaches the
                // variable (directly, or as the value of an `if`, a block or a tuple): the
                // accesses through the reference are (a call's arguments are uses, see `call`).
                self.binding_alias = matches!(
                    init.kind,
                    ExprKind::Borrow { .. }
                        | ExprKind::If { .. }
                        | ExprKind::Block(_)
                        | ExprKind::Tuple(_)
                        | ExprKind::Paren(_)
                );
                let errors_before = self.diags.len();
                self.stream_let = matches!(init.kind, ExprKind::Call { .. });
                let (t, uni) = self.expr_uni(init, declared.as_ref());
                self.stream_let = false;
                init_uni = uni;
                if self.holds_ref(&t) {
                    loans = std::mem::take(&mut self.val_loans);
                }
                let init_ok = self.diags.len() == errors_before;
                self.binding_alias = false;
                if let Some(d) = &declared {
                    if !self.compatible(d, &t) {
                        self.mismatch_expr(init, d, &t);
                    } else if matches!(t, Ty::IntLit | Ty::FloatLit) {
                        self.fix_open_var(init, d);
                    }
                }
                if let ExprKind::Borrow { own, place, .. } = &init.kind {
                    if let Some(info) = self.place_quiet(place) {
                        // A borrow that was itself an error is not tracked: it would only cascade.
                        if !info.via_alias && init_ok {
                            let depth = self.scopes.len();
                            self.live_borrows.push((info.place.clone(), *own, init.span, depth));
                        }
                    }
                } else if init_ok && self.holds_ref(&t) {
                    // A reference that comes out of a call or a block may be any borrow made in
                    // the initialiser: all of them live as long as the variable.
                    let depth = self.scopes.len();
                    self.track_stored_borrows(init, depth);
                }
                // An unannotated literal keeps its open type (`let mut sum = 0.0;` may be an f32),
                // as in Rust; anything else is fixed now.
                declared
                    .unwrap_or_else(|| if matches!(t, Ty::IntLit | Ty::FloatLit) { t.clone() } else { t.defaulted() })
            }
            None => match declared {
                Some(d) => {
                    // Only shared memory is declared without a value: the launch allocates it.
                    if !matches!(d, Ty::At(_, Mem::GpuShared) | Ty::Error) {
                        self.error(
                            codes::UNINITIALISED,
                            l.name.span,
                            format!("`{}` is declared without a value", l.name.name),
                            "give it a value here; only shared memory (`@ gpu.shared`) is declared without one",
                        );
                    }
                    d
                }
                None => {
                    self.error(
                        codes::CANNOT_INFER,
                        l.name.span,
                        format!("cannot infer the type of `{}`", l.name.name),
                        "give it a type or an initial value",
                    );
                    Ty::Error
                }
            },
        };
        if ty.mentions_stream() && !ty.is_stream_handle() {
            self.stream_misuse(
                l.name.span,
                "a stream cannot be part of another value",
                "a variable holds a stream (`let s = Stream::new();`) or a reference to one (`&s`)",
            );
        }
        if matches!(&ty, Ty::At(_, Mem::GpuShared)) && owner_exec.is_none() && self.level() != Level::Block {
            self.error(
                codes::NARROWING_VIOLATED,
                l.name.span,
                "narrowing violated",
                format!(
                    "shared memory exists once per block, but `{}` is declared by {}: declare it in block-level code",
                    l.name.name,
                    self.level().describe()
                ),
            );
        }
        if let (Some(ex), Some(e)) = (&owner_exec, &l.exec) {
            let ex = ex.clone();
            self.check_memory_owner(&ex, e.span, &l.name.name, &ty);
        }
        let owner = match owner_exec {
            Some(e) => Owner::Exec(e),
            None => Owner::Chain(self.chain().len()),
        };
        self.types.lets.insert(l.name.span, ty.defaulted());
        self.note_shared_let(&l.name, &ty);
        self.holds_ref_at.insert(l.name.span, self.holds_ref(&ty));
        if ty == Ty::IntLit {
            if let Some(init) = &l.init {
                let mut lits = Vec::new();
                Self::open_int_literals(init, false, &mut lits);
                self.open_lits.insert(l.name.span, lits);
            }
        }
        let tracked = self.on_gpu() && self.copyable(&ty) && !self.holds_ref(&ty);
        let var = Var {
            name: l.name.name.clone(),
            ty,
            owner,
            level: self.level(),
            mutable: l.mutable,
            moved: None,
            loans,
            nat: None,
            span: l.name.span,
            depth: self.scopes.len(),
            varies: if self.on_gpu() { init_uni.max(self.context_uni()) } else { Uni::Uniform },
            tracked,
            arms: self.arm_count(),
        };
        let id = self.declare(var);
        self.same_memory_as_earlier_pass(id);
    }

    // --------------------------------------------------------------------------------------------
    // Expressions

    /// Types an expression. Its reference value's loans are left in [`FnCx::val_loans`] (empty
    /// when it holds no reference).
    fn expr(&mut self, e: &ast::Expr, expected: Option<&Ty>) -> Ty {
        self.val_loans.clear();
        let t = if self.recording { self.expr_recorded(e, expected) } else { self.expr_kind(e, expected) };
        if !self.holds_ref(&t) || t.is_error() {
            self.val_loans.clear();
        }
        t
    }

    /// [`FnCx::expr_kind`], recording the expression's type, resource and uniformity for
    /// [`crate::query`]. The uniformity is gathered as [`FnCx::expr_uni`] does, which leaves
    /// `varies` as it would be without recording.
    fn expr_recorded(&mut self, e: &ast::Expr, expected: Option<&Ty>) -> Ty {
        let saved = std::mem::take(&mut self.varies);
        let t = self.expr_kind(e, expected);
        let uni = self.varies;
        self.varies = saved.max(uni);
        let on_gpu = self.on_gpu();
        let level = self.level();
        let q = &mut self.types.query;
        let mem = q.exprs.get(&e.span).and_then(|f| f.mem.clone());
        let fact = crate::query::ExprFact {
            ty: t.clone(),
            exec: self.current.name.clone(),
            level,
            uniformity: on_gpu.then(|| match uni {
                Uni::Uniform => "uniform",
                other => other.noun(),
            }),
            mem,
        };
        q.exprs.insert(e.span, fact);
        t
    }

    fn expr_kind(&mut self, e: &ast::Expr, expected: Option<&Ty>) -> Ty {
        // An expression inside a borrowed place (an index) reads what it reads.
        let borrowing = std::mem::take(&mut self.borrowing_place);
        let t = self.expr_kind_inner(e, expected);
        self.borrowing_place = borrowing;
        t
    }

    fn expr_kind_inner(&mut self, e: &ast::Expr, expected: Option<&Ty>) -> Ty {
        match &e.kind {
            ExprKind::Lit(lit) => {
                let t = self.literal(lit, expected, e.span);
                self.types.literals.insert(e.span, t.defaulted());
                t
            }
            ExprKind::Path(segs) if segs.len() == 1 => {
                let name = &segs[0];
                if let (true, Some(id)) = (self.recording, self.lookup(&name.name)) {
                    self.types.query.uses.insert(name.span, self.vars[id].span);
                }
                match self.lookup(&name.name) {
                    Some(id) if self.vars[id].nat.is_some() => Ty::Nat,
                    Some(_) => self.read_place(e),
                    None if self.prog.consts.contains_key(&name.name) => Ty::Nat,
                    None => {
                        let what =
                            if self.prog.fns.contains_key(&name.name) { "a value (it is a function)" } else { "value" };
                        self.unknown_name(
                            name.span,
                            &name.name,
                            format!("cannot find {what} `{}` in this scope", name.name),
                            NameKind::Value,
                        );
                        Ty::Error
                    }
                }
            }
            ExprKind::Path(segs) => {
                let path = segs.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join("::");
                self.error(codes::UNKNOWN_NAME, e.span, format!("cannot find value `{path}`"), "not a value");
                Ty::Error
            }
            ExprKind::View(base, v) if self.is_coordinate(base, v) => self.coordinate(base, v, e.span),
            ExprKind::Field(..)
            | ExprKind::Index(..)
            | ExprKind::Select(..)
            | ExprKind::View(..)
            | ExprKind::Deref(_) => self.read_place(e),
            ExprKind::Paren(inner) => self.expr(inner, expected),
            ExprKind::Unary(op, inner) => {
                let t = self.expr(inner, expected);
                let unsigned = matches!(t, Ty::Scalar(s) if s.is_unsigned_int()) || t == Ty::Nat;
                match op {
                    UnOp::Neg if (t.is_numeric() && !unsigned) || t.is_error() => t,
                    UnOp::Not if t == Ty::BOOL || t.is_int() || t.is_error() => t,
                    _ => {
                        let sym = if *op == UnOp::Neg { "-" } else { "!" };
                        self.error(
                            codes::BAD_OPERANDS,
                            e.span,
                            format!("cannot apply `{sym}` to `{t}`"),
                            "invalid operand",
                        );
                        Ty::Error
                    }
                }
            }
            ExprKind::Binary(op, l, r) => self.binary(*op, l, r, expected, e.span),
            ExprKind::Cast(inner, ty) => {
                let target = self.lower_ty(ty);
                let t = self.expr(inner, None);
                let ok = |t: &Ty| t.is_numeric() || *t == Ty::BOOL || t.is_error();
                if !(ok(&t) && (target.is_numeric() || target.is_error())) {
                    self.error(codes::BAD_OPERANDS, e.span, format!("cannot cast `{t}` as `{target}`"), "invalid cast");
                }
                target
            }
            ExprKind::Borrow { own, place, .. } => self.borrow(*own, place, e.span),
            ExprKind::Assign(lhs, rhs) => {
                self.assign(lhs, rhs, None, e.span);
                Ty::UNIT
            }
            ExprKind::CompoundAssign(op, lhs, rhs) => {
                self.assign(lhs, rhs, Some(*op), e.span);
                Ty::UNIT
            }
            ExprKind::Block(b) => self.block(b, expected),
            ExprKind::For { var, start, end, body } => {
                self.for_loop(var, start, end, body);
                Ty::UNIT
            }
            ExprKind::While { cond, body } => {
                self.while_loop(cond, body);
                Ty::UNIT
            }
            ExprKind::If { cond, then, els } => {
                let t = self.if_expr(cond, then, els.as_deref(), expected);
                if t != Ty::UNIT && t != Ty::Error {
                    self.types.value_types.insert(e.span, t.defaulted());
                }
                t
            }
            ExprKind::Sched { dims, var, exec, body } => {
                self.sched(dims, var, exec, body, e.span);
                Ty::UNIT
            }
            ExprKind::Split { dim, exec, at, arms } => {
                self.split(*dim, exec, at, arms, e.span);
                Ty::UNIT
            }
            ExprKind::Sync(target) => {
                self.sync(target.as_ref(), e.span);
                Ty::UNIT
            }
            ExprKind::Unsafe(inner) => {
                self.unsafe_depth += 1;
                let t = self.expr(inner, expected);
                self.unsafe_depth -= 1;
                t
            }
            ExprKind::Call { func, generics, exec, launch, args } => {
                self.call(func, generics, exec.as_ref(), launch.as_ref(), args, e.span, expected)
            }
            ExprKind::Tuple(es) => {
                let exp: Option<Vec<Ty>> = match expected {
                    Some(Ty::Tuple(ts)) if ts.len() == es.len() => Some(ts.clone()),
                    _ => None,
                };
                // A tuple holds the loans of all its components.
                let mut parts = Vec::new();
                let mut tys = Vec::new();
                for (i, x) in es.iter().enumerate() {
                    tys.push(self.expr(x, exp.as_ref().map(|t| &t[i])));
                    parts.push((std::mem::take(&mut self.val_loans), x.span));
                }
                self.val_loans = self.aggregate_loans(parts);
                Ty::Tuple(tys)
            }
            ExprKind::ArrayList(es) => {
                let elem_exp = match expected {
                    Some(Ty::Array(t, _)) => Some((**t).clone()),
                    _ => None,
                };
                let mut elem = elem_exp.clone();
                let mut parts = Vec::new();
                for x in es {
                    let t = self.expr(x, elem.as_ref());
                    parts.push((std::mem::take(&mut self.val_loans), x.span));
                    match &elem {
                        Some(el) if !self.compatible(el, &t) => self.mismatch_expr(x, el, &t),
                        Some(_) => {}
                        None => elem = Some(t),
                    }
                }
                self.val_loans = self.aggregate_loans(parts);
                Ty::Array(Box::new(elem.unwrap_or(Ty::IntLit)), Nat::lit(es.len() as u64))
            }
            ExprKind::ArrayRepeat(x, n) => {
                let elem_exp = match expected {
                    Some(Ty::Array(t, _)) => Some((**t).clone()),
                    _ => None,
                };
                let t = self.expr(x, elem_exp.as_ref());
                let loans = std::mem::take(&mut self.val_loans);
                let n = self.lower_nat(n).unwrap_or_else(|| Nat::lit(0));
                self.val_loans = loans;
                self.check_sizes_natural(&Ty::Array(Box::new(Ty::UNIT), n.clone()), e.span);
                let elem = match elem_exp {
                    Some(el) if self.compatible(&el, &t) => el,
                    _ => t,
                };
                let array = Ty::Array(Box::new(elem), n);
                self.require_addressable(&array, e.span);
                array
            }
            ExprKind::Return(v) => {
                // The threads that return and those that go on differ as far as the control flow
                // around the `return` does: the rest of the code runs under that condition.
                let uni = self.context_uni().max(self.range_uni());
                if self.on_gpu() && uni > Uni::Uniform && !matches!(self.divergent_return, Some((_, u)) if u >= uni) {
                    self.divergent_return = Some((e.span, uni));
                }
                let ret = self.sig.ret.clone();
                let (t, value_uni) = v.as_ref().map_or((Ty::UNIT, Uni::Uniform), |v| self.expr_uni(v, Some(&ret)));
                self.returned_uni = self.returned_uni.max(value_uni).max(uni);
                if !self.on_gpu() {
                    self.check_no_pending(e.span);
                }
                if let Some(v) = v {
                    let loans = std::mem::take(&mut self.val_loans);
                    self.check_loans_outlive(v, &loans, 0, "is returned from the function");
                }
                if !self.compatible(&ret, &t) {
                    match v {
                        Some(v) => self.mismatch_expr(v, &ret, &t),
                        None => self.mismatch(e.span, &ret, &t),
                    }
                }
                Ty::UNIT
            }
            ExprKind::Break => self.jump(true, e.span),
            ExprKind::Continue => self.jump(false, e.span),
            ExprKind::Error => Ty::Error,
        }
    }

    fn literal(&mut self, lit: &ast::Lit, expected: Option<&Ty>, span: Span) -> Ty {
        match lit {
            ast::Lit::Bool(_) => Ty::BOOL,
            ast::Lit::Unit => Ty::UNIT,
            ast::Lit::Int(v, suffix) => {
                let ty = match (suffix, expected) {
                    (Some(s), _) => Ty::Scalar(*s),
                    (None, Some(t @ Ty::Scalar(_))) if t.is_numeric() && t.is_int() => t.clone(),
                    _ => Ty::IntLit,
                };
                let max: u128 = match ty {
                    Ty::IntLit => i32::MAX as u128,
                    Ty::Scalar(s) if s.is_int() => s.int_range().map_or(u64::MAX as u128, |(_, hi)| hi as u128),
                    _ => u64::MAX as u128,
                };
                if *v > max && !ty.is_float() {
                    self.error(
                        codes::INVALID_LITERAL,
                        span,
                        format!("literal out of range for `{}`", ty.defaulted()),
                        "too large",
                    );
                }
                ty
            }
            ast::Lit::Float(_, suffix) => match (suffix, expected) {
                (Some(s), _) => Ty::Scalar(*s),
                (None, Some(t @ Ty::Scalar(ScalarTy::F32 | ScalarTy::F64))) => t.clone(),
                _ => Ty::FloatLit,
            },
            ast::Lit::Str(_) => {
                self.error(
                    codes::MISMATCHED_TYPES,
                    span,
                    "string literals are not values",
                    "strings cannot be stored or computed with",
                );
                Ty::Error
            }
        }
    }

    fn binary(&mut self, op: BinOp, l: &ast::Expr, r: &ast::Expr, expected: Option<&Ty>, span: Span) -> Ty {
        // A comparison of sizes (`n < 8`, `n % 256 == 0`) is evaluated in `u64`, exactly: in the
        // literals' default `i32` a large size would be truncated, and the condition would hold
        // where the fact it gives the branch does not.
        let u64_ty = Ty::Scalar(ScalarTy::U64);
        let size_cmp = op.is_comparison() && (self.mentions_size(l) || self.mentions_size(r));
        let operand_exp = if size_cmp {
            Some(&u64_ty)
        } else if op.is_comparison() || matches!(op, BinOp::And | BinOp::Or) {
            None
        } else {
            expected
        };
        let (mut lt, l_uni) = self.expr_uni(l, operand_exp);
        // The right operand of `&&` and `||` runs only where the left one lets it.
        let short = matches!(op, BinOp::And | BinOp::Or) && l_uni > Uni::Uniform && self.on_gpu();
        if short {
            self.frames.push(Frame::Cond { span: l.span, uni: l_uni });
        }
        let rt = self.expr(r, if matches!(lt, Ty::IntLit | Ty::FloatLit | Ty::Nat) { operand_exp } else { Some(&lt) });
        if short {
            self.frames.pop();
        }
        if matches!(lt, Ty::IntLit | Ty::FloatLit | Ty::Nat) && !matches!(rt, Ty::IntLit | Ty::FloatLit | Ty::Nat) {
            lt = self.expr_type_again(l, &rt, lt);
        }
        if lt.is_error() || rt.is_error() {
            return if op.is_comparison() { Ty::BOOL } else { Ty::Error };
        }
        if matches!(rt, Ty::IntLit | Ty::FloatLit) && !matches!(lt, Ty::IntLit | Ty::FloatLit | Ty::Nat) {
            self.fix_open_var(r, &lt);
        }
        if size_cmp && matches!(lt, Ty::IntLit | Ty::Nat) && matches!(rt, Ty::IntLit | Ty::Nat) {
            self.retype_literals(l, &u64_ty);
            self.retype_literals(r, &u64_ty);
        }
        // Arithmetic and comparisons on a `num` generic: defined for every numeric type it may
        // be instantiated with.
        if let (Ty::Var(a), Ty::Var(b)) = (&lt, &rt) {
            if a == b && self.sig.is_num(a) {
                if op.is_comparison() {
                    return Ty::BOOL;
                }
                if matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div) {
                    return lt.clone();
                }
            }
        }
        let joined = self.join_numeric(&lt, &rt);
        let generic = [&lt, &rt].into_iter().find_map(|t| match t {
            Ty::Var(v) => Some((v.clone(), self.sig.is_num(v))),
            _ => None,
        });
        let bad = |me: &mut Self| {
            let mut d = Diagnostic::error(
                codes::BAD_OPERANDS,
                format!("cannot apply `{}` to `{}` and `{}`", op.symbol(), lt.defaulted(), rt.defaulted()),
                span,
                "invalid operands",
            );
            match &generic {
                Some((v, false)) => {
                    d = d.with_note(format!(
                        "help: `{v}` is any data type; bound it as `{v}: num` for `+ - * /` and comparisons"
                    ))
                }
                Some((v, true)) => {
                    d = d.with_note(format!(
                        "a `num` value takes `+ - * /` and comparisons with a value of the same type `{v}` \
                         (literals: `zero::<{v}>()`, `one::<{v}>()`)"
                    ))
                }
                None => {}
            }
            me.report(d);
            Ty::Error
        };
        match op {
            BinOp::And | BinOp::Or => {
                if lt == Ty::BOOL && rt == Ty::BOOL {
                    Ty::BOOL
                } else {
                    bad(self)
                }
            }
            _ if op.is_comparison() => {
                if joined.is_some() || (lt == rt && matches!(lt, Ty::Scalar(ScalarTy::Bool))) {
                    Ty::BOOL
                } else {
                    bad(self)
                }
            }
            BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::Shl | BinOp::Shr => match joined {
                Some(t) if t.is_int() => t,
                _ if lt == Ty::BOOL && rt == Ty::BOOL && !matches!(op, BinOp::Shl | BinOp::Shr) => Ty::BOOL,
                _ => bad(self),
            },
            _ => match joined {
                Some(t) => t,
                None => bad(self),
            },
        }
    }

    /// A literal on the left adopts the type of the right operand (`2.0 * x` with `x: f32`).
    fn expr_type_again(&mut self, l: &ast::Expr, rt: &Ty, lt: Ty) -> Ty {
        let t = match (&lt, rt) {
            (Ty::IntLit | Ty::Nat, t) if t.is_int() => t.clone(),
            (Ty::FloatLit, t) if t.is_float() => t.clone(),
            _ => return lt,
        };
        self.retype_literals(l, &t);
        self.fix_open_var(l, &t);
        t
    }

    /// A variable bound to an unannotated literal (`let mut i = 0;`) takes the type of the first
    /// concrete type it meets (`i < n` with `n: u32`), as in Rust.
    fn fix_open_var(&mut self, e: &ast::Expr, ty: &Ty) {
        let mut e = e;
        while let ExprKind::Paren(x) = &e.kind {
            e = x;
        }
        let ExprKind::Path(segs) = &e.kind else { return };
        let Some(id) = self.lookup(&segs[0].name) else { return };
        let v = &mut self.vars[id];
        let fits = match v.ty {
            Ty::IntLit => ty.is_int() && !matches!(ty, Ty::Nat | Ty::IntLit),
            Ty::FloatLit => ty.is_float() && *ty != Ty::FloatLit,
            _ => false,
        };
        if fits && v.nat.is_none() {
            v.ty = ty.clone();
            let var_span = v.span;
            self.types.lets.insert(var_span, ty.clone());
            // The literals of its initialiser take the type too, and must fit it.
            for (span, value, neg) in self.open_lits.get(&var_span).cloned().unwrap_or_default() {
                self.check_literal_fits(span, value, neg, ty);
            }
        }
    }

    /// Records `ty` for the literals an operand is made of (`2.0`, `-(1)`), once its type is known.
    fn retype_literals(&mut self, e: &ast::Expr, ty: &Ty) {
        self.retype_literals_signed(e, ty, false);
    }

    /// [`FnCx::retype_literals`], `neg` when `e` is under an odd number of unary `-`: an integer
    /// literal must fit the type it takes (E0004), as one written with that suffix must (`300`
    /// taking `u8` from `x + 300`, `-1` taking `u32`).
    fn retype_literals_signed(&mut self, e: &ast::Expr, ty: &Ty, neg: bool) {
        match &e.kind {
            ExprKind::Lit(ast::Lit::Int(v, None)) => {
                self.check_literal_fits(e.span, *v, neg, ty);
                self.types.literals.insert(e.span, ty.clone());
            }
            ExprKind::Lit(ast::Lit::Float(_, None)) => {
                self.types.literals.insert(e.span, ty.clone());
            }
            ExprKind::Paren(x) => self.retype_literals_signed(x, ty, neg),
            ExprKind::Unary(op, x) => self.retype_literals_signed(x, ty, neg ^ (*op == UnOp::Neg)),
            ExprKind::Binary(op, a, b) if !op.is_comparison() && !matches!(op, BinOp::And | BinOp::Or) => {
                self.retype_literals(a, ty);
                self.retype_literals(b, ty);
            }
            _ => {}
        }
    }

    /// E0004 where the unsuffixed integer literal `v` (negated: `neg`) at `span` does not fit the
    /// integer type `ty` it takes once its context fixes it.
    fn check_literal_fits(&mut self, span: Span, v: u128, neg: bool, ty: &Ty) {
        let Ty::Scalar(s) = ty else { return };
        let Some((lo, hi)) = s.int_range() else { return };
        let fits = if neg { v == 0 || (v <= i128::MAX as u128 && -(v as i128) >= lo) } else { v <= hi as u128 };
        if !fits {
            self.error(
                codes::INVALID_LITERAL,
                span,
                format!("literal out of range for `{}`", s.name()),
                format!("`{}{v}` does not fit `{}` ({lo}..={hi})", if neg { "-" } else { "" }, s.name()),
            );
        }
    }

    /// The unsuffixed integer literals an initialiser is made of (through parentheses, unary and
    /// arithmetic operators), with whether each is negated: they take the type its variable
    /// takes later ([`FnCx::fix_open_var`]).
    fn open_int_literals(e: &ast::Expr, neg: bool, out: &mut Vec<(Span, u128, bool)>) {
        match &e.kind {
            ExprKind::Lit(ast::Lit::Int(v, None)) => out.push((e.span, *v, neg)),
            ExprKind::Paren(x) => Self::open_int_literals(x, neg, out),
            ExprKind::Unary(op, x) => Self::open_int_literals(x, neg ^ (*op == UnOp::Neg), out),
            ExprKind::Binary(op, a, b) if !op.is_comparison() && !matches!(op, BinOp::And | BinOp::Or) => {
                Self::open_int_literals(a, neg, out);
                Self::open_int_literals(b, neg, out);
            }
            _ => {}
        }
    }

    /// The common numeric type of two operands, if they have one.
    fn join_numeric(&self, a: &Ty, b: &Ty) -> Option<Ty> {
        match (a, b) {
            (x, y) if x == y && x.is_numeric() => Some(x.clone()),
            (Ty::IntLit | Ty::Nat, y) if y.is_int() => Some(y.clone()),
            (x, Ty::IntLit | Ty::Nat) if x.is_int() => Some(x.clone()),
            (Ty::FloatLit, y) if y.is_float() => Some(y.clone()),
            (x, Ty::FloatLit) if x.is_float() => Some(x.clone()),
            _ => None,
        }
    }

    /// Whether the value expression `e` reads a size (a generic, constant, `for` counter or bound
    /// size) outside a cast, through parentheses and arithmetic.
    fn mentions_size(&self, e: &ast::Expr) -> bool {
        match &e.kind {
            ExprKind::Path(segs) if segs.len() == 1 => match self.lookup(&segs[0].name) {
                Some(id) => self.vars[id].nat.is_some(),
                None => self.prog.consts.contains_key(&segs[0].name),
            },
            ExprKind::Paren(x) | ExprKind::Unary(_, x) => self.mentions_size(x),
            ExprKind::Binary(op, a, b) if !op.is_comparison() && !matches!(op, BinOp::And | BinOp::Or) => {
                self.mentions_size(a) || self.mentions_size(b)
            }
            _ => false,
        }
    }

    /// Converts a value expression made of literals and nat variables into a [`Nat`].
    fn expr_to_nat(&self, e: &ast::Expr) -> Option<Nat> {
        match &e.kind {
            ExprKind::Lit(ast::Lit::Int(v, _)) => u64::try_from(*v).ok().map(Nat::lit),
            ExprKind::Path(segs) if segs.len() == 1 => match self.lookup(&segs[0].name) {
                Some(id) => self.vars[id].nat.clone(),
                None => self.prog.consts.get(&segs[0].name).map(|v| Nat::lit(*v)),
            },
            ExprKind::Paren(x) => self.expr_to_nat(x),
            ExprKind::Binary(op, l, r) => {
                let (a, b) = (self.expr_to_nat(l)?, self.expr_to_nat(r)?);
                match op {
                    BinOp::Add => a.add(&b).ok(),
                    BinOp::Sub => a.sub(&b).ok(),
                    BinOp::Mul => a.mul(&b).ok(),
                    BinOp::Div => a.div(&b).ok(),
                    BinOp::Rem => a.rem(&b).ok(),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// The first `-`, `/` or `%` of a static index that is not a natural number under the facts
    /// ([`Facts::well_formed`], as for sizes), with its span.
    fn index_ill_formed(&self, e: &ast::Expr) -> Option<(crate::nat::IllFormed, Span)> {
        match &e.kind {
            ExprKind::Paren(x) => self.index_ill_formed(x),
            ExprKind::Binary(op, l, r) => {
                if let Some(bad) = self.index_ill_formed(l).or_else(|| self.index_ill_formed(r)) {
                    return Some(bad);
                }
                let side = match op {
                    BinOp::Sub => crate::nat::SizeOp::Sub,
                    BinOp::Div => crate::nat::SizeOp::Div,
                    BinOp::Rem => crate::nat::SizeOp::Rem,
                    _ => return None,
                };
                let (a, b) = (self.expr_to_nat(l)?, self.expr_to_nat(r)?);
                self.facts.well_formed(side, &a, &b).err().map(|bad| (bad, e.span))
            }
            _ => None,
        }
    }

    // --------------------------------------------------------------------------------------------
    // Places

    /// Every size in `ty` must be a natural number (`[f32; 0 - 1]` is not a type).
    fn check_sizes_natural(&mut self, ty: &Ty, span: Span) {
        match ty {
            Ty::Array(t, n) | Ty::ViewArray(t, n) => {
                let natural = n.terms().all(|(_, c)| c >= 0) || self.facts.le(&Nat::lit(0), n) == Truth::Proven;
                if !natural {
                    self.error(
                        codes::SIZE_NOT_PROVEN,
                        span,
                        "array size may be negative",
                        format!("cannot prove `{n} >= 0`"),
                    );
                }
                self.check_sizes_natural(t, span);
            }
            Ty::Tuple(ts) => ts.iter().for_each(|t| self.check_sizes_natural(t, span)),
            Ty::Ref { ty, .. } | Ty::At(ty, _) => self.check_sizes_natural(ty, span),
            _ => {}
        }
    }

    /// Size equality: the nat engine, then power-of-two forms.
    fn nat_eq(&self, a: &Nat, b: &Nat) -> bool {
        self.facts.equal(a, b) == Truth::Proven || crate::pow2::equal(&self.facts, a, b)
    }

    fn not_an_array(&mut self, ty: &Ty, span: Span, what: &str) {
        if !ty.is_error() {
            self.error(codes::NOT_AN_ARRAY, span, format!("`{ty}` cannot be {what}"), "not an array");
        }
    }

    /// Proves `i < len` (T-INDEX); E0302 otherwise.
    fn check_lt(&mut self, i: &Nat, len: &Nat, span: Span, what: &str) {
        // A size expression such as `i - 1` must not go below zero (natural numbers). Sums of
        // non-negative terms need no proof search.
        let obviously_natural = i.terms().all(|(_, c)| c >= 0);
        if !obviously_natural && self.facts.le(&Nat::lit(0), i) != Truth::Proven {
            self.report(
                Diagnostic::error(
                    codes::INDEX_OUT_OF_BOUNDS,
                    format!("cannot prove that this {what} is in bounds"),
                    span,
                    format!("cannot prove `{i} >= 0`"),
                )
                .with_note("every iteration of a loop is checked, the first one included"),
            );
            return;
        }
        match self.facts.lt(i, len) {
            Truth::Proven => {}
            Truth::Disproven => self.error(
                codes::INDEX_OUT_OF_BOUNDS,
                span,
                format!("{what} out of bounds: the length is {len} but the {what} is {i}"),
                format!("{what} {i} is not below {len}"),
            ),
            Truth::Unknown => {
                let d = Diagnostic::error(
                    codes::INDEX_OUT_OF_BOUNDS,
                    format!("cannot prove that this {what} is in bounds"),
                    span,
                    format!("cannot prove `{i} < {len}`"),
                );
                let d = if self.loop_nats.is_empty() {
                    d.with_note(format!(
                        "help: check it first (`if {i} < {len} {{ … }}`: a condition on sizes is a fact in its branch)"
                    ))
                } else {
                    d.with_note("every iteration of a loop is checked, the first one included")
                };
                self.report(d)
            }
        }
    }

    // --------------------------------------------------------------------------------------------
    // The extended borrow check: narrowing and the access environment

    // --------------------------------------------------------------------------------------------
    // sched, split, sync (T-SCHED, T-SYNC)

    // --------------------------------------------------------------------------------------------
    // Control flow

    /// A size written as a constant is a 64-bit value at run time: one of 2^64 or more would wrap
    /// (a loop bound, a generic argument), while the checker reasons with its exact value (I6).
    fn fits_u64(&mut self, n: &Nat, span: Span, what: &str) -> bool {
        if crate::target::concrete(n) != Some(u64::MAX) || n.eval(&|_| None).is_ok() {
            return true;
        }
        self.error(
            codes::SIZE_NOT_PROVEN,
            span,
            format!("{what} must be less than 2^64"),
            format!("`{n}` does not fit in 64 bits"),
        );
        false
    }

    fn for_loop(&mut self, var: &ast::Ident, start: &ast::Nat, end: &ast::Nat, body: &ast::Block) {
        let (Some(a), Some(b)) = (self.lower_nat(start), self.lower_nat(end)) else { return };
        let fits_a = self.fits_u64(&a, start.span, "a loop bound");
        if !(fits_a && self.fits_u64(&b, end.span, "a loop bound")) {
            return;
        }
        if self.is_size_name(&var.name) {
            self.error(
                codes::DUPLICATE_DEFINITION,
                var.span,
                format!("the loop variable `{}` shadows a size of the same name", var.name),
                "sizes cannot be shadowed; rename the loop variable",
            );
            return;
        }
        // How often the loop runs is a question about the facts outside it: inside, `a <= i < b`
        // would already imply that it runs.
        let trips = b.sub(&a).ok();
        let one_or_less = trips.as_ref().is_some_and(|t| self.facts.le(t, &Nat::lit(1)) == Truth::Proven);
        let at_least_once = trips.as_ref().is_some_and(|t| self.facts.le(&Nat::lit(1), t) == Truth::Proven);
        let saved_facts = self.facts.clone();
        let v = Nat::var(&var.name);
        let _ = self.facts.add_le(&a, &v);
        let _ = self.facts.add_lt(&v, &b);
        self.push_scope();
        self.loop_nats.push(var.name.clone());
        let level = self.level();
        self.declare(Var {
            name: var.name.clone(),
            ty: Ty::Nat,
            owner: Owner::Chain(self.chain().len()),
            level,
            mutable: false,
            moved: None,
            loans: Vec::new(),
            nat: Some(v),
            span: var.span,
            depth: self.scopes.len(),
            varies: Uni::Uniform,
            tracked: false,
            arms: 0,
        });
        // Twice, so the accesses of one iteration meet those of the next; a loop that runs at
        // most once has no next iteration.
        let passes = if one_or_less { 1 } else { 2 };
        let before = self.accesses.clone();
        let pending_before = self.pending.clone();
        let outer_vars = self.vars.len();
        let mut pass = 0;
        self.enter_loop();
        loop {
            self.loop_pass_start();
            if pass >= 1 {
                // The earlier passes' accesses belong to other iterations: their loop variable may
                // be another value than the current one, so give it another name, known only to
                // lie in the same range (the bounds do not change while the loop runs; the facts
                // are dropped with the loop's, before any enclosing loop renames what they say).
                let earlier = Nat::var(&format!("{}\u{2}{}", var.name, self.vars.len()));
                self.rename_nat_everywhere(&var.name, &earlier);
                let _ = self.facts.add_le(&a, &earlier);
                let _ = self.facts.add_lt(&earlier, &b);
            }
            let loans = self.loan_count(outer_vars);
            self.block(body, Some(&Ty::UNIT));
            self.loop_pass_end();
            pass += 1;
            // Two passes, and more while references still gain loans (a chain of reassignments
            // takes one pass per link; loans only grow, so this ends).
            if pass >= passes && (passes == 1 || self.loan_count(outer_vars) == loans || pass >= MAX_LOOP_PASSES) {
                break;
            }
        }
        self.exit_loop();
        if !at_least_once {
            // The loop may not run at all: what was there before may still be there.
            let after = std::mem::take(&mut self.accesses);
            self.merge_accesses(vec![before, after]);
            union_pending(&mut self.pending, pending_before);
        }
        // After the loop its variable means nothing: a later loop may reuse the name.
        let gone = Nat::var(&format!("{}\u{3}{}", var.name, self.vars.len()));
        self.rename_nat_everywhere(&var.name, &gone);
        self.loop_nats.pop();
        self.pop_scope();
        self.facts = saved_facts;
    }

    fn while_loop(&mut self, c: &ast::Expr, body: &ast::Block) {
        let before = self.accesses.clone();
        let pending_before = self.pending.clone();
        // Only the threads still in the loop evaluate the condition again: from the second pass
        // on it runs under the condition of the previous one.
        let mut previous = Uni::Uniform;
        let outer_vars = self.vars.len();
        let mut pass = 0;
        self.enter_loop();
        loop {
            self.loop_pass_start();
            if previous > Uni::Uniform {
                self.frames.push(Frame::Cond { span: c.span, uni: previous });
            }
            let loans = self.loan_count(outer_vars);
            self.loop_condition(true);
            let uni = self.cond(c).max(previous);
            self.loop_condition(false);
            let varying = uni > Uni::Uniform;
            if varying && previous == Uni::Uniform {
                self.frames.push(Frame::Cond { span: c.span, uni });
            }
            self.block(body, Some(&Ty::UNIT));
            self.loop_pass_end();
            if varying {
                self.frames.pop();
            }
            previous = uni;
            pass += 1;
            if pass >= 2 && (self.loan_count(outer_vars) == loans || pass >= MAX_LOOP_PASSES) {
                break;
            }
        }
        self.exit_loop();
        // The body may run zero times.
        let after = std::mem::take(&mut self.accesses);
        self.merge_accesses(vec![before, after]);
        union_pending(&mut self.pending, pending_before);
    }

    /// The loans of a tuple or array: those of all its components, which may not overlap if
    /// either is unique (two `&uniq` references to one place in one value).
    fn aggregate_loans(&mut self, parts: Vec<(Vec<Alias>, Span)>) -> Vec<Alias> {
        self.check_loans_disjoint(&parts, "second borrow in the same value");
        let mut loans = Vec::new();
        for (l, _) in parts {
            union_loans(&mut loans, l);
        }
        loans
    }

    /// How many loans the first `n` variables hold together (they only grow). A loop compares
    /// the variables declared before it: those declared in its body are declared anew each pass.
    fn loan_count(&self, n: usize) -> usize {
        self.vars[..n.min(self.vars.len())].iter().map(|v| v.loans.len()).sum()
    }

    fn if_expr(&mut self, c: &ast::Expr, then: &ast::Block, els: Option<&ast::Expr>, expected: Option<&Ty>) -> Ty {
        let uni = self.cond(c);
        let varying = uni > Uni::Uniform;
        if varying {
            self.frames.push(Frame::Cond { span: c.span, uni });
        }
        let before = self.accesses.clone();
        let pending_before = self.pending.clone();
        let moved_before: Vec<Option<Span>> = self.vars.iter().map(|v| v.moved).collect();
        let outer = self.assume_condition(c, true);
        let t = self.block(then, expected);
        self.restore_facts(outer);
        let mut loans = std::mem::take(&mut self.val_loans);
        let after_then = std::mem::replace(&mut self.accesses, before);
        // Work pending after either branch is pending after the `if`.
        let pending_then = std::mem::replace(&mut self.pending, pending_before);
        // Each branch starts from the moves made before the `if`; after it, a value moved on
        // either path is moved.
        let moved_then: Vec<Option<Span>> = self.vars.iter().map(|v| v.moved).collect();
        for (v, m) in self.vars.iter_mut().zip(&moved_before) {
            v.moved = *m;
        }
        let result = match els {
            Some(e) => {
                let outer = self.assume_condition(c, false);
                let et = self.expr(e, Some(&t));
                self.restore_facts(outer);
                // The value is either branch's: it may hold the loans of both.
                union_loans(&mut loans, self.val_loans.drain(..));
                if !self.compatible(&t, &et) {
                    self.mismatch(e.span, &t, &et);
                }
                t
            }
            None => Ty::UNIT,
        };
        let after_else = std::mem::take(&mut self.accesses);
        self.merge_accesses(vec![after_then, after_else]);
        union_pending(&mut self.pending, pending_then);
        for (v, m) in self.vars.iter_mut().zip(moved_then) {
            v.moved = v.moved.or(m);
        }
        if varying {
            self.frames.pop();
        }
        self.val_loans = loans;
        result
    }

    // --------------------------------------------------------------------------------------------
    // Calls and launches

    // --------------------------------------------------------------------------------------------
    // Views
}

/// The collection a resource belongs to: its path without trailing `forall`s and ranges.
fn collection_key(e: &Exec) -> Exec {
    let mut steps = e.steps.clone();
    while matches!(steps.last(), Some(Step::Forall(_) | Step::Range(..))) {
        steps.pop();
    }
    Exec { steps, ..e.clone() }
}

fn subst_mem(m: &Mem, s: &Subst) -> Mem {
    match m {
        Mem::Var(v) => s.mems.get(v).cloned().unwrap_or_else(|| m.clone()),
        other => other.clone(),
    }
}

/// Does `t` still mention a generic of `sig` (so it cannot guide literal typing yet)?
fn has_vars(t: &Ty, sig: &FnSig) -> bool {
    match t {
        Ty::Var(v) => sig.generics.iter().any(|(g, _)| g == v),
        Ty::Tuple(ts) => ts.iter().any(|t| has_vars(t, sig)),
        Ty::Array(e, n) | Ty::ViewArray(e, n) => {
            has_vars(e, sig) || n.vars().iter().any(|v| sig.generics.iter().any(|(g, _)| **g == **v))
        }
        Ty::Ref { mem, ty, .. } => matches!(mem, Mem::Var(_)) || has_vars(ty, sig),
        Ty::At(e, _) => has_vars(e, sig),
        _ => false,
    }
}

fn same_shape_refs(a: &Ty, b: &Ty) -> bool {
    matches!((a, b), (Ty::Ref { mem: m1, .. }, Ty::Ref { mem: m2, .. }) if m1 == m2)
}

/// May a value of this type hold a reference (a generic type may stand for one)?
/// The GPU memory space a value of type `t` points into, if any (through a reference or an owning
/// pointer, at any depth).
fn gpu_memory_in(t: &Ty) -> Option<Mem> {
    match t {
        Ty::Ref { mem, ty, .. } | Ty::At(ty, mem) => {
            if mem.is_gpu() {
                Some(mem.clone())
            } else {
                gpu_memory_in(ty)
            }
        }
        Ty::Tuple(ts) => ts.iter().find_map(gpu_memory_in),
        Ty::Array(t, _) | Ty::ViewArray(t, _) => gpu_memory_in(t),
        _ => None,
    }
}

/// Whether a value of type `t` holds (a reference or pointer to) host memory.
fn cpu_memory_in(t: &Ty) -> bool {
    match t {
        Ty::Ref { mem, ty, .. } | Ty::At(ty, mem) => *mem == Mem::CpuMem || cpu_memory_in(ty),
        Ty::Tuple(ts) => ts.iter().any(cpu_memory_in),
        Ty::Array(t, _) | Ty::ViewArray(t, _) => cpu_memory_in(t),
        _ => false,
    }
}

/// Whether a value of `t` may hold a reference (a data-type generic may, unless `num` says it is
/// one of the numeric scalars).
fn holds_ref_with(t: &Ty, num: &dyn Fn(&str) -> bool) -> bool {
    match t {
        Ty::Var(v) => !num(v),
        Ty::Ref { .. } | Ty::Error => true,
        Ty::Tuple(ts) => ts.iter().any(|t| holds_ref_with(t, num)),
        Ty::Array(t, _) | Ty::ViewArray(t, _) | Ty::At(t, _) => holds_ref_with(t, num),
        _ => false,
    }
}

fn level_noun(l: Level) -> &'static str {
    if l == Level::Warp {
        "warp"
    } else {
        "block"
    }
}

fn exec_text(e: &ast::ExecExpr) -> String {
    let mut s = match &e.base {
        ast::ExecBase::Var(id) => id.name.clone(),
        ast::ExecBase::CpuThread => "cpu.thread".into(),
        ast::ExecBase::Grid(..) => "gpu.grid".into(),
    };
    for step in &e.path {
        s.push_str(match step {
            ast::ExecStep::Blocks => ".blocks",
            ast::ExecStep::Threads => ".threads",
            ast::ExecStep::Warps => ".warps",
            ast::ExecStep::Lanes => ".lanes",
            ast::ExecStep::ToThreads => ".to_threads",
            ast::ExecStep::ToWarps => ".to_warps",
            ast::ExecStep::Forall(_) => ".forall(…)",
            ast::ExecStep::Range(..) => "[…]",
            ast::ExecStep::Dim(DimName::X) => ".X",
            ast::ExecStep::Dim(DimName::Y) => ".Y",
            ast::ExecStep::Dim(DimName::Z) => ".Z",
        });
    }
    s
}
