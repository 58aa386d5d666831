//! The lexer: source text to tokens, with comments kept aside for the formatter.
//!
//! `<`, `>`, `[` and `]` are always single-character tokens: whether `<<<`, `>>`, `[[` or `]]`
//! mean a launch, a shift, a selection or two nested brackets is decided by the parser, which
//! sees whether the tokens touch (see [`Token::touches`]).

use strata_diag::{codes, Diagnostic, FileId, Span};

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Tok {
    Ident,
    /// `'a`
    Lifetime,
    Int,
    Float,
    Str,
    // keywords
    Fn,
    Let,
    Mut,
    If,
    Else,
    For,
    In,
    While,
    Break,
    Continue,
    Return,
    True,
    False,
    As,
    Where,
    Const,
    View,
    Unsafe,
    Sched,
    Split,
    Sync,
    // punctuation
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Lt,
    Gt,
    Le,
    Ge,
    EqEq,
    Ne,
    Comma,
    Semi,
    Colon,
    ColonColon,
    Dot,
    DotDot,
    Arrow,
    FatArrow,
    Eq,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Caret,
    Amp,
    AmpAmp,
    Pipe,
    PipePipe,
    Bang,
    At,
    PlusEq,
    MinusEq,
    StarEq,
    SlashEq,
    PercentEq,
    Eof,
}

impl Tok {
    /// How the token is written, for "expected `…`" messages.
    pub fn describe(self) -> &'static str {
        use Tok::*;
        match self {
            Ident => "identifier",
            Lifetime => "lifetime",
            Int => "integer literal",
            Float => "float literal",
            Str => "string literal",
            Fn => "`fn`",
            Let => "`let`",
            Mut => "`mut`",
            If => "`if`",
            Else => "`else`",
            For => "`for`",
            In => "`in`",
            While => "`while`",
            Break => "`break`",
            Continue => "`continue`",
            Return => "`return`",
            True => "`true`",
            False => "`false`",
            As => "`as`",
            Where => "`where`",
            Const => "`const`",
            View => "`view`",
            Unsafe => "`unsafe`",
            Sched => "`sched`",
            Split => "`split`",
            Sync => "`sync`",
            LParen => "`(`",
            RParen => "`)`",
            LBracket => "`[`",
            RBracket => "`]`",
            LBrace => "`{`",
            RBrace => "`}`",
            Lt => "`<`",
            Gt => "`>`",
            Le => "`<=`",
            Ge => "`>=`",
            EqEq => "`==`",
            Ne => "`!=`",
            Comma => "`,`",
            Semi => "`;`",
            Colon => "`:`",
            ColonColon => "`::`",
            Dot => "`.`",
            DotDot => "`..`",
            Arrow => "`->`",
            FatArrow => "`=>`",
            Eq => "`=`",
            Plus => "`+`",
            Minus => "`-`",
            Star => "`*`",
            Slash => "`/`",
            Percent => "`%`",
            Caret => "`^`",
            Amp => "`&`",
            AmpAmp => "`&&`",
            Pipe => "`|`",
            PipePipe => "`||`",
            Bang => "`!`",
            At => "`@`",
            PlusEq => "`+=`",
            MinusEq => "`-=`",
            StarEq => "`*=`",
            SlashEq => "`/=`",
            PercentEq => "`%=`",
            Eof => "end of file",
        }
    }
}

fn keyword(text: &str) -> Option<Tok> {
    Some(match text {
        "fn" => Tok::Fn,
        "let" => Tok::Let,
        "mut" => Tok::Mut,
        "if" => Tok::If,
        "else" => Tok::Else,
        "for" => Tok::For,
        "in" => Tok::In,
        "while" => Tok::While,
        "break" => Tok::Break,
        "continue" => Tok::Continue,
        "return" => Tok::Return,
        "true" => Tok::True,
        "false" => Tok::False,
        "as" => Tok::As,
        "where" => Tok::Where,
        "const" => Tok::Const,
        "view" => Tok::View,
        "unsafe" => Tok::Unsafe,
        "sched" => Tok::Sched,
        // `indep` is the public Descend prototype's spelling of `split`.
        "split" | "indep" => Tok::Split,
        "sync" => Tok::Sync,
        _ => return None,
    })
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Token {
    pub kind: Tok,
    pub span: Span,
}

impl Token {
    /// True if `next` starts exactly where `self` ends (no space or comment between them).
    pub fn touches(&self, next: &Token) -> bool {
        self.span.hi == next.span.lo
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CommentKind {
    Line,
    Block,
}

/// A comment, kept so the formatter can put it back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Comment {
    pub kind: CommentKind,
    pub span: Span,
    pub text: String,
}

pub struct Lexed {
    pub tokens: Vec<Token>,
    pub comments: Vec<Comment>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Splits `src` into tokens. Always ends with one [`Tok::Eof`] token; never fails.
pub fn lex(file: FileId, src: &str) -> Lexed {
    let mut lx = Lexer {
        src: src.as_bytes(),
        text: src,
        pos: 0,
        file,
        out: Vec::new(),
        comments: Vec::new(),
        diags: Vec::new(),
    };
    lx.run();
    let end = src.len() as u32;
    lx.out.push(Token { kind: Tok::Eof, span: Span::new(file, end, end) });
    Lexed { tokens: lx.out, comments: lx.comments, diagnostics: lx.diags }
}

struct Lexer<'a> {
    src: &'a [u8],
    text: &'a str,
    pos: usize,
    file: FileId,
    out: Vec<Token>,
    comments: Vec<Comment>,
    diags: Vec<Diagnostic>,
}

impl Lexer<'_> {
    fn peek(&self, ahead: usize) -> u8 {
        self.src.get(self.pos + ahead).copied().unwrap_or(0)
    }

    fn span(&self, lo: usize, hi: usize) -> Span {
        Span::new(self.file, lo as u32, hi as u32)
    }

    fn push(&mut self, kind: Tok, lo: usize) {
        let span = self.span(lo, self.pos);
        self.out.push(Token { kind, span });
    }

    fn run(&mut self) {
        // A UTF-8 byte-order mark at the start is not part of the program.
        if self.text.starts_with('\u{feff}') {
            self.pos = '\u{feff}'.len_utf8();
        }
        while self.pos < self.src.len() {
            let c = self.peek(0);
            let lo = self.pos;
            match c {
                b' ' | b'\t' | b'\n' | b'\r' => self.pos += 1,
                b'/' if self.peek(1) == b'/' => {
                    while self.pos < self.src.len() && self.peek(0) != b'\n' {
                        self.pos += 1;
                    }
                    self.comment(CommentKind::Line, lo);
                }
                b'/' if self.peek(1) == b'*' => self.block_comment(lo),
                b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                    self.eat_ident_chars();
                    let kind = keyword(&self.text[lo..self.pos]).unwrap_or(Tok::Ident);
                    self.push(kind, lo);
                }
                b'0'..=b'9' => self.number(lo),
                b'\'' if is_ident_start(self.peek(1)) => {
                    self.pos += 1;
                    self.eat_ident_chars();
                    self.push(Tok::Lifetime, lo);
                }
                b'"' => self.string(lo),
                _ => self.punct(lo),
            }
        }
    }

    fn eat_ident_chars(&mut self) {
        while is_ident_continue(self.peek(0)) {
            self.pos += 1;
        }
    }

    fn comment(&mut self, kind: CommentKind, lo: usize) {
        let text = self.text[lo..self.pos].to_string();
        self.comments.push(Comment { kind, span: self.span(lo, self.pos), text });
    }

    fn block_comment(&mut self, lo: usize) {
        // Block comments nest, as in Rust.
        self.pos += 2;
        let mut depth = 1usize;
        while self.pos < self.src.len() {
            if self.peek(0) == b'/' && self.peek(1) == b'*' {
                depth += 1;
                self.pos += 2;
            } else if self.peek(0) == b'*' && self.peek(1) == b'/' {
                depth -= 1;
                self.pos += 2;
                if depth == 0 {
                    self.comment(CommentKind::Block, lo);
                    return;
                }
            } else {
                self.pos += 1;
            }
        }
        self.diags.push(Diagnostic::error(
            codes::UNTERMINATED_COMMENT,
            "unterminated block comment",
            self.span(lo, lo + 2),
            "comment starts here and is never closed",
        ));
    }

    fn string(&mut self, lo: usize) {
        self.pos += 1;
        while self.pos < self.src.len() {
            match self.peek(0) {
                b'\\' => self.pos += 2,
                b'"' => {
                    self.pos += 1;
                    self.push(Tok::Str, lo);
                    return;
                }
                _ => self.pos += 1,
            }
        }
        self.pos = self.src.len();
        // Keep the token so the parser does not also report a missing expression.
        self.push(Tok::Str, lo);
        self.diags.push(Diagnostic::error(
            codes::UNTERMINATED_STRING,
            "unterminated string literal",
            self.span(lo, lo + 1),
            "string starts here and is never closed",
        ));
    }

    fn number(&mut self, lo: usize) {
        let after_dot = self.out.last().is_some_and(|t| t.kind == Tok::Dot);
        let mut float = false;
        self.eat_digits();
        // `1.5` is a float, `1..5` a range, and after a `.` (`t.0.1`) digits are a field index.
        if !after_dot && self.peek(0) == b'.' && self.peek(1).is_ascii_digit() {
            float = true;
            self.pos += 1;
            self.eat_digits();
        }
        if !after_dot && matches!(self.peek(0), b'e' | b'E') {
            let sign = usize::from(matches!(self.peek(1), b'+' | b'-'));
            if self.peek(1 + sign).is_ascii_digit() {
                float = true;
                self.pos += 1 + sign;
                self.eat_digits();
            }
        }
        // A suffix such as `u32` or `f32` belongs to the literal; the parser validates it.
        if is_ident_start(self.peek(0)) {
            self.eat_ident_chars();
        }
        self.push(if float { Tok::Float } else { Tok::Int }, lo);
    }

    fn eat_digits(&mut self) {
        while self.peek(0).is_ascii_digit() || self.peek(0) == b'_' {
            self.pos += 1;
        }
    }

    fn punct(&mut self, lo: usize) {
        use Tok::*;
        let two = [self.peek(0), self.peek(1)];
        let (kind, len) = match &two {
            b"::" => (ColonColon, 2),
            b".." => (DotDot, 2),
            b"->" => (Arrow, 2),
            b"=>" => (FatArrow, 2),
            b"==" => (EqEq, 2),
            b"!=" => (Ne, 2),
            b"<=" => (Le, 2),
            b">=" => (Ge, 2),
            b"&&" => (AmpAmp, 2),
            b"||" => (PipePipe, 2),
            b"+=" => (PlusEq, 2),
            b"-=" => (MinusEq, 2),
            b"*=" => (StarEq, 2),
            b"/=" => (SlashEq, 2),
            b"%=" => (PercentEq, 2),
            _ => {
                let kind = match two[0] {
                    b'(' => LParen,
                    b')' => RParen,
                    b'[' => LBracket,
                    b']' => RBracket,
                    b'{' => LBrace,
                    b'}' => RBrace,
                    b'<' => Lt,
                    b'>' => Gt,
                    b',' => Comma,
                    b';' => Semi,
                    b':' => Colon,
                    b'.' => Dot,
                    b'=' => Eq,
                    b'+' => Plus,
                    b'-' => Minus,
                    b'*' => Star,
                    b'/' => Slash,
                    b'%' => Percent,
                    b'^' => Caret,
                    b'&' => Amp,
                    b'|' => Pipe,
                    b'!' => Bang,
                    b'@' => At,
                    _ => {
                        self.unknown_char(lo);
                        return;
                    }
                };
                (kind, 1)
            }
        };
        self.pos += len;
        self.push(kind, lo);
    }

    fn unknown_char(&mut self, lo: usize) {
        // Skip one whole UTF-8 character so the span never splits a code point.
        let ch = self.text[lo..].chars().next().unwrap_or('\u{fffd}');
        self.pos += ch.len_utf8().max(1);
        self.diags.push(Diagnostic::error(
            codes::UNKNOWN_CHARACTER,
            format!("unknown character `{}`", ch.escape_debug()),
            self.span(lo, self.pos),
            "not part of Strata's syntax",
        ));
    }
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

fn is_ident_continue(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<Tok> {
        lex(FileId(0), src).tokens.iter().map(|t| t.kind).collect()
    }

    #[test]
    fn ranges_floats_and_fields() {
        use Tok::*;
        assert_eq!(kinds("0..4"), vec![Int, DotDot, Int, Eof]);
        assert_eq!(kinds("1.5f32"), vec![Float, Eof]);
        assert_eq!(kinds("t.0.1"), vec![Ident, Dot, Int, Dot, Int, Eof]);
        assert_eq!(kinds("1e-3"), vec![Float, Eof]);
    }

    #[test]
    fn angle_brackets_stay_single() {
        use Tok::*;
        assert_eq!(kinds("<<<X<32>>>>"), vec![Lt, Lt, Lt, Ident, Lt, Int, Gt, Gt, Gt, Gt, Eof]);
        assert_eq!(kinds("[[f64;2]]"), vec![LBracket, LBracket, Ident, Semi, Int, RBracket, RBracket, Eof]);
    }

    #[test]
    fn comments_are_kept_and_nest() {
        let lexed = lex(FileId(0), "a /* x /* y */ z */ b // end");
        assert_eq!(lexed.comments.len(), 2);
        assert_eq!(lexed.tokens.len(), 3);
        assert!(lexed.diagnostics.is_empty());
    }

    #[test]
    fn errors_do_not_stop_lexing() {
        let lexed = lex(FileId(0), "a § b \"open");
        assert_eq!(lexed.diagnostics.len(), 2);
        assert_eq!(lexed.diagnostics[0].code, codes::UNKNOWN_CHARACTER);
        assert_eq!(lexed.diagnostics[1].code, codes::UNTERMINATED_STRING);
    }
}
