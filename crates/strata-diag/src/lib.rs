//! Diagnostics for every phase of Strata.
//!
//! A phase reports problems as [`Diagnostic`] values (data with spans, never strings printed on the
//! spot); the driver renders them all in one place with [`render`]. Every error carries a stable
//! [`Code`] from the registry in [`codes`], whose long explanation `strata explain` prints.

pub mod codes;
mod render;
mod span;

pub use codes::{Code, CodeInfo};
pub use render::{render, render_plain, SourceMap};
pub use span::{FileId, Span};

/// How bad a diagnostic is. Only errors make a program fail.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Error,
    Warning,
    Note,
}

/// A message attached to a span of source text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    pub span: Span,
    pub message: String,
}

impl Label {
    pub fn new(span: Span, message: impl Into<String>) -> Self {
        Label { span, message: message.into() }
    }
}

/// One problem found in a program: a code, a headline, a primary span and optional extra context.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub code: Code,
    pub message: String,
    pub primary: Label,
    pub secondary: Vec<Label>,
    pub notes: Vec<String>,
}

impl Diagnostic {
    /// An error with `code`, headline `message` and the primary span `span` labelled `label`.
    pub fn error(code: Code, message: impl Into<String>, span: Span, label: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            code,
            message: message.into(),
            primary: Label::new(span, label),
            secondary: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// The same as [`Diagnostic::error`] with warning severity.
    pub fn warning(code: Code, message: impl Into<String>, span: Span, label: impl Into<String>) -> Self {
        Diagnostic { severity: Severity::Warning, ..Diagnostic::error(code, message, span, label) }
    }

    /// Adds a secondary label, e.g. "`block` is split here".
    pub fn with_label(mut self, span: Span, message: impl Into<String>) -> Self {
        self.secondary.push(Label::new(span, message));
        self
    }

    /// Adds a note printed below the snippet.
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// True if any diagnostic in `diags` is an error.
pub fn has_errors(diags: &[Diagnostic]) -> bool {
    diags.iter().any(Diagnostic::is_error)
}
