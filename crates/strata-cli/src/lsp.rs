//! `strata lsp`: a language server over stdin and stdout (docs/editor.md), on rust-analyzer's
//! `lsp-server` (the JSON-RPC transport) and `lsp-types` (the protocol's messages).
//!
//! Every document is analysed by a [`Pipeline`], as `strata check` checks a file: the
//! diagnostics published on each open and change are those `check` prints (the same spans,
//! codes, messages; the labels and notes as related information). Hover answers from what the
//! checker recorded ([`strata_check::query`]): the type of a variable or expression, the
//! execution resource evaluating it, its uniformity on the GPU and the memory space it is read
//! from. Go to definition finds variables (from the checker), functions, views and constants
//! (from the module). Formatting is `strata fmt`'s formatter.
//!
//! No input stops the server: a document with errors gets diagnostics, and a handler that
//! panicked (a bug) answers with an error, leaving the server running. The exit status is 0
//! after `shutdown` and `exit`, 1 when the client went away without them.

use crate::{Analysis, Pipeline};
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types as lt;
use std::collections::HashMap;
use strata_check::query::{DeclFact, ExprFact};
use strata_diag::{FileId, Severity, Span};
use strata_syntax::ast;

/// Runs the server on stdin and stdout until the client says `exit` or goes away; the exit
/// status.
pub fn run() -> u8 {
    let (connection, io_threads) = Connection::stdio();
    let end = serve(&connection);
    drop(connection);
    match end {
        // The reader thread has stopped (at `exit`, or at the end of the input): wait for the
        // writer to send everything.
        End::Exit(status) => match io_threads.join() {
            Ok(()) => status,
            Err(e) => {
                eprintln!("strata lsp: {e}");
                1
            }
        },
        // The reader may be waiting for input that never comes: leave without it.
        End::ProtocolError => 1,
    }
}

/// How [`serve`] ended.
#[derive(Debug, PartialEq, Eq)]
pub enum End {
    /// At `exit` or the end of the input: the exit status (0 after `shutdown`, else 1).
    Exit(u8),
    /// The client broke the protocol (reported on stderr).
    ProtocolError,
}

/// What the server offers.
pub fn capabilities() -> lt::ServerCapabilities {
    lt::ServerCapabilities {
        text_document_sync: Some(lt::TextDocumentSyncCapability::Kind(lt::TextDocumentSyncKind::FULL)),
        hover_provider: Some(lt::HoverProviderCapability::Simple(true)),
        definition_provider: Some(lt::OneOf::Left(true)),
        document_formatting_provider: Some(lt::OneOf::Left(true)),
        ..Default::default()
    }
}

/// Serves one connection: the initialisation, then every message until `exit`. The
/// `initialized` notification is not waited for (a client that leaves it out is served all the
/// same).
pub fn serve(connection: &Connection) -> End {
    let caps = match serde_json::to_value(capabilities()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("strata lsp: {e}");
            return End::ProtocolError;
        }
    };
    let init = serde_json::json!({
        "capabilities": caps,
        "serverInfo": { "name": "strata", "version": env!("CARGO_PKG_VERSION") },
    });
    let id = match connection.initialize_start() {
        Ok((id, _params)) => id,
        Err(e) => {
            eprintln!("strata lsp: {e}");
            return End::ProtocolError;
        }
    };
    if connection.sender.send(Response::new_ok(id, init).into()).is_err() {
        return End::ProtocolError;
    }
    let mut server = Server { docs: HashMap::new() };
    for msg in &connection.receiver {
        match msg {
            Message::Request(req) => {
                if req.method == "shutdown" {
                    // Answered, then the `exit` awaited; whatever follows, shutdown was asked for.
                    return match connection.handle_shutdown(&req) {
                        Ok(_) => End::Exit(0),
                        Err(e) => {
                            eprintln!("strata lsp: {e}");
                            End::ProtocolError
                        }
                    };
                }
                let id = req.id.clone();
                let response = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| server.request(req)))
                    .unwrap_or_else(|_| {
                        Response::new_err(id, ErrorCode::InternalError as i32, "internal error (a bug)".into())
                    });
                let _ = connection.sender.send(response.into());
            }
            Message::Notification(n) if n.method == "exit" => return End::Exit(1), // without shutdown
            Message::Notification(n) => {
                let sent = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| server.notification(n)));
                for out in sent.unwrap_or_default() {
                    let _ = connection.sender.send(out.into());
                }
            }
            Message::Response(_) => {}
        }
    }
    End::Exit(1) // the client went away without `shutdown`
}

/// An open document and what its last analysis found.
struct Doc {
    text: String,
    lines: Lines,
    file: FileId,
    analysis: Option<Analysis>,
}

impl Doc {
    fn new(uri: &lt::Url, text: String) -> Doc {
        let mut pipeline = Pipeline::new(Vec::new(), strata_check::TargetProfile::default_profile());
        let name = uri.to_file_path().map_or_else(|_| uri.to_string(), |p| p.display().to_string());
        let file = pipeline.add_source(name, text.clone());
        // A panic in a phase (a bug) leaves the document without facts, not the server dead.
        let analysis =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| pipeline.analyse(file))).ok().and_then(Result::ok);
        Doc { lines: Lines::new(&text), text, file, analysis }
    }

    /// The diagnostics to publish: those `strata check` prints (at most its default
    /// `--error-limit` of errors).
    fn diagnostics(&self, uri: &lt::Url) -> Vec<lt::Diagnostic> {
        let Some(analysis) = &self.analysis else {
            let start = lt::Position::new(0, 0);
            return vec![lt::Diagnostic {
                range: lt::Range::new(start, start),
                severity: Some(lt::DiagnosticSeverity::ERROR),
                source: Some("strata".into()),
                message: "internal error: the checker failed on this document (a bug)".into(),
                ..Default::default()
            }];
        };
        let (shown, _) = strata_diag::limit_errors(&analysis.diagnostics, strata_diag::DEFAULT_ERROR_LIMIT);
        shown.iter().map(|d| self.diagnostic(uri, d)).collect()
    }

    fn diagnostic(&self, uri: &lt::Url, d: &strata_diag::Diagnostic) -> lt::Diagnostic {
        let range = self.range_in_doc(d.primary.span);
        let mut related = Vec::new();
        let mut relate = |span: Span, message: &str| {
            if !message.is_empty() {
                let location = lt::Location::new(uri.clone(), self.range_in_doc(span));
                related.push(lt::DiagnosticRelatedInformation { location, message: message.to_string() });
            }
        };
        relate(d.primary.span, &d.primary.message);
        for l in &d.secondary {
            relate(l.span, &l.message);
        }
        for n in &d.notes {
            relate(d.primary.span, n);
        }
        lt::Diagnostic {
            range,
            severity: Some(match d.severity {
                Severity::Error => lt::DiagnosticSeverity::ERROR,
                Severity::Warning => lt::DiagnosticSeverity::WARNING,
                Severity::Note => lt::DiagnosticSeverity::INFORMATION,
            }),
            code: Some(lt::NumberOrString::String(d.code.to_string())),
            source: Some("strata".into()),
            message: d.message.clone(),
            related_information: (!related.is_empty()).then_some(related),
            ..Default::default()
        }
    }

    /// The range of `span` in this document; a span in another file (the prelude) is shown at
    /// the document's start.
    fn range_in_doc(&self, span: Span) -> lt::Range {
        if span.file != self.file {
            let start = lt::Position::new(0, 0);
            return lt::Range::new(start, start);
        }
        lt::Range::new(self.lines.position(&self.text, span.lo), self.lines.position(&self.text, span.hi))
    }

    fn hover(&self, at: lt::Position) -> Option<lt::Hover> {
        let analysis = self.analysis.as_ref()?;
        let offset = self.lines.offset(&self.text, at);
        let facts = &analysis.facts;
        let file = self.file;
        let mut text = String::new();
        let mut span = None;
        // A variable: its declaration (at a use, the declaration it refers to).
        let decl = match facts.use_at(file, offset) {
            Some((use_span, decl_span)) => {
                span = Some(use_span);
                facts.decls.get(&decl_span).map(|d| (decl_span, d))
            }
            None => facts.decl_at(file, offset),
        };
        if let Some((decl_span, d)) = decl {
            span = span.or(Some(decl_span));
            text.push_str(&declaration_text(d));
        }
        // The expression: its type here, the resource evaluating it, uniformity and memory space.
        // (Statements, blocks and loops, of type `()`, have nothing to show.)
        let expr = facts
            .expr_at_where(file, offset, |e| e.ty != strata_check::ty::Ty::UNIT)
            .filter(|(s, _)| span.is_none_or(|v| s.lo <= v.lo && v.hi <= s.hi));
        if let Some((expr_span, e)) = expr {
            if text.is_empty() {
                let src = self.text.get(expr_span.lo as usize..expr_span.hi as usize).unwrap_or("");
                text.push_str(&format!("```strata\n{}: {}\n```\n", shorten(src), e.ty));
                span = Some(expr_span);
            } else if span != Some(expr_span) || decl.is_some_and(|(_, d)| d.ty != e.ty) {
                let src = self.text.get(expr_span.lo as usize..expr_span.hi as usize).unwrap_or("");
                text.push_str(&format!("\n`{}`: `{}`\n", shorten(src), e.ty));
            }
            text.push_str(&expr_details(e));
        } else if let Some((_, d)) = decl {
            text.push_str(&format!("\ndeclared by {}\n", d.level.describe()));
        }
        // An item: its signature.
        if text.is_empty() {
            let (word, word_span) = word_at(&self.text, offset)?;
            let item = find_item(&analysis.module, word)?;
            text = format!("```strata\n{}\n```\n", item_header(&self.text, item));
            span = Some(Span::new(file, word_span.0, word_span.1));
        }
        let range = span.map(|s| self.range_in_doc(s));
        Some(lt::Hover {
            contents: lt::HoverContents::Markup(lt::MarkupContent { kind: lt::MarkupKind::Markdown, value: text }),
            range,
        })
    }

    fn definition(&self, uri: &lt::Url, at: lt::Position) -> Option<lt::Location> {
        let analysis = self.analysis.as_ref()?;
        let offset = self.lines.offset(&self.text, at);
        let facts = &analysis.facts;
        let target = if let Some((_, decl)) = facts.use_at(self.file, offset) {
            let name = facts.decls.get(&decl).map(|d| d.name.as_str());
            name_within(&self.text, decl, name)
        } else if let Some((decl, d)) = facts.decl_at(self.file, offset) {
            name_within(&self.text, decl, Some(&d.name))
        } else {
            let (word, _) = word_at(&self.text, offset)?;
            item_name(find_item(&analysis.module, word)?).span
        };
        (target.file == self.file).then(|| lt::Location::new(uri.clone(), self.range_in_doc(target)))
    }

    /// The edits that format the document (none when it is formatted or has syntax errors).
    fn formatting(&self) -> Option<Vec<lt::TextEdit>> {
        let formatted = strata_syntax::format_source(self.file, &self.text).ok()?;
        if formatted == self.text {
            return Some(Vec::new());
        }
        let end = self.lines.position(&self.text, self.text.len() as u32);
        Some(vec![lt::TextEdit::new(lt::Range::new(lt::Position::new(0, 0), end), formatted)])
    }
}

/// `let mut x: T` for a variable's declaration.
fn declaration_text(d: &DeclFact) -> String {
    let m = if d.mutable { "mut " } else { "" };
    format!("```strata\n{m}{}: {}\n```\n", d.name, d.ty)
}

/// The resource, uniformity and memory space of an expression, as Markdown lines.
fn expr_details(e: &ExprFact) -> String {
    let mut out = String::new();
    if !e.exec.is_empty() {
        out.push_str(&format!("\nevaluated by `{}` ({})\n", e.exec, e.level.describe()));
    }
    if let Some(u) = e.uniformity {
        let meaning = match u {
            "uniform" => "the same for every thread of the grid",
            "block" => "the same within each block, may differ between blocks",
            "warp" => "the same within each warp, may differ between warps",
            _ => "may differ between threads",
        };
        out.push_str(&format!("\nuniformity: {u} ({meaning})\n"));
    }
    if let Some(m) = &e.mem {
        out.push_str(&format!("\nmemory space: `{m}`\n"));
    }
    out
}

/// A piece of source for a hover's title: its first line, at most 60 characters.
fn shorten(src: &str) -> String {
    let line = src.lines().next().unwrap_or("");
    let mut s: String = line.chars().take(60).collect();
    if s.len() < src.len() {
        s.push('…');
    }
    s
}

/// The identifier around byte `offset` (the cursor may be just after it), and its byte range.
fn word_at(text: &str, offset: u32) -> Option<(&str, (u32, u32))> {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let offset = (offset as usize).min(text.len());
    let offset = (0..=offset).rev().find(|&i| text.is_char_boundary(i))?;
    let start = text[..offset].char_indices().rev().take_while(|&(_, c)| is_word(c)).last().map_or(offset, |(i, _)| i);
    let end = text[offset..].char_indices().find(|&(_, c)| !is_word(c)).map_or(text.len(), |(i, _)| offset + i);
    (start < end).then(|| (&text[start..end], (start as u32, end as u32)))
}

/// The first whole-word occurrence of `name` inside `span` (a parameter's span covers its type
/// too), else the span.
fn name_within(text: &str, span: Span, name: Option<&str>) -> Span {
    let (Some(name), Some(src)) = (name, text.get(span.lo as usize..span.hi as usize)) else { return span };
    let is_word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    for (i, _) in src.match_indices(name) {
        let before = src[..i].chars().next_back();
        let after = src[i + name.len()..].chars().next();
        if !is_word(before) && !is_word(after) {
            let lo = span.lo + i as u32;
            return Span::new(span.file, lo, lo + name.len() as u32);
        }
    }
    span
}

/// The function, view or constant of the module named `name`.
fn find_item<'m>(module: &'m ast::Module, name: &str) -> Option<&'m ast::Item> {
    module.items.iter().find(|item| item_name(item).name == name)
}

fn item_name(item: &ast::Item) -> &ast::Ident {
    match item {
        ast::Item::Fn(f) => &f.name,
        ast::Item::Const(c) => &c.name,
        ast::Item::View(v) => &v.name,
    }
}

/// An item's source up to its body (a function's signature; a view or constant whole).
fn item_header(text: &str, item: &ast::Item) -> String {
    let span = item.span();
    let end = match item {
        ast::Item::Fn(ast::FnDecl { body: Some(b), .. }) => b.span.lo,
        _ => span.hi,
    };
    text.get(span.lo as usize..end as usize).unwrap_or("").trim().to_string()
}

/// Where the lines of a document start, for LSP positions (a line and a UTF-16 column; a line
/// ends at `\n`, `\r\n` or `\r`).
struct Lines {
    starts: Vec<usize>,
}

impl Lines {
    fn new(text: &str) -> Lines {
        let bytes = text.as_bytes();
        let mut starts = vec![0];
        for (i, &b) in bytes.iter().enumerate() {
            if b == b'\n' || (b == b'\r' && bytes.get(i + 1) != Some(&b'\n')) {
                starts.push(i + 1);
            }
        }
        Lines { starts }
    }

    /// The position of byte `offset` (clamped to the text, moved back to a character boundary).
    fn position(&self, text: &str, offset: u32) -> lt::Position {
        let offset = (offset as usize).min(text.len());
        let offset = (0..=offset).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
        let line = self.starts.partition_point(|&s| s <= offset).saturating_sub(1);
        let start = self.starts.get(line).copied().unwrap_or(0).min(offset);
        let character = text.get(start..offset).map_or(0, |s| s.encode_utf16().count());
        lt::Position::new(line as u32, character as u32)
    }

    /// The byte offset of a position (a column past the line's end is its end; a line past the
    /// last is the end of the text).
    fn offset(&self, text: &str, pos: lt::Position) -> u32 {
        let Some(&start) = self.starts.get(pos.line as usize) else { return text.len() as u32 };
        let end = self.starts.get(pos.line as usize + 1).copied().unwrap_or(text.len());
        let line = text.get(start..end).unwrap_or("").trim_end_matches(['\n', '\r']);
        let mut units = 0;
        for (i, c) in line.char_indices() {
            if units >= pos.character as usize {
                return (start + i) as u32;
            }
            units += c.len_utf16();
        }
        (start + line.len()) as u32
    }
}

struct Server {
    docs: HashMap<lt::Url, Doc>,
}

impl Server {
    /// Handles a notification; the notifications to send back (published diagnostics).
    fn notification(&mut self, n: Notification) -> Vec<Notification> {
        use lt::notification::{DidChangeTextDocument, DidCloseTextDocument, DidOpenTextDocument};
        let changed = match n.method.as_str() {
            "textDocument/didOpen" => match n.extract::<lt::DidOpenTextDocumentParams>(
                <DidOpenTextDocument as lt::notification::Notification>::METHOD,
            ) {
                Ok(p) => Some((p.text_document.uri, p.text_document.text, Some(p.text_document.version))),
                Err(_) => None,
            },
            "textDocument/didChange" => match n.extract::<lt::DidChangeTextDocumentParams>(
                <DidChangeTextDocument as lt::notification::Notification>::METHOD,
            ) {
                // Full synchronisation: the last change is the whole text.
                Ok(mut p) => {
                    p.content_changes.pop().map(|c| (p.text_document.uri, c.text, Some(p.text_document.version)))
                }
                Err(_) => None,
            },
            "textDocument/didClose" => {
                if let Ok(p) = n.extract::<lt::DidCloseTextDocumentParams>(
                    <DidCloseTextDocument as lt::notification::Notification>::METHOD,
                ) {
                    self.docs.remove(&p.text_document.uri);
                    return vec![publish(p.text_document.uri, Vec::new(), None)];
                }
                None
            }
            _ => None,
        };
        let Some((uri, text, version)) = changed else { return Vec::new() };
        let doc = Doc::new(&uri, text);
        let diagnostics = doc.diagnostics(&uri);
        self.docs.insert(uri.clone(), doc);
        vec![publish(uri, diagnostics, version)]
    }

    fn request(&mut self, req: Request) -> Response {
        let id = req.id.clone();
        match req.method.as_str() {
            "textDocument/hover" => self.with_params(id, req, |s, p: lt::HoverParams| {
                let pos = p.text_document_position_params;
                let doc = s.docs.get(&pos.text_document.uri)?;
                doc.hover(pos.position)
            }),
            "textDocument/definition" => self.with_params(id, req, |s, p: lt::GotoDefinitionParams| {
                let pos = p.text_document_position_params;
                let uri = pos.text_document.uri;
                let doc = s.docs.get(&uri)?;
                doc.definition(&uri, pos.position).map(lt::GotoDefinitionResponse::Scalar)
            }),
            "textDocument/formatting" => self.with_params(id, req, |s, p: lt::DocumentFormattingParams| {
                s.docs.get(&p.text_document.uri)?.formatting()
            }),
            _ => Response::new_err(id, ErrorCode::MethodNotFound as i32, format!("unknown request `{}`", req.method)),
        }
    }

    /// Answers a request whose parameters are `P` with `f`'s result (`null` for `None`); bad
    /// parameters are an `InvalidParams` error.
    fn with_params<P: serde::de::DeserializeOwned, R: serde::Serialize>(
        &mut self,
        id: RequestId,
        req: Request,
        f: impl FnOnce(&mut Self, P) -> Option<R>,
    ) -> Response {
        match serde_json::from_value::<P>(req.params) {
            Ok(p) => Response::new_ok(id, f(self, p)),
            Err(e) => Response::new_err(id, ErrorCode::InvalidParams as i32, e.to_string()),
        }
    }
}

fn publish(uri: lt::Url, diagnostics: Vec<lt::Diagnostic>, version: Option<i32>) -> Notification {
    let params = lt::PublishDiagnosticsParams { uri, diagnostics, version };
    Notification::new("textDocument/publishDiagnostics".into(), params)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_utf16_units_and_every_line_break() {
        let text = "a\r\nβ𝕏x\ry\nz";
        let lines = Lines::new(text);
        // `x` is after β (2 bytes, 1 unit) and 𝕏 (4 bytes, 2 units).
        let x = text.find('x').unwrap() as u32;
        assert_eq!(lines.position(text, x), lt::Position::new(1, 3));
        assert_eq!(lines.offset(text, lt::Position::new(1, 3)), x);
        assert_eq!(lines.position(text, text.find('y').unwrap() as u32), lt::Position::new(2, 0));
        assert_eq!(lines.position(text, text.len() as u32), lt::Position::new(3, 1));
        // Inside a character, past a line's end, past the last line: clamped, never a panic.
        assert_eq!(lines.position(text, x - 1), lt::Position::new(1, 1));
        assert_eq!(lines.offset(text, lt::Position::new(0, 99)), 1);
        assert_eq!(lines.offset(text, lt::Position::new(9, 0)), text.len() as u32);
        assert_eq!(lines.position(text, u32::MAX), lt::Position::new(3, 1));
    }

    #[test]
    fn words_around_the_cursor() {
        let text = "let xy = f(z);";
        assert_eq!(word_at(text, 5).map(|w| w.0), Some("xy"));
        assert_eq!(word_at(text, 6).map(|w| w.0), Some("xy"));
        assert_eq!(word_at(text, 3), Some(("let", (0, 3))));
        assert_eq!(word_at(text, 99).map(|w| w.0), None);
    }
}
