//! The canonical formatter: `strata fmt`.
//!
//! The style is rustfmt-like: four-space indentation, one statement per line, spaces around binary
//! operators, `split` arms one per line, parameter lists broken one per line (with a trailing
//! comma) when the signature does not fit in [`MAX_WIDTH`] columns. Everything else stays on one
//! line, so the output is a deterministic function of the tree and the comments.
//!
//! Guarantees, for every file that parses without errors:
//! - `parse(format(x))` has the same tree as `parse(x)`: the AST keeps explicit parenthesised
//!   expressions, which are printed as written; natural numbers and types have no parenthesis
//!   nodes, so parentheses are inserted from precedence and associativity.
//! - `format(format(x)) == format(x)`.
//! - Every comment appears exactly once, in the original order. Comments before an item or a
//!   statement stay before it, a comment after a statement on the same line stays at the end of
//!   that line, comments before a closing `}` stay inside the block, and comments inside an
//!   expression move to just before the statement (or after it, or into the next nested block,
//!   whichever keeps their order).
//! - Blank lines between items and statements are kept, at most one in a row.
//!
//! Comment placement uses the spans of the tree, so [`format_module`] must be given a tree parsed
//! from `source` with [`crate::parse`]. A tree with erased spans still formats correctly, but its
//! comments all end up at the end of the file.

use crate::ast::*;
use crate::lexer::{Comment, CommentKind};
use strata_diag::{Diagnostic, FileId};

/// Lines longer than this get their parameter lists broken one per line.
pub const MAX_WIDTH: usize = 100;

const INDENT: &str = "    ";

/// Parses and formats one file. A file with syntax errors is not formatted: its diagnostics are
/// returned instead.
pub fn format_source(file: FileId, source: &str) -> Result<String, Vec<Diagnostic>> {
    let parsed = crate::parse(file, source);
    if strata_diag::has_errors(&parsed.diagnostics) {
        return Err(parsed.diagnostics);
    }
    Ok(format_module(&parsed.module, &parsed.comments, source))
}

/// Formats a parsed module with its comments (as returned by [`crate::parse`] for `source`).
pub fn format_module(module: &Module, comments: &[Comment], source: &str) -> String {
    let mut p = Printer { src: source, comments, next: 0, out: String::new(), indent: 0, last_pos: 0, fresh: true };
    p.module(module);
    if !p.out.is_empty() {
        p.out.push('\n');
    }
    p.out
}

// ------------------------------------------------------------------------------------------------
// Expression levels: what the parser function that reads an expression at a position accepts.

/// `=` and compound assignments (and `return`, which reads a whole expression).
const LEVEL_ASSIGN: u8 = 0;
/// `as`.
const LEVEL_CAST: u8 = 10;
/// `-e`, `!e`, `*e`, `&e`, `unsafe e`.
const LEVEL_PREFIX: u8 = 11;
/// Postfix operations and primary expressions.
const LEVEL_POSTFIX: u8 = 12;

/// The lowest parser level that can produce `e` without parentheses; binary operators have their
/// precedence (1 to 9).
fn start_level(e: &Expr) -> u8 {
    match &e.kind {
        ExprKind::Assign(..) | ExprKind::CompoundAssign(..) => LEVEL_ASSIGN,
        ExprKind::Binary(op, ..) => op.precedence(),
        ExprKind::Cast(..) => LEVEL_CAST,
        ExprKind::Unary(..) | ExprKind::Deref(_) | ExprKind::Borrow { .. } => LEVEL_PREFIX,
        ExprKind::Unsafe(inner) if !is_plain_block(inner) => LEVEL_PREFIX,
        _ => LEVEL_POSTFIX,
    }
}

/// `{ … }` without region binders: after `unsafe` it makes an `unsafe { … }` primary.
fn is_plain_block(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::Block(b) if b.regions.is_empty())
}

/// True if `e` ends with something that reads a whole expression (`return e`, `x = e`), so that
/// tokens printed after it would be swallowed.
fn ends_open(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Return(_) | ExprKind::Assign(..) | ExprKind::CompoundAssign(..) => true,
        ExprKind::Binary(_, _, r) => ends_open(r),
        ExprKind::Unary(_, x) | ExprKind::Deref(x) | ExprKind::Borrow { place: x, .. } => ends_open(x),
        ExprKind::Unsafe(x) => !is_plain_block(x) && ends_open(x),
        _ => false,
    }
}

/// The expression whose first token is the first token of `e`.
fn leftmost(e: &Expr) -> &Expr {
    let mut e = e;
    loop {
        e = match &e.kind {
            ExprKind::Binary(_, l, _)
            | ExprKind::Assign(l, _)
            | ExprKind::CompoundAssign(_, l, _)
            | ExprKind::Cast(l, _)
            | ExprKind::Field(l, _)
            | ExprKind::Index(l, _)
            | ExprKind::Select(l, _)
            | ExprKind::View(l, _) => l,
            _ => return e,
        };
    }
}

/// Expressions that, at the start of a statement, form the whole statement (up to their `}`).
fn starts_block_like_stmt(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Block(_)
        | ExprKind::For { .. }
        | ExprKind::While { .. }
        | ExprKind::If { .. }
        | ExprKind::Sched { .. }
        | ExprKind::Split { .. } => true,
        // `unsafe { … }` and `unsafe <'a> { … }` both end the statement at their `}`.
        ExprKind::Unsafe(inner) => matches!(inner.kind, ExprKind::Block(_)),
        _ => false,
    }
}

/// Where the first place lies inside `e` at which comments can be put on lines of their own: the
/// start of the first nested block or `split` arm.
fn first_flush(e: &Expr) -> Option<u32> {
    match &e.kind {
        ExprKind::Block(b) => Some(b.span.lo),
        ExprKind::Split { arms, .. } => Some(arms[0].name.span.lo),
        ExprKind::For { body, .. } | ExprKind::Sched { body, .. } => Some(body.span.lo),
        ExprKind::While { cond, body } => first_flush(cond).or(Some(body.span.lo)),
        ExprKind::If { cond, then, .. } => first_flush(cond).or(Some(then.span.lo)),
        ExprKind::Binary(_, l, r)
        | ExprKind::Assign(l, r)
        | ExprKind::CompoundAssign(_, l, r)
        | ExprKind::Index(l, r) => first_flush(l).or_else(|| first_flush(r)),
        ExprKind::Unary(_, x)
        | ExprKind::Deref(x)
        | ExprKind::Borrow { place: x, .. }
        | ExprKind::Unsafe(x)
        | ExprKind::Cast(x, _)
        | ExprKind::Field(x, _)
        | ExprKind::Select(x, _)
        | ExprKind::View(x, _)
        | ExprKind::Paren(x)
        | ExprKind::ArrayRepeat(x, _)
        | ExprKind::Return(Some(x)) => first_flush(x),
        ExprKind::Call { args: xs, .. } | ExprKind::Tuple(xs) | ExprKind::ArrayList(xs) => {
            xs.iter().find_map(first_flush)
        }
        ExprKind::Lit(_) | ExprKind::Path(_) | ExprKind::Sync(_) | ExprKind::Return(None) | ExprKind::Error => None,
    }
}

// ------------------------------------------------------------------------------------------------
// The printer: statements, blocks and expressions, with comments.

struct Printer<'a> {
    src: &'a str,
    comments: &'a [Comment],
    /// The first comment not printed yet.
    next: usize,
    out: String,
    indent: usize,
    /// Source offset of the end of the last item, statement or comment printed.
    last_pos: u32,
    /// Nothing printed since the last `{` (or the start of the file): no blank line here.
    fresh: bool,
}

impl Printer<'_> {
    fn push(&mut self, s: &str) {
        self.out.push_str(s);
    }

    fn newline(&mut self) {
        self.out.push('\n');
        for _ in 0..self.indent {
            self.out.push_str(INDENT);
        }
    }

    /// Starts a new line for something that was at `pos` in the source, with a blank line before
    /// it if the source had one.
    fn start_line(&mut self, pos: u32) {
        if self.out.is_empty() {
            for _ in 0..self.indent {
                self.out.push_str(INDENT);
            }
        } else {
            if !self.fresh && self.blank_between(self.last_pos, pos) {
                self.out.push('\n');
            }
            self.newline();
        }
        self.fresh = false;
    }

    fn blank_between(&self, lo: u32, hi: u32) -> bool {
        if lo >= hi {
            return false;
        }
        let Some(gap) = self.src.get(lo as usize..hi as usize) else {
            return false;
        };
        let lines: Vec<&str> = gap.split('\n').collect();
        lines.len() >= 3 && lines[1..lines.len() - 1].iter().any(|l| l.trim().is_empty())
    }

    /// True if only spaces, `;` and `,` separate `lo` from `hi` (the same line).
    fn same_line(&self, lo: u32, hi: u32) -> bool {
        lo <= hi
            && self
                .src
                .get(lo as usize..hi as usize)
                .is_some_and(|gap| gap.chars().all(|c| matches!(c, ' ' | '\t' | ';' | ',')))
    }

    fn comment_text(c: &Comment) -> &str {
        match c.kind {
            CommentKind::Line => c.text.trim_end(),
            CommentKind::Block => &c.text,
        }
    }

    fn next_comment_before(&self, bound: u32) -> Option<&'_ Comment> {
        self.comments.get(self.next).filter(|c| c.span.lo < bound)
    }

    /// Prints, each on a line of its own, the comments that start before `bound`.
    fn leading(&mut self, bound: u32) {
        while let Some(c) = self.comments.get(self.next) {
            if c.span.lo >= bound {
                break;
            }
            self.next += 1;
            self.start_line(c.span.lo);
            self.out.push_str(Self::comment_text(c));
            self.last_pos = self.last_pos.max(c.span.hi);
        }
    }

    /// After something that ended at `end`: prints at the end of its line the comments that
    /// started inside it and those that follow it on the same source line.
    fn trailing(&mut self, end: u32) {
        self.last_pos = self.last_pos.max(end);
        let mut pos = end;
        let mut after_line_comment = false;
        while let Some(c) = self.comments.get(self.next) {
            let inside = c.span.lo < end;
            if !inside && !self.same_line(pos, c.span.lo) {
                break;
            }
            self.next += 1;
            if after_line_comment {
                self.newline();
            } else {
                self.out.push(' ');
            }
            self.out.push_str(Self::comment_text(c));
            // Once on a line of their own, the rest stay one per line, as leading comments do.
            after_line_comment |= c.kind == CommentKind::Line;
            pos = pos.max(c.span.hi);
            self.last_pos = self.last_pos.max(c.span.hi);
        }
    }

    // --------------------------------------------------------------------------------------------
    // Items

    fn module(&mut self, m: &Module) {
        for item in &m.items {
            let span = item.span();
            self.leading(span.lo);
            let body = match item {
                Item::Fn(f) => f.body.as_ref().map(|b| b.span.lo),
                Item::Const(_) | Item::View(_) => None,
            };
            self.leading(body.unwrap_or(span.hi));
            self.start_line(span.lo);
            match item {
                Item::Fn(f) => self.fn_decl(f),
                Item::Const(c) => {
                    let s = format!("const {}: nat = {};", c.name.name, nat(&c.value));
                    self.push(&s);
                }
                Item::View(v) => {
                    let s = format!("view {}{} = {};", v.name.name, generic_params(&v.generics), view_chain(&v.body));
                    self.push(&s);
                }
            }
            self.trailing(span.hi);
        }
        self.leading(u32::MAX);
    }

    fn fn_decl(&mut self, f: &FnDecl) {
        let head = format!("fn {}{}", f.name.name, generic_params(&f.generics));
        let params: Vec<String> = f.params.iter().map(param).collect();
        let mut tail = String::new();
        match (&f.exec, &f.ret) {
            (Some(e), ret) => {
                let ret = ret.as_ref().map_or_else(|| "()".to_string(), ty);
                tail.push_str(&format!(" -[{}: {}]-> {}", e.name.name, exec_ty(&e.ty), ret));
            }
            (None, Some(r)) => tail.push_str(&format!(" -> {}", ty(r))),
            (None, None) => {}
        }
        if !f.where_clauses.is_empty() {
            let cs: Vec<String> =
                f.where_clauses.iter().map(|c| format!("{} {} {}", nat(&c.lhs), c.op.symbol(), nat(&c.rhs))).collect();
            tail.push_str(" where ");
            tail.push_str(&cs.join(", "));
        }
        let end = if f.body.is_some() { " {" } else { ";" };
        let one_line = format!("{head}({}){tail}{end}", params.join(", "));
        let width = self.indent * INDENT.len() + one_line.chars().count();
        self.push(&head);
        if params.is_empty() || width <= MAX_WIDTH {
            self.push("(");
            self.push(&params.join(", "));
            self.push(")");
        } else {
            self.push("(");
            self.indent += 1;
            for p in &params {
                self.newline();
                self.push(p);
                self.push(",");
            }
            self.indent -= 1;
            self.newline();
            self.push(")");
        }
        self.push(&tail);
        match &f.body {
            Some(b) => {
                self.push(" ");
                self.block(b);
            }
            None => self.push(";"),
        }
    }

    // --------------------------------------------------------------------------------------------
    // Blocks and statements

    fn block(&mut self, b: &Block) {
        if !b.regions.is_empty() {
            let rs: Vec<&str> = b.regions.iter().map(|r| r.name.as_str()).collect();
            self.push(&format!("<{}> ", rs.join(", ")));
        }
        if b.stmts.is_empty() && self.next_comment_before(b.span.hi).is_none() {
            self.push("{}");
            return;
        }
        self.push("{");
        self.indent += 1;
        self.fresh = true;
        for s in &b.stmts {
            self.stmt(s);
        }
        self.leading(b.span.hi);
        self.indent -= 1;
        self.newline();
        self.push("}");
        self.fresh = false;
    }

    fn stmt(&mut self, s: &Stmt) {
        let span = s.span();
        self.leading(span.lo);
        let flush = match s {
            Stmt::Let(l) => l.init.as_ref().and_then(first_flush),
            Stmt::Expr { expr, .. } => first_flush(expr),
        };
        self.leading(flush.unwrap_or(span.hi));
        self.start_line(span.lo);
        match s {
            Stmt::Let(l) => self.let_stmt(l),
            Stmt::Expr { expr, semi } => {
                // At the start of a statement `if … { }` ends at its `}`: anything longer that
                // starts with one needs parentheses (the parser never builds such a tree).
                let lm = leftmost(expr);
                if !std::ptr::eq(lm, expr) && starts_block_like_stmt(lm) {
                    self.push("(");
                    self.expr(expr, LEVEL_ASSIGN, true);
                    self.push(")");
                } else {
                    self.expr(expr, LEVEL_ASSIGN, true);
                }
                if *semi {
                    self.push(";");
                }
            }
        }
        self.trailing(span.hi);
    }

    fn let_stmt(&mut self, l: &LetStmt) {
        self.push("let ");
        if let Some(e) = &l.exec {
            self.push(&format!("[{}] ", exec_expr(e)));
        }
        if l.mutable {
            self.push("mut ");
        }
        self.push(&l.name.name);
        if let Some(t) = &l.ty {
            self.push(&format!(": {}", ty(t)));
        }
        if let Some(init) = &l.init {
            self.push(" = ");
            self.expr(init, LEVEL_ASSIGN, true);
        }
        self.push(";");
    }

    // --------------------------------------------------------------------------------------------
    // Expressions

    /// Prints `e` where the parser reads an expression of level `min`; `open_ok` says whether
    /// nothing follows it that an open-ended expression (`return e`, `x = e`) would swallow.
    fn expr(&mut self, e: &Expr, min: u8, open_ok: bool) {
        if start_level(e) < min || (!open_ok && ends_open(e)) {
            self.push("(");
            self.expr_inner(e, true);
            self.push(")");
        } else {
            self.expr_inner(e, open_ok);
        }
    }

    /// The operand of a postfix operation.
    fn postfix_base(&mut self, base: &Expr, int_field: bool) {
        // `1.0` would lex as a float: `(1).0`.
        let bare_int = int_field && matches!(base.kind, ExprKind::Lit(Lit::Int(_, None)));
        if bare_int || start_level(base) < LEVEL_POSTFIX || ends_open(base) {
            self.push("(");
            self.expr_inner(base, true);
            self.push(")");
        } else {
            self.expr_inner(base, false);
        }
    }

    fn expr_inner(&mut self, e: &Expr, open_ok: bool) {
        match &e.kind {
            ExprKind::Lit(l) => self.push(&lit(l)),
            ExprKind::Path(segs) => self.push(&path(segs)),
            ExprKind::Unary(op, x) => {
                self.push(match op {
                    UnOp::Neg => "-",
                    UnOp::Not => "!",
                });
                self.expr(x, LEVEL_PREFIX, open_ok);
            }
            ExprKind::Deref(x) => {
                self.push("*");
                self.expr(x, LEVEL_PREFIX, open_ok);
            }
            ExprKind::Borrow { prv, own, place } => {
                self.push("&");
                if let Some(p) = prv {
                    self.push(prv_name(p));
                    self.push(" ");
                }
                self.push(own.keyword());
                self.push(" ");
                self.expr(place, LEVEL_PREFIX, open_ok);
            }
            ExprKind::Unsafe(x) => {
                self.push("unsafe ");
                match &x.kind {
                    ExprKind::Block(b) => self.block(b),
                    // `unsafe {` would start an `unsafe` block.
                    _ if is_plain_block(leftmost(x)) => {
                        self.push("(");
                        self.expr_inner(x, true);
                        self.push(")");
                    }
                    _ => self.expr(x, LEVEL_PREFIX, open_ok),
                }
            }
            ExprKind::Binary(op, l, r) => {
                let prec = op.precedence();
                self.expr(l, prec, false);
                self.push(&format!(" {} ", op.symbol()));
                self.expr(r, prec + 1, open_ok);
            }
            ExprKind::Cast(x, t) => {
                self.expr(x, LEVEL_CAST, false);
                self.push(" as ");
                self.push(&ty(t));
            }
            ExprKind::Field(x, f) => {
                self.postfix_base(x, matches!(f, Field::Index(_)));
                match f {
                    Field::Fst => self.push(".fst"),
                    Field::Snd => self.push(".snd"),
                    Field::Index(n) => self.push(&format!(".{n}")),
                }
            }
            ExprKind::Index(x, i) => {
                self.postfix_base(x, false);
                // `x[[` would start a selection.
                let space = matches!(leftmost(i).kind, ExprKind::ArrayList(_) | ExprKind::ArrayRepeat(..));
                self.push(if space { "[ " } else { "[" });
                self.expr(i, LEVEL_ASSIGN, true);
                self.push("]");
            }
            ExprKind::Select(x, ex) => {
                self.postfix_base(x, false);
                self.push(&format!("[[{}]]", exec_expr(ex)));
            }
            ExprKind::View(x, v) => {
                self.postfix_base(x, false);
                self.push(".");
                self.push(&view_ref(v));
            }
            ExprKind::Assign(l, r) => {
                self.expr(l, 1, false);
                self.push(" = ");
                self.expr(r, LEVEL_ASSIGN, open_ok);
            }
            ExprKind::CompoundAssign(op, l, r) => {
                self.expr(l, 1, false);
                self.push(&format!(" {}= ", op.symbol()));
                self.expr(r, LEVEL_ASSIGN, open_ok);
            }
            ExprKind::Block(b) => self.block(b),
            ExprKind::For { var, start, end, body } => {
                self.push(&format!("for {} in {}..{} ", var.name, nat(start), nat(end)));
                self.block(body);
            }
            ExprKind::While { cond, body } => {
                self.push("while ");
                self.expr(cond, LEVEL_ASSIGN, true);
                self.push(" ");
                self.block(body);
            }
            ExprKind::If { cond, then, els } => {
                self.push("if ");
                self.expr(cond, LEVEL_ASSIGN, true);
                self.push(" ");
                self.block(then);
                if let Some(els) = els {
                    self.push(" else ");
                    match &els.kind {
                        ExprKind::Block(b) => self.block(b),
                        ExprKind::If { .. } => self.expr_inner(els, true),
                        // Not produced by the parser; keep it readable as a block.
                        _ => {
                            self.push("{ ");
                            self.expr(els, LEVEL_ASSIGN, true);
                            self.push(" }");
                        }
                    }
                }
            }
            ExprKind::Sched { dims, var, exec, body } => {
                self.push(&format!("sched({}) {} in {} ", dim_list(dims), var.name, exec_expr(exec)));
                self.block(body);
            }
            ExprKind::Split { dim, exec, at, arms } => {
                self.push(&format!("split({}) {} at {} {{", dim.letter(), exec_expr(exec), nat(at)));
                self.indent += 1;
                self.fresh = true;
                for arm in arms.iter() {
                    self.leading(arm.name.span.lo);
                    self.start_line(arm.name.span.lo);
                    self.push(&format!("{} => ", arm.name.name));
                    self.expr(&arm.body, LEVEL_ASSIGN, true);
                    self.push(",");
                    self.trailing(arm.body.span.hi);
                }
                self.leading(e.span.hi);
                self.indent -= 1;
                self.newline();
                self.push("}");
                self.fresh = false;
            }
            ExprKind::Sync(None) => self.push("sync"),
            ExprKind::Sync(Some(ex)) => self.push(&format!("sync({})", exec_expr(ex))),
            ExprKind::Call { func, generics, exec, launch, args } => {
                self.push(&path(func));
                if !generics.is_empty() || exec.is_some() {
                    let gs: Vec<String> = generics.iter().map(generic_arg).collect();
                    self.push(&format!("::<{}>", gs.join(", ")));
                }
                if let Some(ex) = exec {
                    self.push(&format!("::<{}>", exec_expr(ex)));
                } else if let Some(l) = launch {
                    self.push(&format!("::<<<{}, {}", dim(&l.grid), dim(&l.block)));
                    if !l.shared.is_empty() {
                        let ts: Vec<String> = l.shared.iter().map(ty).collect();
                        self.push(&format!("; {}", ts.join(", ")));
                    }
                    self.push(">>>");
                }
                self.push("(");
                self.expr_list(args);
                self.push(")");
            }
            ExprKind::Tuple(xs) => {
                self.push("(");
                self.expr_list(xs);
                if xs.len() == 1 {
                    self.push(",");
                }
                self.push(")");
            }
            ExprKind::ArrayList(xs) => {
                self.push("[");
                self.expr_list(xs);
                self.push("]");
            }
            ExprKind::ArrayRepeat(x, n) => {
                self.push("[");
                self.expr(x, LEVEL_ASSIGN, true);
                self.push(&format!("; {}]", nat(n)));
            }
            ExprKind::Return(None) => self.push("return"),
            ExprKind::Return(Some(x)) => {
                self.push("return ");
                self.expr(x, LEVEL_ASSIGN, open_ok);
            }
            ExprKind::Paren(x) => {
                self.push("(");
                self.expr(x, LEVEL_ASSIGN, true);
                self.push(")");
            }
            // Only in trees with syntax errors, which are not formatted.
            ExprKind::Error => self.push("()"),
        }
    }

    fn expr_list(&mut self, xs: &[Expr]) {
        for (i, x) in xs.iter().enumerate() {
            if i > 0 {
                self.push(", ");
            }
            self.expr(x, LEVEL_ASSIGN, true);
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Parts without comments: literals, nats, types, execution resources, views.

fn lit(l: &Lit) -> String {
    let suffix = |s: &Option<ScalarTy>| s.map_or("", |t| t.name());
    match l {
        Lit::Bool(b) => b.to_string(),
        Lit::Int(v, s) => format!("{v}{}", suffix(s)),
        Lit::Float(digits, s) => format!("{digits}{}", suffix(s)),
        Lit::Str(s) => {
            let mut out = String::with_capacity(s.len() + 2);
            out.push('"');
            for c in s.chars() {
                match c {
                    '\\' => out.push_str("\\\\"),
                    '"' => out.push_str("\\\""),
                    '\n' => out.push_str("\\n"),
                    '\t' => out.push_str("\\t"),
                    '\0' => out.push_str("\\0"),
                    c => out.push(c),
                }
            }
            out.push('"');
            out
        }
        Lit::Unit => "()".to_string(),
    }
}

fn path(segs: &[Ident]) -> String {
    let names: Vec<&str> = segs.iter().map(|s| s.name.as_str()).collect();
    names.join("::")
}

fn prv_name(p: &Prv) -> &str {
    match p {
        Prv::Region(i) | Prv::Var(i) => &i.name,
    }
}

fn nat_prec(op: NatOp) -> u8 {
    match op {
        NatOp::Add | NatOp::Sub => 1,
        NatOp::Mul | NatOp::Div | NatOp::Rem => 2,
        NatOp::Pow => 3,
    }
}

/// A natural number, with the parentheses its tree needs: `^` is right-associative, the other
/// operators left-associative.
pub(crate) fn nat(n: &Nat) -> String {
    let mut out = String::new();
    write_nat(&mut out, n);
    out
}

fn write_nat(out: &mut String, n: &Nat) {
    match &n.kind {
        NatKind::Lit(v) => out.push_str(&v.to_string()),
        NatKind::Var(i) => out.push_str(&i.name),
        NatKind::Call(f, args) => {
            out.push_str(&f.name);
            out.push('(');
            for (i, a) in args.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_nat(out, a);
            }
            out.push(')');
        }
        NatKind::Bin(op, l, r) => {
            let p = nat_prec(*op);
            let right_assoc = *op == NatOp::Pow;
            let lp = matches!(&l.kind, NatKind::Bin(lop, ..)
                if nat_prec(*lop) < p || (right_assoc && nat_prec(*lop) == p));
            let rp = matches!(&r.kind, NatKind::Bin(rop, ..)
                if nat_prec(*rop) < p || (!right_assoc && nat_prec(*rop) == p));
            write_nat_wrapped(out, l, lp);
            out.push_str(&format!(" {} ", op.symbol()));
            write_nat_wrapped(out, r, rp);
        }
    }
}

fn write_nat_wrapped(out: &mut String, n: &Nat, paren: bool) {
    if paren {
        out.push('(');
        write_nat(out, n);
        out.push(')');
    } else {
        write_nat(out, n);
    }
}

fn mem(m: &Mem) -> &str {
    m.kind.name()
}

/// A type, with the parentheses its tree needs (`(&T) @ m`).
pub(crate) fn ty(t: &Ty) -> String {
    match &t.kind {
        TyKind::Scalar(s) => s.name().to_string(),
        TyKind::Var(i) => i.name.clone(),
        TyKind::Infer => "_".to_string(),
        TyKind::Tuple(ts) => {
            let parts: Vec<String> = ts.iter().map(ty).collect();
            let comma = if ts.len() == 1 { "," } else { "" };
            format!("({}{comma})", parts.join(", "))
        }
        TyKind::Array(elem, n) => {
            let inner = ty(elem);
            // After `[[` the parser reads an array of arrays `[[T; n]; m]`; any other element
            // that starts with `[` (`[[T; n]]`, `[T; n] @ m`) is set apart: `[ [[T; n]]; m]`.
            let apart = inner.starts_with('[') && !matches!(elem.kind, TyKind::Array(..));
            let space = if apart { " " } else { "" };
            format!("[{space}{inner}; {}]", nat(n))
        }
        TyKind::ViewArray(elem, n) => format!("[[{}; {}]]", ty(elem), nat(n)),
        TyKind::Ref(r) => {
            let mut s = String::from("&");
            if let Some(p) = &r.prv {
                s.push_str(prv_name(p));
                s.push(' ');
            }
            if let Some(o) = r.own {
                s.push_str(o.keyword());
                s.push(' ');
            }
            if let Some(m) = &r.mem {
                s.push_str(mem(m));
                s.push(' ');
            }
            let inner = ty(&r.ty);
            // `&&` is one token.
            if s == "&" && inner.starts_with('&') {
                s.push(' ');
            }
            s.push_str(&inner);
            s
        }
        TyKind::At(inner, m) => {
            let i = ty(inner);
            if matches!(inner.kind, TyKind::Ref(_)) {
                format!("({i}) @ {}", mem(m))
            } else {
                format!("{i} @ {}", mem(m))
            }
        }
    }
}

fn dim(d: &Dim) -> String {
    let names: String = d.dims.iter().map(|(n, _)| n.letter()).collect();
    let sizes: Vec<String> = d.dims.iter().map(|(_, n)| nat(n)).collect();
    format!("{names}<{}>", sizes.join(", "))
}

fn dim_list(ds: &[DimName]) -> String {
    let letters: Vec<String> = ds.iter().map(|d| d.letter().to_string()).collect();
    letters.join(", ")
}

fn exec_expr(e: &ExecExpr) -> String {
    let mut s = match &e.base {
        ExecBase::Var(i) => i.name.clone(),
        ExecBase::CpuThread => "cpu.thread".to_string(),
        ExecBase::Grid(a, b) => format!("gpu.grid<{}, {}>", dim(a), dim(b)),
    };
    for step in &e.path {
        match step {
            ExecStep::Blocks => s.push_str(".blocks"),
            ExecStep::Threads => s.push_str(".threads"),
            ExecStep::Warps => s.push_str(".warps"),
            ExecStep::Lanes => s.push_str(".lanes"),
            ExecStep::ToThreads => s.push_str(".to_threads"),
            ExecStep::ToWarps => s.push_str(".to_warps"),
            ExecStep::Forall(d) => s.push_str(&format!(".forall({})", d.letter())),
            ExecStep::Range(a, b, d) => s.push_str(&format!("[{}..{}]_{}", nat(a), nat(b), d.letter())),
            ExecStep::Dim(d) => s.push_str(&format!(".{}", d.letter())),
        }
    }
    s
}

fn exec_ty(t: &ExecTy) -> String {
    match &t.kind {
        ExecTyKind::CpuThread => "cpu.thread".to_string(),
        ExecTyKind::Grid(a, b) => format!("gpu.grid<{}, {}>", dim(a), dim(b)),
        ExecTyKind::BlockGrp(a, b) => format!("gpu.BlockGrp<{}, {}>", dim(a), dim(b)),
        ExecTyKind::Block(d) => format!("gpu.Block<{}>", dim(d)),
        ExecTyKind::ThreadGrp(d) => format!("gpu.ThreadGrp<{}>", dim(d)),
        ExecTyKind::WarpGrp(n) => format!("gpu.WarpGrp<{}>", nat(n)),
        ExecTyKind::Warp => "gpu.Warp".to_string(),
        ExecTyKind::Thread => "gpu.Thread".to_string(),
        ExecTyKind::Any => "Any".to_string(),
    }
}

fn view_ref(v: &ViewRef) -> String {
    let mut s = v.name.name.clone();
    if !v.nat_args.is_empty() {
        let ns: Vec<String> = v.nat_args.iter().map(nat).collect();
        s.push_str(&format!("::<{}>", ns.join(", ")));
    }
    if !v.view_args.is_empty() {
        let vs: Vec<String> = v.view_args.iter().map(|c| view_chain(c)).collect();
        s.push_str(&format!("({})", vs.join(", ")));
    }
    s
}

fn view_chain(chain: &[ViewRef]) -> String {
    let parts: Vec<String> = chain.iter().map(view_ref).collect();
    parts.join(".")
}

fn generic_params(gs: &[GenericParam]) -> String {
    if gs.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = gs.iter().map(|g| format!("{}: {}", g.name.name, g.kind.keyword())).collect();
    format!("<{}>", parts.join(", "))
}

fn generic_arg(g: &GenericArg) -> String {
    match g {
        GenericArg::Nat(n) => nat(n),
        // A bare `T` would read as a nat; `(T)` reads as a type.
        GenericArg::Ty(t) if matches!(t.kind, TyKind::Var(_)) => format!("({})", ty(t)),
        GenericArg::Ty(t) => ty(t),
        GenericArg::Mem(m) => mem(m).to_string(),
    }
}

fn param(p: &Param) -> String {
    let mut s = String::new();
    if let Some(e) = &p.exec {
        s.push_str(&format!("[{}] ", exec_expr(e)));
    }
    if p.mutable {
        s.push_str("mut ");
    }
    s.push_str(&format!("{}: {}", p.name.name, ty(&p.ty)));
    s
}
