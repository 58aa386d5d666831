use crate::{Diagnostic, FileId, Severity, Span};
use codespan_reporting::diagnostic as cs;
use codespan_reporting::files::{self, Files, SimpleFiles};
use codespan_reporting::term::{self, termcolor};
use std::ops::Range;

/// The most characters of one source line a snippet shows. A longer line is cut down to windows
/// around the labels that point into it (`…` marks the text left out), so that a diagnostic in a
/// one-line, megabyte-long file still renders as a few hundred bytes.
pub const MAX_LINE_COLUMNS: usize = 200;

/// Characters of a long line kept on each side of a label's start and end.
const CONTEXT_COLUMNS: usize = 30;

/// A label shorter than this (in characters) on a long line is shown whole, with its context.
const WHOLE_LABEL_COLUMNS: usize = 60;

/// Lines around a label's first and last line that a snippet may show (codespan-reporting's
/// default context is 3 lines after a multi-line label's start and 1 before its end).
const CONTEXT_LINES: usize = 4;

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
        self.line_col(file, pos).0
    }

    /// 1-based line and column (in characters) of byte offset `pos` in `file`. Takes time in the
    /// logarithm of the file's line count plus the length of the line up to `pos`.
    pub fn line_col(&self, file: FileId, pos: u32) -> (usize, usize) {
        let src = self.source(file);
        let pos = floor_char_boundary(src, pos as usize);
        let Ok(line) = self.files.line_index(file.0 as usize, pos) else { return (1, 1) };
        let start = self.files.line_range(file.0 as usize, line).map_or(0, |r| r.start).min(pos);
        (line + 1, src[start..pos].chars().count() + 1)
    }

    /// The byte range of the 0-based line `line` of `file`, with its line terminator.
    fn line_range(&self, file: FileId, line: usize) -> Range<usize> {
        self.files.line_range(file.0 as usize, line).unwrap_or(0..0)
    }

    /// The 0-based line of byte offset `pos` of `file`.
    fn line_index(&self, file: FileId, pos: usize) -> usize {
        self.files.line_index(file.0 as usize, pos).unwrap_or(0)
    }
}

/// Words (runs of non-blank characters) of a message longer than this many characters are cut
/// in the middle: a name taken from a megabyte-long line must not make a megabyte-long message.
pub const MAX_WORD_COLUMNS: usize = 100;

/// `message` with every word longer than [`MAX_WORD_COLUMNS`] characters cut to its start and
/// end, `…` marking the cut, and control characters shown as in snippets (`␛` for ESC): a message
/// never writes a raw control character to the terminal.
pub fn shorten(message: &str) -> std::borrow::Cow<'_, str> {
    match escape_controls(message) {
        std::borrow::Cow::Borrowed(m) => shorten_words(m),
        std::borrow::Cow::Owned(m) => std::borrow::Cow::Owned(shorten_words(&m).into_owned()),
    }
}

/// [`shorten`] without escaping control characters.
fn shorten_words(message: &str) -> std::borrow::Cow<'_, str> {
    if message.len() <= MAX_WORD_COLUMNS
        || !message.split_whitespace().any(|w| w.chars().nth(MAX_WORD_COLUMNS).is_some())
    {
        return std::borrow::Cow::Borrowed(message);
    }
    let mut out = String::new();
    let mut rest = message;
    while !rest.is_empty() {
        let word_start = rest.find(|c: char| !c.is_whitespace()).unwrap_or(rest.len());
        out.push_str(&rest[..word_start]);
        rest = &rest[word_start..];
        let word_end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let word = &rest[..word_end];
        if word.chars().nth(MAX_WORD_COLUMNS).is_some() {
            let head = forward_chars(word, 0, MAX_WORD_COLUMNS * 3 / 5);
            let tail = back_chars(word, word.len(), MAX_WORD_COLUMNS / 5);
            out.push_str(&word[..head]);
            out.push('…');
            out.push_str(&word[tail..]);
        } else {
            out.push_str(word);
        }
        rest = &rest[word_end..];
    }
    std::borrow::Cow::Owned(out)
}

/// How a snippet or message shows the character `c` when it must not reach the terminal as it
/// is, like rustc: a C0 control character (other than a tab and a line break) or DEL as its
/// Unicode control picture (`\0` as `␀`, ESC as `␛`), a C1 control character or a
/// bidirectional-text override as `�`. `before_lf`: `c` is followed by `\n` (a `\r` there ends
/// the line). `None`: shown as it is.
fn visible(c: char, before_lf: bool) -> Option<char> {
    match c {
        '\t' | '\n' => None,
        '\r' if before_lf => None,
        '\u{0}'..='\u{1f}' => char::from_u32(0x2400 + c as u32),
        '\u{7f}' => Some('\u{2421}'),
        '\u{80}'..='\u{9f}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => {
            Some('\u{fffd}')
        }
        _ => None,
    }
}

/// `s` with every character [`visible`] changes replaced (a `\r` before `\n` included).
fn escape_controls(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(|c| visible(c, false).is_some()) {
        return std::borrow::Cow::Borrowed(s);
    }
    std::borrow::Cow::Owned(s.chars().map(|c| visible(c, false).unwrap_or(c)).collect())
}

/// The largest character boundary of `s` at or before `i` (clamped to `s.len()`).
fn floor_char_boundary(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The byte offset `n` characters before `i` in `s` (or 0).
fn back_chars(s: &str, i: usize, n: usize) -> usize {
    if n == 0 {
        return i;
    }
    s[..i].char_indices().rev().nth(n - 1).map_or(0, |(j, _)| j)
}

/// The byte offset `n` characters after `i` in `s` (or `s.len()`).
fn forward_chars(s: &str, i: usize, n: usize) -> usize {
    s[i..].char_indices().nth(n).map_or(s.len(), |(j, _)| i + j)
}

/// Is `s` longer than [`MAX_LINE_COLUMNS`] characters?
fn is_long(s: &str) -> bool {
    s.len() > MAX_LINE_COLUMNS && s.chars().nth(MAX_LINE_COLUMNS).is_some()
}

/// A run of the excerpt's text copied from the original source.
#[derive(Clone, Copy)]
struct Piece {
    /// Where it starts in the excerpt.
    at: usize,
    /// Where it starts in the original source.
    orig: usize,
    len: usize,
}

/// What one diagnostic shows of one file: the lines from its first to its last label, each line
/// near a label copied (long ones cut to windows around the labels), every other line left empty
/// (the renderer never shows them). Line numbers and columns are those of the original file.
struct Excerpt<'a> {
    name: &'a str,
    orig: &'a str,
    text: String,
    /// Byte offset of each excerpt line, and of the end.
    line_starts: Vec<usize>,
    /// The original byte offset where each excerpt line starts.
    orig_line_starts: Vec<usize>,
    /// The 0-based original line of the excerpt's first line.
    first_line: usize,
    pieces: Vec<Piece>,
}

impl<'a> Excerpt<'a> {
    /// The excerpt of `file` for label boundaries at the original byte offsets `points`.
    fn new(sources: &'a SourceMap, file: FileId, points: &[usize], ranges: &[(usize, usize)]) -> Self {
        let orig = sources.source(file);
        let lines: Vec<usize> = points.iter().map(|&p| sources.line_index(file, p)).collect();
        let first_line = lines.iter().copied().min().unwrap_or(0);
        let last_line = lines.iter().copied().max().unwrap_or(0);
        let mut shown: Vec<usize> = lines.clone();
        shown.sort_unstable();
        shown.dedup();
        let near = |l: usize| {
            let i = shown.partition_point(|&s| s + CONTEXT_LINES < l);
            shown.get(i).is_some_and(|&s| s <= l + CONTEXT_LINES)
        };
        let mut ex = Excerpt {
            name: sources.name(file),
            orig,
            text: String::new(),
            line_starts: Vec::new(),
            orig_line_starts: Vec::new(),
            first_line,
            pieces: Vec::new(),
        };
        for line in first_line..=last_line {
            let range = sources.line_range(file, line);
            ex.line_starts.push(ex.text.len());
            ex.orig_line_starts.push(range.start);
            if !near(line) {
                ex.text.push('\n');
                continue;
            }
            let full = &orig[range.clone()];
            let body_len = full.trim_end_matches(['\n', '\r']).len();
            let body = &full[..body_len];
            if !is_long(body) {
                ex.copy(range.start, full.len());
                continue;
            }
            // The label boundaries on this line, relative to its start, and the labels that lie
            // wholly within it.
            let here: Vec<usize> = points
                .iter()
                .zip(&lines)
                .filter(|&(_, &l)| l == line)
                .map(|(&p, _)| (p - range.start).min(body_len))
                .collect();
            let mut windows: Vec<(usize, usize)> = Vec::new();
            for &p in &here {
                windows.push((back_chars(body, p, CONTEXT_COLUMNS), forward_chars(body, p, CONTEXT_COLUMNS)));
            }
            for &(lo, hi) in ranges {
                if lo >= range.start && hi <= range.start + body_len {
                    let (lo, hi) = (lo - range.start, hi - range.start);
                    if body[lo..hi].chars().nth(WHOLE_LABEL_COLUMNS).is_none() {
                        windows.push((back_chars(body, lo, CONTEXT_COLUMNS), forward_chars(body, hi, CONTEXT_COLUMNS)));
                    }
                }
            }
            if windows.is_empty() {
                windows.push((0, forward_chars(body, 0, MAX_LINE_COLUMNS)));
            }
            windows.sort_unstable();
            let mut merged: Vec<(usize, usize)> = Vec::new();
            for (lo, hi) in windows {
                match merged.last_mut() {
                    // Cutting out a few characters would not make the line shorter.
                    Some(last) if lo <= forward_chars(body, last.1, 3) => last.1 = last.1.max(hi),
                    _ => merged.push((lo, hi)),
                }
            }
            let mut pos = 0;
            for (lo, hi) in merged {
                if lo > pos {
                    ex.text.push('…');
                }
                ex.copy(range.start + lo, hi - lo);
                pos = hi;
            }
            if pos < body_len {
                ex.text.push('…');
            }
            ex.copy(range.start + body_len, full.len() - body_len);
        }
        ex.line_starts.push(ex.text.len());
        ex
    }

    /// Appends `len` bytes of the original source from `orig`, control characters made visible
    /// ([`visible`]): each becomes a piece of its own length in the excerpt, so label boundaries
    /// around it still map both ways.
    fn copy(&mut self, orig: usize, len: usize) {
        let text = &self.orig[orig..orig + len];
        let mut run = 0;
        for (i, c) in text.char_indices() {
            let before_lf = self.orig[orig + i + c.len_utf8()..].starts_with('\n');
            let Some(shown) = visible(c, before_lf) else { continue };
            if i > run {
                self.pieces.push(Piece { at: self.text.len(), orig: orig + run, len: i - run });
                self.text.push_str(&text[run..i]);
            }
            // An anchor for the character's start; its end is the start of the next piece.
            self.pieces.push(Piece { at: self.text.len(), orig: orig + i, len: 0 });
            self.text.push(shown);
            run = i + c.len_utf8();
        }
        if len > run {
            self.pieces.push(Piece { at: self.text.len(), orig: orig + run, len: len - run });
            self.text.push_str(&text[run..]);
        }
    }

    /// Where the original byte offset `pos` is in the excerpt (it must be a label boundary).
    fn to_excerpt(&self, pos: usize) -> usize {
        let i = self.pieces.partition_point(|p| p.orig + p.len < pos);
        match self.pieces.get(i) {
            Some(p) if p.orig <= pos => p.at + (pos - p.orig),
            _ => self.text.len(),
        }
    }

    /// Where the excerpt byte offset `pos` is in the original source.
    fn to_orig(&self, pos: usize) -> usize {
        let i = self.pieces.partition_point(|p| p.at + p.len < pos);
        match self.pieces.get(i) {
            Some(p) if p.at <= pos => p.orig + (pos - p.at),
            _ => self.orig.len(),
        }
    }
}

/// The excerpts one diagnostic shows, as codespan-reporting's file database.
struct Excerpts<'a> {
    files: Vec<(FileId, Excerpt<'a>)>,
}

impl<'a> Files<'a> for Excerpts<'a> {
    type FileId = usize;
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, id: usize) -> Result<&'a str, files::Error> {
        self.files.get(id).map(|f| f.1.name).ok_or(files::Error::FileMissing)
    }

    fn source(&'a self, id: usize) -> Result<&'a str, files::Error> {
        self.files.get(id).map(|f| f.1.text.as_str()).ok_or(files::Error::FileMissing)
    }

    fn line_index(&'a self, id: usize, byte_index: usize) -> Result<usize, files::Error> {
        let ex = &self.files.get(id).ok_or(files::Error::FileMissing)?.1;
        Ok(ex.line_starts.partition_point(|&s| s <= byte_index).saturating_sub(1).min(ex.line_starts.len() - 2))
    }

    fn line_number(&'a self, id: usize, line_index: usize) -> Result<usize, files::Error> {
        let ex = &self.files.get(id).ok_or(files::Error::FileMissing)?.1;
        Ok(ex.first_line + line_index + 1)
    }

    fn column_number(&'a self, id: usize, line_index: usize, byte_index: usize) -> Result<usize, files::Error> {
        let ex = &self.files.get(id).ok_or(files::Error::FileMissing)?.1;
        let start = *ex.orig_line_starts.get(line_index).ok_or(files::Error::LineTooLarge {
            given: line_index,
            max: ex.orig_line_starts.len().saturating_sub(1),
        })?;
        let pos = floor_char_boundary(ex.orig, ex.to_orig(byte_index)).max(start);
        Ok(ex.orig[start..pos].chars().count() + 1)
    }

    fn line_range(&'a self, id: usize, line_index: usize) -> Result<Range<usize>, files::Error> {
        let ex = &self.files.get(id).ok_or(files::Error::FileMissing)?.1;
        match (ex.line_starts.get(line_index), ex.line_starts.get(line_index + 1)) {
            (Some(&a), Some(&b)) => Ok(a..b),
            _ => Err(files::Error::LineTooLarge { given: line_index, max: ex.line_starts.len().saturating_sub(2) }),
        }
    }
}

/// The diagnostic `d` as codespan-reporting sees it, with the excerpts of the files it shows.
fn to_codespan<'a>(d: &Diagnostic, sources: &'a SourceMap) -> (Excerpts<'a>, cs::Diagnostic<usize>) {
    let sev = match d.severity {
        Severity::Error => cs::Severity::Error,
        Severity::Warning => cs::Severity::Warning,
        Severity::Note => cs::Severity::Note,
    };
    // Clamp spans to character boundaries inside their file, so a stale span can never make the
    // renderer fail.
    let clamp = |span: Span| {
        let src = sources.source(span.file);
        let lo = floor_char_boundary(src, span.lo as usize);
        let hi = floor_char_boundary(src, span.hi as usize).max(lo);
        (span.file, lo, hi)
    };
    // A problem of the machine (a missing compiler or driver) points at no source: no snippet,
    // its labels' texts become notes.
    let machine = d.code.is_environment();
    let labels: Vec<(bool, (FileId, usize, usize), &str)> = std::iter::once(&d.primary)
        .map(|l| (true, l))
        .chain(d.secondary.iter().map(|l| (false, l)))
        .filter(|_| !machine)
        .map(|(primary, l)| (primary, clamp(l.span), l.message.as_str()))
        .collect();
    let label_notes = std::iter::once(&d.primary).chain(&d.secondary).filter(|l| machine && !l.message.is_empty());
    let notes = label_notes.map(|l| &l.message).chain(&d.notes);
    let mut excerpts = Excerpts { files: Vec::new() };
    let mut file_ids: Vec<FileId> = labels.iter().map(|l| l.1 .0).collect();
    file_ids.sort_unstable();
    file_ids.dedup();
    for file in file_ids {
        let ranges: Vec<(usize, usize)> = labels.iter().filter(|l| l.1 .0 == file).map(|l| (l.1 .1, l.1 .2)).collect();
        let points: Vec<usize> = ranges.iter().flat_map(|&(lo, hi)| [lo, hi]).collect();
        excerpts.files.push((file, Excerpt::new(sources, file, &points, &ranges)));
    }
    let cs_labels = labels
        .iter()
        .map(|&(primary, (file, lo, hi), message)| {
            let id = excerpts.files.iter().position(|f| f.0 == file).unwrap_or(0);
            let ex = &excerpts.files[id].1;
            let range = ex.to_excerpt(lo)..ex.to_excerpt(hi);
            let label = if primary { cs::Label::primary(id, range) } else { cs::Label::secondary(id, range) };
            label.with_message(shorten(message))
        })
        .collect();
    let diagnostic = cs::Diagnostic::new(sev)
        .with_code(d.code.as_str())
        .with_message(shorten(&d.message))
        .with_labels(cs_labels)
        .with_notes(notes.map(|n| shorten(n).into_owned()).collect());
    (excerpts, diagnostic)
}

fn render_to(diags: &[Diagnostic], sources: &SourceMap, out: &mut dyn termcolor::WriteColor) {
    let config = term::Config::default();
    for d in diags {
        let (files, diagnostic) = to_codespan(d, sources);
        // Rendering into memory or stderr cannot meaningfully fail; if it does, fall back to one line.
        if term::emit(out, &config, &files, &diagnostic).is_err() {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes;

    fn one(src: &str, lo: usize, hi: usize) -> String {
        let mut sources = SourceMap::new();
        let f = sources.add("t.strata", src);
        let d = Diagnostic::error(codes::UNKNOWN_NAME, "msg", Span::new(f, lo as u32, hi as u32), "here");
        render_plain(&[d], &sources)
    }

    #[test]
    fn short_lines_render_unchanged() {
        let text = one("fn main() {\n    let x = y;\n}\n", 24, 25);
        assert!(text.contains("2 │     let x = y;\n"), "{text}");
        assert!(text.contains("t.strata:2:13"), "{text}");
    }

    #[test]
    fn control_characters_are_shown_escaped_and_the_carets_stay_under_the_label() {
        let src = "a\u{1b}[31m\0b = \u{7f}\u{85}\u{202e}BAD\r;\r\n";
        let at = src.find("BAD").unwrap();
        let text = one(src, at, at + 3);
        assert!(!text.chars().any(|c| c.is_control() && c != '\n'), "{text:?}");
        let line = text.lines().find(|l| l.starts_with("1 │")).unwrap();
        assert!(line.contains("a␛[31m␀b = ␡��BAD␍;"), "{text}");
        let carets = text.lines().find(|l| l.contains("^^^")).unwrap();
        let col = |s: &str, pat: &str| s[..s.find(pat).unwrap()].chars().count();
        assert_eq!(col(line, "BAD"), col(carets, "^^^"), "{text}");
        // The column of the header is the file's (in characters).
        assert!(text.contains("t.strata:1:15"), "{text}");
        // A label starting at a control character still points at it.
        let text = one(src, 1, 2);
        let line = text.lines().find(|l| l.starts_with("1 │")).unwrap();
        let caret = text.lines().find(|l| l.contains('^')).unwrap();
        assert_eq!(col(line, "␛"), col(caret, "^"), "{text}");
        assert_eq!(shorten("bad \u{1b}[2J name\n\tnext"), "bad ␛[2J name\n\tnext");
    }

    #[test]
    fn a_long_line_is_cut_around_the_label_which_still_points_at_its_text() {
        let mut src = "a".repeat(1_000_000);
        src.push_str(" BAD ");
        src.push_str(&"b".repeat(1_000_000));
        src.push('\n');
        let text = one(&src, 1_000_001, 1_000_004);
        assert!(text.len() < 1000, "{} bytes:\n{text}", text.len());
        assert!(text.contains("t.strata:1:1000002"), "{text}");
        let line = text.lines().find(|l| l.starts_with("1 │")).unwrap();
        let carets = text.lines().find(|l| l.contains("^^^")).unwrap();
        assert!(line.starts_with("1 │ …") && line.ends_with('…'), "{text}");
        // The carets stand under `BAD`.
        let col = |s: &str, pat: &str| s[..s.find(pat).unwrap()].chars().count();
        assert_eq!(col(line, "BAD"), col(carets, "^^^"), "{text}");
    }

    #[test]
    fn labels_far_apart_on_one_line_get_windows_of_their_own() {
        let mut sources = SourceMap::new();
        let src = format!("{}ONE{}TWO{}\n", "x".repeat(500), "y".repeat(5000), "z".repeat(500));
        let f = sources.add("t.strata", src);
        let d = Diagnostic::error(codes::UNKNOWN_NAME, "msg", Span::new(f, 500, 503), "first")
            .with_label(Span::new(f, 5503, 5506), "second");
        let text = render_plain(&[d], &sources);
        assert!(text.len() < 1200, "{text}");
        let line = text.lines().find(|l| l.starts_with("1 │")).unwrap();
        assert!(line.contains("ONE") && line.contains("TWO") && line.matches('…').count() == 3, "{text}");
        assert!(text.contains("t.strata:1:501"), "{text}");
    }

    #[test]
    fn line_numbers_and_gaps_are_those_of_the_file() {
        let mut sources = SourceMap::new();
        let src: String = (1..=40).map(|i| format!("line {i}\n")).collect();
        let f = sources.add("t.strata", src.clone());
        let at = |needle: &str| src.find(needle).unwrap() as u32;
        let d = Diagnostic::error(codes::UNKNOWN_NAME, "msg", Span::new(f, at("line 3\n"), at("line 3\n") + 6), "a")
            .with_label(Span::new(f, at("line 30\n"), at("line 30\n") + 7), "b");
        let text = render_plain(&[d], &sources);
        assert!(text.contains("t.strata:3:1"), "{text}");
        assert!(text.contains(" 3 │ line 3") && text.contains("30 │ line 30") && text.contains('·'), "{text}");
        assert!(!text.contains("line 10"), "{text}");
    }

    #[test]
    fn a_multi_line_label_over_long_lines_stays_short() {
        let mut sources = SourceMap::new();
        let src = format!("{}\n{}\n{}\n", "a".repeat(10_000), "b".repeat(10_000), "c".repeat(10_000));
        let f = sources.add("t.strata", src);
        let d = Diagnostic::error(codes::UNKNOWN_NAME, "msg", Span::new(f, 5000, 25_000), "spans lines");
        let text = render_plain(&[d], &sources);
        assert!(text.len() < 2000, "{text}");
        assert!(text.contains("t.strata:1:5001"), "{text}");
    }

    #[test]
    fn long_words_in_messages_are_cut() {
        let name = format!("{}end", "q".repeat(1_000_000));
        let message = format!("cannot find value `{name}` in this scope");
        let short = shorten(&message);
        assert!(
            short.len() < 300 && short.starts_with("cannot find value `qqq") && short.ends_with("qqend` in this scope")
        );
        assert!(short.contains('…'));
        assert_eq!(shorten("a short `message`"), "a short `message`");
    }

    #[test]
    fn spans_off_char_boundaries_or_past_the_end_do_not_panic() {
        let text = one("é€\n", 1, 100);
        assert!(text.contains("error[E0101]"), "{text}");
    }
}
