use crate::{Diagnostic, FileId, Severity};
use codespan_reporting::diagnostic as cs;
use codespan_reporting::files::SimpleFiles;
use codespan_reporting::term::{self, termcolor};

/// The source texts diagnostics point into, indexed by [`FileId`].
pub struct SourceMap {
    files: SimpleFiles<String, String>,
}

impl Default for SourceMap {
    fn default() -> Self {
        SourceMap { files: SimpleFiles::new() }
    }
}

impl SourceMap {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a file and returns its id. Ids are handed out densely from 0.
    pub fn add(&mut self, name: impl Into<String>, source: impl Into<String>) -> FileId {
        FileId(self.files.add(name.into(), source.into()) as u32)
    }

    pub fn source(&self, file: FileId) -> &str {
        self.files.get(file.0 as usize).map(|f| f.source().as_str()).unwrap_or("")
    }

    pub fn name(&self, file: FileId) -> &str {
        self.files.get(file.0 as usize).map(|f| f.name().as_str()).unwrap_or("<unknown>")
    }

    /// 1-based line number of byte offset `pos` in `file`.
    pub fn line_of(&self, file: FileId, pos: u32) -> usize {
        let src = self.source(file);
        let end = (pos as usize).min(src.len());
        src.as_bytes()[..end].iter().filter(|&&b| b == b'\n').count() + 1
    }
}

fn to_codespan(d: &Diagnostic, sources: &SourceMap) -> cs::Diagnostic<usize> {
    let sev = match d.severity {
        Severity::Error => cs::Severity::Error,
        Severity::Warning => cs::Severity::Warning,
        Severity::Note => cs::Severity::Note,
    };
    // Clamp spans so a stale span can never make the renderer fail.
    let clamp = |span: crate::Span| {
        let len = sources.source(span.file).len();
        let lo = (span.lo as usize).min(len);
        let hi = (span.hi as usize).clamp(lo, len);
        (span.file.0 as usize, lo..hi)
    };
    let (f, r) = clamp(d.primary.span);
    let mut labels = vec![cs::Label::primary(f, r).with_message(&d.primary.message)];
    for l in &d.secondary {
        let (f, r) = clamp(l.span);
        labels.push(cs::Label::secondary(f, r).with_message(&l.message));
    }
    cs::Diagnostic::new(sev)
        .with_code(d.code.as_str())
        .with_message(&d.message)
        .with_labels(labels)
        .with_notes(d.notes.clone())
}

fn render_to(diags: &[Diagnostic], sources: &SourceMap, out: &mut dyn termcolor::WriteColor) {
    let config = term::Config::default();
    for d in diags {
        // Rendering into memory or stderr cannot meaningfully fail; if it does, fall back to one line.
        if term::emit(out, &config, &sources.files, &to_codespan(d, sources)).is_err() {
            let _ = writeln!(out, "{}[{}]: {}", severity_word(d.severity), d.code.as_str(), d.message);
        }
    }
}

fn severity_word(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "note",
    }
}

/// Renders diagnostics rustc-style to stderr, in colour when stderr is a terminal.
pub fn render(diags: &[Diagnostic], sources: &SourceMap) {
    use std::io::IsTerminal;
    let choice = if std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none() {
        termcolor::ColorChoice::Auto
    } else {
        termcolor::ColorChoice::Never
    };
    let mut stderr = termcolor::StandardStream::stderr(choice);
    render_to(diags, sources, &mut stderr);
}

/// Renders diagnostics without colour into a string (snapshots, tests).
pub fn render_plain(diags: &[Diagnostic], sources: &SourceMap) -> String {
    let mut buf = termcolor::NoColor::new(Vec::new());
    render_to(diags, sources, &mut buf);
    String::from_utf8_lossy(&buf.into_inner()).into_owned()
}
