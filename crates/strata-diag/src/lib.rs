//! Diagnostics for every phase of Strata.
//!
//! A phase reports problems as [`Diagnostic`] values (data with spans, never strings printed on the
//! spot); the driver renders them all in one place with [`render`]. Every error carries a stable
//! [`Code`] from the registry in [`codes`], whose long explanation `strata explain` prints.

pub mod codes;
mod render;
mod span;
mod suggest;

pub use codes::{Code, CodeInfo};
pub use render::{render, render_plain, shorten, SourceMap, MAX_LINE_COLUMNS};
pub use span::{FileId, Span};
pub use suggest::{edit_distance, suggest};

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

/// How many errors a command shows by default (`--error-limit`); the rest are counted.
pub const DEFAULT_ERROR_LIMIT: usize = 50;

/// What [`limit_errors`] left out.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Omitted {
    pub errors: usize,
    pub warnings: usize,
    /// Errors in all, shown or not.
    pub total_errors: usize,
}

impl Omitted {
    /// The line that closes a truncated report, e.g. "… and 70 more errors (120 errors in
    /// total; `--error-limit 0` shows them all)"; `None` when nothing was left out.
    pub fn summary(&self) -> Option<String> {
        if self.errors == 0 && self.warnings == 0 {
            return None;
        }
        let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
        let mut what = Vec::new();
        if self.errors > 0 {
            what.push(plural(self.errors, "more error"));
        }
        if self.warnings > 0 {
            what.push(plural(self.warnings, "more warning"));
        }
        Some(format!(
            "… and {} ({} in total; `--error-limit 0` shows them all)",
            what.join(" and "),
            plural(self.total_errors, "error")
        ))
    }
}

/// The diagnostics to show when at most `limit` errors are shown (`0`: no limit): every
/// diagnostic up to the `limit`-th error, and what that leaves out.
pub fn limit_errors(diags: &[Diagnostic], limit: usize) -> (&[Diagnostic], Omitted) {
    let total_errors = diags.iter().filter(|d| d.is_error()).count();
    if limit == 0 || total_errors <= limit {
        return (diags, Omitted { total_errors, ..Omitted::default() });
    }
    let mut seen = 0;
    let cut = diags
        .iter()
        .position(|d| {
            seen += usize::from(d.is_error());
            seen == limit
        })
        .map_or(diags.len(), |i| i + 1);
    let rest = &diags[cut..];
    let errors = rest.iter().filter(|d| d.is_error()).count();
    (&diags[..cut], Omitted { errors, warnings: rest.len() - errors, total_errors })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diag(warning: bool) -> Diagnostic {
        let d = Diagnostic::error(codes::UNKNOWN_NAME, "m", Span::DUMMY, "l");
        if warning {
            Diagnostic { severity: Severity::Warning, ..d }
        } else {
            d
        }
    }

    #[test]
    fn limit_keeps_the_first_errors_and_counts_the_rest() {
        let diags: Vec<Diagnostic> = (0..10).map(|i| diag(i % 3 == 2)).collect(); // 7 errors, 3 warnings
        let (shown, omitted) = limit_errors(&diags, 4);
        assert_eq!(shown.len(), 5); // e e w e e
        assert_eq!(omitted, Omitted { errors: 3, warnings: 2, total_errors: 7 });
        assert_eq!(
            omitted.summary().unwrap(),
            "… and 3 more errors and 2 more warnings (7 errors in total; `--error-limit 0` shows them all)"
        );
        let (shown, omitted) = limit_errors(&diags, 0);
        assert_eq!((shown.len(), omitted.summary()), (10, None));
        let (shown, omitted) = limit_errors(&diags, 7);
        assert_eq!((shown.len(), omitted.summary()), (10, None));
    }
}
