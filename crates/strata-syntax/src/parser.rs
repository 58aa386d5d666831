//! Recursive-descent parser with error recovery.
//!
//! Every syntax error becomes a [`Diagnostic`]; the parser then skips to the next statement or item
//! boundary and goes on, so one run reports every independent error. Nesting is bounded by
//! [`MAX_DEPTH`], so no input can overflow the stack, and every loop consumes a token or stops,
//! so no input can hang it.

use crate::ast::*;
use crate::lexer::{Tok, Token};
use strata_diag::{codes, Code, Diagnostic, FileId};

/// Deepest nesting of expressions, types, blocks and operator chains the parser accepts.
pub const MAX_DEPTH: u32 = 128;

/// Marker for "an error was reported; recover".
pub(crate) struct Fail;
type PResult<T> = Result<T, Fail>;

pub(crate) struct Parser<'a> {
    src: &'a str,
    toks: Vec<Token>,
    pos: usize,
    file: FileId,
    erase: bool,
    depth: u32,
    /// Token index of the last reported error: at most one error per position, no cascades.
    last_error_at: Option<usize>,
    /// Set when [`MAX_DEPTH`] was exceeded: the current item is abandoned.
    too_deep: bool,
    /// Where the stack was when parsing started, and how much of it the parser may use (see
    /// [`Parser::limit_stack`]).
    stack_limit: Option<(usize, usize)>,
    /// Set when the stack budget ran out: the parse is abandoned, and its result meaningless.
    pub(crate) out_of_stack: bool,
    pub(crate) diags: Vec<Diagnostic>,
}

/// Keywords that begin a statement, for "did you mean" hints.
const STMT_KEYWORDS: &[&str] =
    &["let", "mut", "for", "while", "if", "sched", "split", "sync", "return", "break", "continue", "unsafe"];

/// Keywords that begin an item, for "did you mean" hints.
const ITEM_KEYWORDS: &[&str] = &["fn", "const", "view"];

impl<'a> Parser<'a> {
    pub(crate) fn new(src: &'a str, toks: Vec<Token>, file: FileId, erase: bool) -> Self {
        Parser {
            src,
            toks,
            pos: 0,
            file,
            erase,
            depth: 0,
            last_error_at: None,
            too_deep: false,
            stack_limit: None,
            out_of_stack: false,
            diags: Vec::new(),
        }
    }

    /// Gives up (setting `out_of_stack`) once the parser has used more than `budget` bytes of
    /// stack below this call. Nesting is bounded by [`MAX_DEPTH`], but a level can take tens of
    /// KiB of stack in an unoptimised build, more than a small thread has for 128 levels; the
    /// caller then parses again on a thread with a large stack.
    pub(crate) fn limit_stack(&mut self, budget: usize) {
        self.stack_limit = Some((stack_position(), budget));
    }

    // --------------------------------------------------------------------------------------------
    // Token helpers

    fn tok(&self) -> Token {
        self.toks[self.pos.min(self.toks.len() - 1)]
    }

    fn peek(&self) -> Tok {
        self.tok().kind
    }

    fn nth(&self, n: usize) -> Token {
        self.toks[(self.pos + n).min(self.toks.len() - 1)]
    }

    fn text_of(&self, t: Token) -> &'a str {
        self.src.get(t.span.range()).unwrap_or("")
    }

    fn text(&self) -> &'a str {
        self.text_of(self.tok())
    }

    fn at(&self, k: Tok) -> bool {
        self.peek() == k
    }

    /// True if the current token is the identifier `word` (a contextual keyword like `uniq`).
    fn at_word(&self, word: &str) -> bool {
        self.at(Tok::Ident) && self.text() == word
    }

    fn bump(&mut self) -> Token {
        let t = self.tok();
        if t.kind != Tok::Eof {
            self.pos += 1;
        }
        t
    }

    fn eat(&mut self, k: Tok) -> bool {
        if self.at(k) {
            self.bump();
            true
        } else {
            false
        }
    }

    /// True if the next `n` tokens are all `k` and touch each other (`<<<`, `[[`, `]]`).
    fn at_glued(&self, k: Tok, n: usize) -> bool {
        (0..n).all(|i| self.nth(i).kind == k) && (1..n).all(|i| self.nth(i - 1).touches(&self.nth(i)))
    }

    fn span_from(&self, lo: Span) -> Span {
        if self.erase {
            return Span::DUMMY;
        }
        let prev = if self.pos == 0 { lo } else { self.toks[self.pos - 1].span };
        Span::new(self.file, lo.lo, prev.hi.max(lo.lo))
    }

    fn sp(&self, s: Span) -> Span {
        if self.erase {
            Span::DUMMY
        } else {
            s
        }
    }

    fn ident_from(&self, t: Token) -> Ident {
        Ident { name: self.text_of(t).to_string(), span: self.sp(t.span) }
    }

    // --------------------------------------------------------------------------------------------
    // Errors and recovery

    fn error_at(&mut self, code: Code, span: Span, message: String, label: String) -> Fail {
        if self.last_error_at != Some(self.pos) {
            self.last_error_at = Some(self.pos);
            self.diags.push(Diagnostic::error(code, message, span, label));
        }
        Fail
    }

    fn unexpected(&mut self, expected: &str) -> Fail {
        let t = self.tok();
        let found = if t.kind == Tok::Eof { "end of file".to_string() } else { format!("`{}`", self.text_of(t)) };
        self.error_at(
            codes::UNEXPECTED_TOKEN,
            t.span,
            format!("expected {expected}, found {found}"),
            format!("expected {expected}"),
        )
    }

    fn expect(&mut self, k: Tok) -> PResult<Token> {
        if self.at(k) {
            Ok(self.bump())
        } else {
            Err(self.unexpected(k.describe()))
        }
    }

    /// Expects a closing delimiter; at end of file, points at the unclosed opening one.
    fn expect_close(&mut self, close: Tok, open: Token) -> PResult<Token> {
        if self.at(close) {
            return Ok(self.bump());
        }
        if self.at(Tok::Eof) {
            let at = self.tok().span;
            let d = Diagnostic::error(
                codes::UNCLOSED_DELIMITER,
                format!("unclosed delimiter {}", open.kind.describe()),
                open.span,
                "this delimiter is never closed",
            )
            .with_label(at, format!("expected {} before the end of the file", close.describe()));
            if self.last_error_at != Some(self.pos) {
                self.last_error_at = Some(self.pos);
                self.diags.push(d);
            }
            return Err(Fail);
        }
        Err(self.unexpected(close.describe()))
    }

    /// Expects `>`, splitting a `>=` token so `view v<n: nat>= …` still parses.
    fn expect_gt(&mut self) -> PResult<()> {
        if self.eat(Tok::Gt) {
            return Ok(());
        }
        if self.at(Tok::Ge) {
            let t = &mut self.toks[self.pos];
            t.kind = Tok::Eq;
            t.span.lo += 1;
            return Ok(());
        }
        Err(self.unexpected("`>`"))
    }

    fn expect_ident(&mut self, what: &str) -> PResult<Ident> {
        if self.at(Tok::Ident) {
            let t = self.bump();
            Ok(self.ident_from(t))
        } else {
            Err(self.unexpected(what))
        }
    }

    fn expect_word(&mut self, word: &str) -> PResult<Token> {
        if self.at_word(word) {
            Ok(self.bump())
        } else {
            Err(self.unexpected(&format!("`{word}`")))
        }
    }

    /// Enters one nesting level; fails with E0012 past [`MAX_DEPTH`].
    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if let Some((base, budget)) = self.stack_limit {
            if base.abs_diff(stack_position()) > budget {
                self.out_of_stack = true;
                return Err(Fail);
            }
        }
        if self.depth > MAX_DEPTH {
            self.too_deep = true;
            let span = self.tok().span;
            // Report once per file, then unwind all the way to the item level.
            if !self.diags.iter().any(|d| d.code == codes::NESTING_TOO_DEEP) {
                self.diags.push(
                    Diagnostic::error(
                        codes::NESTING_TOO_DEEP,
                        "nesting too deep",
                        span,
                        format!("more than {MAX_DEPTH} levels of nesting here"),
                    )
                    .with_note("split the expression into several `let` statements"),
                );
            }
            return Err(Fail);
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    /// Runs `f` one nesting level deeper.
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        self.enter()?;
        let r = f(self);
        self.leave();
        r
    }

    /// Skips tokens up to the end of the current statement: past a `;`, or before a `}` that
    /// closes the enclosing block. Balanced delimiters are skipped as a whole.
    fn recover_stmt(&mut self) {
        let mut depth = 0usize;
        loop {
            match self.peek() {
                Tok::Eof => return,
                Tok::Semi if depth == 0 => {
                    self.bump();
                    return;
                }
                Tok::RBrace if depth == 0 => return,
                Tok::LBrace | Tok::LParen | Tok::LBracket => depth += 1,
                Tok::RBrace | Tok::RParen | Tok::RBracket => depth = depth.saturating_sub(1),
                Tok::Let if depth == 0 => return,
                Tok::Fn | Tok::Const | Tok::View if depth == 0 => return,
                _ => {}
            }
            self.bump();
        }
    }

    /// Skips to the next token that can start an item. Items cannot nest, so an item keyword
    /// starts a new item at any brace depth; this keeps recovery in step even when the broken
    /// item left delimiters unbalanced.
    fn recover_item(&mut self) {
        while !matches!(self.peek(), Tok::Eof | Tok::Fn | Tok::Const | Tok::View) {
            self.bump();
        }
    }

    // --------------------------------------------------------------------------------------------
    // Items

    pub(crate) fn module(&mut self) -> Module {
        let lo = self.tok().span;
        let mut items = Vec::new();
        while !self.at(Tok::Eof) {
            let start = self.pos;
            match self.item() {
                Ok(item) => items.push(item),
                Err(Fail) if self.out_of_stack => break,
                Err(Fail) => {
                    self.depth = 0;
                    self.too_deep = false;
                    if self.pos == start {
                        self.bump();
                    }
                    self.recover_item();
                }
            }
        }
        Module { items, span: self.span_from(lo) }
    }

    fn item(&mut self) -> PResult<Item> {
        match self.peek() {
            Tok::Fn => self.fn_decl().map(Item::Fn),
            Tok::Const => self.const_decl().map(Item::Const),
            Tok::View => self.view_decl().map(Item::View),
            Tok::RBrace if !self.diags.is_empty() => {
                // A leftover `}` of a broken item: the error that broke it already covers it.
                self.bump();
                Err(Fail)
            }
            _ => {
                let t = self.tok();
                let found = self.text_of(t).to_string();
                let before = self.diags.len();
                let fail = self.error_at(
                    codes::EXPECTED_ITEM,
                    t.span,
                    format!("expected an item (`fn`, `const` or `view`), found `{found}`"),
                    "not allowed at the top level".into(),
                );
                if let (Some(hint), true) = (self.keyword_hint(t, ITEM_KEYWORDS), self.diags.len() > before) {
                    if let Some(d) = self.diags.last_mut() {
                        d.notes.push(hint);
                    }
                }
                Err(fail)
            }
        }
    }

    fn fn_decl(&mut self) -> PResult<FnDecl> {
        let lo = self.expect(Tok::Fn)?.span;
        let name = self.expect_ident("a function name")?;
        let generics = if self.at(Tok::Lt) { self.generic_params()? } else { Vec::new() };
        let open = self.expect(Tok::LParen)?;
        let mut params = Vec::new();
        while !self.at(Tok::RParen) && !self.at(Tok::Eof) {
            params.push(self.param()?);
            if !self.eat(Tok::Comma) {
                break;
            }
        }
        self.expect_close(Tok::RParen, open)?;
        let mut exec = None;
        let mut ret = None;
        if self.at(Tok::Minus) && self.nth(1).kind == Tok::LBracket {
            let elo = self.bump().span;
            self.bump();
            let ename = self.expect_ident("the name of the executing resource")?;
            self.expect(Tok::Colon)?;
            let ty = self.exec_ty()?;
            self.expect(Tok::RBracket)?;
            self.expect(Tok::Arrow)?;
            exec = Some(ExecDecl { name: ename, ty, span: self.span_from(elo) });
            ret = Some(self.ty()?);
        } else if self.eat(Tok::Arrow) {
            ret = Some(self.ty()?);
        }
        let mut where_clauses = Vec::new();
        if self.eat(Tok::Where) {
            loop {
                where_clauses.push(self.nat_constraint()?);
                if !self.eat(Tok::Comma) || self.at(Tok::LBrace) || self.at(Tok::Semi) {
                    break;
                }
            }
        }
        let body = if self.eat(Tok::Semi) { None } else { Some(self.block()?) };
        Ok(FnDecl { name, generics, params, exec, ret, where_clauses, body, span: self.span_from(lo) })
    }

    fn const_decl(&mut self) -> PResult<ConstDecl> {
        let lo = self.expect(Tok::Const)?.span;
        let name = self.expect_ident("a constant name")?;
        let annotated = self.eat(Tok::Colon);
        if annotated {
            self.expect_word("nat")?;
        }
        self.expect(Tok::Eq)?;
        let value = self.nat()?;
        self.expect(Tok::Semi)?;
        Ok(ConstDecl { name, annotated, value, span: self.span_from(lo) })
    }

    fn view_decl(&mut self) -> PResult<ViewDecl> {
        let lo = self.expect(Tok::View)?.span;
        let name = self.expect_ident("a view name")?;
        let generics = if self.at(Tok::Lt) { self.generic_params()? } else { Vec::new() };
        self.expect(Tok::Eq)?;
        let body = self.view_chain()?;
        self.expect(Tok::Semi)?;
        Ok(ViewDecl { name, generics, body, span: self.span_from(lo) })
    }

    fn generic_params(&mut self) -> PResult<Vec<GenericParam>> {
        self.expect(Tok::Lt)?;
        let mut out = Vec::new();
        while !self.at(Tok::Gt) && !self.at(Tok::Ge) {
            let lo = self.tok().span;
            let name = self.expect_ident("a generic parameter name")?;
            self.expect(Tok::Colon)?;
            let kt = self.expect(Tok::Ident)?;
            let kind = match self.text_of(kt) {
                "nat" => Kind::Nat,
                "mem" => Kind::Mem,
                "dty" => Kind::DataTy,
                "prv" | "rgn" => Kind::Prv,
                "num" => Kind::Num,
                other => {
                    let other = other.to_string();
                    return Err(self.error_at(
                        codes::UNKNOWN_KIND,
                        kt.span,
                        format!("unknown kind `{other}`"),
                        "expected `nat`, `mem`, `dty`, `num` or `prv`".into(),
                    ));
                }
            };
            out.push(GenericParam { name, kind, span: self.span_from(lo) });
            if !self.eat(Tok::Comma) {
                break;
            }
        }
        self.expect_gt()?;
        Ok(out)
    }

    fn param(&mut self) -> PResult<Param> {
        let lo = self.tok().span;
        let exec = if self.at(Tok::LBracket) {
            let open = self.bump();
            let e = self.exec_expr()?;
            self.expect_close(Tok::RBracket, open)?;
            Some(e)
        } else {
            None
        };
        let mutable = self.eat(Tok::Mut);
        let name = self.expect_ident("a parameter name")?;
        self.expect(Tok::Colon)?;
        let ty = self.ty()?;
        Ok(Param { exec, mutable, name, ty, span: self.span_from(lo) })
    }

    fn nat_constraint(&mut self) -> PResult<NatConstraint> {
        let lo = self.tok().span;
        let lhs = self.nat()?;
        let op = match self.peek() {
            Tok::EqEq => CmpOp::Eq,
            Tok::Ne => CmpOp::Ne,
            Tok::Lt => CmpOp::Lt,
            Tok::Le => CmpOp::Le,
            Tok::Gt => CmpOp::Gt,
            Tok::Ge => CmpOp::Ge,
            _ => return Err(self.unexpected("a comparison (`==`, `!=`, `<`, `<=`, `>`, `>=`)")),
        };
        self.bump();
        let rhs = self.nat()?;
        Ok(NatConstraint { lhs, op, rhs, span: self.span_from(lo) })
    }

    // --------------------------------------------------------------------------------------------
    // Natural numbers

    pub(crate) fn nat(&mut self) -> PResult<Nat> {
        self.nested(|p| p.nat_bp(0))
    }

    fn nat_op(&self) -> Option<(NatOp, u8)> {
        Some(match self.peek() {
            Tok::Plus => (NatOp::Add, 1),
            Tok::Minus => (NatOp::Sub, 1),
            Tok::Star => (NatOp::Mul, 2),
            Tok::Slash => (NatOp::Div, 2),
            Tok::Percent => (NatOp::Rem, 2),
            Tok::Caret => (NatOp::Pow, 3),
            _ => return None,
        })
    }

    fn nat_bp(&mut self, min: u8) -> PResult<Nat> {
        let lo = self.tok().span;
        let mut lhs = self.nat_atom()?;
        let mut chain = 0;
        while let Some((op, prec)) = self.nat_op() {
            if prec <= min {
                break;
            }
            self.bump();
            // `^` is right-associative; the others are left-associative.
            let rhs =
                if op == NatOp::Pow { self.nested(|p| p.nat_bp(prec - 1))? } else { self.nested(|p| p.nat_bp(prec))? };
            lhs = Nat { kind: NatKind::Bin(op, Box::new(lhs), Box::new(rhs)), span: self.span_from(lo) };
            // Each link of a left-deep chain is one more level of tree depth.
            self.enter().inspect_err(|_| self.depth -= chain)?;
            chain += 1;
        }
        self.depth -= chain;
        Ok(lhs)
    }

    fn nat_atom(&mut self) -> PResult<Nat> {
        let lo = self.tok().span;
        match self.peek() {
            Tok::Int => {
                let t = self.bump();
                let value = self.int_value(t, false)?;
                let Ok(v) = u64::try_from(value.0) else {
                    return Err(self.error_at(
                        codes::INVALID_LITERAL,
                        t.span,
                        "natural number too large".into(),
                        "does not fit in 64 bits".into(),
                    ));
                };
                Ok(Nat { kind: NatKind::Lit(v), span: self.sp(t.span) })
            }
            Tok::Ident => {
                let t = self.bump();
                let name = self.ident_from(t);
                if self.at(Tok::LParen) && t.touches(&self.tok()) {
                    let open = self.bump();
                    let mut args = Vec::new();
                    while !self.at(Tok::RParen) && !self.at(Tok::Eof) {
                        args.push(self.nat()?);
                        if !self.eat(Tok::Comma) {
                            break;
                        }
                    }
                    self.expect_close(Tok::RParen, open)?;
                    return Ok(Nat { kind: NatKind::Call(name, args), span: self.span_from(lo) });
                }
                Ok(Nat { kind: NatKind::Var(name), span: self.sp(t.span) })
            }
            Tok::LParen => {
                let open = self.bump();
                let inner = self.nat()?;
                self.expect_close(Tok::RParen, open)?;
                // Parentheses only group; the tree records the grouping.
                Ok(inner)
            }
            _ => Err(self.unexpected("a natural number")),
        }
    }

    /// Parses the text of an integer token: value and optional type suffix.
    fn int_value(&mut self, t: Token, allow_suffix: bool) -> PResult<(u128, Option<ScalarTy>)> {
        let text = self.text_of(t);
        let digits_end = text.find(|c: char| !c.is_ascii_digit() && c != '_').unwrap_or(text.len());
        let (digits, suffix) = text.split_at(digits_end);
        let suffix = self.literal_suffix(t, suffix, allow_suffix, false)?;
        let clean: String = digits.chars().filter(|&c| c != '_').collect();
        match clean.parse::<u128>() {
            Ok(v) => Ok((v, suffix)),
            Err(_) => Err(self.error_at(
                codes::INVALID_LITERAL,
                t.span,
                "integer literal is too large".into(),
                "does not fit in 128 bits".into(),
            )),
        }
    }

    fn literal_suffix(&mut self, t: Token, suffix: &str, allow: bool, float: bool) -> PResult<Option<ScalarTy>> {
        if suffix.is_empty() {
            return Ok(None);
        }
        let ty = ScalarTy::from_name(suffix)
            .filter(|ty| matches!(ty, ScalarTy::F32 | ScalarTy::F64) || (!float && ty.is_int()));
        match ty {
            Some(ty) if allow => Ok(Some(ty)),
            Some(_) => Err(self.error_at(
                codes::INVALID_LITERAL,
                t.span,
                "a natural number takes no type suffix".into(),
                "remove the suffix".into(),
            )),
            None => {
                let suffix = suffix.to_string();
                Err(self.error_at(
                    codes::INVALID_LITERAL,
                    t.span,
                    format!("invalid suffix `{suffix}` on a numeric literal"),
                    "valid suffixes are i8, i16, i32, i64, u8, u16, u32, u64, f32 and f64".into(),
                ))
            }
        }
    }

    // --------------------------------------------------------------------------------------------
    // Dimensions and execution resources

    fn dim_name(&mut self, t: Token) -> PResult<DimName> {
        match self.text_of(t) {
            "X" | "x" => Ok(DimName::X),
            "Y" | "y" => Ok(DimName::Y),
            "Z" | "z" => Ok(DimName::Z),
            other => {
                let other = other.to_string();
                Err(self.error_at(
                    codes::UNKNOWN_DIMENSION,
                    t.span,
                    format!("unknown dimension `{other}`"),
                    "expected `X`, `Y` or `Z`".into(),
                ))
            }
        }
    }

    fn dim_selector(&mut self) -> PResult<DimName> {
        let t = self.expect(Tok::Ident)?;
        self.dim_name(t)
    }

    /// `X<n>`, `XY<a, b>`, `XYZ<a, b, c>` (any case).
    fn dim(&mut self) -> PResult<Dim> {
        let lo = self.tok().span;
        let t = self.expect(Tok::Ident)?;
        let text = self.text_of(t).to_ascii_uppercase();
        let names: Option<Vec<DimName>> = match text.as_str() {
            "X" => Some(vec![DimName::X]),
            "Y" => Some(vec![DimName::Y]),
            "Z" => Some(vec![DimName::Z]),
            "XY" => Some(vec![DimName::X, DimName::Y]),
            "XZ" => Some(vec![DimName::X, DimName::Z]),
            "YZ" => Some(vec![DimName::Y, DimName::Z]),
            "XYZ" => Some(vec![DimName::X, DimName::Y, DimName::Z]),
            _ => None,
        };
        let Some(names) = names else {
            let raw = self.text_of(t).to_string();
            return Err(self.error_at(
                codes::UNKNOWN_DIMENSION,
                t.span,
                format!("unknown dimension `{raw}`"),
                "expected one of `X`, `Y`, `Z`, `XY`, `XZ`, `YZ`, `XYZ`".into(),
            ));
        };
        self.expect(Tok::Lt)?;
        let mut dims = Vec::new();
        for (i, name) in names.iter().enumerate() {
            if i > 0 {
                self.expect(Tok::Comma)?;
            }
            dims.push((*name, self.nat()?));
        }
        self.expect_gt()?;
        Ok(Dim { dims, span: self.span_from(lo) })
    }

    fn exec_ty(&mut self) -> PResult<ExecTy> {
        let lo = self.tok().span;
        if self.at_word("Any") {
            self.bump();
            return Ok(ExecTy { kind: ExecTyKind::Any, capitalised: true, ordered: false, span: self.span_from(lo) });
        }
        let ns = self.expect(Tok::Ident)?;
        let ns_text = self.text_of(ns);
        if ns_text != "cpu" && ns_text != "gpu" {
            return Err(self.unknown_exec_ty(ns, lo));
        }
        self.expect(Tok::Dot)?;
        let t = self.expect(Tok::Ident)?;
        let capitalised = self.text_of(t).starts_with(|c: char| c.is_ascii_uppercase());
        let kind = match (ns_text, self.text_of(t)) {
            ("cpu", "thread" | "Thread") => ExecTyKind::CpuThread,
            ("gpu", "grid" | "Grid" | "ordered_grid" | "OrderedGrid") => {
                let (a, b) = self.two_dims()?;
                ExecTyKind::Grid(a, b)
            }
            ("gpu", "BlockGrp") => {
                let (a, b) = self.two_dims()?;
                ExecTyKind::BlockGrp(a, b)
            }
            ("gpu", "Block" | "block") => ExecTyKind::Block(self.one_dim()?),
            ("gpu", "ThreadGrp") => ExecTyKind::ThreadGrp(self.one_dim()?),
            ("gpu", "WarpGrp") => {
                self.expect(Tok::Lt)?;
                let n = self.nat()?;
                self.expect_gt()?;
                ExecTyKind::WarpGrp(n)
            }
            ("gpu", "Warp" | "warp") => ExecTyKind::Warp,
            ("gpu", "Thread" | "thread") => ExecTyKind::Thread,
            _ => return Err(self.unknown_exec_ty(t, lo)),
        };
        let ordered = matches!(self.text_of(t), "ordered_grid" | "OrderedGrid");
        Ok(ExecTy { kind, capitalised, ordered, span: self.span_from(lo) })
    }

    fn unknown_exec_ty(&mut self, t: Token, lo: Span) -> Fail {
        let span = lo.to(t.span);
        let text = self.src.get(span.range()).unwrap_or("").to_string();
        self.error_at(
            codes::UNKNOWN_EXEC_TYPE,
            span,
            format!("unknown execution resource type `{text}`"),
            "expected `cpu.thread`, `gpu.grid<…>`, `gpu.Block<…>`, `gpu.Warp`, `gpu.Thread`, …".into(),
        )
    }

    fn two_dims(&mut self) -> PResult<(Dim, Dim)> {
        self.expect(Tok::Lt)?;
        let a = self.dim()?;
        self.expect(Tok::Comma)?;
        let b = self.dim()?;
        self.expect_gt()?;
        Ok((a, b))
    }

    fn one_dim(&mut self) -> PResult<Dim> {
        self.expect(Tok::Lt)?;
        let a = self.dim()?;
        self.expect_gt()?;
        Ok(a)
    }

    /// An execution resource: `grid.blocks.forall(X)`, `block.threads[0..1]_Y`, `cpu.thread`.
    pub(crate) fn exec_expr(&mut self) -> PResult<ExecExpr> {
        self.nested(|p| p.exec_expr_inner())
    }

    fn exec_expr_inner(&mut self) -> PResult<ExecExpr> {
        let lo = self.tok().span;
        let first = self.expect_ident_any("an execution resource")?;
        let base = match self.text_of(first) {
            "cpu" if self.at(Tok::Dot) && self.text_of(self.nth(1)) == "thread" => {
                self.bump();
                self.bump();
                ExecBase::CpuThread
            }
            "gpu" if self.at(Tok::Dot) && matches!(self.text_of(self.nth(1)), "grid" | "Grid") => {
                self.bump();
                self.bump();
                let (a, b) = self.two_dims()?;
                ExecBase::Grid(a, b)
            }
            _ => ExecBase::Var(self.ident_from(first)),
        };
        let mut path = Vec::new();
        loop {
            if self.at(Tok::Dot) && self.nth(1).kind == Tok::Ident {
                let word = self.text_of(self.nth(1));
                let step = match word {
                    "blocks" => ExecStep::Blocks,
                    "threads" => ExecStep::Threads,
                    "warps" => ExecStep::Warps,
                    "lanes" => ExecStep::Lanes,
                    "to_threads" => ExecStep::ToThreads,
                    "to_warps" => ExecStep::ToWarps,
                    "X" => ExecStep::Dim(DimName::X),
                    "Y" => ExecStep::Dim(DimName::Y),
                    "Z" => ExecStep::Dim(DimName::Z),
                    "forall" => {
                        self.bump();
                        self.bump();
                        let open = self.expect(Tok::LParen)?;
                        let d = self.dim_selector()?;
                        self.expect_close(Tok::RParen, open)?;
                        path.push(ExecStep::Forall(d));
                        continue;
                    }
                    _ => break,
                };
                self.bump();
                self.bump();
                path.push(step);
            } else if self.at(Tok::LBracket) && !self.at_glued(Tok::LBracket, 2) && self.range_follows() {
                let open = self.bump();
                let a = self.nat()?;
                self.expect(Tok::DotDot)?;
                let b = self.nat()?;
                self.expect_close(Tok::RBracket, open)?;
                // The dimension is written as a subscript: `[0..16]_X`.
                let t = self.expect(Tok::Ident)?;
                let text = self.text_of(t);
                let Some(letter) = text.strip_prefix('_') else {
                    return Err(self.error_at(
                        codes::UNEXPECTED_TOKEN,
                        t.span,
                        "expected a dimension subscript such as `_X`".into(),
                        "write `_X`, `_Y` or `_Z`".into(),
                    ));
                };
                let d = match letter {
                    "X" | "x" => DimName::X,
                    "Y" | "y" => DimName::Y,
                    "Z" | "z" => DimName::Z,
                    _ => {
                        return Err(self.error_at(
                            codes::UNKNOWN_DIMENSION,
                            t.span,
                            format!("unknown dimension `{letter}`"),
                            "expected `X`, `Y` or `Z`".into(),
                        ))
                    }
                };
                path.push(ExecStep::Range(a, b, d));
            } else {
                break;
            }
        }
        Ok(ExecExpr { base, path, span: self.span_from(lo) })
    }

    /// Looks past `[` for a `..` before the matching `]`, telling `e[0..n]_X` from `p[i]`.
    /// Only the tokens of a natural number can come before the `..`, so the scan stops at any
    /// other token (scanning on to the end of the file from every `[` would be quadratic).
    fn range_follows(&self) -> bool {
        let mut depth = 0usize;
        for i in 1.. {
            match self.nth(i).kind {
                Tok::DotDot if depth == 0 => return true,
                Tok::LParen => depth += 1,
                Tok::RParen => depth = depth.saturating_sub(1),
                Tok::Int
                | Tok::Ident
                | Tok::Comma
                | Tok::DotDot
                | Tok::Plus
                | Tok::Minus
                | Tok::Star
                | Tok::Slash
                | Tok::Percent
                | Tok::Caret => {}
                _ => return false,
            }
        }
        false
    }

    fn expect_ident_any(&mut self, what: &str) -> PResult<Token> {
        if self.at(Tok::Ident) {
            Ok(self.bump())
        } else {
            Err(self.unexpected(what))
        }
    }

    // --------------------------------------------------------------------------------------------
    // Types

    pub(crate) fn ty(&mut self) -> PResult<Ty> {
        self.nested(|p| p.ty_inner())
    }

    fn ty_inner(&mut self) -> PResult<Ty> {
        let lo = self.tok().span;
        let mut ty = self.ty_atom()?;
        while self.eat(Tok::At) {
            let mem = self.mem()?;
            ty = Ty { kind: TyKind::At(Box::new(ty), mem), span: self.span_from(lo) };
        }
        Ok(ty)
    }

    fn ty_atom(&mut self) -> PResult<Ty> {
        let lo = self.tok().span;
        let kind = match self.peek() {
            Tok::LParen => {
                let open = self.bump();
                if self.at(Tok::RParen) {
                    self.bump();
                    TyKind::Scalar(ScalarTy::Unit)
                } else {
                    let first = self.ty()?;
                    if self.eat(Tok::Comma) {
                        let mut elems = vec![first];
                        while !self.at(Tok::RParen) && !self.at(Tok::Eof) {
                            elems.push(self.ty()?);
                            if !self.eat(Tok::Comma) {
                                break;
                            }
                        }
                        self.expect_close(Tok::RParen, open)?;
                        TyKind::Tuple(elems)
                    } else {
                        self.expect_close(Tok::RParen, open)?;
                        return Ok(first);
                    }
                }
            }
            Tok::LBracket => return self.array_ty(),
            Tok::Fn => return self.fn_ty(),
            Tok::Amp => {
                self.bump();
                return self.ref_ty(lo);
            }
            Tok::Ident => {
                let t = self.bump();
                match self.text_of(t) {
                    "_" => TyKind::Infer,
                    name => match ScalarTy::from_name(name) {
                        Some(s) => TyKind::Scalar(s),
                        None => TyKind::Var(self.ident_from(t)),
                    },
                }
            }
            _ => return Err(self.unexpected("a type")),
        };
        Ok(Ty { kind, span: self.span_from(lo) })
    }

    /// `fn(T, U) -> R` or `fn(T, U) -[gpu.thread]-> R`.
    fn fn_ty(&mut self) -> PResult<Ty> {
        let lo = self.expect(Tok::Fn)?.span;
        let open = self.expect(Tok::LParen)?;
        let mut params = Vec::new();
        while !self.at(Tok::RParen) && !self.at(Tok::Eof) {
            params.push(self.ty()?);
            if !self.eat(Tok::Comma) {
                break;
            }
        }
        self.expect_close(Tok::RParen, open)?;
        let mut exec = None;
        if self.at(Tok::Minus) && self.nth(1).kind == Tok::LBracket {
            self.bump();
            self.bump();
            exec = Some(self.exec_ty()?);
            self.expect(Tok::RBracket)?;
        }
        self.expect(Tok::Arrow)?;
        let ret = self.ty()?;
        Ok(Ty { kind: TyKind::Fn(FnTy { params, exec, ret: Box::new(ret) }), span: self.span_from(lo) })
    }

    /// `[T; n]`, `[[T; n]]` (a view array) and `[[T; n]; m]` (an array of arrays, as in Listing 2).
    fn array_ty(&mut self) -> PResult<Ty> {
        let lo = self.tok().span;
        let outer = self.expect(Tok::LBracket)?;
        if self.at(Tok::LBracket) && outer.touches(&self.tok()) {
            // Either a view array `[[T; n]]` or an array whose element type is an array.
            let inner_open = self.bump();
            let elem = self.ty()?;
            self.expect(Tok::Semi)?;
            let n = self.nat()?;
            let close = self.expect_close(Tok::RBracket, inner_open)?;
            if self.at(Tok::RBracket) && close.touches(&self.tok()) {
                self.bump();
                return Ok(Ty { kind: TyKind::ViewArray(Box::new(elem), n), span: self.span_from(lo) });
            }
            let inner = Ty { kind: TyKind::Array(Box::new(elem), n), span: self.span_from(inner_open.span) };
            self.expect(Tok::Semi)?;
            let m = self.nat()?;
            self.expect_close(Tok::RBracket, outer)?;
            return Ok(Ty { kind: TyKind::Array(Box::new(inner), m), span: self.span_from(lo) });
        }
        let elem = self.ty()?;
        self.expect(Tok::Semi)?;
        let n = self.nat()?;
        self.expect_close(Tok::RBracket, outer)?;
        Ok(Ty { kind: TyKind::Array(Box::new(elem), n), span: self.span_from(lo) })
    }

    fn starts_ty(&self, t: Token) -> bool {
        matches!(t.kind, Tok::Ident | Tok::LBracket | Tok::LParen | Tok::Amp | Tok::Fn)
    }

    fn is_ownership_word(&self, t: Token) -> bool {
        t.kind == Tok::Ident && matches!(self.text_of(t), "uniq" | "shrd")
    }

    /// After `&`: `['a | r] [uniq | shrd] [mem] T`, every part but `T` optional.
    fn ref_ty(&mut self, lo: Span) -> PResult<Ty> {
        let mut prv = None;
        if self.at(Tok::Lifetime) {
            let t = self.bump();
            prv = Some(Prv::Region(self.ident_from(t)));
        } else if self.at(Tok::Ident) && !self.is_ownership_word(self.tok()) && self.is_ownership_word(self.nth(1)) {
            let t = self.bump();
            prv = Some(Prv::Var(self.ident_from(t)));
        }
        let own = if self.at_word("uniq") {
            self.bump();
            Some(Ownership::Uniq)
        } else if self.at_word("shrd") {
            self.bump();
            Some(Ownership::Shrd)
        } else {
            None
        };
        let mem = if self.at_mem_start() { Some(self.mem()?) } else { None };
        let ty = self.ty()?;
        Ok(Ty { kind: TyKind::Ref(RefTy { prv, own, mem, ty: Box::new(ty) }), span: self.span_from(lo) })
    }

    /// A memory space comes next: `cpu.`/`gpu.`, or a variable followed by the start of a type.
    fn at_mem_start(&self) -> bool {
        if !self.at(Tok::Ident) {
            return false;
        }
        let text = self.text();
        if (text == "cpu" || text == "gpu") && self.nth(1).kind == Tok::Dot {
            return true;
        }
        text != "_" && ScalarTy::from_name(text).is_none() && self.starts_ty(self.nth(1))
    }

    pub(crate) fn mem(&mut self) -> PResult<Mem> {
        let lo = self.tok().span;
        let t = self.expect_ident_any("a memory space")?;
        let text = self.text_of(t);
        if (text == "cpu" || text == "gpu") && self.at(Tok::Dot) {
            self.bump();
            let w = self.expect_ident_any("a memory space")?;
            let kind = match (text, self.text_of(w)) {
                ("cpu", "mem") => MemKind::CpuMem,
                ("gpu", "global") => MemKind::GpuGlobal,
                ("gpu", "shared") => MemKind::GpuShared,
                ("gpu", "local") => MemKind::GpuLocal,
                _ => {
                    let span = t.span.to(w.span);
                    let written = self.src.get(span.range()).unwrap_or("").to_string();
                    return Err(self.error_at(
                        codes::UNKNOWN_MEMORY_SPACE,
                        span,
                        format!("unknown memory space `{written}`"),
                        "expected `cpu.mem`, `gpu.global`, `gpu.shared` or `gpu.local`".into(),
                    ));
                }
            };
            return Ok(Mem { kind, span: self.span_from(lo) });
        }
        Ok(Mem { kind: MemKind::Var(self.ident_from(t)), span: self.span_from(lo) })
    }

    // --------------------------------------------------------------------------------------------
    // Views

    /// `group::<32>.map(transpose).reverse` — a chain of views applied left to right.
    fn view_chain(&mut self) -> PResult<Vec<ViewRef>> {
        let mut out = vec![self.view_ref()?];
        while self.at(Tok::Dot) && self.nth(1).kind == Tok::Ident {
            self.bump();
            out.push(self.view_ref()?);
        }
        Ok(out)
    }

    fn view_ref(&mut self) -> PResult<ViewRef> {
        self.nested(|p| {
            let lo = p.tok().span;
            let name = p.expect_ident("a view")?;
            let mut nat_args = Vec::new();
            if p.at(Tok::ColonColon) && p.nth(1).kind == Tok::Lt {
                p.bump();
                p.bump();
                while !p.at(Tok::Gt) && !p.at(Tok::Ge) && !p.at(Tok::Eof) {
                    nat_args.push(p.nat()?);
                    if !p.eat(Tok::Comma) {
                        break;
                    }
                }
                p.expect_gt()?;
            }
            let mut view_args = Vec::new();
            if p.at(Tok::LParen) {
                let open = p.bump();
                while !p.at(Tok::RParen) && !p.at(Tok::Eof) {
                    view_args.push(p.view_chain()?);
                    if !p.eat(Tok::Comma) {
                        break;
                    }
                }
                p.expect_close(Tok::RParen, open)?;
            }
            Ok(ViewRef { name, nat_args, view_args, span: p.span_from(lo) })
        })
    }

    // --------------------------------------------------------------------------------------------
    // Blocks and statements

    pub(crate) fn block(&mut self) -> PResult<Block> {
        self.nested(|p| p.block_inner())
    }

    fn block_inner(&mut self) -> PResult<Block> {
        let lo = self.tok().span;
        let mut regions = Vec::new();
        if self.at(Tok::Lt) {
            self.bump();
            while self.at(Tok::Lifetime) {
                let t = self.bump();
                regions.push(self.ident_from(t));
                if !self.eat(Tok::Comma) {
                    break;
                }
            }
            self.expect_gt()?;
        }
        let open = self.expect(Tok::LBrace)?;
        let mut stmts = Vec::new();
        while !self.at(Tok::RBrace) && !self.at(Tok::Eof) {
            if self.eat(Tok::Semi) {
                continue;
            }
            let start = self.pos;
            match self.stmt() {
                Ok(Some(s)) => stmts.push(s),
                Ok(None) => {}
                Err(Fail) => {
                    if self.too_deep {
                        return Err(Fail);
                    }
                    if self.pos == start {
                        self.bump();
                    }
                    self.recover_stmt();
                }
            }
        }
        self.expect_close(Tok::RBrace, open)?;
        Ok(Block { regions, stmts, span: self.span_from(lo) })
    }

    /// "did you mean the keyword `sched`?" when the token `t` is a name that looks like one of
    /// `keywords`.
    fn keyword_hint(&self, t: Token, keywords: &[&str]) -> Option<String> {
        if t.kind != Tok::Ident {
            return None;
        }
        let kw = strata_diag::suggest(self.text_of(t), keywords.iter().copied())?;
        Some(format!("help: did you mean the keyword `{kw}`?"))
    }

    fn stmt(&mut self) -> PResult<Option<Stmt>> {
        let first = self.tok();
        if self.at(Tok::Let) {
            return self.let_stmt().map(|l| Some(Stmt::Let(l)));
        }
        if matches!(self.peek(), Tok::Fn | Tok::Const | Tok::View) {
            return Err(self.error_at(
                codes::UNEXPECTED_TOKEN,
                self.tok().span,
                "items cannot be declared inside a function body".into(),
                "move this to the top level".into(),
            ));
        }
        if self.at_block_like_start() {
            // As in Rust, `for … { }` at the start of a statement ends at its `}`: a following
            // `*p = 1;` or `-x;` is a new statement, not an operand.
            let expr = self.nested(|p| p.primary_expr())?;
            let semi = self.eat(Tok::Semi);
            return Ok(Some(Stmt::Expr { expr, semi }));
        }
        let expr = self.expr()?;
        if self.eat(Tok::Semi) {
            return Ok(Some(Stmt::Expr { expr, semi: true }));
        }
        if self.at(Tok::RBrace) || is_block_like(&expr) {
            return Ok(Some(Stmt::Expr { expr, semi: false }));
        }
        // Report the missing `;` but keep the statement: the next one may be fine.
        let t = self.tok();
        let found = if t.kind == Tok::Eof { "end of file".to_string() } else { format!("`{}`", self.text_of(t)) };
        let at = if self.pos > 0 { self.toks[self.pos - 1].span.end() } else { t.span };
        if self.last_error_at != Some(self.pos) {
            self.last_error_at = Some(self.pos);
            let mut d = Diagnostic::error(
                codes::UNEXPECTED_TOKEN,
                format!("expected `;`, found {found}"),
                at,
                "expected `;` here",
            )
            .with_label(t.span, "unexpected token");
            // `shced(X) thread in block {`, `lett x = 1;`: a misspelt keyword reads as a name.
            if let Some(hint) = self.keyword_hint(first, STMT_KEYWORDS) {
                d = d.with_label(first.span, "not a keyword").with_note(hint);
            }
            self.diags.push(d);
        }
        // On a new line the `;` was most likely just forgotten: go on with the next statement.
        // On the same line the statement is garbled: skip the rest of it.
        let same_line = self.src.get(at.hi as usize..t.span.lo as usize).is_some_and(|gap| !gap.contains('\n'));
        if same_line {
            self.recover_stmt();
        }
        Ok(Some(Stmt::Expr { expr, semi: true }))
    }

    fn at_block_like_start(&self) -> bool {
        match self.peek() {
            Tok::For | Tok::While | Tok::If | Tok::Sched | Tok::Split | Tok::LBrace => true,
            Tok::Unsafe => {
                self.nth(1).kind == Tok::LBrace || (self.nth(1).kind == Tok::Lt && self.nth(2).kind == Tok::Lifetime)
            }
            Tok::Lt => self.nth(1).kind == Tok::Lifetime,
            _ => false,
        }
    }

    fn let_stmt(&mut self) -> PResult<LetStmt> {
        let lo = self.expect(Tok::Let)?.span;
        // `let [e] x: T;` (or the paper's `let(e) x: T;`) declares x for a sub-resource.
        let exec = if self.at(Tok::LBracket) || self.at(Tok::LParen) {
            let open = self.bump();
            let close = if open.kind == Tok::LBracket { Tok::RBracket } else { Tok::RParen };
            let e = self.exec_expr()?;
            self.expect_close(close, open)?;
            Some(e)
        } else {
            None
        };
        let mutable = self.eat(Tok::Mut);
        let name = self.expect_ident("a variable name")?;
        let ty = if self.eat(Tok::Colon) { Some(self.ty()?) } else { None };
        let init = if self.eat(Tok::Eq) { Some(self.expr()?) } else { None };
        self.expect(Tok::Semi)?;
        Ok(LetStmt { exec, mutable, name, ty, init, span: self.span_from(lo) })
    }

    // --------------------------------------------------------------------------------------------
    // Expressions

    pub(crate) fn expr(&mut self) -> PResult<Expr> {
        self.nested(|p| p.assign_expr())
    }

    fn assign_expr(&mut self) -> PResult<Expr> {
        let lo = self.tok().span;
        let lhs = self.bin_expr(0)?;
        let op = match self.peek() {
            Tok::Eq => None,
            Tok::PlusEq => Some(BinOp::Add),
            Tok::MinusEq => Some(BinOp::Sub),
            Tok::StarEq => Some(BinOp::Mul),
            Tok::SlashEq => Some(BinOp::Div),
            Tok::PercentEq => Some(BinOp::Rem),
            _ => return Ok(lhs),
        };
        let op_tok = self.bump();
        if !is_place(&lhs) {
            self.error_at(
                codes::INVALID_ASSIGN_TARGET,
                if self.erase { op_tok.span } else { lhs.span },
                "invalid left-hand side of assignment".into(),
                "cannot assign to this expression".into(),
            );
        }
        let rhs = self.expr()?;
        let kind = match op {
            None => ExprKind::Assign(Box::new(lhs), Box::new(rhs)),
            Some(op) => ExprKind::CompoundAssign(op, Box::new(lhs), Box::new(rhs)),
        };
        Ok(Expr { kind, span: self.span_from(lo) })
    }

    /// The binary operator at the cursor and how many tokens it spans (`<<` is two `<`).
    fn bin_op(&self) -> Option<(BinOp, usize)> {
        Some(match self.peek() {
            Tok::PipePipe => (BinOp::Or, 1),
            Tok::AmpAmp => (BinOp::And, 1),
            Tok::EqEq => (BinOp::Eq, 1),
            Tok::Ne => (BinOp::Ne, 1),
            Tok::Le => (BinOp::Le, 1),
            Tok::Ge => (BinOp::Ge, 1),
            Tok::Lt if self.at_glued(Tok::Lt, 2) => (BinOp::Shl, 2),
            Tok::Gt if self.at_glued(Tok::Gt, 2) => (BinOp::Shr, 2),
            Tok::Lt => (BinOp::Lt, 1),
            Tok::Gt => (BinOp::Gt, 1),
            Tok::Pipe => (BinOp::BitOr, 1),
            Tok::Caret => (BinOp::BitXor, 1),
            Tok::Amp => (BinOp::BitAnd, 1),
            Tok::Plus => (BinOp::Add, 1),
            Tok::Minus => (BinOp::Sub, 1),
            Tok::Star => (BinOp::Mul, 1),
            Tok::Slash => (BinOp::Div, 1),
            Tok::Percent => (BinOp::Rem, 1),
            _ => return None,
        })
    }

    fn bin_expr(&mut self, min: u8) -> PResult<Expr> {
        let lo = self.tok().span;
        let mut lhs = self.cast_expr()?;
        let mut chain = 0;
        let result = loop {
            let Some((op, ntoks)) = self.bin_op() else {
                break Ok(lhs);
            };
            let prec = op.precedence();
            if prec <= min {
                break Ok(lhs);
            }
            for _ in 0..ntoks {
                self.bump();
            }
            let rhs = match self.nested(|p| p.bin_expr(prec)) {
                Ok(r) => r,
                Err(f) => break Err(f),
            };
            lhs = Expr { kind: ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)), span: self.span_from(lo) };
            if let Err(f) = self.enter() {
                self.depth -= 1;
                break Err(f);
            }
            chain += 1;
        };
        self.depth -= chain;
        result
    }

    fn cast_expr(&mut self) -> PResult<Expr> {
        let lo = self.tok().span;
        let mut e = self.unary_expr()?;
        let mut chain = 0;
        while self.eat(Tok::As) {
            let ty = match self.ty() {
                Ok(t) => t,
                Err(f) => {
                    self.depth -= chain;
                    return Err(f);
                }
            };
            e = Expr { kind: ExprKind::Cast(Box::new(e), ty), span: self.span_from(lo) };
            if let Err(f) = self.enter() {
                self.depth -= chain + 1;
                return Err(f);
            }
            chain += 1;
        }
        self.depth -= chain;
        Ok(e)
    }

    fn unary_expr(&mut self) -> PResult<Expr> {
        let lo = self.tok().span;
        let kind = match self.peek() {
            Tok::Minus => {
                self.bump();
                ExprKind::Unary(UnOp::Neg, Box::new(self.nested(|p| p.unary_expr())?))
            }
            Tok::Bang => {
                self.bump();
                ExprKind::Unary(UnOp::Not, Box::new(self.nested(|p| p.unary_expr())?))
            }
            Tok::Star => {
                self.bump();
                ExprKind::Deref(Box::new(self.nested(|p| p.unary_expr())?))
            }
            Tok::Amp => {
                self.bump();
                let prv = if self.at(Tok::Lifetime) {
                    let t = self.bump();
                    Some(Prv::Region(self.ident_from(t)))
                } else {
                    None
                };
                // The paper makes shared borrows the default: `&p` is `&shrd p`.
                let (own, short) = if self.at_word("uniq") {
                    self.bump();
                    (Ownership::Uniq, false)
                } else if self.at_word("shrd") {
                    self.bump();
                    (Ownership::Shrd, false)
                } else {
                    (Ownership::Shrd, true)
                };
                let place = self.nested(|p| p.unary_expr())?;
                ExprKind::Borrow { prv, own, short, place: Box::new(place) }
            }
            Tok::Unsafe if self.nth(1).kind != Tok::LBrace => {
                self.bump();
                ExprKind::Unsafe(Box::new(self.nested(|p| p.unary_expr())?))
            }
            _ => return self.postfix_expr(),
        };
        Ok(Expr { kind, span: self.span_from(lo) })
    }

    fn postfix_expr(&mut self) -> PResult<Expr> {
        let lo = self.tok().span;
        let mut e = self.primary_expr()?;
        let mut chain = 0;
        let result = loop {
            let step = self.postfix_step(e, lo);
            match step {
                Ok((next, true)) => {
                    e = next;
                    if let Err(f) = self.enter() {
                        self.depth -= 1;
                        break Err(f);
                    }
                    chain += 1;
                }
                Ok((next, false)) => break Ok(next),
                Err(f) => break Err(f),
            }
        };
        self.depth -= chain;
        result
    }

    /// Applies one postfix operation to `e`; the flag says whether one was applied.
    fn postfix_step(&mut self, e: Expr, lo: Span) -> PResult<(Expr, bool)> {
        let Expr { kind, span } = e;
        let e = match kind {
            ExprKind::Path(func) => match self.call_of_path(func)? {
                Ok(call) => return Ok((Expr { kind: call, span: self.span_from(lo) }, true)),
                Err(func) => Expr { kind: ExprKind::Path(func), span },
            },
            kind => Expr { kind, span },
        };
        let kind = match self.peek() {
            Tok::LBracket if self.at_glued(Tok::LBracket, 2) => {
                let open = self.bump();
                self.bump();
                let exec = self.exec_expr()?;
                if !self.at_glued(Tok::RBracket, 2) {
                    return Err(if self.at(Tok::Eof) {
                        self.expect_close(Tok::RBracket, open).err().unwrap_or(Fail)
                    } else {
                        self.unexpected("`]]`")
                    });
                }
                self.bump();
                self.bump();
                ExprKind::Select(Box::new(e), exec)
            }
            Tok::LBracket => {
                let open = self.bump();
                let idx = self.expr()?;
                self.expect_close(Tok::RBracket, open)?;
                ExprKind::Index(Box::new(e), Box::new(idx))
            }
            Tok::Dot => match self.nth(1).kind {
                Tok::Int => {
                    self.bump();
                    let t = self.bump();
                    let text = self.text_of(t);
                    let Ok(n) = text.parse::<u32>() else {
                        return Err(self.error_at(
                            codes::INVALID_LITERAL,
                            t.span,
                            format!("invalid tuple index `{text}`"),
                            "expected a small integer".into(),
                        ));
                    };
                    ExprKind::Field(Box::new(e), Field::Index(n))
                }
                Tok::Ident => {
                    self.bump();
                    match self.text() {
                        "fst" => {
                            self.bump();
                            ExprKind::Field(Box::new(e), Field::Fst)
                        }
                        "snd" => {
                            self.bump();
                            ExprKind::Field(Box::new(e), Field::Snd)
                        }
                        _ => ExprKind::View(Box::new(e), self.view_ref()?),
                    }
                }
                _ => {
                    self.bump();
                    return Err(self.unexpected("a field, a tuple index or a view"));
                }
            },
            _ => return Ok((e, false)),
        };
        Ok((Expr { kind, span: self.span_from(lo) }, true))
    }

    fn call_args(&mut self) -> PResult<Vec<Expr>> {
        let open = self.expect(Tok::LParen)?;
        let mut args = Vec::new();
        while !self.at(Tok::RParen) && !self.at(Tok::Eof) {
            args.push(self.expr()?);
            if !self.eat(Tok::Comma) {
                break;
            }
        }
        self.expect_close(Tok::RParen, open)?;
        Ok(args)
    }

    /// After a path and `::<`: generic arguments, then optionally `::<e>` (an execution resource)
    /// or `::<<<grid, block>>>` (a launch), then the arguments.
    /// A call of the function named by `func`, if one follows; otherwise `func` back.
    fn call_of_path(&mut self, func: Vec<Ident>) -> PResult<Result<ExprKind, Vec<Ident>>> {
        Ok(Ok(match self.peek() {
            Tok::LParen => {
                let args = self.call_args()?;
                ExprKind::Call { func, generics: Vec::new(), exec: None, launch: None, args }
            }
            Tok::ColonColon if self.nth(1).kind == Tok::Lt => self.call_with_generics(func)?,
            Tok::Lt if self.at_glued(Tok::Lt, 3) => {
                // The paper's error example writes launches without `::`: `f<<<X<1>, X<n>>>>(v)`.
                let launch = self.launch_config()?;
                let args = self.call_args()?;
                ExprKind::Call { func, generics: Vec::new(), exec: None, launch: Some(launch), args }
            }
            _ => return Ok(Err(func)),
        }))
    }

    fn call_with_generics(&mut self, func: Vec<Ident>) -> PResult<ExprKind> {
        let mut generics = Vec::new();
        let mut exec = None;
        let mut launch = None;
        self.bump(); // `::`
        if self.at_glued(Tok::Lt, 3) {
            launch = Some(self.launch_config()?);
        } else {
            self.bump(); // `<`
            while !self.at(Tok::Gt) && !self.at(Tok::Ge) && !self.at(Tok::Eof) {
                generics.push(self.generic_arg()?);
                if !self.eat(Tok::Comma) {
                    break;
                }
            }
            self.expect_gt()?;
            if self.at(Tok::ColonColon) && self.nth(1).kind == Tok::Lt {
                self.bump();
                if self.at_glued(Tok::Lt, 3) {
                    launch = Some(self.launch_config()?);
                } else {
                    self.bump();
                    exec = Some(self.exec_expr()?);
                    self.expect_gt()?;
                }
            }
        }
        let args = self.call_args()?;
        Ok(ExprKind::Call { func, generics, exec, launch, args })
    }

    /// `<<<grid-dim, block-dim, stream; shared types>>>` (stream and shared types optional).
    fn launch_config(&mut self) -> PResult<Launch> {
        for _ in 0..3 {
            self.expect(Tok::Lt)?;
        }
        let grid = self.dim()?;
        self.expect(Tok::Comma)?;
        let block = self.dim()?;
        let stream = if self.eat(Tok::Comma) { Some(self.expect_ident("a stream")?) } else { None };
        let mut shared = Vec::new();
        if self.eat(Tok::Semi) {
            while !self.at(Tok::Gt) && !self.at(Tok::Eof) {
                shared.push(self.ty()?);
                if !self.eat(Tok::Comma) {
                    break;
                }
            }
        }
        if self.at_glued(Tok::Gt, 3) {
            for _ in 0..3 {
                self.bump();
            }
        } else if self.at_glued(Tok::Gt, 2) && self.nth(2).kind == Tok::LParen {
            // The paper's §3.7 writes `X<32>>>(` with one `>` too few; accept that reading.
            self.bump();
            self.bump();
        } else {
            return Err(self.unexpected("`>>>`"));
        }
        Ok(Launch { grid, block, stream, shared })
    }

    /// At a `(` in a generic argument list: true if it starts a nat such as `(n + 1) * 2` rather
    /// than a type — a nat operator or an integer inside it (outside brackets), or a nat
    /// operator right after its `)`. Types contain neither.
    fn paren_starts_nat(&self) -> bool {
        let is_op = |k: Tok| matches!(k, Tok::Plus | Tok::Minus | Tok::Star | Tok::Slash | Tok::Percent | Tok::Caret);
        let (mut parens, mut brackets) = (0usize, 0usize);
        let mut i = 0;
        loop {
            let k = self.nth(i).kind;
            match k {
                Tok::LParen => parens += 1,
                Tok::RParen => {
                    parens = parens.saturating_sub(1);
                    if parens == 0 {
                        return is_op(self.nth(i + 1).kind);
                    }
                }
                Tok::LBracket => brackets += 1,
                Tok::RBracket => brackets = brackets.saturating_sub(1),
                // A function type (whose `-[…]->` would read as an operator) is a type.
                Tok::Fn => return false,
                Tok::Int if brackets == 0 => return true,
                _ if is_op(k) && brackets == 0 => return true,
                Tok::Eof | Tok::Semi | Tok::LBrace | Tok::RBrace => return false,
                _ => {}
            }
            i += 1;
        }
    }

    fn generic_arg(&mut self) -> PResult<GenericArg> {
        let t = self.tok();
        match t.kind {
            Tok::LParen if self.paren_starts_nat() => Ok(GenericArg::Nat(self.nat()?)),
            Tok::LBracket | Tok::LParen | Tok::Amp | Tok::Fn => Ok(GenericArg::Ty(self.ty()?)),
            Tok::Ident => {
                let text = self.text();
                if (text == "cpu" || text == "gpu") && self.nth(1).kind == Tok::Dot {
                    Ok(GenericArg::Mem(self.mem()?))
                } else if text == "_" || ScalarTy::from_name(text).is_some() || self.nth(1).kind == Tok::At {
                    Ok(GenericArg::Ty(self.ty()?))
                } else {
                    Ok(GenericArg::Nat(self.nat()?))
                }
            }
            _ => Ok(GenericArg::Nat(self.nat()?)),
        }
    }

    fn primary_expr(&mut self) -> PResult<Expr> {
        let lo = self.tok().span;
        let kind = match self.peek() {
            Tok::Int => {
                let t = self.bump();
                let (v, suffix) = self.int_value(t, true)?;
                ExprKind::Lit(Lit::Int(v, suffix))
            }
            Tok::Float => {
                let t = self.bump();
                let text = self.text_of(t);
                let end = float_digits_end(text);
                let (digits, suffix) = text.split_at(end);
                let digits = digits.to_string();
                let suffix = self.literal_suffix(t, suffix, true, true)?;
                ExprKind::Lit(Lit::Float(digits, suffix))
            }
            Tok::Str => {
                let t = self.bump();
                let raw = self.text_of(t);
                let inner = raw.strip_prefix('"').unwrap_or(raw);
                let inner =
                    inner.strip_suffix('"').filter(|_| inner.len() + 1 == raw.len() && raw.len() >= 2).unwrap_or(inner);
                ExprKind::Lit(Lit::Str(unescape(inner)))
            }
            Tok::True => {
                self.bump();
                ExprKind::Lit(Lit::Bool(true))
            }
            Tok::False => {
                self.bump();
                ExprKind::Lit(Lit::Bool(false))
            }
            Tok::Ident => {
                let t = self.bump();
                let mut segs = vec![self.ident_from(t)];
                while self.at(Tok::ColonColon) && self.nth(1).kind == Tok::Ident {
                    self.bump();
                    let s = self.bump();
                    segs.push(self.ident_from(s));
                }
                ExprKind::Path(segs)
            }
            Tok::LParen => {
                let open = self.bump();
                if self.at(Tok::RParen) {
                    self.bump();
                    ExprKind::Lit(Lit::Unit)
                } else {
                    let first = self.expr()?;
                    if self.eat(Tok::Comma) {
                        let mut elems = vec![first];
                        while !self.at(Tok::RParen) && !self.at(Tok::Eof) {
                            elems.push(self.expr()?);
                            if !self.eat(Tok::Comma) {
                                break;
                            }
                        }
                        self.expect_close(Tok::RParen, open)?;
                        ExprKind::Tuple(elems)
                    } else {
                        self.expect_close(Tok::RParen, open)?;
                        ExprKind::Paren(Box::new(first))
                    }
                }
            }
            Tok::LBracket => {
                let open = self.bump();
                if self.at(Tok::RBracket) {
                    self.bump();
                    ExprKind::ArrayList(Vec::new())
                } else {
                    let first = self.expr()?;
                    if self.eat(Tok::Semi) {
                        let n = self.nat()?;
                        self.expect_close(Tok::RBracket, open)?;
                        ExprKind::ArrayRepeat(Box::new(first), n)
                    } else {
                        let mut elems = vec![first];
                        while self.eat(Tok::Comma) && !self.at(Tok::RBracket) {
                            elems.push(self.expr()?);
                        }
                        self.expect_close(Tok::RBracket, open)?;
                        ExprKind::ArrayList(elems)
                    }
                }
            }
            Tok::LBrace => ExprKind::Block(self.block()?),
            Tok::Lt if self.nth(1).kind == Tok::Lifetime => ExprKind::Block(self.block()?),
            Tok::Unsafe => {
                self.bump();
                let b = self.block()?;
                let span = b.span;
                ExprKind::Unsafe(Box::new(Expr { kind: ExprKind::Block(b), span }))
            }
            Tok::If => return self.if_expr(),
            Tok::While => {
                self.bump();
                let cond = self.expr()?;
                let body = self.block()?;
                ExprKind::While { cond: Box::new(cond), body }
            }
            Tok::For => {
                self.bump();
                let var = self.expect_ident("a loop variable")?;
                self.expect(Tok::In)?;
                let start = self.nat()?;
                self.expect(Tok::DotDot)?;
                let end = self.nat()?;
                let body = self.block()?;
                ExprKind::For { var, start, end, body }
            }
            Tok::Sched => {
                self.bump();
                let open = self.expect(Tok::LParen)?;
                let mut dims = vec![self.dim_selector()?];
                while self.eat(Tok::Comma) {
                    dims.push(self.dim_selector()?);
                }
                self.expect_close(Tok::RParen, open)?;
                let var = self.expect_ident("a name for the scheduled resource")?;
                self.expect(Tok::In)?;
                let exec = self.exec_expr()?;
                let body = self.block()?;
                ExprKind::Sched { dims, var, exec, body }
            }
            Tok::Split => self.split_expr()?,
            Tok::Sync => {
                self.bump();
                if self.at(Tok::LParen) {
                    let open = self.bump();
                    let e = self.exec_expr()?;
                    self.expect_close(Tok::RParen, open)?;
                    ExprKind::Sync(Some(e))
                } else {
                    ExprKind::Sync(None)
                }
            }
            Tok::Break => {
                self.bump();
                ExprKind::Break
            }
            Tok::Continue => {
                self.bump();
                ExprKind::Continue
            }
            Tok::Return => {
                self.bump();
                // Nothing to return before a token that cannot start an expression: `f(return)`.
                if matches!(self.peek(), Tok::Semi | Tok::RBrace | Tok::RParen | Tok::RBracket | Tok::Comma) {
                    ExprKind::Return(None)
                } else {
                    ExprKind::Return(Some(Box::new(self.expr()?)))
                }
            }
            _ => return Err(self.unexpected("an expression")),
        };
        Ok(Expr { kind, span: self.span_from(lo) })
    }

    fn if_expr(&mut self) -> PResult<Expr> {
        let lo = self.expect(Tok::If)?.span;
        let cond = self.expr()?;
        let then = self.block()?;
        let els = if self.eat(Tok::Else) {
            if self.at(Tok::If) {
                Some(Box::new(self.nested(|p| p.if_expr())?))
            } else {
                let b = self.block()?;
                let span = b.span;
                Some(Box::new(Expr { kind: ExprKind::Block(b), span }))
            }
        } else {
            None
        };
        Ok(Expr { kind: ExprKind::If { cond: Box::new(cond), then, els }, span: self.span_from(lo) })
    }

    /// `split(X) block.threads at 32 { fst => e, snd => e }`
    fn split_expr(&mut self) -> PResult<ExprKind> {
        self.bump();
        let open = self.expect(Tok::LParen)?;
        let dim = self.dim_selector()?;
        self.expect_close(Tok::RParen, open)?;
        let exec = self.exec_expr()?;
        self.expect_word("at")?;
        let at = self.nat()?;
        let brace = self.expect(Tok::LBrace)?;
        let first = self.split_arm()?;
        self.eat(Tok::Comma);
        let second = self.split_arm()?;
        self.eat(Tok::Comma);
        self.expect_close(Tok::RBrace, brace)?;
        Ok(ExprKind::Split { dim, exec, at, arms: Box::new([first, second]) })
    }

    fn split_arm(&mut self) -> PResult<SplitArm> {
        let name = self.expect_ident("a name for one part of the split")?;
        self.expect(Tok::FatArrow)?;
        let body = self.expr()?;
        Ok(SplitArm { name, body })
    }
}

/// Where the stack is now: the address of a local variable.
#[inline(always)]
fn stack_position() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker) as *const u8 as usize
}

/// Expressions that end in a block need no `;` to be followed by another statement.
fn is_block_like(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Block(_)
        | ExprKind::For { .. }
        | ExprKind::While { .. }
        | ExprKind::If { .. }
        | ExprKind::Sched { .. }
        | ExprKind::Split { .. } => true,
        ExprKind::Unsafe(inner) => matches!(inner.kind, ExprKind::Block(_)),
        _ => false,
    }
}

/// Place expressions (Fig. 2) may be assigned to.
pub fn is_place(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Path(segs) => segs.len() == 1,
        ExprKind::Field(p, _)
        | ExprKind::Index(p, _)
        | ExprKind::Select(p, _)
        | ExprKind::View(p, _)
        | ExprKind::Paren(p) => is_place(p),
        ExprKind::Deref(_) => true,
        _ => false,
    }
}

fn float_digits_end(text: &str) -> usize {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let exp_sign = (c == b'+' || c == b'-') && i > 0 && matches!(bytes[i - 1], b'e' | b'E');
        let exp = (c == b'e' || c == b'E')
            && bytes.get(i + 1).is_some_and(|n| n.is_ascii_digit() || *n == b'+' || *n == b'-');
        if c.is_ascii_digit() || c == b'.' || c == b'_' || exp || exp_sign {
            i += 1;
        } else {
            break;
        }
    }
    i
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('0') => out.push('\0'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}
