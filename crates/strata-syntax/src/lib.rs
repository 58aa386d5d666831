//! The Strata front end: lexing, parsing with error recovery, and the canonical formatter.
//!
//! ```
//! let parsed = strata_syntax::parse(strata_diag::FileId(0), "fn main() -[t: cpu.thread]-> () {}");
//! assert!(parsed.diagnostics.is_empty());
//! assert_eq!(parsed.module.items.len(), 1);
//! ```

pub mod ast;
pub mod lexer;
mod parser;

pub use lexer::{Comment, CommentKind};
pub use parser::{is_place, MAX_DEPTH};
use strata_diag::{Diagnostic, FileId};

/// The result of parsing one file: the tree (with error placeholders where it recovered), every
/// syntax diagnostic in source order, and the comments for the formatter.
pub struct Parsed {
    pub module: ast::Module,
    pub diagnostics: Vec<Diagnostic>,
    pub comments: Vec<Comment>,
}

/// Parses a whole file. Never panics; errors are in [`Parsed::diagnostics`].
pub fn parse(file: FileId, src: &str) -> Parsed {
    parse_impl(file, src, false)
}

/// Parses with every span replaced by [`ast::Span::DUMMY`], so trees compare structurally.
pub fn parse_erased(src: &str) -> Parsed {
    parse_impl(FileId(0), src, true)
}

fn parse_impl(file: FileId, src: &str, erase: bool) -> Parsed {
    let lexed = lexer::lex(file, src);
    let mut p = parser::Parser::new(src, lexed.tokens, file, erase);
    let module = p.module();
    let mut diagnostics = lexed.diagnostics;
    diagnostics.extend(p.diags);
    diagnostics.sort_by_key(|d| (d.primary.span.lo, d.primary.span.hi));
    Parsed {
        module,
        diagnostics,
        comments: lexed.comments,
    }
}
