//! Non-lexical lifetimes for host borrows bound by `let`.
//!
//! A borrow `let r = &… p;` in host code is live from the `let` to the last statement of the same
//! block that may still use the reference: a statement that mentions `r`, or any variable the
//! reference may have flowed into. The analysis is syntactic and conservative:
//!
//! * a mention anywhere inside a statement (a nested block, a branch, a loop body) counts for the
//!   whole statement, so a borrow used in a loop is live for the whole loop;
//! * `let y = e` where `e` mentions a variable holding the reference makes `y` hold it too (a copy
//!   `let r2 = r;`, a call `let q = f(r);`, a tuple `let t = (r, 1);`);
//! * `x = e` where `e` mentions such a variable makes `x` hold it when `x` is declared in this
//!   block (or in a block nested in the statement); any other assignment (to a variable of an
//!   outer block, to an element, through a reference) keeps the borrow live to the end of the block,
//!   as do a block's tail expression that mentions it (the value leaves the block);
//! * `x = e` as a statement of the block (not inside a branch or loop), where `e` does not
//!   mention the reference, overwrites `x`: it no longer holds the reference;
//! * a borrow assigned by such a statement to a variable of this block (`r = &uniq b;`) is followed
//!   from there like one bound by `let`;
//! * names are compared without regard to shadowing, which only makes borrows live longer (a
//!   variable overwritten by name is the innermost one of that name, the one later statements see).
//!
//! The checker follows the reference after every statement, once the statement's types are known:
//! a value whose type cannot hold a reference (`let n = r[0];`, `let d = GpuGlobal::alloc_copy(r);`,
//! `a[i] = r[i];`) does not carry the borrow.
//!
//! A call that could store a reference into memory reachable from one of its arguments (a
//! `&uniq` argument whose data holds references) is handled while checking, with the types known:
//! the borrows live at that call stay live to the end of their blocks.

use std::collections::{HashMap, HashSet};
use strata_diag::Span;
use strata_syntax::ast::{self, ExprKind};

/// What one block's statements mention, computed once per block.
pub struct BlockUses {
    /// The last statement that mentions each name (anywhere inside it).
    last_mention: HashMap<String, usize>,
    /// The first `let` of this block declaring each name.
    first_let: HashMap<String, usize>,
}

impl BlockUses {
    pub fn new(stmts: &[ast::Stmt]) -> BlockUses {
        let mut last_mention = HashMap::new();
        let mut first_let = HashMap::new();
        for (j, s) in stmts.iter().enumerate() {
            let mut names = Vec::new();
            stmt_names(s, &mut names);
            for n in names {
                last_mention.insert(n.to_string(), j);
            }
            if let ast::Stmt::Let(l) = s {
                first_let.entry(l.name.name.clone()).or_insert(j);
            }
        }
        BlockUses { last_mention, first_let }
    }
}

/// The variables of a block that may hold the reference bound by one of its `let`s, followed
/// statement by statement as they are checked.
pub struct Flow {
    tracked: HashSet<String>,
    /// The reference may have flowed where it is not followed: it stays live to the block's end.
    escaped: bool,
}

impl Flow {
    /// The reference bound by the variable `name`.
    pub fn new(name: &str) -> Flow {
        Flow { tracked: HashSet::from([name.to_string()]), escaped: false }
    }

    /// Follows the reference through statement `j`, which has been checked: `holds(span)` says
    /// whether the value bound by the `let` whose name is at `span`, or assigned to the place at
    /// `span`, may hold a reference (unknown: it may).
    pub fn step(&mut self, stmts: &[ast::Stmt], j: usize, uses: &BlockUses, holds: &dyn Fn(Span) -> bool) {
        let Some(s) = stmts.get(j) else { return };
        // A loop inside the statement may pass the reference on in a later iteration: repeat
        // until no new variable is found to hold it.
        loop {
            let mut scan = Scan {
                tracked: &self.tracked,
                holds,
                uses,
                at: j,
                scopes: Vec::new(),
                derived: Vec::new(),
                escapes: false,
            };
            scan.stmt(s);
            self.escaped |= scan.escapes;
            let before = self.tracked.len();
            self.tracked.extend(scan.derived);
            if self.tracked.len() == before {
                break;
            }
        }
        // `x = e;` as a statement of this block replaces all that `x` held: unless `e` mentions
        // the reference, `x` holds it no more (Rust's NLL kills the loan when `x` is overwritten).
        // Only a whole-variable assignment at the top of the block is sure to run and to replace
        // it; one in a branch or a loop body, or of a part of `x`, kills nothing.
        if let Some(x) = overwritten(s).filter(|(_, rhs)| !mentions(rhs, &self.tracked)).map(|(x, _)| x) {
            self.tracked.remove(x);
        }
    }

    /// Is the reference dead after statement `j` (no later statement mentions a variable that may
    /// hold it)?
    pub fn dead_after(&self, j: usize, uses: &BlockUses) -> bool {
        !self.escaped && self.tracked.iter().all(|t| uses.last_mention.get(t).copied().unwrap_or(0) <= j)
    }
}

/// The variable a statement `x = e;` assigns as a whole, and `e`.
pub fn overwritten(s: &ast::Stmt) -> Option<(&str, &ast::Expr)> {
    let ast::Stmt::Expr { expr, .. } = s else { return None };
    let ExprKind::Assign(lhs, rhs) = &expr.kind else { return None };
    let mut target = &**lhs;
    while let ExprKind::Paren(inner) = &target.kind {
        target = inner;
    }
    match &target.kind {
        ExprKind::Path(segs) if segs.len() == 1 => Some((segs[0].name.as_str(), rhs)),
        _ => None,
    }
}

impl BlockUses {
    /// Is `name` declared by a `let` of this block before statement `j`?
    pub fn declared_before(&self, name: &str, j: usize) -> bool {
        self.first_let.get(name).is_some_and(|&k| k < j)
    }
}

/// One pass over a statement: which variables start to hold the reference, and whether it flows
/// where the analysis does not follow it.
struct Scan<'a> {
    tracked: &'a HashSet<String>,
    holds: &'a dyn Fn(Span) -> bool,
    uses: &'a BlockUses,
    /// The statement scanned.
    at: usize,
    /// Names of the variables declared in the blocks nested in the statement, innermost last.
    scopes: Vec<Vec<&'a str>>,
    derived: Vec<String>,
    escapes: bool,
}

impl<'a> Scan<'a> {
    /// Is `name` a variable of this block declared before the statement, or of a block nested in
    /// it?
    fn declared(&self, name: &str) -> bool {
        self.scopes.iter().any(|s| s.contains(&name)) || self.uses.first_let.get(name).is_some_and(|&k| k < self.at)
    }

    fn declare(&mut self, name: &'a str) {
        if let Some(s) = self.scopes.last_mut() {
            s.push(name);
        }
    }

    fn stmt(&mut self, s: &'a ast::Stmt) {
        match s {
            ast::Stmt::Let(l) => {
                if let Some(init) = &l.init {
                    self.expr(init);
                    if mentions(init, self.tracked) && (self.holds)(l.name.span) {
                        self.derived.push(l.name.name.clone());
                    }
                }
                self.declare(&l.name.name);
            }
            ast::Stmt::Expr { expr, .. } => self.expr(expr),
        }
    }

    fn block(&mut self, b: &'a ast::Block, binder: Option<&'a ast::Ident>) {
        self.scopes.push(binder.map(|v| v.name.as_str()).into_iter().collect());
        for s in &b.stmts {
            self.stmt(s);
        }
        self.scopes.pop();
    }

    fn expr(&mut self, e: &'a ast::Expr) {
        match &e.kind {
            ExprKind::Block(b) => self.block(b, None),
            ExprKind::For { var, body, .. } | ExprKind::Sched { var, body, .. } => self.block(body, Some(var)),
            ExprKind::While { cond, body } => {
                self.expr(cond);
                self.block(body, None);
            }
            ExprKind::If { cond, then, els } => {
                self.expr(cond);
                self.block(then, None);
                if let Some(e) = els {
                    self.expr(e);
                }
            }
            ExprKind::Split { arms, .. } => {
                for arm in arms.iter() {
                    self.scopes.push(vec![arm.name.name.as_str()]);
                    self.expr(&arm.body);
                    self.scopes.pop();
                }
            }
            ExprKind::Assign(lhs, rhs) | ExprKind::CompoundAssign(_, lhs, rhs) => {
                self.expr(lhs);
                self.expr(rhs);
                if mentions(rhs, self.tracked) && (self.holds)(lhs.span) {
                    let mut target = &**lhs;
                    while let ExprKind::Paren(inner) = &target.kind {
                        target = inner;
                    }
                    match &target.kind {
                        ExprKind::Path(segs) if segs.len() == 1 && self.declared(&segs[0].name) => {
                            self.derived.push(segs[0].name.clone());
                        }
                        _ => self.escapes = true,
                    }
                }
            }
            _ => {
                for c in children(e) {
                    self.expr(c);
                }
            }
        }
    }
}

/// The direct sub-expressions of an expression that has no block of its own.
fn children(e: &ast::Expr) -> Vec<&ast::Expr> {
    match &e.kind {
        ExprKind::Lit(_)
        | ExprKind::Path(_)
        | ExprKind::Sync(_)
        | ExprKind::Error
        | ExprKind::Return(None)
        | ExprKind::Break
        | ExprKind::Continue => Vec::new(),
        ExprKind::Unary(_, x)
        | ExprKind::Cast(x, _)
        | ExprKind::Field(x, _)
        | ExprKind::Deref(x)
        | ExprKind::Select(x, _)
        | ExprKind::View(x, _)
        | ExprKind::Paren(x)
        | ExprKind::Unsafe(x)
        | ExprKind::ArrayRepeat(x, _)
        | ExprKind::Return(Some(x)) => vec![&**x],
        ExprKind::Borrow { place, .. } => vec![&**place],
        ExprKind::Binary(_, a, b)
        | ExprKind::Index(a, b)
        | ExprKind::Assign(a, b)
        | ExprKind::CompoundAssign(_, a, b) => vec![&**a, &**b],
        ExprKind::Call { args, .. } | ExprKind::Tuple(args) | ExprKind::ArrayList(args) => args.iter().collect(),
        ExprKind::While { cond, .. } => vec![&**cond],
        ExprKind::If { cond, els, .. } => std::iter::once(&**cond).chain(els.as_deref()).collect(),
        ExprKind::Split { arms, .. } => arms.iter().map(|a| &a.body).collect(),
        ExprKind::Block(_) | ExprKind::For { .. } | ExprKind::Sched { .. } => Vec::new(),
    }
}

/// The block of an expression that has one.
fn body(e: &ast::Expr) -> Option<&ast::Block> {
    match &e.kind {
        ExprKind::Block(b) => Some(b),
        ExprKind::For { body, .. } | ExprKind::Sched { body, .. } | ExprKind::While { body, .. } => Some(body),
        ExprKind::If { then, .. } => Some(then),
        _ => None,
    }
}

/// Every variable name the expression mentions, anywhere inside.
fn names<'a>(e: &'a ast::Expr, out: &mut Vec<&'a str>) {
    match &e.kind {
        ExprKind::Path(segs) | ExprKind::Call { func: segs, .. } if segs.len() == 1 => out.push(&segs[0].name),
        _ => {}
    }
    for c in children(e) {
        names(c, out);
    }
    if let Some(b) = body(e) {
        for s in &b.stmts {
            stmt_names(s, out);
        }
    }
}

fn stmt_names<'a>(s: &'a ast::Stmt, out: &mut Vec<&'a str>) {
    match s {
        ast::Stmt::Let(l) => {
            if let Some(e) = &l.init {
                names(e, out);
            }
        }
        ast::Stmt::Expr { expr, .. } => names(expr, out),
    }
}

/// Does the expression name one of the variables, anywhere inside?
fn mentions(e: &ast::Expr, tracked: &HashSet<String>) -> bool {
    let mut out = Vec::new();
    names(e, &mut out);
    out.iter().any(|n| tracked.contains(*n))
}

/// Every borrow expression (`&shrd p`, `&uniq p`) inside `e`, nested blocks included.
pub(crate) fn borrows_in<'a>(e: &'a ast::Expr, out: &mut Vec<&'a ast::Expr>) {
    if let ExprKind::Borrow { .. } = &e.kind {
        out.push(e);
    }
    for c in children(e) {
        borrows_in(c, out);
    }
    if let Some(b) = body(e) {
        for s in &b.stmts {
            match s {
                ast::Stmt::Let(l) => {
                    if let Some(x) = &l.init {
                        borrows_in(x, out);
                    }
                }
                ast::Stmt::Expr { expr, .. } => borrows_in(expr, out),
            }
        }
    }
}
