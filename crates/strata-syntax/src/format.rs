//! The canonical formatter: `strata fmt`.
//!
//! The style is rustfmt's: four-space indentation, one statement per line, spaces around binary
//! operators, `split` arms one per line, and lines of at most [`MAX_WIDTH`] (100) columns. The
//! output is described as a document of groups (see `doc.rs`); a group that does not fit on its
//! line breaks, outermost first:
//! - parameter lists, argument lists, generic parameter and argument lists, tuples and arrays:
//!   one element per line, indented by four, with a trailing comma;
//! - chains of views and projections (`a.take_left::<n>.group::<k>[[t]]`) and execution
//!   resources in `sched`/`split` headers (`grid.blocks.forall(X)`): one `.` step per line,
//!   indented by four (a root of at most four characters keeps its first step);
//! - binary operations: before the operator of the loosest-binding level, every operand of that
//!   level on a line of its own, indented by four;
//! - the right-hand side of `let x =`, `p =`, `p += …`, `view v =` and `name =>` stays on the line
//!   if it fits, else moves to the next line (indented by four) if it fits there, else breaks;
//! - `where` clauses: `where` on a line of its own with one constraint per line; a signature
//!   without parameters may put its `-[t: …]->` arrow on the next line;
//! - a condition (`if`, `while`) or a `sched`/`split` resource that had to break puts the `{` on a
//!   line of its own.
//!
//! A line that no break can bring under the width (a long name, a long type) stays long. Spellings
//! that the language allows in two forms are kept as written: the short shared borrow `&p` (and
//! `&'a p`) next to `&shrd p`, and the paper's capitalised execution resource types (`gpu.Grid`,
//! `cpu.Thread`) next to the prototype's lower-case ones. Sizes print their powers tight
//! (`2^(k + 1)`), as the paper does.
//!
//! Guarantees, for every file that parses without errors:
//! - `parse(format(x))` has the same tree as `parse(x)`: the AST keeps explicit parenthesised
//!   expressions, which are printed as written; natural numbers and types have no parenthesis
//!   nodes, so parentheses are inserted from precedence and associativity. Line breaks go only
//!   between tokens that need not touch.
//! - `format(format(x)) == format(x)`: the layout depends only on the tree, the comments and the
//!   blank lines, which formatting keeps.
//! - Every comment appears exactly once, in the original order. Comments before an item or a
//!   statement stay before it, a comment after a statement on the same line stays at the end of
//!   that line, comments before a closing `}` stay inside the block, and comments inside an
//!   expression move to just before the statement (or after it, or into the next nested block,
//!   whichever keeps their order). Comments have no width for the layout: a long comment at the
//!   end of a line never breaks the code before it.
//! - Blank lines between items and statements are kept, at most one in a row.
//!
//! Comment placement uses the spans of the tree, so [`format_module`] must be given a tree parsed
//! from `source` with [`crate::parse`]. A tree with erased spans still formats correctly, but its
//! comments all end up at the end of the file.

use crate::ast::*;
use crate::doc::{render, Doc, GroupId, INDENT_WIDTH};
use crate::lexer::{Comment, CommentKind};
use strata_diag::{Diagnostic, FileId};

/// The width lines are kept within where they can be broken (rustfmt's default).
pub const MAX_WIDTH: usize = 100;

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
    format_module_with_width(module, comments, source, MAX_WIDTH)
}

/// [`format_module`] with another line width: the tests use narrow widths to break every group.
pub fn format_module_with_width(module: &Module, comments: &[Comment], source: &str, width: usize) -> String {
    let mut p = Printer {
        src: source,
        comments,
        next: 0,
        last_pos: 0,
        fresh: true,
        at_start: true,
        groups: 0,
        stmt_expr: std::ptr::null(),
    };
    let doc = p.module(module);
    let mut out = render(&doc, width);
    if !out.is_empty() {
        out.push('\n');
    }
    out
}

fn text(s: impl Into<String>) -> Doc {
    Doc::text(s)
}

fn concat(parts: Vec<Doc>) -> Doc {
    Doc::Concat(parts)
}

/// `open item, item close`: flat, or one item per line with a trailing comma when `trailing`.
fn list(open: &str, items: Vec<Doc>, close: &str, trailing: bool) -> Doc {
    if items.is_empty() {
        return text(format!("{open}{close}"));
    }
    let mut inner = vec![Doc::SoftLine];
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            inner.push(text(","));
            inner.push(Doc::Line);
        }
        inner.push(item);
    }
    if trailing {
        inner.push(Doc::if_break(None, text(","), Doc::Nil));
    }
    Doc::group(concat(vec![text(open), Doc::nest(concat(inner)), Doc::SoftLine, text(close)]))
}

/// A chain: `root` followed by steps, each of which may start a line of its own (indented by
/// four). A root of at most [`INDENT_WIDTH`] characters keeps its first step, as in rustfmt.
fn chain(id: GroupId, root: Doc, steps: Vec<Doc>) -> Doc {
    if steps.is_empty() {
        return root;
    }
    let short = root.flat_width_at_most(INDENT_WIDTH);
    let mut rest = Vec::with_capacity(steps.len() * 2);
    for (i, step) in steps.into_iter().enumerate() {
        if i > 0 || !short {
            rest.push(Doc::SoftLine);
        }
        rest.push(step);
    }
    Doc::group_id(id, concat(vec![root, Doc::nest(concat(rest))]))
}

/// What separates a condition or a header from its `{`: a space, or a line break when the group
/// `id` (the condition's top level) broke.
fn brace_sep(id: Option<GroupId>) -> Doc {
    match id {
        Some(id) => Doc::if_break(Some(id), Doc::HardLine, text(" ")),
        None => text(" "),
    }
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
        ExprKind::Lit(_)
        | ExprKind::Path(_)
        | ExprKind::Sync(_)
        | ExprKind::Return(None)
        | ExprKind::Break
        | ExprKind::Continue
        | ExprKind::Error => None,
    }
}

// ------------------------------------------------------------------------------------------------
// The printer: statements, blocks and expressions, with comments, as a document.

struct Printer<'a> {
    src: &'a str,
    comments: &'a [Comment],
    /// The first comment not printed yet.
    next: usize,
    /// Source offset of the end of the last item, statement or comment printed.
    last_pos: u32,
    /// Nothing printed since the last `{` (or the start of the file): no blank line here.
    fresh: bool,
    /// Nothing printed at all yet: the first line needs no line break before it.
    at_start: bool,
    /// The last group identity handed out.
    groups: GroupId,
    /// The expression of the statement being printed: an `if` there is a statement, whose blocks
    /// always take lines of their own.
    stmt_expr: *const Expr,
}

impl Printer<'_> {
    fn new_group(&mut self) -> GroupId {
        self.groups += 1;
        self.groups
    }

    /// Starts a new line for something that was at `pos` in the source, with a blank line before
    /// it if the source had one.
    fn start_line(&mut self, pos: u32) -> Doc {
        if self.at_start {
            self.at_start = false;
            self.fresh = false;
            return Doc::Nil;
        }
        let blank = !self.fresh && self.blank_between(self.last_pos, pos);
        self.fresh = false;
        if blank {
            concat(vec![Doc::HardLine, Doc::HardLine])
        } else {
            Doc::HardLine
        }
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

    /// The comments that start before `bound`, each on a line of its own.
    fn leading(&mut self, bound: u32) -> Doc {
        let mut parts = Vec::new();
        while let Some(c) = self.comments.get(self.next) {
            if c.span.lo >= bound {
                break;
            }
            self.next += 1;
            parts.push(self.start_line(c.span.lo));
            parts.push(Doc::Comment(Self::comment_text(c).to_string()));
            self.last_pos = self.last_pos.max(c.span.hi);
        }
        concat(parts)
    }

    /// After something that ended at `end`: the comments that started inside it and those that
    /// follow it on the same source line, at the end of its (last) line.
    fn trailing(&mut self, end: u32) -> Doc {
        self.last_pos = self.last_pos.max(end);
        let mut parts = Vec::new();
        let mut pos = end;
        let mut after_line_comment = false;
        while let Some(c) = self.comments.get(self.next) {
            let inside = c.span.lo < end;
            if !inside && !self.same_line(pos, c.span.lo) {
                break;
            }
            self.next += 1;
            let c_text = Self::comment_text(c);
            // The space belongs to the comment: it has no width for the layout either.
            if after_line_comment {
                parts.push(Doc::HardLine);
                parts.push(Doc::Comment(c_text.to_string()));
            } else {
                parts.push(Doc::Comment(format!(" {c_text}")));
            }
            // Once on a line of their own, the rest stay one per line, as leading comments do.
            after_line_comment |= c.kind == CommentKind::Line;
            pos = pos.max(c.span.hi);
            self.last_pos = self.last_pos.max(c.span.hi);
        }
        concat(parts)
    }

    // --------------------------------------------------------------------------------------------
    // Items

    fn module(&mut self, m: &Module) -> Doc {
        let mut parts = Vec::new();
        for item in &m.items {
            let span = item.span();
            parts.push(self.leading(span.lo));
            let body = match item {
                Item::Fn(f) => f.body.as_ref().map(|b| b.span.lo),
                Item::Const(_) | Item::View(_) => None,
            };
            parts.push(self.leading(body.unwrap_or(span.hi)));
            parts.push(self.start_line(span.lo));
            parts.push(match item {
                Item::Fn(f) => self.fn_decl(f),
                Item::Const(c) => {
                    let kind = if c.annotated { ": nat" } else { "" };
                    text(format!("const {}{kind} = {};", c.name.name, nat(&c.value)))
                }
                Item::View(v) => {
                    let head = text(format!("view {}{} =", v.name.name, generic_params(&v.generics)));
                    let id = self.new_group();
                    concat(vec![head, Doc::Rhs(Box::new(view_chain_doc(id, &v.body))), text(";")])
                }
            });
            parts.push(self.trailing(span.hi));
        }
        parts.push(self.leading(u32::MAX));
        concat(parts)
    }

    fn fn_decl(&mut self, f: &FnDecl) -> Doc {
        let mut parts = vec![text(format!("fn {}", f.name.name))];
        if !f.generics.is_empty() {
            let gs = f.generics.iter().map(|g| text(format!("{}: {}", g.name.name, g.kind.keyword()))).collect();
            parts.push(list("<", gs, ">", true));
        }
        let params: Vec<Doc> = f.params.iter().map(|p| text(param(p))).collect();
        let has_params = !params.is_empty();
        parts.push(list("(", params, ")", true));
        let arrow = match (&f.exec, &f.ret) {
            (Some(e), ret) => {
                let ret = ret.as_ref().map_or_else(|| "()".to_string(), ty);
                Some(format!("-[{}: {}]-> {}", e.name.name, exec_ty(&e.ty), ret))
            }
            (None, Some(r)) => Some(format!("-> {}", ty(r))),
            (None, None) => None,
        };
        if let Some(arrow) = arrow {
            if has_params {
                // Broken parameters make room for the arrow, as in rustfmt.
                parts.push(text(format!(" {arrow}")));
            } else {
                parts.push(Doc::group(Doc::nest(concat(vec![Doc::Line, text(arrow)]))));
            }
        }
        let has_body = f.body.is_some();
        if !f.where_clauses.is_empty() {
            let mut cs = vec![Doc::Line];
            for (i, c) in f.where_clauses.iter().enumerate() {
                if i > 0 {
                    cs.push(text(","));
                    cs.push(Doc::Line);
                }
                cs.push(text(format!("{} {} {}", nat(&c.lhs), c.op.symbol(), nat(&c.rhs))));
            }
            // A trailing comma, but not before `<'a> {` (it would read as another constraint).
            if f.body.as_ref().is_some_and(|b| b.regions.is_empty()) {
                cs.push(Doc::if_break(None, text(","), Doc::Nil));
            }
            // Broken, `where` starts a line; the constraints stay on it if they fit there.
            let mut clause = vec![Doc::Line, text("where"), Doc::group(Doc::nest(concat(cs)))];
            if has_body {
                // `{` on a line of its own after a broken `where`.
                clause.push(Doc::Line);
            }
            parts.push(Doc::group(concat(clause)));
        } else if has_body {
            parts.push(text(" "));
        }
        match &f.body {
            Some(b) => parts.push(self.block(b)),
            None => parts.push(text(";")),
        }
        concat(parts)
    }

    // --------------------------------------------------------------------------------------------
    // Blocks and statements

    fn block(&mut self, b: &Block) -> Doc {
        let mut parts = Vec::new();
        if !b.regions.is_empty() {
            let rs: Vec<&str> = b.regions.iter().map(|r| r.name.as_str()).collect();
            parts.push(text(format!("<{}> ", rs.join(", "))));
        }
        if b.stmts.is_empty() && self.next_comment_before(b.span.hi).is_none() {
            parts.push(text("{}"));
            return concat(parts);
        }
        parts.push(text("{"));
        self.fresh = true;
        let mut inner = Vec::with_capacity(b.stmts.len() + 1);
        for s in &b.stmts {
            inner.push(self.stmt(s));
        }
        inner.push(self.leading(b.span.hi));
        parts.push(Doc::nest(Doc::Breaking(Box::new(concat(inner)))));
        parts.push(Doc::HardLine);
        parts.push(text("}"));
        self.fresh = false;
        concat(parts)
    }

    /// `{ e }` on one line if it fits (see [`single_expr`]), else as [`Printer::block`] prints it.
    fn inline_block(&mut self, b: &Block, e: &Expr) -> Doc {
        let mut parts = Vec::new();
        if !b.regions.is_empty() {
            let rs: Vec<&str> = b.regions.iter().map(|r| r.name.as_str()).collect();
            parts.push(text(format!("<{}> ", rs.join(", "))));
        }
        parts.push(text("{"));
        parts.push(Doc::nest(concat(vec![Doc::Line, self.expr(e, LEVEL_ASSIGN, true)])));
        parts.push(Doc::Line);
        parts.push(text("}"));
        self.fresh = false;
        concat(parts)
    }

    /// An `if` whose every block is a [`single_expr`] and that has an `else`, in an expression,
    /// with no comment inside: it goes on one line if it fits, as in rustfmt.
    fn inline_if_ok(&self, e: &Expr) -> bool {
        if std::ptr::eq(e, self.stmt_expr) || self.next_comment_before(e.span.hi).is_some() {
            return false;
        }
        let mut cur = e;
        loop {
            let ExprKind::If { then, els: Some(els), .. } = &cur.kind else {
                return false;
            };
            if single_expr(then).is_none() {
                return false;
            }
            match &els.kind {
                ExprKind::If { .. } => cur = els,
                ExprKind::Block(b) => return single_expr(b).is_some(),
                _ => return false,
            }
        }
    }

    fn if_expr(&mut self, e: &Expr, inline: bool) -> Doc {
        let ExprKind::If { cond, then, els } = &e.kind else {
            return self.expr(e, LEVEL_ASSIGN, true);
        };
        let (c, id) = self.cond(cond);
        let then = match single_expr(then) {
            Some(x) if inline => self.inline_block(then, x),
            _ => self.block(then),
        };
        let mut parts = vec![text("if "), c, brace_sep(id), then];
        if let Some(els) = els {
            parts.push(text(" else "));
            parts.push(match &els.kind {
                ExprKind::Block(b) => match single_expr(b) {
                    Some(x) if inline => self.inline_block(b, x),
                    _ => self.block(b),
                },
                ExprKind::If { .. } => self.if_expr(els, inline),
                // Not produced by the parser; keep it readable as a block.
                _ => concat(vec![text("{ "), self.expr(els, LEVEL_ASSIGN, true), text(" }")]),
            });
        }
        concat(parts)
    }

    fn stmt(&mut self, s: &Stmt) -> Doc {
        let span = s.span();
        let mut parts = vec![self.leading(span.lo)];
        let flush = match s {
            Stmt::Let(l) => l.init.as_ref().and_then(first_flush),
            Stmt::Expr { expr, .. } => first_flush(expr),
        };
        parts.push(self.leading(flush.unwrap_or(span.hi)));
        parts.push(self.start_line(span.lo));
        match s {
            Stmt::Let(l) => {
                self.stmt_expr = std::ptr::null();
                parts.push(self.let_stmt(l));
            }
            Stmt::Expr { expr, semi } => {
                self.stmt_expr = expr;
                // At the start of a statement `if … { }` ends at its `}`: anything longer that
                // starts with one needs parentheses (the parser never builds such a tree).
                let lm = leftmost(expr);
                if !std::ptr::eq(lm, expr) && starts_block_like_stmt(lm) {
                    parts.push(text("("));
                    parts.push(self.expr(expr, LEVEL_ASSIGN, true));
                    parts.push(text(")"));
                } else {
                    parts.push(self.expr(expr, LEVEL_ASSIGN, true));
                }
                if *semi {
                    parts.push(text(";"));
                }
            }
        }
        parts.push(self.trailing(span.hi));
        concat(parts)
    }

    fn let_stmt(&mut self, l: &LetStmt) -> Doc {
        let mut head = String::from("let ");
        if let Some(e) = &l.exec {
            head.push_str(&format!("[{}] ", exec_expr(e)));
        }
        if l.mutable {
            head.push_str("mut ");
        }
        head.push_str(&l.name.name);
        if let Some(t) = &l.ty {
            head.push_str(&format!(": {}", ty(t)));
        }
        let mut parts = vec![text(head)];
        if let Some(init) = &l.init {
            parts.push(text(" ="));
            parts.push(Doc::Rhs(Box::new(self.expr(init, LEVEL_ASSIGN, true))));
        }
        parts.push(text(";"));
        concat(parts)
    }

    // --------------------------------------------------------------------------------------------
    // Expressions

    /// `e` where the parser reads an expression of level `min`; `open_ok` says whether nothing
    /// follows it that an open-ended expression (`return e`, `x = e`) would swallow.
    fn expr(&mut self, e: &Expr, min: u8, open_ok: bool) -> Doc {
        if start_level(e) < min || (!open_ok && ends_open(e)) {
            concat(vec![text("("), self.expr_inner(e, true), text(")")])
        } else {
            self.expr_inner(e, open_ok)
        }
    }

    /// The operand of a postfix operation.
    fn postfix_base(&mut self, base: &Expr, int_field: bool) -> Doc {
        // `1.0` would lex as a float: `(1).0`.
        let bare_int = int_field && matches!(base.kind, ExprKind::Lit(Lit::Int(_, None)));
        if bare_int || start_level(base) < LEVEL_POSTFIX || ends_open(base) {
            concat(vec![text("("), self.expr_inner(base, true), text(")")])
        } else {
            self.expr_inner(base, false)
        }
    }

    /// A condition, and the group whose breaking moves the `{` after it to a line of its own.
    fn cond(&mut self, e: &Expr) -> (Doc, Option<GroupId>) {
        if matches!(e.kind, ExprKind::Binary(..)) {
            let (d, id) = self.binary(e, true);
            (d, Some(id))
        } else {
            (self.expr(e, LEVEL_ASSIGN, true), None)
        }
    }

    /// A run of binary operations of one precedence level, `a + b - c`, as one group.
    fn binary(&mut self, e: &Expr, open_ok: bool) -> (Doc, GroupId) {
        let ExprKind::Binary(op, l, r) = &e.kind else {
            let id = self.new_group();
            return (Doc::group_id(id, self.expr(e, LEVEL_ASSIGN, open_ok)), id);
        };
        let prec = op.precedence();
        let mut rights = vec![(*op, &**r)];
        let mut left: &Expr = l;
        // A left operand of the same level is printed without parentheses unless it ends open.
        while let ExprKind::Binary(op2, l2, r2) = &left.kind {
            if op2.precedence() != prec || ends_open(left) {
                break;
            }
            rights.push((*op2, &**r2));
            left = l2;
        }
        rights.reverse();
        let first = self.expr(left, prec, false);
        let n = rights.len();
        let mut tail = Vec::with_capacity(3 * n);
        for (i, (op, r)) in rights.into_iter().enumerate() {
            tail.push(Doc::Line);
            tail.push(text(format!("{} ", op.symbol())));
            tail.push(self.expr(r, prec + 1, i + 1 == n && open_ok));
        }
        let id = self.new_group();
        (Doc::group_id(id, concat(vec![first, Doc::nest(concat(tail))])), id)
    }

    /// A run of postfix operations, `p.v::<n>[[t]].fst[i]`: a break may come before every `.`.
    fn postfix_chain(&mut self, e: &Expr) -> Doc {
        let mut ops = Vec::new();
        let mut cur = e;
        // Every postfix operand continues the chain (it never needs parentheses); the first
        // other expression is its base.
        let base = loop {
            match &cur.kind {
                ExprKind::Field(x, _) | ExprKind::Index(x, _) | ExprKind::Select(x, _) | ExprKind::View(x, _) => {
                    ops.push(cur);
                    cur = x;
                }
                _ => break cur,
            }
        };
        let innermost = ops.last().copied().unwrap_or(e);
        let int_field = matches!(innermost.kind, ExprKind::Field(_, Field::Index(_)));
        let mut root = vec![self.postfix_base(base, int_field)];
        let mut steps: Vec<Vec<Doc>> = Vec::new();
        for op in ops.iter().rev() {
            let (dot, part) = match &op.kind {
                ExprKind::Field(_, f) => (
                    true,
                    text(match f {
                        Field::Fst => ".fst".to_string(),
                        Field::Snd => ".snd".to_string(),
                        Field::Index(n) => format!(".{n}"),
                    }),
                ),
                ExprKind::View(_, v) => (true, text(format!(".{}", view_ref(v)))),
                ExprKind::Index(_, i) => {
                    // `x[[` would start a selection.
                    let space = matches!(leftmost(i).kind, ExprKind::ArrayList(_) | ExprKind::ArrayRepeat(..));
                    let open = text(if space { "[ " } else { "[" });
                    (false, concat(vec![open, self.expr(i, LEVEL_ASSIGN, true), text("]")]))
                }
                ExprKind::Select(_, ex) => (false, text(format!("[[{}]]", exec_expr(ex)))),
                // `ops` holds only the postfix operations collected above.
                _ => continue,
            };
            if dot {
                steps.push(vec![part]);
            } else if let Some(step) = steps.last_mut() {
                step.push(part);
            } else {
                root.push(part);
            }
        }
        let id = self.new_group();
        chain(id, concat(root), steps.into_iter().map(concat).collect())
    }

    /// An execution resource in a `sched` or `split` header: a break may come before every `.`.
    fn exec_chain(&mut self, e: &ExecExpr) -> (Doc, GroupId) {
        let root = text(exec_base(&e.base));
        let mut steps: Vec<String> = Vec::new();
        let mut root_tail = String::new();
        for step in &e.path {
            let s = exec_step(step);
            if s.starts_with('.') {
                steps.push(s);
            } else {
                match steps.last_mut() {
                    Some(last) => last.push_str(&s),
                    None => root_tail.push_str(&s),
                }
            }
        }
        let id = self.new_group();
        let root = concat(vec![root, text(root_tail)]);
        (chain(id, root, steps.into_iter().map(text).collect()), id)
    }

    fn expr_inner(&mut self, e: &Expr, open_ok: bool) -> Doc {
        match &e.kind {
            ExprKind::Lit(l) => text(lit(l)),
            ExprKind::Path(segs) => text(path(segs)),
            ExprKind::Unary(op, x) => {
                let sym = match op {
                    UnOp::Neg => "-",
                    UnOp::Not => "!",
                };
                concat(vec![text(sym), self.expr(x, LEVEL_PREFIX, open_ok)])
            }
            ExprKind::Deref(x) => concat(vec![text("*"), self.expr(x, LEVEL_PREFIX, open_ok)]),
            ExprKind::Borrow { prv, own, short, place } => {
                let mut s = String::from("&");
                if let Some(p) = prv {
                    s.push_str(prv_name(p));
                    s.push(' ');
                }
                if !*short {
                    s.push_str(own.keyword());
                    s.push(' ');
                } else if prv.is_none() && starts_with_amp(place, open_ok) {
                    // `&&` is one token.
                    s.push(' ');
                }
                concat(vec![text(s), self.expr(place, LEVEL_PREFIX, open_ok)])
            }
            ExprKind::Unsafe(x) => {
                let inner = match &x.kind {
                    // `unsafe { e }` stays on one line if it fits, as in rustfmt.
                    ExprKind::Block(b) => match single_expr(b) {
                        Some(y) if self.next_comment_before(b.span.hi).is_none() => {
                            let d = self.inline_block(b, y);
                            return Doc::group(concat(vec![text("unsafe "), d]));
                        }
                        _ => self.block(b),
                    },
                    // `unsafe {` would start an `unsafe` block.
                    _ if is_plain_block(leftmost(x)) => concat(vec![text("("), self.expr_inner(x, true), text(")")]),
                    _ => self.expr(x, LEVEL_PREFIX, open_ok),
                };
                concat(vec![text("unsafe "), inner])
            }
            ExprKind::Binary(..) => self.binary(e, open_ok).0,
            ExprKind::Cast(x, t) => concat(vec![self.expr(x, LEVEL_CAST, false), text(format!(" as {}", ty(t)))]),
            ExprKind::Field(..) | ExprKind::Index(..) | ExprKind::Select(..) | ExprKind::View(..) => {
                self.postfix_chain(e)
            }
            ExprKind::Assign(l, r) => {
                let l = self.expr(l, 1, false);
                let r = self.expr(r, LEVEL_ASSIGN, open_ok);
                concat(vec![l, text(" ="), Doc::Rhs(Box::new(r))])
            }
            ExprKind::CompoundAssign(op, l, r) => {
                let l = self.expr(l, 1, false);
                let r = self.expr(r, LEVEL_ASSIGN, open_ok);
                concat(vec![l, text(format!(" {}=", op.symbol())), Doc::Rhs(Box::new(r))])
            }
            ExprKind::Block(b) => self.block(b),
            ExprKind::For { var, start, end, body } => {
                let head = text(format!("for {} in {}..{} ", var.name, nat(start), nat(end)));
                concat(vec![head, self.block(body)])
            }
            ExprKind::While { cond, body } => {
                let (c, id) = self.cond(cond);
                concat(vec![text("while "), c, brace_sep(id), self.block(body)])
            }
            ExprKind::If { .. } => {
                if self.inline_if_ok(e) {
                    let d = self.if_expr(e, true);
                    Doc::group(d)
                } else {
                    self.if_expr(e, false)
                }
            }
            ExprKind::Sched { dims, var, exec, body } => {
                let head = text(format!("sched({}) {} in ", dim_list(dims), var.name));
                let (ex, id) = self.exec_chain(exec);
                concat(vec![head, ex, brace_sep(Some(id)), self.block(body)])
            }
            ExprKind::Split { dim, exec, at, arms } => {
                let (ex, id) = self.exec_chain(exec);
                let mut parts = vec![
                    text(format!("split({}) ", dim.letter())),
                    ex,
                    text(format!(" at {}", nat(at))),
                    brace_sep(Some(id)),
                    text("{"),
                ];
                self.fresh = true;
                let mut inner = Vec::new();
                for arm in arms.iter() {
                    inner.push(self.leading(arm.name.span.lo));
                    inner.push(self.start_line(arm.name.span.lo));
                    inner.push(text(format!("{} =>", arm.name.name)));
                    inner.push(Doc::Rhs(Box::new(self.expr(&arm.body, LEVEL_ASSIGN, true))));
                    inner.push(text(","));
                    inner.push(self.trailing(arm.body.span.hi));
                }
                inner.push(self.leading(e.span.hi));
                parts.push(Doc::nest(Doc::Breaking(Box::new(concat(inner)))));
                parts.push(Doc::HardLine);
                parts.push(text("}"));
                self.fresh = false;
                concat(parts)
            }
            ExprKind::Sync(None) => text("sync"),
            ExprKind::Sync(Some(ex)) => text(format!("sync({})", exec_expr(ex))),
            ExprKind::Call { func, generics, exec, launch, args } => {
                let mut parts = vec![text(path(func))];
                if !generics.is_empty() || exec.is_some() {
                    let gs = generics.iter().map(|g| text(generic_arg(g))).collect();
                    parts.push(text("::"));
                    parts.push(list("<", gs, ">", true));
                }
                if let Some(ex) = exec {
                    parts.push(text(format!("::<{}>", exec_expr(ex))));
                } else if let Some(l) = launch {
                    let mut s = format!("::<<<{}, {}", dim(&l.grid), dim(&l.block));
                    if let Some(st) = &l.stream {
                        s.push_str(&format!(", {}", st.name));
                    }
                    if !l.shared.is_empty() {
                        let ts: Vec<String> = l.shared.iter().map(ty).collect();
                        s.push_str(&format!("; {}", ts.join(", ")));
                    }
                    s.push_str(">>>");
                    parts.push(text(s));
                }
                let args = self.expr_list(args);
                parts.push(list("(", args, ")", true));
                concat(parts)
            }
            ExprKind::Tuple(xs) => {
                let mut items = self.expr_list(xs);
                if items.len() == 1 {
                    // `(x,)`: the comma makes it a tuple, broken or not.
                    let only = items.pop().unwrap_or(Doc::Nil);
                    list("(", vec![concat(vec![only, text(",")])], ")", false)
                } else {
                    list("(", items, ")", true)
                }
            }
            ExprKind::ArrayList(xs) => {
                let items = self.expr_list(xs);
                list("[", items, "]", true)
            }
            ExprKind::ArrayRepeat(x, n) => {
                concat(vec![text("["), self.expr(x, LEVEL_ASSIGN, true), text(format!("; {}]", nat(n)))])
            }
            ExprKind::Return(None) => text("return"),
            ExprKind::Break => text("break"),
            ExprKind::Continue => text("continue"),
            ExprKind::Return(Some(x)) => concat(vec![text("return "), self.expr(x, LEVEL_ASSIGN, open_ok)]),
            ExprKind::Paren(x) => concat(vec![text("("), self.expr(x, LEVEL_ASSIGN, true), text(")")]),
            // Only in trees with syntax errors, which are not formatted.
            ExprKind::Error => text("()"),
        }
    }

    fn expr_list(&mut self, xs: &[Expr]) -> Vec<Doc> {
        xs.iter().map(|x| self.expr(x, LEVEL_ASSIGN, true)).collect()
    }
}

/// The expression of a block that may print on one line, `{ e }`: the block's only statement,
/// without `;`, containing no block or `split` itself.
fn single_expr(b: &Block) -> Option<&Expr> {
    match b.stmts.as_slice() {
        [Stmt::Expr { expr, semi: false }] if first_flush(expr).is_none() => Some(expr),
        _ => None,
    }
}

/// True if `e`, printed where the parser reads a prefix operand, starts with `&`.
fn starts_with_amp(e: &Expr, open_ok: bool) -> bool {
    let parenthesised = start_level(e) < LEVEL_PREFIX || (!open_ok && ends_open(e));
    !parenthesised && matches!(e.kind, ExprKind::Borrow { .. })
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
            // Powers tight, as the paper writes them: `2^(k + 1)`.
            if right_assoc {
                out.push_str(op.symbol());
            } else {
                out.push_str(&format!(" {} ", op.symbol()));
            }
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
            // A function type's result would take the `@ m`.
            if matches!(inner.kind, TyKind::Ref(_) | TyKind::Fn(_)) {
                format!("({i}) @ {}", mem(m))
            } else {
                format!("{i} @ {}", mem(m))
            }
        }
        TyKind::Fn(f) => {
            let params: Vec<String> = f.params.iter().map(ty).collect();
            match &f.exec {
                Some(e) => format!("fn({}) -[{}]-> {}", params.join(", "), exec_ty(e), ty(&f.ret)),
                None => format!("fn({}) -> {}", params.join(", "), ty(&f.ret)),
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
    let mut s = exec_base(&e.base);
    for step in &e.path {
        s.push_str(&exec_step(step));
    }
    s
}

fn exec_base(b: &ExecBase) -> String {
    match b {
        ExecBase::Var(i) => i.name.clone(),
        ExecBase::CpuThread => "cpu.thread".to_string(),
        ExecBase::Grid(a, b) => format!("gpu.grid<{}, {}>", dim(a), dim(b)),
    }
}

fn exec_step(step: &ExecStep) -> String {
    match step {
        ExecStep::Blocks => ".blocks".to_string(),
        ExecStep::Threads => ".threads".to_string(),
        ExecStep::Warps => ".warps".to_string(),
        ExecStep::Lanes => ".lanes".to_string(),
        ExecStep::ToThreads => ".to_threads".to_string(),
        ExecStep::ToWarps => ".to_warps".to_string(),
        ExecStep::Forall(d) => format!(".forall({})", d.letter()),
        ExecStep::Range(a, b, d) => format!("[{}..{}]_{}", nat(a), nat(b), d.letter()),
        ExecStep::Dim(d) => format!(".{}", d.letter()),
    }
}

fn exec_ty(t: &ExecTy) -> String {
    // The two spellings of the paper and of the prototype, kept as written.
    let (cap, lower) = match &t.kind {
        ExecTyKind::CpuThread => ("cpu.Thread", "cpu.thread"),
        ExecTyKind::Grid(a, b) if t.ordered => {
            return format!("{}<{}, {}>", pick(t, "gpu.OrderedGrid", "gpu.ordered_grid"), dim(a), dim(b))
        }
        ExecTyKind::Grid(a, b) => return format!("{}<{}, {}>", pick(t, "gpu.Grid", "gpu.grid"), dim(a), dim(b)),
        ExecTyKind::BlockGrp(a, b) => return format!("gpu.BlockGrp<{}, {}>", dim(a), dim(b)),
        ExecTyKind::Block(d) => return format!("{}<{}>", pick(t, "gpu.Block", "gpu.block"), dim(d)),
        ExecTyKind::ThreadGrp(d) => return format!("gpu.ThreadGrp<{}>", dim(d)),
        ExecTyKind::WarpGrp(n) => return format!("gpu.WarpGrp<{}>", nat(n)),
        ExecTyKind::Warp => ("gpu.Warp", "gpu.warp"),
        ExecTyKind::Thread => ("gpu.Thread", "gpu.thread"),
        ExecTyKind::Any => ("Any", "Any"),
    };
    pick(t, cap, lower).to_string()
}

fn pick<'s>(t: &ExecTy, capitalised: &'s str, lower: &'s str) -> &'s str {
    if t.capitalised {
        capitalised
    } else {
        lower
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

/// A view chain that may break before every `.` (the body of a `view` item).
fn view_chain_doc(id: GroupId, chain_refs: &[ViewRef]) -> Doc {
    let Some((first, rest)) = chain_refs.split_first() else {
        return Doc::Nil;
    };
    let steps = rest.iter().map(|v| text(format!(".{}", view_ref(v)))).collect();
    chain(id, text(view_ref(first)), steps)
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
