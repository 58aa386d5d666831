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
use std::collections::{HashMap, HashSet};
use strata_diag::{codes, Code, Diagnostic, Span};
use strata_syntax::ast::{self, BinOp, DimName, ExprKind, Kind, Ownership, ScalarTy, UnOp};

/// How far a value (or a point of control flow) may differ between the threads of a kernel:
/// the finest level of the hierarchy whose members may disagree on it. `Block` values agree
/// within each block (they may differ between blocks), `Warp` values within each warp, `Thread`
/// values may differ between any two threads. `sync(block)` needs control flow that is at most
/// `Block`-varying, `sync(warp)` and warp collectives at most `Warp`-varying.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Uni {
    #[default]
    Uniform,
    Block,
    Warp,
    Thread,
}

impl Uni {
    /// What a value computed by a resource of this level may vary by.
    fn of_level(l: Level) -> Uni {
        match l {
            Level::Cpu | Level::Grid | Level::Any => Uni::Uniform,
            Level::Blocks | Level::Block => Uni::Block,
            Level::Warps | Level::Warp => Uni::Warp,
            Level::Threads | Level::Thread | Level::Lanes => Uni::Thread,
        }
    }

    /// The level a barrier of a resource of level `l` needs its control flow to be uniform at.
    fn barrier(l: Level) -> Uni {
        match l {
            Level::Warp => Uni::Warp,
            _ => Uni::Block,
        }
    }

    /// The resource a value of this uniformity depends on, for diagnostics.
    fn noun(self) -> &'static str {
        match self {
            Uni::Uniform => "grid",
            Uni::Block => "block",
            Uni::Warp => "warp",
            Uni::Thread => "thread",
        }
    }
}

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
}

impl PlaceInfo {
    /// This place and every alternative.
    fn targets(&self) -> impl Iterator<Item = &PlaceInfo> {
        std::iter::once(self).chain(self.alts.iter())
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

#[derive(Default)]
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
    /// The result type of every call of a warp shuffle, by the call's span (the lowering picks
    /// the exchanged scalar type from it).
    pub shuffle_types: HashMap<Span, ScalarTy>,
    /// The type of every `if` expression that has a value, by its span (the lowering stores the
    /// value of each branch in a local of this type).
    pub value_types: HashMap<Span, Ty>,
    /// The dimensions every selection `p[[b]]` distributes, outermost first, by its span.
    pub selections: HashMap<Span, Vec<DimName>>,
    /// The spans of the `sync`s that synchronise a warp (a bare `sync` means the innermost block
    /// or warp: the lowering must emit the barrier the checker checked).
    pub warp_syncs: HashSet<Span>,
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
    unsafe_depth: u32,
    /// The loans of the reference value (if any) of the expression typed last.
    val_loans: Vec<Alias>,
    /// The largest [`Uni`] of the data read while typing the current expression.
    varies: Uni,
    /// Nat variables introduced by `for` loops, by source name.
    loop_nats: Vec<String>,
    /// Set while typing the borrow that initialises a `let`.
    binding_alias: bool,
    /// Nesting of named-view expansions (bounded: a view may be defined in terms of itself).
    view_depth: u32,
    /// A `return` under a varying condition or a `split` arm, and how far the threads that took it
    /// may differ: later barriers at a coarser level are not reached by all.
    divergent_return: Option<(Span, Uni)>,
    /// Set while typing the arguments of a call (a `&uniq` argument is reborrowed, not moved).
    in_call_arg: bool,
}

fn dim_letter(d: DimName) -> char {
    d.letter()
}

impl<'p> FnCx<'p> {
    pub fn new(prog: &'p Program, sig: &'p FnSig) -> FnCx<'p> {
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
            binders: vec![root_binder],
            frames: Vec::new(),
            current,
            accesses: Vec::new(),
            live_borrows: Vec::new(),
            pinned_borrows: HashSet::new(),
            holds_ref_at: HashMap::new(),
            unsafe_depth: 0,
            varies: Uni::Uniform,
            val_loans: Vec::new(),
            loop_nats: Vec::new(),
            binding_alias: false,
            view_depth: 0,
            divergent_return: None,
            in_call_arg: false,
        }
    }

    /// Checks the function body and returns the diagnostics.
    pub fn check(mut self, f: &ast::FnDecl) -> (Vec<Diagnostic>, TypeTable) {
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
                    Some(ex) => Owner::Exec(ex),
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
        }
        (self.diags, self.types)
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

    fn mismatch(&mut self, span: Span, expected: &Ty, found: &Ty) {
        let label = match (expected, found) {
            (Ty::Ref { mem: m1, .. }, Ty::Ref { mem: m2, .. }) if m1 != m2 => {
                format!("expected reference to `{m1}`, found reference to `{m2}`")
            }
            _ => format!("expected `{}`, found `{}`", expected.defaulted(), found.defaulted()),
        };
        self.error(codes::MISMATCHED_TYPES, span, "mismatched types", label);
    }

    fn in_unsafe(&self) -> bool {
        self.unsafe_depth > 0
    }

    // --------------------------------------------------------------------------------------------
    // Scopes and variables

    fn declare(&mut self, var: Var) -> usize {
        let id = self.vars.len();
        self.vars.push(var);
        if let Some(scope) = self.scopes.last_mut() {
            scope.push(id);
        }
        id
    }

    fn lookup(&self, name: &str) -> Option<usize> {
        self.scopes.iter().rev().flat_map(|s| s.iter().rev()).copied().find(|&id| self.vars[id].name == name)
    }

    fn push_scope(&mut self) {
        self.scopes.push(Vec::new());
    }

    fn pop_scope(&mut self) {
        self.scopes.pop();
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
        for n in &self.loop_nats {
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

    /// Resolves an execution-resource expression to its canonical form.
    fn resolve_exec(&mut self, e: &ast::ExecExpr) -> Option<Exec> {
        let mut ex = match &e.base {
            ast::ExecBase::Var(id) => {
                match self.binders.iter().rev().find(|b| b.name == id.name && self.binder_in_scope(b)) {
                    Some(b) => b.exec.clone(),
                    None => {
                        self.error(
                            codes::UNKNOWN_NAME,
                            id.span,
                            format!("cannot find execution resource `{}` in this scope", id.name),
                            "not found in this scope",
                        );
                        return None;
                    }
                }
            }
            ast::ExecBase::CpuThread => Exec::new("cpu.thread", Root::CpuThread),
            ast::ExecBase::Grid(b, t) => {
                let mut lower = self.lower();
                let root = Root::Grid { blocks: lower.shape(b), threads: lower.shape(t) };
                Exec::new("gpu.grid", root)
            }
        };
        for step in &e.path {
            let s = match step {
                ast::ExecStep::Blocks => Step::Blocks,
                ast::ExecStep::Threads => Step::Threads,
                ast::ExecStep::Warps | ast::ExecStep::ToWarps => Step::Warps,
                ast::ExecStep::Lanes => Step::Lanes,
                ast::ExecStep::ToThreads => Step::ToThreads,
                ast::ExecStep::Forall(d) => Step::Forall(*d),
                ast::ExecStep::Range(a, b, d) => {
                    let a = self.lower_nat(a)?;
                    let b = self.lower_nat(b)?;
                    Step::Range(a, b, *d)
                }
                ast::ExecStep::Dim(d) => {
                    self.error(
                        codes::INVALID_SCHED,
                        e.span,
                        format!("`.{}` is not an execution resource", d.letter()),
                        format!("a dimension only narrows a selection: `p[[b.{}]]`", d.letter()),
                    );
                    return None;
                }
            };
            ex = ex.with(s);
        }
        if let Err(err) = ex.shape() {
            self.error(codes::INVALID_SCHED, e.span, "invalid execution resource", err.to_string());
            return None;
        }
        if e.path.iter().any(|s| matches!(s, ast::ExecStep::Warps | ast::ExecStep::ToWarps)) {
            let threads = ex.shape().ok().and_then(|s| s.block).and_then(|b| crate::exec::shape_size(&b).ok());
            if let Some(n) = threads {
                if self.facts.divides(&Nat::lit(32), &n) != Truth::Proven {
                    self.error(
                        codes::SIZE_NOT_PROVEN,
                        e.span,
                        "a block of warps must have a multiple of 32 threads",
                        format!("cannot prove that 32 divides {n}"),
                    );
                    return None;
                }
            }
        }
        Some(ex)
    }

    fn binder_in_scope(&self, b: &Binder) -> bool {
        // The function's resource is always in scope; others while their frame is active.
        if std::ptr::eq(b, &self.binders[0]) {
            return true;
        }
        self.frames.iter().any(|f| match f {
            Frame::Sched(i) | Frame::Arm { binder: i, .. } => std::ptr::eq(&self.binders[*i], b),
            Frame::Cond { .. } => false,
        })
    }

    fn binder_named(&self, name: &str) -> Option<usize> {
        (0..self.binders.len()).rev().find(|&i| self.binders[i].name == name && self.binder_in_scope(&self.binders[i]))
    }

    /// The span of the innermost `sched` binder, for "executed by" labels.
    fn executed_by_label(&self) -> Option<(Span, String)> {
        let b = self.chain().last().copied()?;
        let b = &self.binders[b];
        Some((b.span, format!("executed by {}", self.level().describe())))
    }

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
                    let t = self.expr(expr, exp);
                    if last && !semi {
                        let depth = self.scopes.len() - 1;
                        self.check_outlives(expr, depth, "escapes the block that frees it");
                        let loans = self.val_loans.clone();
                        self.check_loans_outlive(expr, &loans, depth, "escapes the block that frees it");
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
                let (ended, live): (Vec<_>, Vec<_>) = pending.into_iter().partition(|(_, f)| f.dead_after(i, uses));
                pending = live;
                for (span, _) in ended {
                    self.end_borrow(span);
                }
            }
        }
        self.pop_scope();
        ty
    }

    /// The host borrow made by the `let` initialiser at `span` in the current block is dead.
    fn end_borrow(&mut self, span: Span) {
        if self.pinned_borrows.contains(&span) {
            return;
        }
        let depth = self.scopes.len();
        self.live_borrows.retain(|b| !(b.2 == span && b.3 == depth));
    }

    /// Host borrows written in `e` whose result may be stored in a variable declared at scope
    /// `depth`: they stay live until that scope ends (a conservative, lexical lifetime).
    fn track_stored_borrows(&mut self, e: &ast::Expr, depth: usize) {
        if self.level() != Level::Cpu {
            return;
        }
        let mut borrows = Vec::new();
        crate::liveness::borrows_in(e, &mut borrows);
        for b in borrows {
            let ExprKind::Borrow { own, place, .. } = &b.kind else { continue };
            if let Some(info) = self.place_quiet(place) {
                if !info.via_alias {
                    self.live_borrows.push((info.place, *own, b.span, depth));
                }
            }
        }
    }

    fn let_stmt(&mut self, l: &ast::LetStmt) {
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
                    ExprKind::Borrow { .. } | ExprKind::If { .. } | ExprKind::Block(_) | ExprKind::Tuple(_) | ExprKind::Paren(_)
                );
                let errors_before = self.diags.len();
                let (t, uni) = self.expr_uni(init, declared.as_ref());
                init_uni = uni;
                if holds_ref(&t) {
                    loans = std::mem::take(&mut self.val_loans);
                }
                let init_ok = self.diags.len() == errors_before;
                self.binding_alias = false;
                if let Some(d) = &declared {
                    if !self.compatible(d, &t) {
                        self.mismatch(init.span, d, &t);
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
                } else if init_ok && holds_ref(&t) {
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
                Some(d) => d,
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
        let owner = match owner_exec {
            Some(e) => Owner::Exec(e),
            None => Owner::Chain(self.chain().len()),
        };
        self.types.lets.insert(l.name.span, ty.defaulted());
        self.holds_ref_at.insert(l.name.span, holds_ref(&ty));
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
        };
        let id = self.declare(var);
        self.same_memory_as_earlier_pass(id);
    }

    /// A declaration checked again (a loop body's second pass) declares the same memory as the
    /// first time: shared memory declared in a loop is one buffer for all iterations, so the
    /// accesses left by the previous iteration (and references into it) now concern this one.
    fn same_memory_as_earlier_pass(&mut self, id: usize) {
        let span = self.vars[id].span;
        let Some(old) = (0..id).rev().find(|&i| self.vars[i].span == span) else { return };
        for a in &mut self.accesses {
            if a.place.root == old {
                a.place.root = id;
            }
        }
        for v in &mut self.vars {
            for l in &mut v.loans {
                if l.place.root == old {
                    l.place.root = id;
                }
            }
        }
    }

    // --------------------------------------------------------------------------------------------
    // Expressions

    /// Types an expression. Its reference value's loans are left in [`FnCx::val_loans`] (empty
    /// when it holds no reference).
    fn expr(&mut self, e: &ast::Expr, expected: Option<&Ty>) -> Ty {
        self.val_loans.clear();
        let t = self.expr_kind(e, expected);
        if !holds_ref(&t) || t.is_error() {
            self.val_loans.clear();
        }
        t
    }

    fn expr_kind(&mut self, e: &ast::Expr, expected: Option<&Ty>) -> Ty {
        match &e.kind {
            ExprKind::Lit(lit) => {
                let t = self.literal(lit, expected, e.span);
                self.types.literals.insert(e.span, t.defaulted());
                t
            }
            ExprKind::Path(segs) if segs.len() == 1 => {
                let name = &segs[0];
                match self.lookup(&name.name) {
                    Some(id) if self.vars[id].nat.is_some() => Ty::Nat,
                    Some(_) => self.read_place(e),
                    None if self.prog.consts.contains_key(&name.name) => Ty::Nat,
                    None => {
                        let what =
                            if self.prog.fns.contains_key(&name.name) { "a value (it is a function)" } else { "value" };
                        self.error(
                            codes::UNKNOWN_NAME,
                            name.span,
                            format!("cannot find {what} `{}` in this scope", name.name),
                            "not found in this scope",
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
            ExprKind::Field(..)
            | ExprKind::Index(..)
            | ExprKind::Select(..)
            | ExprKind::View(..)
            | ExprKind::Deref(_) => self.read_place(e),
            ExprKind::Paren(inner) => self.expr(inner, expected),
            ExprKind::Unary(op, inner) => {
                let t = self.expr(inner, expected);
                let unsigned = matches!(t, Ty::Scalar(ScalarTy::U32 | ScalarTy::U64) | Ty::Nat);
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
                self.call(func, generics, exec.as_ref(), launch.as_ref(), args, e.span)
            }
            ExprKind::Tuple(es) => {
                let exp: Option<Vec<Ty>> = match expected {
                    Some(Ty::Tuple(ts)) if ts.len() == es.len() => Some(ts.clone()),
                    _ => None,
                };
                // A tuple holds the loans of all its components.
                let mut loans = Vec::new();
                let mut tys = Vec::new();
                for (i, x) in es.iter().enumerate() {
                    tys.push(self.expr(x, exp.as_ref().map(|t| &t[i])));
                    union_loans(&mut loans, self.val_loans.drain(..));
                }
                self.val_loans = loans;
                Ty::Tuple(tys)
            }
            ExprKind::ArrayList(es) => {
                let elem_exp = match expected {
                    Some(Ty::Array(t, _)) => Some((**t).clone()),
                    _ => None,
                };
                let mut elem = elem_exp.clone();
                let mut loans = Vec::new();
                for x in es {
                    let t = self.expr(x, elem.as_ref());
                    union_loans(&mut loans, self.val_loans.drain(..));
                    match &elem {
                        Some(el) if !self.compatible(el, &t) => self.mismatch(x.span, el, &t),
                        Some(_) => {}
                        None => elem = Some(t),
                    }
                }
                self.val_loans = loans;
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
                Ty::Array(Box::new(elem), n)
            }
            ExprKind::Return(v) => {
                // The threads that return and those that go on differ as far as the control flow
                // around the `return` does: the rest of the code runs under that condition.
                let uni = self.context_uni();
                if self.on_gpu() && uni > Uni::Uniform && !matches!(self.divergent_return, Some((_, u)) if u >= uni) {
                    self.divergent_return = Some((e.span, uni));
                }
                if let Some(v) = v {
                    self.check_outlives(v, 0, "is returned from the function");
                }
                let ret = self.sig.ret.clone();
                let t = v.as_ref().map_or(Ty::UNIT, |v| self.expr(v, Some(&ret)));
                if let Some(v) = v {
                    let loans = std::mem::take(&mut self.val_loans);
                    self.check_loans_outlive(v, &loans, 0, "is returned from the function");
                }
                if !self.compatible(&ret, &t) {
                    self.mismatch(e.span, &ret, &t);
                }
                Ty::UNIT
            }
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
                    Ty::Scalar(ScalarTy::I32) | Ty::IntLit => i32::MAX as u128,
                    Ty::Scalar(ScalarTy::I64) => i64::MAX as u128,
                    Ty::Scalar(ScalarTy::U32) => u32::MAX as u128,
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
        let operand_exp = if op.is_comparison() || matches!(op, BinOp::And | BinOp::Or) { None } else { expected };
        let mut lt = self.expr(l, operand_exp);
        let rt = self.expr(r, if matches!(lt, Ty::IntLit | Ty::FloatLit | Ty::Nat) { operand_exp } else { Some(&lt) });
        if matches!(lt, Ty::IntLit | Ty::FloatLit | Ty::Nat) && !matches!(rt, Ty::IntLit | Ty::FloatLit | Ty::Nat) {
            lt = self.expr_type_again(l, &rt, lt);
        }
        if lt.is_error() || rt.is_error() {
            return if op.is_comparison() { Ty::BOOL } else { Ty::Error };
        }
        if matches!(rt, Ty::IntLit | Ty::FloatLit) && !matches!(lt, Ty::IntLit | Ty::FloatLit | Ty::Nat) {
            self.fix_open_var(r, &lt);
        }
        let joined = self.join_numeric(&lt, &rt);
        let bad = |me: &mut Self| {
            me.error(
                codes::BAD_OPERANDS,
                span,
                format!("cannot apply `{}` to `{}` and `{}`", op.symbol(), lt.defaulted(), rt.defaulted()),
                "invalid operands",
            );
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
            self.types.lets.insert(v.span, ty.clone());
        }
    }

    /// Records `ty` for the literals an operand is made of (`2.0`, `-(1)`), once its type is known.
    fn retype_literals(&mut self, e: &ast::Expr, ty: &Ty) {
        match &e.kind {
            ExprKind::Lit(ast::Lit::Int(_, None) | ast::Lit::Float(_, None)) => {
                self.types.literals.insert(e.span, ty.clone());
            }
            ExprKind::Paren(x) | ExprKind::Unary(_, x) => self.retype_literals(x, ty),
            ExprKind::Binary(op, a, b) if !op.is_comparison() && !matches!(op, BinOp::And | BinOp::Or) => {
                self.retype_literals(a, ty);
                self.retype_literals(b, ty);
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

    /// Types a place without recording accesses or reporting mode errors (used for aliases).
    fn place_quiet(&mut self, e: &ast::Expr) -> Option<PlaceInfo> {
        let saved = (self.diags.len(), self.seen.clone());
        let r = self.place(e);
        self.diags.truncate(saved.0);
        self.seen = saved.1;
        r
    }

    /// Types a place expression. When a reference on the way may hold several loans, the result
    /// is the first place it may denote, with the others in [`PlaceInfo::alts`].
    fn place(&mut self, e: &ast::Expr) -> Option<PlaceInfo> {
        let mut all = self.place_all(e)?.into_iter();
        let mut first = all.next()?;
        first.alts = all.collect();
        Some(first)
    }

    /// Every place a place expression may denote (one per loan of the references on the way).
    fn place_all(&mut self, e: &ast::Expr) -> Option<Vec<PlaceInfo>> {
        match &e.kind {
            ExprKind::Path(segs) if segs.len() == 1 => {
                let id = match self.lookup(&segs[0].name) {
                    Some(id) => id,
                    None => {
                        self.error(
                            codes::UNKNOWN_NAME,
                            segs[0].span,
                            format!("cannot find value `{}` in this scope", segs[0].name),
                            "not found in this scope",
                        );
                        return None;
                    }
                };
                if self.vars[id].nat.is_some() {
                    self.error(
                        codes::INVALID_ASSIGN_TARGET,
                        e.span,
                        format!("`{}` is a natural number, not a place in memory", segs[0].name),
                        "not a place",
                    );
                    return None;
                }
                Some(vec![PlaceInfo {
                    place: Place { root: id, steps: Vec::new() },
                    ty: self.vars[id].ty.clone(),
                    mem: None,
                    via_shared: false,
                    via_alias: false,
                    consumed: Vec::new(),
                    alts: Vec::new(),
                }])
            }
            ExprKind::Paren(inner) => self.place_all(inner),
            ExprKind::Deref(inner) => {
                let mut out = Vec::new();
                for info in self.place_all(inner)? {
                    out.extend(self.deref(info, e.span, inner.span, true)?);
                }
                Some(out)
            }
            ExprKind::Field(inner, f) => {
                let infos = self.place_all(inner)?;
                let infos = self.auto_deref(infos, e.span, inner.span)?;
                let idx = match f {
                    ast::Field::Fst => 0,
                    ast::Field::Snd => 1,
                    ast::Field::Index(i) => *i,
                };
                infos.into_iter().map(|info| self.field_step(info, idx, e.span)).collect()
            }
            ExprKind::Index(inner, idx) => {
                let infos = self.place_all(inner)?;
                let infos = self.auto_deref(infos, e.span, inner.span)?;
                // Every place the expression may denote has the same type: type the index once.
                let info = infos.first()?;
                let (elem, len) = match info.ty.as_array() {
                    Some((t, n)) => (t.clone(), n.clone()),
                    None => {
                        self.not_an_array(&info.ty, inner.span, "indexed");
                        return None;
                    }
                };
                let nat = self.expr_to_nat(idx);
                match &nat {
                    Some(i) => {
                        if self.in_unsafe() {
                        } else if let Some((bad, span)) = self.index_ill_formed(idx) {
                            self.report(crate::program::ill_formed_index(&bad, span));
                        } else {
                            self.check_lt(i, &len, idx.span, "index");
                        }
                    }
                    None => {
                        let t = self.expr(idx, None);
                        if !t.is_int() && !t.is_error() {
                            self.mismatch(idx.span, &Ty::Scalar(ScalarTy::U32), &t);
                        }
                        if !self.in_unsafe() {
                            self.error(
                                codes::INDEX_OUT_OF_BOUNDS,
                                idx.span,
                                "cannot prove that this index is in bounds",
                                "a run-time index; only sizes known to the type checker are allowed outside `unsafe`",
                            );
                        }
                    }
                }
                let out = infos
                    .into_iter()
                    .map(|mut info| {
                        info.ty = elem.clone();
                        info.place.steps.push(PStep::Index(nat.clone()));
                        info
                    })
                    .collect();
                Some(out)
            }
            ExprKind::Select(inner, ex) => {
                let infos = self.place_all(inner)?;
                let infos = self.auto_deref(infos, e.span, inner.span)?;
                infos.into_iter().map(|info| self.select_step(info, e, inner, ex)).collect()
            }
            ExprKind::View(inner, v) => {
                let infos = self.place_all(inner)?;
                let infos = self.auto_deref(infos, e.span, inner.span)?;
                let mut out = Vec::new();
                for mut info in infos {
                    let (ty, apps) = self.apply_view(&info.ty, v, &HashMap::new())?;
                    info.ty = ty;
                    info.place.steps.extend(apps.into_iter().map(PStep::View));
                    out.push(info);
                }
                Some(out)
            }
            _ => {
                self.error(
                    codes::INVALID_ASSIGN_TARGET,
                    e.span,
                    "expected a place expression",
                    "not a place in memory",
                );
                None
            }
        }
    }

    /// A selection `inner[[ex]]` (the expression `e`) applied to one place `inner` may denote.
    fn select_step(&mut self, mut info: PlaceInfo, e: &ast::Expr, inner: &ast::Expr, ex: &ast::ExecExpr) -> Option<PlaceInfo> {
                // `[[b]]`, or `[[b.X]]` (`.Y`, `.Z`, several allowed) for chosen dimensions only.
                let only: Option<Vec<DimName>> = (!ex.path.is_empty())
                    .then(|| {
                        ex.path.iter().map(|s| if let ast::ExecStep::Dim(d) = s { Some(*d) } else { None }).collect()
                    })
                    .flatten();
                let name = match &ex.base {
                    ast::ExecBase::Var(id) if ex.path.is_empty() || only.is_some() => id.name.clone(),
                    _ => {
                        self.error(
                            codes::INVALID_SCHED,
                            ex.span,
                            "a selection must name a scheduled execution resource",
                            "expected the name bound by `sched`, optionally with dimensions: `[[b]]`, `[[b.X]]`",
                        );
                        return None;
                    }
                };
                let Some(b) = self.binder_named(&name) else {
                    self.error(
                        codes::UNKNOWN_NAME,
                        ex.span,
                        format!("cannot find execution resource `{name}` in this scope"),
                        "not found in this scope",
                    );
                    return None;
                };
                let binder = self.binders[b].clone();
                if !binder.distributing {
                    self.error(
                        codes::INVALID_SCHED,
                        ex.span,
                        format!("cannot select with `{name}`"),
                        "only resources bound by `sched` distribute memory; schedule over it first",
                    );
                    return None;
                }
                // `[[b]]` distributes every dimension of b's collection scheduled down to b that
                // earlier selections of this place have not distributed yet.
                let chain = self.chain();
                let Some(pos) = chain.iter().position(|c| *c == b) else {
                    self.error(
                        codes::INVALID_SCHED,
                        ex.span,
                        format!("cannot select with `{name}` here"),
                        "it is not scheduled around this point",
                    );
                    return None;
                };
                let dims: Vec<(DimName, Nat)> = chain[..=pos]
                    .iter()
                    .map(|c| &self.binders[*c])
                    .filter(|c| c.key == binder.key)
                    .flat_map(|c| c.dims.iter().cloned())
                    .filter(|(d, _)| !info.consumed.iter().any(|(k, cd)| *k == binder.key && cd == d))
                    .collect();
                if dims.is_empty() {
                    self.error(
                        codes::INVALID_SCHED,
                        ex.span,
                        format!("`{name}` selects nothing here"),
                        "its dimensions were already selected",
                    );
                    return None;
                }
                // `[[b.X]]` selects by the named pending dimensions only (`[[block.X]]` for B's
                // column after `sched(Y) row`, `sched(X) block in row`). It gives many threads the
                // same part: they may read it, and narrowing refuses writes and `uniq` borrows.
                let mut partial = false;
                let dims = match &only {
                    None => dims,
                    Some(names) => {
                        let mut chosen = Vec::new();
                        for d in names {
                            match dims.iter().find(|(pd, _)| pd == d) {
                                Some(x) if !chosen.contains(x) => chosen.push(x.clone()),
                                _ => {
                                    let pending: String = dims.iter().map(|(d, _)| d.letter()).collect();
                                    self.error(
                                        codes::INVALID_SCHED,
                                        ex.span,
                                        format!("`{name}` cannot select by `{}` here", d.letter()),
                                        format!(
                                            "the dimensions `{name}` can still select here are `{pending}`, each once"
                                        ),
                                    );
                                    return None;
                                }
                            }
                        }
                        partial = chosen.len() < dims.len();
                        chosen
                    }
                };
                self.types.selections.insert(e.span, dims.iter().map(|(d, _)| *d).collect());
                let mut ty = info.ty.clone();
                for (d, size) in &dims {
                    let Some((elem, len)) = ty.as_array().map(|(t, n)| (t.clone(), n.clone())) else {
                        self.not_an_array(&ty, inner.span, "selected");
                        return None;
                    };
                    if !self.nat_eq(&len, size) {
                        self.report(
                            Diagnostic::error(
                                codes::SELECT_SIZE_MISMATCH,
                                "selection size does not match the execution resource",
                                e.span,
                                format!(
                                    "this dimension has {len} elements, but `{name}` has {size} along `{}`",
                                    dim_letter(*d)
                                ),
                            )
                            .with_label(binder.span, format!("`{name}` is scheduled here"))
                            .with_note("every sub-resource must select exactly one element: the sizes must be equal"),
                        );
                        return None;
                    }
                    ty = elem;
                    info.consumed.push((binder.key.clone(), *d));
                }
                let single = !partial && binder.exec.shape().map(|s| s.level == Level::Thread).unwrap_or(false);
                info.ty = ty;
                let order = dims.iter().map(|(d, _)| *d).collect();
                info.place.steps.push(PStep::Select(binder.exec.clone(), single, order));
                Some(info)
            }

    /// The projection `.idx` applied to one place a place expression may denote.
    fn field_step(&mut self, mut info: PlaceInfo, idx: u32, span: Span) -> Option<PlaceInfo> {
        match &info.ty {
            Ty::Tuple(ts) if (idx as usize) < ts.len() => {
                info.ty = ts[idx as usize].clone();
                info.place.steps.push(PStep::Field(idx));
                Some(info)
            }
                    Ty::Error => None,
                    t => {
                        let t = t.clone();
                        self.error(
                            codes::NO_SUCH_FIELD,
                            span,
                            format!("no field `{idx}` on type `{t}`"),
                            "unknown projection",
                        );
                        None
                    }
                }
            }

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
            Truth::Unknown => self.report(
                Diagnostic::error(
                    codes::INDEX_OUT_OF_BOUNDS,
                    format!("cannot prove that this {what} is in bounds"),
                    span,
                    format!("cannot prove `{i} < {len}`"),
                )
                .with_note("every iteration of a loop is checked, the first one included"),
            ),
        }
    }

    /// Dereferences through a reference or an owning `@` pointer (memory-space check included).
    /// Dereferences one place; a reference stored in a variable stands for each of its loans.
    fn deref(&mut self, mut info: PlaceInfo, span: Span, inner_span: Span, explicit: bool) -> Option<Vec<PlaceInfo>> {
        let (own, mem, target) = match &info.ty {
            Ty::Ref { own, mem, ty } => (*own, mem.clone(), (**ty).clone()),
            Ty::At(ty, mem) => (Ownership::Uniq, mem.clone(), (**ty).clone()),
            Ty::Error => return None,
            t => {
                if explicit {
                    let t = t.clone();
                    self.error(codes::BAD_DEREF, span, format!("type `{t}` cannot be dereferenced"), "not a reference");
                }
                return None;
            }
        };
        let level = self.level();
        // Code executed by `Any` resource may run on either device: only generic memory is usable.
        let ok = match &mem {
            Mem::Var(_) => true,
            Mem::CpuMem => level == Level::Cpu,
            _ => level != Level::Cpu && level != Level::Any,
        };
        if !ok {
            let text = format!("*{}", self.place_text(&info));
            let mut d = Diagnostic::error(
                codes::BAD_DEREF,
                format!("cannot dereference `{text}` pointing to `{mem}`"),
                inner_span,
                format!("dereferencing pointer in `{mem}` memory"),
            );
            if let Some((s, l)) = self.executed_by_label() {
                d = d.with_label(s, l);
            } else {
                d = d.with_note(format!("this code is executed by {}", level.describe()));
            }
            self.report(d);
            return None;
        }
        info.via_shared |= own == Ownership::Shrd;
        info.mem = Some(mem);
        info.ty = target;
        // A reference held by a variable is replaced by the places it may borrow (the paper
        // resolves aliases by substitution): a use through it is a use of each loan, with the
        // narrowing each loan had, wherever the reference was copied or moved to.
        let loans = self.stored_loans(&info.place);
        if loans.is_empty() {
            info.place.steps.push(PStep::Deref);
            return Some(vec![info]);
        }
        Some(
            loans
                .into_iter()
                .map(|l| PlaceInfo {
                    place: l.place,
                    ty: info.ty.clone(),
                    mem: info.mem.clone(),
                    via_shared: info.via_shared || l.own == Ownership::Shrd,
                    via_alias: true,
                    consumed: l.consumed,
                    alts: Vec::new(),
                })
                .collect(),
        )
    }

    /// The loans a reference read from `place` may hold, when it is stored in a variable (directly
    /// or in a part of it); empty when the reference lives in memory behind a reference or is a
    /// parameter, which is then its own loan.
    fn stored_loans(&self, place: &Place) -> Vec<Alias> {
        if place.steps.iter().any(|s| matches!(s, PStep::Deref)) {
            return Vec::new();
        }
        self.vars[place.root].loans.clone()
    }

    /// The loans of a reference value read from `info` (of reference type, own `own`).
    fn loans_of_read(&self, info: &PlaceInfo, own: Ownership) -> Vec<Alias> {
        let stored = self.stored_loans(&info.place);
        if !stored.is_empty() {
            return stored;
        }
        let mut place = info.place.clone();
        place.steps.push(PStep::Deref);
        vec![Alias { place, own, consumed: info.consumed.clone() }]
    }

    fn auto_deref(&mut self, infos: Vec<PlaceInfo>, span: Span, inner_span: Span) -> Option<Vec<PlaceInfo>> {
        let mut out = Vec::new();
        for info in infos {
            if matches!(info.ty, Ty::Ref { .. } | Ty::At(..)) {
                let next = self.deref(info, span, inner_span, false)?;
                out.extend(self.auto_deref(next, span, inner_span)?);
            } else {
                out.push(info);
            }
        }
        Some(out)
    }

    fn place_text(&self, info: &PlaceInfo) -> String {
        self.vars[info.place.root].name.clone()
    }

    /// Reads a place (T-READ-BY-COPY, T-READ-BY-MOVE, T-READ-SHAREDMEM).
    fn read_place(&mut self, e: &ast::Expr) -> Ty {
        let Some(info) = self.place(e) else { return Ty::Error };
        let root = info.place.root;
        if let Some(at) = self.vars[root].moved {
            let name = self.vars[root].name.clone();
            self.report(
                Diagnostic::error(
                    codes::USE_AFTER_MOVE,
                    format!("use of moved value `{name}`"),
                    e.span,
                    "value used here after move",
                )
                .with_label(at, "value moved here"),
            );
            return info.ty;
        }
        let uni = info.targets().map(|t| self.read_uni(t)).max().unwrap_or_default();
        self.varies = self.varies.max(uni);
        if !info.ty.is_copy() && !info.ty.is_error() {
            if info.place.steps.is_empty() {
                if let Some(b) = self.live_borrows.iter().find(|b| b.0.root == root).map(|b| b.2) {
                    let name = self.vars[root].name.clone();
                    self.report(
                        Diagnostic::error(
                            codes::BORROW_CONFLICT,
                            format!("cannot move out of `{name}` because it is borrowed"),
                            e.span,
                            "move out of borrowed value",
                        )
                        .with_label(b, "borrow of it here"),
                    );
                }
                let reborrow = self.in_call_arg && matches!(info.ty, Ty::Ref { .. });
                if !reborrow {
                    self.vars[root].moved = Some(e.span);
                }
            } else if !matches!(info.ty, Ty::ViewArray(..)) {
                let ty = info.ty.clone();
                self.error(
                    codes::USE_AFTER_MOVE,
                    e.span,
                    format!("cannot move a value of type `{ty}` out of this place"),
                    "borrow it instead (`&shrd`)",
                );
            }
        }
        self.access_all(&info, Mode::Read, e.span);
        if let Ty::Ref { own, .. } = &info.ty {
            let mut loans = Vec::new();
            for t in info.targets() {
                union_loans(&mut loans, self.loans_of_read(t, *own));
            }
            self.val_loans = loans;
        } else if holds_ref(&info.ty) {
            // An aggregate holding references (a tuple): the loans of its variable.
            let mut loans = Vec::new();
            for t in info.targets() {
                union_loans(&mut loans, self.stored_loans(&t.place));
            }
            self.val_loans = loans;
        }
        info.ty
    }

    /// How far the value read from a place may differ between threads: as far as its variable's
    /// value, the resource that declared it, and every selection on the way (a `[[warp]]`
    /// selection reads one part per warp) allow.
    fn read_uni(&self, info: &PlaceInfo) -> Uni {
        let v = &self.vars[info.place.root];
        let mut uni = v.varies.max(Uni::of_level(v.level));
        for s in &info.place.steps {
            uni = uni.max(match s {
                PStep::Select(e, _, _) => e.shape().map_or(Uni::Thread, |s| Uni::of_level(s.level)),
                PStep::Index(None) => Uni::Thread,
                _ => Uni::Uniform,
            });
        }
        uni
    }

    /// How far the threads that reach the current point may differ: the largest [`Uni`] of the
    /// enclosing varying conditions and `split` arms.
    fn context_uni(&self) -> Uni {
        self.frames
            .iter()
            .map(|f| match f {
                Frame::Cond { uni, .. } | Frame::Arm { uni, .. } => *uni,
                Frame::Sched(_) => Uni::Uniform,
            })
            .max()
            .unwrap_or(Uni::Uniform)
    }

    /// A write of a value that varies by `value` into a variable's own memory (not memory behind
    /// a reference, which every thread sees alike after a barrier): the variable varies at least
    /// as much as the value and the control flow that writes it, whether the whole variable or
    /// one element or field is written.
    fn note_local_write(&mut self, info: &PlaceInfo, value: Uni) {
        if !self.on_gpu() || info.mem.is_some() || info.place.steps.iter().any(|s| matches!(s, PStep::Deref)) {
            return;
        }
        let uni = value.max(self.context_uni()).max(Uni::of_level(self.level()));
        let v = &mut self.vars[info.place.root];
        v.varies = v.varies.max(uni);
    }

    fn borrow(&mut self, own: Ownership, place: &ast::Expr, span: Span) -> Ty {
        let Some(info) = self.place(place) else { return Ty::Error };
        if let Some(at) = self.vars[info.place.root].moved {
            let name = self.vars[info.place.root].name.clone();
            self.report(
                Diagnostic::error(
                    codes::USE_AFTER_MOVE,
                    format!("borrow of moved value `{name}`"),
                    place.span,
                    "value borrowed here after move",
                )
                .with_label(at, "value moved here"),
            );
        }
        if own == Ownership::Uniq {
            for t in info.targets() {
                self.check_mutable(t, place.span, "borrow", "uniquely");
            }
            let v = &self.vars[info.place.root];
            let direct = !info.place.steps.iter().any(|s| matches!(s, PStep::Deref)) && info.mem.is_none();
            let owned_box = matches!(v.ty, Ty::At(..));
            if (direct || owned_box)
                && !v.mutable
                && v.loans.is_empty()
                && !matches!(v.owner, Owner::Exec(_))
                && !v.ty.is_error()
            {
                let (name, vspan) = (v.name.clone(), v.span);
                self.report(
                    Diagnostic::error(
                        codes::ASSIGN_IMMUTABLE,
                        format!("cannot borrow `{name}` uniquely, as it is not declared as mutable"),
                        place.span,
                        "cannot borrow as `uniq`",
                    )
                    .with_label(vspan, "declared here; make it `let mut`"),
                );
            }
        }
        if !info.via_alias {
            self.check_host_borrow(&info.place, own, span);
        }
        self.access_all(&info, Mode::Borrow(own), span);
        self.val_loans = info.targets().map(|t| t.as_loan(own)).collect();
        // Borrowing an owning pointer `T @ m` borrows the memory it owns.
        let (ty, mem) = match (&info.ty, &info.mem) {
            (Ty::At(t, m), _) => ((**t).clone(), m.clone()),
            (t, Some(m)) => (t.clone(), m.clone()),
            (t, None) => (t.clone(), if self.on_gpu() { Mem::GpuLocal } else { Mem::CpuMem }),
        };
        Ty::Ref { own, mem, ty: Box::new(ty) }
    }

    fn check_mutable(&mut self, info: &PlaceInfo, span: Span, verb: &str, how: &str) {
        if info.via_shared {
            self.error(
                codes::WRITE_THROUGH_SHARED,
                span,
                format!("cannot {verb} through a shared reference"),
                format!(
                    "this place is behind a `shrd` reference; it cannot be {}",
                    if verb == "write" { "written".to_string() } else { format!("borrowed {how}") }
                ),
            );
        }
    }

    /// Host (CPU) borrows follow Rust: no unique borrow while another borrow is live.
    fn check_host_borrow(&mut self, place: &Place, own: Ownership, span: Span) {
        let clash = self.live_borrows.iter().find(|(p, o, _, _)| {
            p.root == place.root
                && (own == Ownership::Uniq || *o == Ownership::Uniq)
                && prefix_overlap(&p.steps, &place.steps)
        });
        if let Some((_, o, at, _)) = clash {
            let name = self.vars[place.root].name.clone();
            let (o, at) = (*o, *at);
            self.report(
                Diagnostic::error(
                    codes::BORROW_CONFLICT,
                    format!(
                        "cannot borrow `{name}` as {} because it is also borrowed as {}",
                        own.keyword(),
                        o.keyword()
                    ),
                    span,
                    "borrowed here",
                )
                .with_label(at, "first borrow, still in use"),
            );
        }
    }

    /// A borrow of a variable declared deeper than `target_depth` would outlive it.
    fn check_outlives(&mut self, value: &ast::Expr, target_depth: usize, what: &str) {
        let mut e = value;
        while let ExprKind::Paren(inner) = &e.kind {
            e = inner;
        }
        if let ExprKind::Path(segs) = &e.kind {
            // `let r = &shrd x; … r`: the alias carries the borrow of `x` out.
            if let Some(id) = self.lookup(&segs[0].name) {
                for alias in self.vars[id].loans.clone() {
                    let v = &self.vars[alias.place.root];
                    if v.depth > target_depth && v.loans.is_empty() && !matches!(v.ty, Ty::Ref { .. }) {
                        let (name, vspan) = (v.name.clone(), v.span);
                        self.report(
                            Diagnostic::error(
                                codes::DANGLING_REFERENCE,
                                format!("`{name}` does not live long enough"),
                                e.span,
                                format!("a borrow of `{name}` {what}"),
                            )
                            .with_label(vspan, format!("`{name}` is declared here and freed at the end of its block")),
                        );
                    }
                }
            }
            return;
        }
        let ExprKind::Borrow { place, .. } = &e.kind else { return };
        let mut root = &**place;
        while let ExprKind::Field(p, _)
        | ExprKind::Index(p, _)
        | ExprKind::Select(p, _)
        | ExprKind::View(p, _)
        | ExprKind::Paren(p) = &root.kind
        {
            root = p;
        }
        let ExprKind::Path(segs) = &root.kind else { return };
        let Some(id) = self.lookup(&segs[0].name) else { return };
        let v = &self.vars[id];
        if v.depth > target_depth && v.loans.is_empty() && !matches!(v.ty, Ty::Ref { .. }) {
            let (name, vspan) = (v.name.clone(), v.span);
            self.report(
                Diagnostic::error(
                    codes::DANGLING_REFERENCE,
                    format!("`{name}` does not live long enough"),
                    e.span,
                    format!("borrowed value {what}"),
                )
                .with_label(vspan, format!("`{name}` is declared here and freed at the end of its block")),
            );
        }
    }

    /// A reference value (whatever expression made it) must not hold a loan of a variable
    /// declared deeper than `target_depth`: it would outlive the variable.
    fn check_loans_outlive(&mut self, value: &ast::Expr, loans: &[Alias], target_depth: usize, what: &str) {
        for l in loans {
            let v = &self.vars[l.place.root];
            if v.depth > target_depth && v.loans.is_empty() && !matches!(v.ty, Ty::Ref { .. }) {
                let (name, vspan) = (v.name.clone(), v.span);
                let mut e = value;
                while let ExprKind::Paren(inner) = &e.kind {
                    e = inner;
                }
                self.report(
                    Diagnostic::error(
                        codes::DANGLING_REFERENCE,
                        format!("`{name}` does not live long enough"),
                        e.span,
                        format!("a borrow of `{name}` {what}"),
                    )
                    .with_label(vspan, format!("`{name}` is declared here and freed at the end of its block")),
                );
            }
        }
    }

    fn assign(&mut self, lhs: &ast::Expr, rhs: &ast::Expr, op: Option<BinOp>, span: Span) {
        let mut stored_at = None;
        if let ExprKind::Path(segs) = &lhs.kind {
            if let Some(id) = self.lookup(&segs[0].name) {
                let depth = self.vars[id].depth;
                self.check_outlives(rhs, depth, "is stored in a variable that lives longer");
                if holds_ref(&self.vars[id].ty) {
                    stored_at = Some(depth);
                }
            }
        }
        if let Some(depth) = stored_at {
            // `r = &shrd h;` (or a call or block giving a reference): the borrows live as long as
            // the variable, like those of a `let` initialiser.
            self.track_stored_borrows(rhs, depth);
        }
        let info = self.place(lhs);
        let lt = info.as_ref().map_or(Ty::Error, |i| i.ty.clone());
        let (rt, value_uni) = self.expr_uni(rhs, Some(&lt));
        let rhs_loans = if holds_ref(&rt) { std::mem::take(&mut self.val_loans) } else { Vec::new() };
        if let Some(depth) = stored_at {
            self.check_loans_outlive(rhs, &rhs_loans, depth, "is stored in a variable that lives longer");
        }
        if matches!(rt, Ty::IntLit | Ty::FloatLit) {
            self.fix_open_var(rhs, &lt);
        }
        self.holds_ref_at.insert(lhs.span, holds_ref(&lt));
        let Some(info) = info else { return };
        if let Some(op) = op {
            if self.join_numeric(&lt, &rt).is_none() && !rt.is_error() && !lt.is_error() {
                self.error(
                    codes::BAD_OPERANDS,
                    span,
                    format!("cannot apply `{}=` to `{lt}` and `{rt}`", op.symbol()),
                    "invalid operands",
                );
            }
            self.access_all(&info, Mode::Read, lhs.span);
        } else if !self.compatible(&lt, &rt) {
            self.mismatch(rhs.span, &lt, &rt);
        }
        let var = &self.vars[info.place.root];
        if info.place.steps.is_empty() && info.mem.is_none() {
            if !var.mutable && !matches!(var.ty, Ty::Error) {
                let name = var.name.clone();
                let vspan = var.span;
                self.report(
                    Diagnostic::error(
                        codes::ASSIGN_IMMUTABLE,
                        format!("cannot assign twice to immutable variable `{name}`"),
                        lhs.span,
                        "cannot assign",
                    )
                    .with_label(vspan, "declared here; make it `let mut`"),
                );
            }
            self.vars[info.place.root].moved = None;
        } else {
            for t in info.targets() {
                self.check_mutable(t, lhs.span, "write", "");
            }
            let v = &self.vars[info.place.root];
            let direct = !info.place.steps.iter().any(|s| matches!(s, PStep::Deref)) && info.mem.is_none();
            if direct && !v.mutable && v.loans.is_empty() && !matches!(v.owner, Owner::Exec(_)) && !v.ty.is_error() {
                let (name, vspan) = (v.name.clone(), v.span);
                self.report(
                    Diagnostic::error(
                        codes::ASSIGN_IMMUTABLE,
                        format!("cannot assign to an element of immutable variable `{name}`"),
                        lhs.span,
                        "cannot assign",
                    )
                    .with_label(vspan, "declared here; make it `let mut`"),
                );
            }
        }
        for t in info.targets().cloned().collect::<Vec<_>>() {
            // `x op= v` also keeps what `x` was.
            let value_uni = if op.is_some() { value_uni.max(self.read_uni(&t)) } else { value_uni };
            self.note_local_write(&t, value_uni);
            // A reference stored in a variable (or a part of it) may hold the loans it held before
            // (on another path, or in another part) and the new ones.
            if holds_ref(&lt) && !t.place.steps.iter().any(|s| matches!(s, PStep::Deref)) {
                union_loans(&mut self.vars[t.place.root].loans, rhs_loans.iter().cloned());
            }
        }
        self.access_all(&info, Mode::Write, lhs.span);
    }

    /// Checks an access of every place `info` may denote.
    fn access_all(&mut self, info: &PlaceInfo, mode: Mode, span: Span) {
        for t in info.targets().cloned().collect::<Vec<_>>() {
            self.access(&t, mode, span);
        }
    }

    /// Types `e` and tells how far its value may differ between threads.
    fn expr_uni(&mut self, e: &ast::Expr, expected: Option<&Ty>) -> (Ty, Uni) {
        let saved = std::mem::take(&mut self.varies);
        let t = self.expr(e, expected);
        let uni = self.varies;
        self.varies = saved.max(uni);
        (t, uni)
    }

    // --------------------------------------------------------------------------------------------
    // The extended borrow check: narrowing and the access environment

    /// Does this place denote memory other threads can reach?
    fn is_shared_memory(&self, info: &PlaceInfo) -> bool {
        info.place.steps.iter().any(|s| matches!(s, PStep::Deref))
            || info.mem.is_some()
            || match &self.vars[info.place.root].owner {
                Owner::Chain(k) => *k < self.chain().len(),
                Owner::Exec(_) => true,
            }
    }

    /// The `sched` binders a unique access must select through: those between the root's owner
    /// and the current resource. `None` (after reporting) if the root is used outside its owner.
    fn required_selects(&mut self, info: &PlaceInfo, span: Span) -> Option<Vec<usize>> {
        let chain = self.chain();
        let root = &self.vars[info.place.root];
        match &root.owner {
            Owner::Chain(k) => Some(chain[(*k).min(chain.len())..].to_vec()),
            Owner::Exec(e) => match chain.iter().position(|b| self.binders[*b].exec.is_instance_of(e)) {
                Some(i) => Some(chain[i + 1..].to_vec()),
                None => {
                    let name = root.name.clone();
                    let e = e.clone();
                    self.report(Diagnostic::error(
                        codes::NARROWING_VIOLATED,
                        "narrowing violated",
                        span,
                        format!("`{name}` belongs to each `{}`; use it inside a `sched` over them", e.path_text()),
                    ));
                    None
                }
            },
        }
    }

    /// For memory declared for each of some resources: the scheduled resource around this point
    /// whose memory it is (see [`Exec::is_instance_of`]).
    fn owner_instance(&self, root: usize) -> Option<Exec> {
        let Owner::Exec(e) = &self.vars[root].owner else { return None };
        self.chain().iter().map(|b| &self.binders[*b].exec).find(|x| x.is_instance_of(e)).cloned()
    }

    fn access(&mut self, info: &PlaceInfo, mode: Mode, span: Span) {
        if !info.via_alias && !matches!(mode, Mode::Borrow(_)) {
            let write = mode == Mode::Write;
            let clash = self.live_borrows.iter().find(|(p, o, _, _)| {
                p.root == info.place.root
                    && (*o == Ownership::Uniq || write)
                    && prefix_overlap(&p.steps, &info.place.steps)
            });
            if let Some((_, o, at, _)) = clash {
                let (o, at) = (*o, *at);
                let name = self.vars[info.place.root].name.clone();
                let verb = if write { "assign to" } else { "use" };
                self.report(
                    Diagnostic::error(
                        codes::BORROW_CONFLICT,
                        format!("cannot {verb} `{name}` because it is borrowed as {}", o.keyword()),
                        span,
                        format!("{verb} of borrowed `{name}`"),
                    )
                    .with_label(at, "borrow, still in scope"),
                );
            }
        }
        if !self.on_gpu() || self.in_unsafe() {
            return;
        }
        let write = matches!(mode, Mode::Write | Mode::Borrow(Ownership::Uniq));
        let shared = self.is_shared_memory(info);
        if !write
            && matches!(self.vars[info.place.root].owner, Owner::Exec(_))
            && self.required_selects(info, span).is_none()
        {
            return;
        }
        if matches!(self.sig.root, Root::Thread) && self.chain().is_empty() {
            // A function executed by one thread: its accesses are ordered; the caller narrowed
            // what it passed to that thread.
            return;
        }
        // A variable's own memory (no reference on the way) is private to each thread on every
        // device (registers in CUDA): what one thread writes there no other thread sees, so only
        // the resource that declared it may write it, however the write is narrowed.
        let own_memory = info.mem.is_none() && !info.place.steps.iter().any(|s| matches!(s, PStep::Deref));
        if write {
            if shared && !(own_memory && matches!(self.vars[info.place.root].owner, Owner::Chain(_))) {
                if !self.check_narrowing(info, mode, span) {
                    return;
                }
            } else if let Owner::Chain(k) = self.vars[info.place.root].owner {
                // T-WRITE-LOCAL: only the resource that owns a local writes it.
                let chain = self.chain();
                if k != chain.len() {
                    let name = self.vars[info.place.root].name.clone();
                    let here = self.current.to_string();
                    self.error(
                        codes::NARROWING_VIOLATED,
                        span,
                        "narrowing violated",
                        format!("`{name}` is owned by an enclosing resource and cannot be written by `{here}`"),
                    );
                    if let Some(d) = self.diags.last_mut() {
                        d.notes.push(format!(
                            "a variable is private to each thread that runs its declaration: a write by `{here}` would not be seen by the other threads; use shared memory (`@ gpu.shared`) to exchange values"
                        ));
                    }
                    return;
                }
            }
        }
        if !shared {
            return;
        }
        let instance = self.owner_instance(info.place.root);
        let clash = self.accesses.iter().position(|a| conflicts(&info.place, write, instance.as_ref(), a, &self.facts));
        if let Some(i) = clash {
            let (prior, prior_write, reported) =
                (self.accesses[i].span, self.accesses[i].write, self.accesses[i].reported);
            self.accesses[i].reported = true;
            if !reported {
                let what = if prior_write { "a conflicting prior write" } else { "a conflicting prior read" };
                self.report(
                    Diagnostic::error(
                        codes::CONFLICTING_ACCESS,
                        "conflicting memory access",
                        span,
                        "cannot access this memory",
                    )
                    .with_label(prior, format!("cannot select memory because of {what} here"))
                    .with_note(
                        "two threads may touch the same memory between barriers; add a `sync` or select disjoint parts",
                    ),
                );
            }
        }
        // A borrow bound to a variable is not an access: the accesses through it are recorded.
        if !(self.binding_alias && matches!(mode, Mode::Borrow(_))) {
            self.accesses.push(Access {
                place: info.place.clone(),
                write,
                span,
                truncated: false,
                reported: false,
                instance,
            });
        }
    }

    /// Returns false (after reporting) if narrowing is violated.
    fn check_narrowing(&mut self, info: &PlaceInfo, mode: Mode, span: Span) -> bool {
        let verb = if mode == Mode::Write { "write to" } else { "borrow uniquely" };
        let level = self.level();
        let Some(required) = self.required_selects(info, span) else { return false };
        let want: Vec<(Exec, DimName)> = required
            .iter()
            .flat_map(|b| {
                let b = &self.binders[*b];
                b.dims.iter().map(|(d, _)| (b.key.clone(), *d)).collect::<Vec<_>>()
            })
            .collect();
        if info.consumed != want {
            let name = self.vars[info.place.root].name.clone();
            let missing = required
                .iter()
                .map(|b| &self.binders[*b])
                .find(|b| b.dims.iter().any(|(d, _)| !info.consumed.contains(&(b.key.clone(), *d))));
            let label = match missing {
                Some(b) => {
                    format!("`{name}` is not narrowed to `{}`: every `{}` would {verb} the same memory", b.name, b.name)
                }
                None => format!(
                    "the selections of `{name}` do not follow the schedule (expected {} in order)",
                    required.iter().map(|b| format!("[[{}]]", self.binders[*b].name)).collect::<Vec<_>>().join("")
                ),
            };
            let mut d = Diagnostic::error(codes::NARROWING_VIOLATED, "narrowing violated", span, label);
            if let Some(b) = missing {
                d = d.with_label(b.span, format!("`{}` is scheduled here", b.name));
            }
            self.report(d);
            return false;
        }
        if mode == Mode::Write && level != Level::Thread && info.mem.is_some() {
            self.error(
                codes::NARROWING_VIOLATED,
                span,
                "narrowing violated",
                format!(
                    "memory behind a reference can only be written by a single thread, but this is executed by {}",
                    level.describe()
                ),
            );
            return false;
        }
        true
    }

    // --------------------------------------------------------------------------------------------
    // sched, split, sync (T-SCHED, T-SYNC)

    fn sched(&mut self, dims: &[DimName], var: &ast::Ident, exec: &ast::ExecExpr, body: &ast::Block, span: Span) {
        if !self.on_gpu() {
            self.error(
                codes::WRONG_EXEC,
                span,
                "`sched` outside of GPU code",
                "executed by `cpu.thread`, which has no sub-resources",
            );
            return;
        }
        let Some(ex) = self.resolve_sub_resource(exec, "schedule over", "; schedule over its sub-resources") else {
            return;
        };
        let domain = match ex.sched_domain().and_then(|d| d.shape().map(|s| (d, s))) {
            Ok(x) => x,
            Err(err) => {
                self.error(codes::INVALID_SCHED, exec.span, "invalid schedule", err.to_string());
                return;
            }
        };
        let (domain, shape) = domain;
        if !shape.level.is_collection() {
            self.error(
                codes::INVALID_SCHED,
                exec.span,
                "invalid schedule",
                format!("{} has nothing to schedule over", shape.level.describe()),
            );
            return;
        }
        let mut out = domain.clone();
        let mut bdims = Vec::new();
        for d in dims {
            match shape.dims.iter().find(|(n, _)| n == d) {
                Some((_, size)) if !bdims.iter().any(|(n, _): &(DimName, Nat)| n == d) => {
                    bdims.push((*d, size.clone()));
                    out = out.with(Step::Forall(*d));
                }
                _ => {
                    let have: Vec<String> = shape.dims.iter().map(|(n, _)| n.letter().to_string()).collect();
                    self.error(
                        codes::INVALID_SCHED,
                        exec.span,
                        format!("cannot schedule over dimension `{}`", d.letter()),
                        format!("{} has unscheduled dimensions {{{}}}", shape.level.describe(), have.join(", ")),
                    );
                    return;
                }
            }
        }
        out.name = var.name.clone();
        let b = self.binders.len();
        let key = collection_key(&domain);
        self.binders.push(Binder {
            name: var.name.clone(),
            exec: out.clone(),
            dims: bdims,
            distributing: true,
            span: var.span,
            key,
        });
        self.frames.push(Frame::Sched(b));
        let saved = std::mem::replace(&mut self.current, out);
        self.block(body, Some(&Ty::UNIT));
        self.current = saved;
        self.frames.pop();
    }

    /// The resource `exec` names, which `sched` and `split` need to be a part of the executing
    /// one (E0401 otherwise: "cannot {verb} `…` here").
    fn resolve_sub_resource(&mut self, exec: &ast::ExecExpr, verb: &str, hint: &str) -> Option<Exec> {
        let ex = self.resolve_exec(exec)?;
        if !ex.within(&self.current) {
            let here = self.current.to_string();
            self.error(
                codes::WRONG_EXEC,
                exec.span,
                format!("cannot {verb} `{ex}` here"),
                format!("this code is executed by `{here}`{hint}"),
            );
            return None;
        }
        Some(ex)
    }

    fn split(&mut self, dim: DimName, exec: &ast::ExecExpr, at: &ast::Nat, arms: &[ast::SplitArm; 2], span: Span) {
        if !self.on_gpu() {
            self.error(codes::WRONG_EXEC, span, "`split` outside of GPU code", "executed by `cpu.thread`");
            return;
        }
        let Some(ex) = self.resolve_sub_resource(exec, "split", "") else { return };
        let Ok((domain, shape)) = ex.sched_domain().and_then(|d| d.shape().map(|s| (d, s))) else {
            self.error(codes::INVALID_SCHED, exec.span, "invalid split", "not an execution resource that can be split");
            return;
        };
        let Some((_, size)) = shape.dims.iter().find(|(n, _)| *n == dim).cloned() else {
            self.error(
                codes::INVALID_SCHED,
                exec.span,
                format!("cannot split along `{}`", dim.letter()),
                format!("{} has no unscheduled dimension `{}`", shape.level.describe(), dim.letter()),
            );
            return;
        };
        let Some(pos) = self.lower_nat(at) else { return };
        if self.facts.le(&pos, &size) != Truth::Proven {
            self.error(
                codes::TAKE_OUT_OF_BOUNDS,
                at.span,
                "split position out of bounds",
                format!("cannot prove `{pos} <= {size}`"),
            );
            return;
        }
        let split_span = Span { hi: exec.span.hi, ..span };
        let what = exec_text(exec);
        for (i, arm) in arms.iter().enumerate() {
            let range = if i == 0 {
                Step::Range(Nat::lit(0), pos.clone(), dim)
            } else {
                Step::Range(pos.clone(), size.clone(), dim)
            };
            let mut arm_exec = domain.with(range);
            arm_exec.name = arm.name.name.clone();
            let b = self.binders.len();
            self.binders.push(Binder {
                name: arm.name.name.clone(),
                exec: arm_exec.clone(),
                dims: Vec::new(),
                distributing: false,
                span: arm.name.span,
                key: collection_key(&domain),
            });
            let uni = Uni::of_level(shape.level);
            self.frames.push(Frame::Arm { binder: b, span: split_span, what: what.clone(), uni });
            let saved = std::mem::replace(&mut self.current, arm_exec);
            self.expr(&arm.body, Some(&Ty::UNIT));
            self.current = saved;
            self.frames.pop();
        }
    }

    fn sync(&mut self, target: Option<&ast::ExecExpr>, span: Span) {
        if !self.on_gpu() {
            self.error(
                codes::INVALID_SYNC_TARGET,
                span,
                "`sync` outside of GPU code",
                "the CPU thread has nothing to synchronize with",
            );
            return;
        }
        // `sync` alone synchronizes the innermost block (or warp).
        let target_binder = match target {
            Some(t) => match (&t.base, t.path.is_empty()) {
                (ast::ExecBase::Var(id), true) => match self.binder_named(&id.name) {
                    Some(b) => b,
                    None => {
                        self.resolve_exec(t);
                        return;
                    }
                },
                _ => {
                    let text = exec_text(t);
                    self.error(
                        codes::INVALID_SYNC_TARGET,
                        t.span,
                        format!("cannot synchronize `{text}`"),
                        "only a whole block or warp can be synchronized",
                    );
                    return;
                }
            },
            None => {
                let found = (0..self.binders.len()).rev().find(|&i| {
                    self.binder_in_scope(&self.binders[i])
                        && matches!(self.binders[i].exec.shape().map(|s| s.level), Ok(Level::Block | Level::Warp))
                });
                match found {
                    Some(b) => b,
                    None => {
                        self.error(
                            codes::INVALID_SYNC_TARGET,
                            span,
                            "nothing to synchronize",
                            "`sync` must be inside a block or warp",
                        );
                        return;
                    }
                }
            }
        };
        let tb = self.binders[target_binder].clone();
        let level = tb.exec.shape().map(|s| s.level).unwrap_or(Level::Any);
        if level == Level::Warp {
            self.types.warp_syncs.insert(span);
        }
        if !matches!(level, Level::Block | Level::Warp) {
            self.error(
                codes::INVALID_SYNC_TARGET,
                target.map_or(span, |t| t.span),
                format!("cannot synchronize `{}`", tb.name),
                format!("`{}` is {}; only a whole block or warp can be synchronized", tb.name, level.describe()),
            );
            return;
        }
        if !self.current.within(&tb.exec) {
            self.error(
                codes::WRONG_EXEC,
                span,
                format!("cannot synchronize `{}` from here", tb.name),
                "this code is not executed by its threads",
            );
            return;
        }
        if !self.in_unsafe() {
            // T-SYNC: every thread of the target must reach the barrier.
            let start = self
                .frames
                .iter()
                .position(|f| matches!(f, Frame::Sched(b) if *b == target_binder))
                .map_or(0, |i| i + 1);
            if let Some((at, why)) = self.divergence(start, Uni::barrier(level), "thread") {
                self.report(
                    Diagnostic::error(
                        codes::BARRIER_NOT_ALLOWED,
                        "barrier not allowed here",
                        span,
                        format!("`sync` not performed by all threads in the {}", level_noun(level)),
                    )
                    .with_label(at, why),
                );
                return;
            }
            if self.current.steps.iter().skip(tb.exec.steps.len()).any(|s| matches!(s, Step::Range(..))) {
                self.error(
                    codes::BARRIER_NOT_ALLOWED,
                    span,
                    "barrier not allowed here",
                    "only part of the block executes this",
                );
                return;
            }
        }
        self.release(&tb, target_binder);
    }

    /// Why not every thread of a resource may reach the current point, where they must agree at
    /// `need` (`Block` for a block barrier, `Warp` for a warp's): a `return` some of them may have
    /// taken, a `split` at or below the resource (its frame is at `start`), or a condition, here
    /// or around the resource, that may differ between them. The span and label to show.
    /// `thread` names a single thread in the labels ("lane" among the lanes of a warp).
    fn divergence(&self, start: usize, need: Uni, thread: &str) -> Option<(Span, String)> {
        let noun = |u: Uni| if u == Uni::Thread { thread } else { u.noun() };
        if let Some((r, uni)) = self.divergent_return.filter(|(_, u)| *u > need) {
            return Some((r, format!("some {}s may have returned here", noun(uni))));
        }
        for (i, f) in self.frames.iter().enumerate().rev() {
            match f {
                Frame::Arm { span, what, uni, .. } if i >= start || *uni > need => {
                    return Some((*span, format!("`{what}` is split here")));
                }
                Frame::Cond { span, uni } if *uni > need => {
                    return Some((*span, format!("this condition depends on the executing {}", noun(*uni))));
                }
                _ => {}
            }
        }
        None
    }

    /// A function executed by a whole block or warp (which may synchronise it) must be called by
    /// every thread of the block or warp executing this code, as a `sync` would need.
    fn check_whole_resource_call(&mut self, need: Uni, span: Span, path: &str) {
        if self.in_unsafe() {
            return;
        }
        let start = self
            .frames
            .iter()
            .rposition(|f| matches!(f, Frame::Sched(b) if self.binders[*b].exec == self.current))
            .map_or(0, |i| i + 1);
        if let Some((at, why)) = self.divergence(start, need, "thread") {
            let noun = need.noun();
            self.report(
                Diagnostic::error(
                    codes::BARRIER_NOT_ALLOWED,
                    "barrier not allowed here",
                    span,
                    format!("`{path}` is executed by a whole {noun}, but not every thread of the {noun} calls it here"),
                )
                .with_label(at, why)
                .with_note(format!("a `gpu.{noun}` function may synchronise its {noun}: call it where every thread of the {noun} does")),
            );
        }
    }

    /// After a barrier of `tb`, accesses made by its threads no longer conflict (removeSelectAfter).
    fn release(&mut self, tb: &Binder, tb_id: usize) {
        let chain = self.chain();
        let depth_of_target = chain.iter().position(|b| *b == tb_id).map_or(0, |i| i + 1);
        let vars = &self.vars;
        self.accesses.retain_mut(|a| {
            if let Some(i) = a.place.steps.iter().position(|s| matches!(s, PStep::Select(e, _, _) if *e == tb.exec)) {
                a.place.steps.truncate(i + 1);
                a.truncated = true;
                return true;
            }
            let owned_below = match &vars[a.place.root].owner {
                // A block of a `split` arm is one block of the whole collection: memory owned by
                // that block or its sub-resources is released too.
                Owner::Exec(e) => {
                    e.within(&tb.exec)
                        || (!e.steps.iter().any(|s| matches!(s, Step::Range(..)))
                            && tb.exec.without_ranges().is_some_and(|t| e.within(&t)))
                }
                Owner::Chain(k) => *k >= depth_of_target,
            };
            !owned_below
        });
    }

    // --------------------------------------------------------------------------------------------
    // Control flow

    /// Types a condition and returns how far it may differ between threads (always `Uniform`
    /// on the host).
    fn cond(&mut self, c: &ast::Expr) -> Uni {
        let (t, uni) = self.expr_uni(c, Some(&Ty::BOOL));
        if t != Ty::BOOL && !t.is_error() {
            self.mismatch(c.span, &Ty::BOOL, &t);
        }
        if self.on_gpu() {
            uni
        } else {
            Uni::Uniform
        }
    }

    fn for_loop(&mut self, var: &ast::Ident, start: &ast::Nat, end: &ast::Nat, body: &ast::Block) {
        let (Some(a), Some(b)) = (self.lower_nat(start), self.lower_nat(end)) else { return };
        if self.generics.contains_key(&var.name)
            || self.prog.consts.contains_key(&var.name)
            || self.loop_nats.contains(&var.name)
        {
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
        });
        // Twice, so the accesses of one iteration meet those of the next; a loop that runs at
        // most once has no next iteration.
        let passes = if one_or_less { 1 } else { 2 };
        let before = self.accesses.clone();
        for pass in 0..passes {
            if pass == 1 {
                // The first pass's accesses belong to an earlier iteration: its loop variable is
                // another value than the current one, so give it another, unknown, name.
                let earlier = Nat::var(&format!("{}\u{2}{}", var.name, self.vars.len()));
                for a in &mut self.accesses {
                    crate::place::rename_access_nat(a, &var.name, &earlier);
                }
            }
            self.block(body, Some(&Ty::UNIT));
        }
        if !at_least_once {
            // The loop may not run at all: what was there before may still be there.
            let after = std::mem::take(&mut self.accesses);
            self.merge_accesses(vec![before, after]);
        }
        // After the loop its variable means nothing: a later loop may reuse the name.
        let gone = Nat::var(&format!("{}\u{3}{}", var.name, self.vars.len()));
        for a in &mut self.accesses {
            crate::place::rename_access_nat(a, &var.name, &gone);
        }
        self.loop_nats.pop();
        self.pop_scope();
        self.facts = saved_facts;
    }

    /// Accesses after one of several paths: every access any path may have left (a barrier on one
    /// path does not release what another path did, or what was there when no path ran).
    fn merge_accesses(&mut self, paths: Vec<Vec<Access>>) {
        let mut merged: Vec<Access> = Vec::new();
        for path in paths {
            for a in path {
                if !merged
                    .iter()
                    .any(|m| m.place == a.place && m.write == a.write && m.span == a.span && m.truncated == a.truncated)
                {
                    merged.push(a);
                }
            }
        }
        self.accesses = merged;
    }

    fn while_loop(&mut self, c: &ast::Expr, body: &ast::Block) {
        let before = self.accesses.clone();
        for _ in 0..2 {
            let uni = self.cond(c);
            let varying = uni > Uni::Uniform;
            if varying {
                self.frames.push(Frame::Cond { span: c.span, uni });
            }
            self.block(body, Some(&Ty::UNIT));
            if varying {
                self.frames.pop();
            }
        }
        // The body may run zero times.
        let after = std::mem::take(&mut self.accesses);
        self.merge_accesses(vec![before, after]);
    }

    fn if_expr(&mut self, c: &ast::Expr, then: &ast::Block, els: Option<&ast::Expr>, expected: Option<&Ty>) -> Ty {
        let uni = self.cond(c);
        let varying = uni > Uni::Uniform;
        if varying {
            self.frames.push(Frame::Cond { span: c.span, uni });
        }
        let before = self.accesses.clone();
        let moved_before: Vec<Option<Span>> = self.vars.iter().map(|v| v.moved).collect();
        let t = self.block(then, expected);
        let mut loans = std::mem::take(&mut self.val_loans);
        let after_then = std::mem::replace(&mut self.accesses, before);
        // Each branch starts from the moves made before the `if`; after it, a value moved on
        // either path is moved.
        let moved_then: Vec<Option<Span>> = self.vars.iter().map(|v| v.moved).collect();
        for (v, m) in self.vars.iter_mut().zip(&moved_before) {
            v.moved = *m;
        }
        let result = match els {
            Some(e) => {
                let et = self.expr(e, Some(&t));
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

    fn call(
        &mut self,
        func: &[ast::Ident],
        generics: &[ast::GenericArg],
        exec: Option<&ast::ExecExpr>,
        launch: Option<&ast::Launch>,
        args: &[ast::Expr],
        span: Span,
    ) -> Ty {
        let path = func.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join("::");
        let name = PATH_ALIASES.iter().find(|(p, _)| *p == path).map_or(path.as_str(), |(_, n)| n);
        let fspan = func.first().map_or(span, |f| f.span.to(func.last().map_or(f.span, |l| l.span)));
        if func.len() == 1 && self.lookup(name).is_some() {
            let ty = self.lookup(name).map(|id| self.vars[id].ty.clone()).unwrap_or(Ty::Error);
            self.error(
                codes::NOT_CALLABLE,
                fspan,
                format!("`{path}` is not a function"),
                format!("`{path}` is a value of type `{ty}`"),
            );
            for a in args {
                self.expr(a, None);
            }
            return Ty::Error;
        }
        // `println("text")`: a string literal is printable, though not a value.
        if (name == "println" || name == "print")
            && args.len() == 1
            && matches!(args[0].kind, ExprKind::Lit(ast::Lit::Str(_)))
            && generics.is_empty()
        {
            if self.level() != Level::Cpu {
                self.error(
                    codes::WRONG_EXEC,
                    fspan,
                    format!("`{name}` cannot be called here"),
                    format!("`{name}` runs on the CPU, but this code is executed by {}", self.level().describe()),
                );
            }
            return Ty::UNIT;
        }
        let Some(sig) = self.prog.fns.get(name).cloned() else {
            self.error(
                codes::UNKNOWN_NAME,
                fspan,
                format!("cannot find function `{path}` in this scope"),
                "not found in this scope",
            );
            for a in args {
                self.expr(a, None);
            }
            return Ty::Error;
        };
        let kernel = matches!(sig.root, Root::Grid { .. });
        // A call by the wrong resource is reported once; its arguments' narrowing is then moot.
        let mut exec_ok = true;
        let mut launch_shapes = None;
        let mut subst = Subst::default();
        // Explicit generic arguments, in order.
        let explicit: Vec<&(String, Kind)> = sig.generics.iter().collect();
        if generics.len() > explicit.len() {
            self.error(
                codes::GENERIC_ARG_COUNT,
                fspan,
                format!(
                    "`{path}` takes {} generic argument{} but {} were given",
                    explicit.len(),
                    if explicit.len() == 1 { "" } else { "s" },
                    generics.len()
                ),
                "too many generic arguments",
            );
        }
        let before_generics = self.diags.len();
        for (g, (gname, kind)) in generics.iter().zip(explicit) {
            self.bind_generic(g, gname, *kind, &mut subst);
        }
        // A generic argument that was an error binds nothing: no follow-up errors about it.
        let generics_ok = self.diags.len() == before_generics;
        if let Some(l) = launch {
            if self.level() != Level::Cpu {
                self.error(
                    codes::WRONG_EXEC,
                    span,
                    "kernels are launched from the CPU",
                    format!("this code is executed by {}", self.level().describe()),
                );
            }
            let Root::Grid { blocks, threads } = &sig.root else {
                self.error(
                    codes::NOT_A_KERNEL,
                    fspan,
                    format!("`{path}` is not a kernel"),
                    "only functions executed by a `gpu.grid` can be launched",
                );
                return Ty::Error;
            };
            let (gb, gt) = {
                let mut lower = self.lower();
                (lower.shape(&l.grid), lower.shape(&l.block))
            };
            // Sizes the launch gives directly (`X<n>`) bind `n` now; the others (`X<n / 32>`) are
            // checked once the arguments have bound what they mention.
            self.unify_shape(blocks, &gb, &mut subst, l.grid.span, "blocks", &path, true);
            self.unify_shape(threads, &gt, &mut subst, l.block.span, "threads", &path, true);
            launch_shapes = Some((blocks.clone(), gb, l.grid.span, threads.clone(), gt, l.block.span));
        } else {
            if kernel {
                self.error(
                    codes::NOT_A_KERNEL,
                    fspan,
                    format!("`{path}` is a kernel and must be launched"),
                    format!("launch it: `{path}::<<<grid, block>>>(…)`"),
                );
            }
            let before = self.diags.len();
            self.check_call_exec(&sig, exec, fspan, &path);
            exec_ok = self.diags.len() == before;
        }
        // Arguments: a launch allocates the shared-memory parameters itself.
        let params: Vec<&crate::program::ParamSig> =
            sig.params.iter().filter(|p| !(launch.is_some() && p.exec.is_some())).collect();
        if params.len() != args.len() {
            self.error(
                codes::ARG_COUNT,
                span,
                format!(
                    "`{path}` takes {} argument{} but {} were supplied",
                    params.len(),
                    if params.len() == 1 { "" } else { "s" },
                    args.len()
                ),
                "wrong number of arguments",
            );
        }
        if !self.on_gpu() {
            self.check_argument_aliasing(args);
        }
        let mut mismatches = Vec::new();
        let mut arg_tys = Vec::new();
        let mut arg_loans = Vec::new();
        // `println` only reads its argument, like Rust's `println!`: nothing is moved.
        let reads_only = name == "println" || name == "print";
        let moved_before: Vec<Option<Span>> =
            if reads_only { self.vars.iter().map(|v| v.moved).collect() } else { Vec::new() };
        let binding_alias = std::mem::take(&mut self.binding_alias);
        for (i, a) in args.iter().enumerate() {
            let expected = params.get(i).map(|p| self.apply_subst(&p.ty, &subst)).filter(|t| !has_vars(t, &sig));
            self.in_call_arg = true;
            let t = self.expr(a, expected.as_ref());
            self.in_call_arg = false;
            arg_loans.push(std::mem::take(&mut self.val_loans));
            arg_tys.push(t.clone());
            if let (Some(p), true) = (params.get(i), matches!(t, Ty::IntLit | Ty::FloatLit)) {
                let want = self.apply_subst(&p.ty, &subst);
                if !has_vars(&want, &sig) {
                    self.fix_open_var(a, &want);
                }
            }
            if let Some(p) = params.get(i) {
                let before = subst.nats.len() + subst.tys.len() + subst.mems.len();
                if !self.unify(&p.ty, &t, &mut subst, &sig) {
                    mismatches.push((i, self.apply_subst(&p.ty, &subst), t, before));
                }
            }
        }
        self.binding_alias = binding_alias;
        // A callee given a `&uniq` reference to data that holds references may store another
        // argument there, out of sight of the liveness analysis: keep every live borrow.
        if !self.on_gpu()
            && arg_tys.iter().any(|t| matches!(t, Ty::Ref { own: Ownership::Uniq, ty, .. } if holds_ref(ty)))
        {
            let live: Vec<Span> = self.live_borrows.iter().map(|b| b.2).collect();
            self.pinned_borrows.extend(live);
        }
        if reads_only {
            for (v, m) in self.vars.iter_mut().zip(moved_before) {
                v.moved = m;
            }
            // Printing reads the data: the host cannot read memory of the GPU (copy it first).
            for (a, t) in args.iter().zip(&arg_tys) {
                if let Some(m) = gpu_memory_in(t).filter(|_| !self.on_gpu()) {
                    self.report(
                        Diagnostic::error(
                            codes::BAD_DEREF,
                            format!("cannot read `{m}` memory on the host"),
                            a.span,
                            format!("`{name}` would read memory in `{m}` from `cpu.thread`"),
                        )
                        .with_note("copy it to host memory first, e.g. with `copy_mem_to_host`"),
                    );
                }
            }
        }
        let arguments_fit = mismatches.is_empty() && params.len() == args.len();
        // Two swapped arguments are one mistake: report it once.
        if mismatches.len() == 2 && mismatches[1].0 == mismatches[0].0 + 1 {
            let (i, ref want0, ref got0, _) = mismatches[0];
            let (_, ref want1, ref got1, _) = mismatches[1];
            if self.compatible(want0, got1) || self.compatible(want1, got0) || same_shape_refs(want0, got1) {
                let (want0, got0) = (want0.clone(), got0.clone());
                self.mismatch(args[i].span, &want0, &got0);
                if let Some(d) = self.diags.last_mut() {
                    d.notes.push("the two arguments appear to be swapped".into());
                }
                mismatches.clear();
            }
        }
        for (i, want, got, _) in mismatches {
            self.mismatch(args[i].span, &want, &got);
        }
        for (g, k) in &sig.generics {
            let bound = match k {
                Kind::Nat => subst.nats.contains_key(g),
                Kind::DataTy => subst.tys.contains_key(g),
                Kind::Mem => subst.mems.contains_key(g),
                Kind::Prv => true,
            };
            if !bound && arguments_fit && generics_ok {
                self.error(
                    codes::CANNOT_INFER,
                    fspan,
                    format!("cannot infer `{g}` for this call of `{path}`"),
                    format!("give it explicitly: `{path}::<…>(…)`"),
                );
            }
        }
        // A host function generic over a data type may read a value of it (print it, copy it):
        // it may not be given one that holds GPU memory.
        if matches!(sig.root, Root::CpuThread) {
            for (g, t) in &subst.tys {
                if let Some(m) = gpu_memory_in(t) {
                    self.error(
                        codes::BAD_DEREF,
                        span,
                        format!("`{g}` = `{t}` cannot be used by `{path}`"),
                        format!("`{path}` runs on the CPU and may read a `{g}`, which holds `{m}` memory"),
                    );
                }
            }
        }
        // A memory-space parameter may only stand for memory the callee's resource can use.
        for (g, m) in &subst.mems {
            // Code run by `Any` runs where it is called from.
            let gpu_callee = match sig.root {
                Root::CpuThread => false,
                Root::Any => self.on_gpu(),
                _ => true,
            };
            let bad = if gpu_callee { *m == Mem::CpuMem } else { m.is_gpu() };
            if bad && sig.generics.iter().any(|(n, k)| n == g && *k == Kind::Mem) {
                let who = if gpu_callee { "GPU code" } else { "the CPU" };
                self.error(
                    codes::BAD_DEREF,
                    span,
                    format!("`{g}` = `{m}` cannot be used by `{path}`"),
                    format!("`{path}` runs on {who}, which cannot dereference `{m}`"),
                );
            }
        }
        if let Some((blocks, gb, bspan, threads, gt, tspan)) = launch_shapes {
            self.unify_shape(&blocks, &gb, &mut subst, bspan, "blocks", &path, false);
            self.unify_shape(&threads, &gt, &mut subst, tspan, "threads", &path, false);
        }
        // `where` clauses instantiated at the call site.
        for (a, op, b, _) in &sig.where_clauses {
            let (a, b) = (self.subst_nat(a, &subst), self.subst_nat(b, &subst));
            let truth = match op {
                ast::CmpOp::Eq => self.facts.equal(&a, &b),
                ast::CmpOp::Le => self.facts.le(&a, &b),
                ast::CmpOp::Lt => self.facts.lt(&a, &b),
                ast::CmpOp::Ge => self.facts.le(&b, &a),
                ast::CmpOp::Gt => self.facts.lt(&b, &a),
                ast::CmpOp::Ne => match self.facts.equal(&a, &b) {
                    Truth::Proven => Truth::Disproven,
                    Truth::Disproven => Truth::Proven,
                    Truth::Unknown => Truth::Unknown,
                },
            };
            if truth != Truth::Proven && generics_ok {
                self.error(
                    codes::SIZE_NOT_PROVEN,
                    span,
                    format!("cannot prove `{a} {} {b}` required by `{path}`", op.symbol()),
                    "the `where` clause of the callee is not satisfied here",
                );
            }
        }
        if WARP_COLLECTIVES.contains(&name) {
            self.check_collective(&path, span);
        }
        if exec_ok {
            self.pass_references(args, &params, &arg_loans, &subst);
        }
        if matches!(sig.root, Root::Thread) && self.on_gpu() {
            self.varies = Uni::Thread;
        }
        let nats = sig
            .generics
            .iter()
            .filter(|(_, k)| *k == Kind::Nat)
            .map(|(g, _)| (g.clone(), subst.nats.get(g).cloned().unwrap_or_else(|| Nat::var(g))))
            .collect();
        self.types.call_nats.insert(span, nats);
        let ret = self.apply_subst(&sig.ret, &subst);
        // The result may borrow from any reference argument.
        let mut loans = Vec::new();
        for l in arg_loans {
            union_loans(&mut loans, l);
        }
        if let Ty::Ref { own: Ownership::Shrd, .. } = ret {
            for l in &mut loans {
                l.own = Ownership::Shrd;
            }
        }
        if name.starts_with("shfl_") {
            match ret.defaulted() {
                Ty::Scalar(s) if !matches!(s, ScalarTy::Unit | ScalarTy::AtomicU32 | ScalarTy::AtomicI32) => {
                    self.types.shuffle_types.insert(span, s);
                }
                Ty::Error => {}
                other => self.error(
                    codes::MISMATCHED_TYPES,
                    span,
                    format!("`{path}` cannot exchange a value of type `{other}`"),
                    "a warp shuffle moves one `bool`, integer or float per lane",
                ),
            }
        }
        self.val_loans = loans;
        ret
    }

    /// Passing a reference to a callee is a use of everything it may borrow, by the resource that
    /// makes the call: a `&uniq` argument must be narrowed to it, exactly as if it were borrowed
    /// there (`&uniq place` arguments are checked as borrows when typed).
    fn pass_references(
        &mut self,
        args: &[ast::Expr],
        params: &[&crate::program::ParamSig],
        arg_loans: &[Vec<Alias>],
        subst: &Subst,
    ) {
        for ((a, p), loans) in args.iter().zip(params).zip(arg_loans) {
            let mut e = a;
            while let ExprKind::Paren(inner) = &e.kind {
                e = inner;
            }
            if matches!(e.kind, ExprKind::Borrow { .. }) {
                continue;
            }
            let Ty::Ref { own, mem, .. } = self.apply_subst(&p.ty, subst) else { continue };
            for l in loans {
                let info = PlaceInfo {
                    place: l.place.clone(),
                    ty: Ty::Error,
                    mem: Some(mem.clone()),
                    via_shared: l.own == Ownership::Shrd,
                    via_alias: true,
                    consumed: l.consumed.clone(),
                    alts: Vec::new(),
                };
                self.access(&info, Mode::Borrow(own), a.span);
            }
        }
    }

    /// Two borrows passed to one call may not overlap if either is unique.
    fn check_argument_aliasing(&mut self, args: &[ast::Expr]) {
        let mut seen: Vec<(Place, Ownership, Span)> = Vec::new();
        for a in args {
            let ExprKind::Borrow { own, place, .. } = &a.kind else { continue };
            let Some(info) = self.place_quiet(place) else { continue };
            if let Some((_, o, at)) = seen.iter().find(|(p, o, _)| {
                p.root == info.place.root
                    && (*own == Ownership::Uniq || *o == Ownership::Uniq)
                    && prefix_overlap(&p.steps, &info.place.steps)
            }) {
                let name = self.vars[info.place.root].name.clone();
                let (o, at) = (*o, *at);
                self.report(
                    Diagnostic::error(
                        codes::BORROW_CONFLICT,
                        format!(
                            "cannot borrow `{name}` as {} because it is also borrowed as {}",
                            own.keyword(),
                            o.keyword()
                        ),
                        a.span,
                        "second borrow in the same call",
                    )
                    .with_label(at, "first borrow"),
                );
            }
            seen.push((info.place, *own, a.span));
        }
    }

    /// A warp collective needs every lane of one warp: a lane of a `sched` over a warp, with no
    /// `split` or lane-dependent condition between the warp and the call.
    fn check_collective(&mut self, path: &str, span: Span) {
        if self.in_unsafe() || self.level() != Level::Thread {
            return; // the call's execution resource is checked (and reported) separately
        }
        let warp_frame = self.frames.iter().rposition(|f| match f {
            Frame::Sched(b) => self.binders[*b].exec.shape().is_ok_and(|s| s.level == Level::Warp),
            _ => false,
        });
        let warp_is_fn = matches!(self.sig.root, Root::Warp);
        let Some(start) = warp_frame.map(|i| i + 1).or(if warp_is_fn { Some(0) } else { None }) else {
            self.error(
                codes::COLLECTIVE_NOT_ALLOWED,
                span,
                "collective operation not allowed here",
                format!("`{path}` must be executed by the lanes of a warp: schedule over `block.to_warps`, then over the warp's lanes"),
            );
            return;
        };
        // Only a range of lanes splits a warp; a range of warps (`split(X) block.warps`) keeps
        // whole warps together.
        let lanes_from = self.current.steps.iter().rposition(|s| *s == Step::Lanes).unwrap_or(0);
        if self.current.steps[lanes_from..].iter().any(|s| matches!(s, Step::Range(..))) {
            self.report(Diagnostic::error(
                codes::COLLECTIVE_NOT_ALLOWED,
                "collective operation not allowed here",
                span,
                format!("`{path}` is executed by only part of the warp (a sub-range of its lanes)"),
            ));
            return;
        }
        if let Some((at, why)) = self.divergence(start, Uni::Warp, "lane") {
            self.report(
                Diagnostic::error(
                    codes::COLLECTIVE_NOT_ALLOWED,
                    "collective operation not allowed here",
                    span,
                    format!("`{path}` not performed by all lanes of the warp"),
                )
                .with_label(at, why),
            );
        }
    }

    fn bind_generic(&mut self, g: &ast::GenericArg, name: &str, kind: Kind, s: &mut Subst) {
        match (g, kind) {
            (ast::GenericArg::Nat(n), Kind::Nat) => {
                if let Some(v) = self.lower_nat(n) {
                    s.nats.insert(name.to_string(), v);
                }
            }
            (ast::GenericArg::Nat(n), Kind::DataTy) => {
                // A bare identifier is parsed as a nat; here it names a type variable.
                if let ast::NatKind::Var(id) = &n.kind {
                    let t = self.lower_ty(&ast::Ty { kind: ast::TyKind::Var(id.clone()), span: n.span });
                    s.tys.insert(name.to_string(), t);
                } else {
                    self.error(codes::KIND_MISMATCH, n.span, "expected a data type", "this is a natural number");
                }
            }
            (ast::GenericArg::Nat(n), Kind::Mem) => {
                if let ast::NatKind::Var(id) = &n.kind {
                    let m = self.lower().mem(&ast::Mem { kind: ast::MemKind::Var(id.clone()), span: n.span });
                    s.mems.insert(name.to_string(), m);
                }
            }
            (ast::GenericArg::Ty(t), Kind::DataTy) => {
                let t = self.lower_ty(t);
                s.tys.insert(name.to_string(), t);
            }
            (ast::GenericArg::Mem(m), Kind::Mem) => {
                let m = self.lower().mem(m);
                s.mems.insert(name.to_string(), m);
            }
            (_, Kind::Prv) => {}
            (g, k) => {
                let span = match g {
                    ast::GenericArg::Nat(n) => n.span,
                    ast::GenericArg::Ty(t) => t.span,
                    ast::GenericArg::Mem(m) => m.span,
                };
                self.error(
                    codes::KIND_MISMATCH,
                    span,
                    format!("expected a `{}` for `{name}`", k.keyword()),
                    "wrong kind of generic argument",
                );
            }
        }
    }

    /// Who may call whom: CPU functions from the CPU, thread functions from one GPU thread, …
    fn check_call_exec(&mut self, sig: &FnSig, exec: Option<&ast::ExecExpr>, span: Span, path: &str) {
        if let Some(e) = exec {
            self.resolve_exec(e);
        }
        let level = self.level();
        if let (Root::Block { threads }, Ok(shape)) = (&sig.root, self.current.shape()) {
            let here = shape.block.unwrap_or_default();
            let same = threads.len() == here.len()
                && threads.iter().zip(&here).all(|((d1, n1), (d2, n2))| d1 == d2 && self.nat_eq(n1, n2));
            if level == Level::Block && !same {
                let show = |sh: &[(DimName, Nat)]| {
                    sh.iter().map(|(d, n)| format!("{}<{n}>", d.letter())).collect::<Vec<_>>().join(", ")
                };
                self.error(
                    codes::WRONG_EXEC,
                    span,
                    format!("`{path}` cannot be called here"),
                    format!("`{path}` needs blocks of {}, these blocks have {}", show(threads), show(&here)),
                );
                return;
            }
        }
        let ok = match &sig.root {
            Root::CpuThread => level == Level::Cpu,
            Root::Thread => level == Level::Thread || (self.in_unsafe() && !matches!(level, Level::Cpu | Level::Any)),
            Root::Warp => level == Level::Warp,
            Root::Block { .. } => level == Level::Block,
            Root::Any => true,
            Root::Grid { .. } => true,
        };
        if ok && self.on_gpu() {
            match &sig.root {
                Root::Warp => self.check_whole_resource_call(Uni::Warp, span, path),
                Root::Block { .. } => self.check_whole_resource_call(Uni::Block, span, path),
                _ => {}
            }
        }
        if !ok {
            let needs = match &sig.root {
                Root::CpuThread => Level::Cpu,
                Root::Thread => Level::Thread,
                Root::Warp => Level::Warp,
                Root::Block { .. } => Level::Block,
                _ => Level::Any,
            };
            let mut d = Diagnostic::error(
                codes::WRONG_EXEC,
                format!("`{path}` cannot be called here"),
                span,
                format!(
                    "`{path}` must be executed by {}, but this code is executed by {}",
                    needs.describe(),
                    level.describe()
                ),
            );
            if let Some((s, l)) = self.executed_by_label() {
                d = d.with_label(s, l);
            }
            self.report(d);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn unify_shape(
        &mut self,
        want: &[(DimName, Nat)],
        got: &[(DimName, Nat)],
        s: &mut Subst,
        span: Span,
        what: &str,
        path: &str,
        bind_only: bool,
    ) {
        let names = |sh: &[(DimName, Nat)]| sh.iter().map(|(d, _)| d.letter()).collect::<String>();
        if bind_only {
            for ((_, w), (_, g)) in want.iter().zip(got) {
                if let Some(v) = w.as_var() {
                    if !s.nats.contains_key(v) && names(want) == names(got) {
                        s.nats.insert(v.to_string(), g.clone());
                    }
                }
            }
            return;
        }
        if names(want) != names(got) {
            self.error(
                codes::LAUNCH_SHAPE,
                span,
                "launch shape does not match the kernel",
                format!("`{path}` expects {what} along {}, the launch gives {}", names(want), names(got)),
            );
            return;
        }
        for ((_, w), (_, g)) in want.iter().zip(got) {
            if !self.unify_nat(w, g, s) {
                let w = self.subst_nat(w, s);
                self.error(
                    codes::LAUNCH_SHAPE,
                    span,
                    "launch shape does not match the kernel",
                    format!("`{path}` expects {w} {what}, the launch gives {g}"),
                );
            }
        }
    }

    fn unify_nat(&mut self, want: &Nat, got: &Nat, s: &mut Subst) -> bool {
        if let Some(v) = want.as_var() {
            if let Some(bound) = s.nats.get(v) {
                return self.facts.equal(bound, got) == Truth::Proven;
            }
            if self.sig_generic_is_callee(v, s) {
                s.nats.insert(v.to_string(), got.clone());
                return true;
            }
        }
        let w = self.subst_nat(want, s);
        self.facts.equal(&w, got) == Truth::Proven
    }

    /// Callee generics are bound lazily; a variable is the callee's while it is unbound.
    fn sig_generic_is_callee(&self, _v: &str, _s: &Subst) -> bool {
        true
    }

    fn subst_nat(&self, n: &Nat, s: &Subst) -> Nat {
        // Rename first so a callee variable named like a caller variable is not captured.
        let mut out = n.clone();
        for name in s.nats.keys() {
            if let Ok(r) = out.subst(name, &Nat::var(&format!("\u{1}{name}"))) {
                out = r;
            }
        }
        for (name, v) in &s.nats {
            if let Ok(r) = out.subst(&format!("\u{1}{name}"), v) {
                out = r;
            }
        }
        out
    }

    fn apply_subst(&self, t: &Ty, s: &Subst) -> Ty {
        match t {
            Ty::Var(v) => s.tys.get(v).cloned().unwrap_or_else(|| t.clone()),
            Ty::Tuple(ts) => Ty::Tuple(ts.iter().map(|t| self.apply_subst(t, s)).collect()),
            Ty::Array(e, n) => Ty::Array(Box::new(self.apply_subst(e, s)), self.subst_nat(n, s)),
            Ty::ViewArray(e, n) => Ty::ViewArray(Box::new(self.apply_subst(e, s)), self.subst_nat(n, s)),
            Ty::Ref { own, mem, ty } => {
                Ty::Ref { own: *own, mem: subst_mem(mem, s), ty: Box::new(self.apply_subst(ty, s)) }
            }
            Ty::At(e, m) => Ty::At(Box::new(self.apply_subst(e, s)), subst_mem(m, s)),
            other => other.clone(),
        }
    }

    /// Unifies a callee parameter type with an argument type, binding the callee's generics.
    fn unify(&mut self, p: &Ty, a: &Ty, s: &mut Subst, sig: &FnSig) -> bool {
        if a.is_error() || p.is_error() {
            return true;
        }
        match (p, a) {
            (Ty::Var(v), _) if sig.generics.iter().any(|(g, _)| g == v) => match s.tys.get(v).cloned() {
                Some(bound) => self.compatible(&bound, a),
                None => {
                    s.tys.insert(v.clone(), a.defaulted());
                    true
                }
            },
            (Ty::Tuple(ps), Ty::Tuple(as_)) => {
                ps.len() == as_.len() && ps.iter().zip(as_).all(|(p, a)| self.unify(p, a, s, sig))
            }
            (Ty::Array(pe, pn), Ty::Array(ae, an)) | (Ty::ViewArray(pe, pn), Ty::ViewArray(ae, an)) => {
                self.unify(pe, ae, s, sig) && self.unify_nat(pn, an, s)
            }
            (Ty::Ref { own: po, mem: pm, ty: pt }, Ty::Ref { own: ao, mem: am, ty: at }) => {
                let own_ok = *po == Ownership::Shrd || *ao == Ownership::Uniq;
                let mem_ok = match pm {
                    Mem::Var(v) if sig.generics.iter().any(|(g, _)| g == v) => match s.mems.get(v) {
                        Some(m) => m == am,
                        None => {
                            s.mems.insert(v.clone(), am.clone());
                            true
                        }
                    },
                    m => m == am,
                };
                own_ok && mem_ok && self.unify(pt, at, s, sig)
            }
            (Ty::At(pt, pm), Ty::At(at, am)) => pm == am && self.unify(pt, at, s, sig),
            _ => self.compatible(p, a),
        }
    }

    /// `found` can be used where `expected` is required (no generics to bind).
    fn compatible(&self, expected: &Ty, found: &Ty) -> bool {
        match (expected, found) {
            (Ty::Error, _) | (_, Ty::Error) => true,
            (e, Ty::IntLit | Ty::Nat) => e.is_int(),
            (Ty::IntLit | Ty::Nat, f) => f.is_int(),
            (e, Ty::FloatLit) => e.is_float(),
            (Ty::FloatLit, f) => f.is_float(),
            (Ty::Scalar(a), Ty::Scalar(b)) => a == b,
            (Ty::Var(a), Ty::Var(b)) => a == b,
            (Ty::Tuple(a), Ty::Tuple(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| self.compatible(x, y)),
            (Ty::Array(a, n), Ty::Array(b, m)) | (Ty::ViewArray(a, n), Ty::ViewArray(b, m)) => {
                self.compatible(a, b) && self.nat_eq(n, m)
            }
            (Ty::Ref { own: o1, mem: m1, ty: t1 }, Ty::Ref { own: o2, mem: m2, ty: t2 }) => {
                (*o1 == Ownership::Shrd || *o2 == Ownership::Uniq) && m1 == m2 && self.compatible(t1, t2)
            }
            (Ty::At(a, m), Ty::At(b, n)) => m == n && self.compatible(a, b),
            _ => false,
        }
    }

    // --------------------------------------------------------------------------------------------
    // Views

    /// Applies a view to an array type; returns the new type and the basic views it expands to.
    fn apply_view(&mut self, ty: &Ty, v: &ast::ViewRef, env: &HashMap<String, Nat>) -> Option<(Ty, Vec<ViewApp>)> {
        let mut nats = Vec::new();
        for n in &v.nat_args {
            nats.push(self.view_nat(n, env)?);
        }
        for (n, arg) in nats.iter().zip(&v.nat_args) {
            if self.facts.le(&Nat::lit(0), n) != Truth::Proven {
                self.error(
                    codes::SIZE_NOT_PROVEN,
                    arg.span,
                    "size argument may be negative",
                    format!("cannot prove `{n} >= 0`"),
                );
                return None;
            }
        }
        let name = v.name.name.as_str();
        let basic: Option<&'static str> = match name {
            "group" | "grp" => Some("group"),
            "take_left" => Some("take_left"),
            "take_right" => Some("take_right"),
            "transpose" | "transp" => Some("transpose"),
            "reverse" | "rev" => Some("reverse"),
            "join" => Some("join"),
            "map" => Some("map"),
            "to_view" => Some("to_view"),
            _ => None,
        };
        let Some(basic) = basic else {
            return self.apply_named_view(ty, v, nats);
        };
        let want_nats = usize::from(matches!(basic, "group" | "take_left" | "take_right"));
        if nats.len() != want_nats
            || (basic == "map") != (v.view_args.len() == 1)
            || (basic != "map" && !v.view_args.is_empty())
        {
            self.error(
                codes::GENERIC_ARG_COUNT,
                v.span,
                format!("wrong arguments for view `{name}`"),
                match basic {
                    "group" | "take_left" | "take_right" => format!("write `{name}::<n>`"),
                    "map" => "write `map(view)`".into(),
                    _ => format!("`{name}` takes no arguments"),
                },
            );
            return None;
        }
        let Some((elem, len)) = ty.as_array().map(|(t, n)| (t.clone(), n.clone())) else {
            self.not_an_array(ty, v.span, "viewed");
            return None;
        };
        let mut args = Vec::new();
        let out = match basic {
            "group" => {
                let k = &nats[0];
                let divides =
                    self.facts.divides(k, &len) == Truth::Proven || crate::pow2::divides(&self.facts, k, &len);
                let positive = self.facts.le(&Nat::lit(1), k) == Truth::Proven || crate::pow2::positive(&self.facts, k);
                if !positive {
                    self.error(
                        codes::SIZE_NOT_PROVEN,
                        v.span,
                        "group size must be at least 1",
                        format!("cannot prove `{k} >= 1`"),
                    );
                    return None;
                }
                if !divides {
                    self.error(
                        codes::SIZE_NOT_PROVEN,
                        v.span,
                        "group size must divide the array length",
                        format!("cannot prove that {k} divides {len}"),
                    );
                    return None;
                }
                let groups = crate::pow2::simplify(&len.div(k).ok()?, &self.facts);
                Ty::ViewArray(Box::new(Ty::ViewArray(Box::new(elem), k.clone())), groups)
            }
            "take_left" | "take_right" => {
                let k = &nats[0];
                if self.facts.le(k, &len) != Truth::Proven {
                    self.error(
                        codes::TAKE_OUT_OF_BOUNDS,
                        v.span,
                        "split position out of bounds",
                        format!("cannot prove `{k} <= {len}`"),
                    );
                    return None;
                }
                let n = if basic == "take_left" { k.clone() } else { len.sub(k).ok()? };
                Ty::ViewArray(Box::new(elem), n)
            }
            "transpose" => {
                let Some((inner, m)) = elem.as_array().map(|(t, n)| (t.clone(), n.clone())) else {
                    self.error(
                        codes::NOT_AN_ARRAY,
                        v.span,
                        "`transpose` needs a two-dimensional array",
                        format!("the elements are `{elem}`"),
                    );
                    return None;
                };
                Ty::ViewArray(Box::new(Ty::ViewArray(Box::new(inner), len)), m)
            }
            "join" => {
                // [[T; m]; n] seen as [T; n * m], row by row (the inverse of `group::<m>`).
                let Some((inner, m)) = elem.as_array().map(|(t, n)| (t.clone(), n.clone())) else {
                    self.error(
                        codes::NOT_AN_ARRAY,
                        v.span,
                        "`join` needs a two-dimensional array",
                        format!("the elements are `{elem}`"),
                    );
                    return None;
                };
                let joined = crate::pow2::simplify(&len.mul(&m).ok()?, &self.facts);
                Ty::ViewArray(Box::new(inner), joined)
            }
            "reverse" | "to_view" => Ty::ViewArray(Box::new(elem), len),
            _ => {
                let mut t = elem;
                let mut chain = Vec::new();
                for inner in &v.view_args[0] {
                    let (nt, apps) = self.apply_view(&t, inner, env)?;
                    t = nt;
                    chain.extend(apps);
                }
                args.push(chain);
                Ty::ViewArray(Box::new(t), len)
            }
        };
        Some((out, vec![ViewApp { name: basic, nats, args }]))
    }

    fn apply_named_view(&mut self, ty: &Ty, v: &ast::ViewRef, nats: Vec<Nat>) -> Option<(Ty, Vec<ViewApp>)> {
        if self.view_depth >= 32 {
            self.error(
                codes::UNKNOWN_VIEW,
                v.span,
                format!("view `{}` expands without end", v.name.name),
                "a view defined in terms of itself",
            );
            return None;
        }
        let Some(def) = self.prog.views.get(&v.name.name).cloned() else {
            self.error(codes::UNKNOWN_VIEW, v.name.span, format!("unknown view `{}`", v.name.name), "not a view");
            return None;
        };
        if def.generics.len() != nats.len() || !v.view_args.is_empty() {
            self.error(
                codes::GENERIC_ARG_COUNT,
                v.span,
                format!(
                    "view `{}` takes {} size argument(s) but {} were given",
                    v.name.name,
                    def.generics.len(),
                    nats.len()
                ),
                "wrong number of arguments",
            );
            return None;
        }
        let env: HashMap<String, Nat> = def.generics.iter().cloned().zip(nats).collect();
        let mut t = ty.clone();
        let mut apps = Vec::new();
        self.view_depth += 1;
        let result = self.expand_view(&mut t, &mut apps, &def.body, v, &env);
        self.view_depth -= 1;
        result?;
        Some((t, apps))
    }

    fn expand_view(
        &mut self,
        t: &mut Ty,
        apps: &mut Vec<ViewApp>,
        body: &[ast::ViewRef],
        v: &ast::ViewRef,
        env: &HashMap<String, Nat>,
    ) -> Option<()> {
        for step in body {
            // Errors inside a named view are reported at its use.
            let mark = self.diags.len();
            let r = self.apply_view(t, step, env);
            for d in &mut self.diags[mark..] {
                d.primary.span = v.span;
            }
            if r.is_none() && self.diags.len() == mark {
                self.error(
                    codes::SIZE_NOT_PROVEN,
                    v.span,
                    format!("invalid view `{}`", v.name.name),
                    "a size in its definition is invalid here",
                );
            }
            let (nt, a) = r?;
            *t = nt;
            apps.extend(a);
        }
        Some(())
    }

    /// A view's size argument: view parameters first, then the function's sizes.
    fn view_nat(&mut self, n: &ast::Nat, env: &HashMap<String, Nat>) -> Option<Nat> {
        if env.is_empty() {
            return self.lower_nat(n);
        }
        // The parameters are read as their values, so each operation is checked for the
        // values at this use under this function's facts.
        let mut lower = Lower {
            consts: &self.prog.consts,
            generics: env.keys().map(|k| (k.clone(), Kind::Nat)).collect(),
            default_mem: Mem::GpuGlobal,
            diags: &mut self.diags,
            facts: Some(&self.facts),
            env: Some(env),
        };
        lower.nat_checked(n)
    }
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

fn holds_ref(t: &Ty) -> bool {
    match t {
        Ty::Ref { .. } | Ty::Var(_) | Ty::Error => true,
        Ty::Tuple(ts) => ts.iter().any(holds_ref),
        Ty::Array(t, _) | Ty::ViewArray(t, _) | Ty::At(t, _) => holds_ref(t),
        _ => false,
    }
}

fn prefix_overlap(a: &[PStep], b: &[PStep]) -> bool {
    a.iter().zip(b).all(|(x, y)| x == y)
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
