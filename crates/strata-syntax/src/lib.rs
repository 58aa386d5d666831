//! The Strata front end: lexing, parsing with error recovery, and the canonical formatter.
//!
//! ```
//! let parsed = strata_syntax::parse(strata_diag::FileId(0), "fn main() -[t: cpu.thread]-> () {}");
//! assert!(parsed.diagnostics.is_empty());
//! assert_eq!(parsed.module.items.len(), 1);
//! ```

pub mod ast;
mod doc;
pub mod format;
pub mod lexer;
mod parser;

pub use format::{format_module, format_module_with_width, format_source};
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

/// Stack the parser may use on the caller's thread: little enough for any thread to have room.
const CALLER_STACK_BUDGET: usize = 512 << 10;

/// Stack for the parser thread. The parser recurses at most [`MAX_DEPTH`] levels, but one level
/// of an expression takes up to ~46 KiB of stack in an unoptimised build (~10 KiB optimised), so
/// the 2 MiB of a test or worker thread is not enough; 64 MiB leaves a wide margin.
const PARSER_STACK: usize = 64 << 20;

fn parse_impl(file: FileId, src: &str, erase: bool) -> Parsed {
    // Parse on the caller's thread within a small stack budget: every input but a deeply nested
    // one fits, and a thread costs more than parsing a small file.
    if let Some(parsed) = parse_here(file, src, erase, Some(CALLER_STACK_BUDGET)) {
        return parsed;
    }
    // Deeply nested: parse again on a thread whose stack holds MAX_DEPTH levels in any build.
    let parsed = std::thread::scope(|s| {
        let worker = std::thread::Builder::new()
            .name("strata-parse".into())
            .stack_size(PARSER_STACK)
            .spawn_scoped(s, || parse_here(file, src, erase, None));
        match worker {
            Ok(handle) => handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            // No thread to be had: parse here, which is fine unless the input nests very deeply.
            Err(_) => parse_here(file, src, erase, None),
        }
    });
    // Without a stack budget the parser always finishes; should it not, the input is reported
    // as too deeply nested rather than taking the compiler down.
    parsed.unwrap_or_else(|| too_deep(file, src))
}

/// An empty module with E0012 at the start of the file.
fn too_deep(file: FileId, src: &str) -> Parsed {
    let span = strata_diag::Span::new(file, 0, 0);
    let d = Diagnostic::error(
        strata_diag::codes::NESTING_TOO_DEEP,
        "nesting too deep",
        span,
        "the parser ran out of stack",
    )
    .with_note("split deeply nested expressions into several `let` statements");
    let whole = strata_diag::Span::new(file, 0, src.len() as u32);
    Parsed { module: ast::Module { items: Vec::new(), span: whole }, diagnostics: vec![d], comments: Vec::new() }
}

/// Lexes and parses on this thread; `None` if `stack_budget` ran out.
fn parse_here(file: FileId, src: &str, erase: bool, stack_budget: Option<usize>) -> Option<Parsed> {
    let lexed = lexer::lex(file, src);
    let mut p = parser::Parser::new(src, lexed.tokens, file, erase);
    if let Some(budget) = stack_budget {
        p.limit_stack(budget);
    }
    let module = p.module();
    if p.out_of_stack {
        return None;
    }
    let mut diagnostics = lexed.diagnostics;
    // An unterminated string or comment swallows the rest of the file; what the parser then
    // misses at the end of the file is a consequence, not a second error.
    let runs_to_end = diagnostics.iter().any(|d| {
        d.code == strata_diag::codes::UNTERMINATED_STRING || d.code == strata_diag::codes::UNTERMINATED_COMMENT
    });
    let end = src.len() as u32;
    diagnostics.extend(p.diags.into_iter().filter(|d| !(runs_to_end && d.primary.span.lo >= end)));
    diagnostics.sort_by_key(|d| (d.primary.span.lo, d.primary.span.hi));
    Some(Parsed { module, diagnostics, comments: lexed.comments })
}
