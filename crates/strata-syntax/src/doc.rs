//! A small pretty-printing engine in the style of Wadler's and Oppen's: the formatter describes
//! its output as a [`Doc`] (text, possible line breaks, groups), and [`render`] chooses the line
//! breaks so that lines stay within a width wherever the document allows it.
//!
//! A [`Doc::Group`] is laid out *flat* (every [`Doc::Line`] a space, every [`Doc::SoftLine`]
//! nothing) when its flat form fits in the rest of the current line, up to the next place where a
//! line may break after it; otherwise it *breaks* (every line of its own, not of nested groups, a
//! newline), and the groups inside it decide for themselves. Groups are decided outermost first,
//! left to right, so a long expression breaks at its top level before its parts do.
//!
//! Rendering is iterative (an explicit stack), so deeply nested documents need no deep recursion.

use std::collections::HashMap;

/// The number of spaces one [`Doc::Nest`] level indents.
pub(crate) const INDENT_WIDTH: usize = 4;

/// A group's identity, for [`Doc::IfBreak`] to follow another group's decision.
pub(crate) type GroupId = usize;

#[derive(Debug)]
pub(crate) enum Doc {
    Nil,
    /// Text without line breaks.
    Text(String),
    /// A comment: printed as it is (a block comment may span lines) and given no width when
    /// deciding whether a group fits, so that comments never change the layout of the code.
    Comment(String),
    /// A space when flat, a line break when broken.
    Line,
    /// Nothing when flat, a line break when broken.
    SoftLine,
    /// Always a line break. It does not force the groups around it to break: a group is measured
    /// only up to its first forced line break.
    HardLine,
    /// Indents the lines that break inside it by one more level.
    Nest(Box<Doc>),
    Concat(Vec<Doc>),
    Group(Option<GroupId>, Box<Doc>),
    /// The first document if the group (the one given, else the innermost around it) breaks,
    /// the second if it is flat.
    IfBreak(Option<GroupId>, Box<Doc>, Box<Doc>),
    /// Its contents are laid out as if their enclosing group had broken (block bodies: their
    /// statements decide their own layout even inside a flat group).
    Breaking(Box<Doc>),
    /// The right-hand side of `=` (or `=>`): a space and the document on the same line if it fits
    /// there, else on the next line, one level deeper, if it fits there, else broken: on the
    /// same line if its first line fits there, or on the next line if its first line fits only
    /// there, or on the same line if it fits nowhere.
    Rhs(Box<Doc>),
}

impl Doc {
    pub(crate) fn text(s: impl Into<String>) -> Doc {
        Doc::Text(s.into())
    }

    pub(crate) fn nest(d: Doc) -> Doc {
        Doc::Nest(Box::new(d))
    }

    pub(crate) fn group(d: Doc) -> Doc {
        Doc::Group(None, Box::new(d))
    }

    pub(crate) fn group_id(id: GroupId, d: Doc) -> Doc {
        Doc::Group(Some(id), Box::new(d))
    }

    pub(crate) fn if_break(id: Option<GroupId>, broken: Doc, flat: Doc) -> Doc {
        Doc::IfBreak(id, Box::new(broken), Box::new(flat))
    }

    /// True if the document laid out flat is at most `max` wide (false if it cannot be flat: a
    /// forced line break or a comment). Stops as soon as it is wider.
    pub(crate) fn flat_width_at_most(&self, max: usize) -> bool {
        let mut width = 0;
        let mut stack = vec![self];
        while let Some(d) = stack.pop() {
            if width > max {
                return false;
            }
            match d {
                Doc::Nil | Doc::SoftLine => {}
                Doc::Text(s) => width += s.chars().count(),
                Doc::Line => width += 1,
                Doc::Comment(_) | Doc::HardLine => return false,
                Doc::Nest(d) | Doc::Group(_, d) | Doc::Breaking(d) | Doc::IfBreak(_, _, d) => stack.push(d),
                Doc::Rhs(d) => {
                    width += 1;
                    stack.push(d);
                }
                Doc::Concat(ds) => stack.extend(ds.iter()),
            }
        }
        width <= max
    }
}

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum Mode {
    Flat,
    Break,
}

#[derive(Copy, Clone)]
struct Cmd<'d> {
    indent: usize,
    mode: Mode,
    doc: &'d Doc,
}

struct Renderer {
    width: usize,
    out: String,
    /// The column (in characters) where the next text goes.
    col: usize,
    groups: HashMap<GroupId, Mode>,
}

/// Lays `doc` out within `width` columns where it can.
pub(crate) fn render(doc: &Doc, width: usize) -> String {
    let mut r = Renderer { width, out: String::new(), col: 0, groups: HashMap::new() };
    let mut stack = vec![Cmd { indent: 0, mode: Mode::Break, doc }];
    while let Some(cmd) = stack.pop() {
        let Cmd { indent, mode, doc } = cmd;
        match doc {
            Doc::Nil => {}
            Doc::Text(s) => r.text(s),
            Doc::Comment(s) => {
                r.out.push_str(s);
                match s.rfind('\n') {
                    Some(i) => r.col = s[i + 1..].chars().count(),
                    None => r.col += s.chars().count(),
                }
            }
            Doc::Line if mode == Mode::Flat => r.text(" "),
            Doc::SoftLine if mode == Mode::Flat => {}
            Doc::Line | Doc::SoftLine | Doc::HardLine => r.newline(indent),
            Doc::Nest(d) => stack.push(Cmd { indent: indent + 1, mode, doc: d }),
            Doc::Concat(ds) => stack.extend(ds.iter().rev().map(|d| Cmd { indent, mode, doc: d })),
            Doc::Group(id, d) => {
                let m = if mode == Mode::Flat || r.fits(Cmd { indent, mode: Mode::Flat, doc: d }, &stack, r.left()) {
                    Mode::Flat
                } else {
                    Mode::Break
                };
                if let Some(id) = id {
                    r.groups.insert(*id, m);
                }
                stack.push(Cmd { indent, mode: m, doc: d });
            }
            Doc::IfBreak(id, broken, flat) => {
                let m = id.map_or(mode, |id| r.group_mode(id));
                let d = if m == Mode::Break { broken } else { flat };
                stack.push(Cmd { indent, mode, doc: d });
            }
            Doc::Breaking(d) => stack.push(Cmd { indent, mode: Mode::Break, doc: d }),
            Doc::Rhs(d) => {
                let next_line_left = r.width.saturating_sub((indent + 1) * INDENT_WIDTH) as isize;
                if mode == Mode::Flat || r.fits(Cmd { indent, mode: Mode::Flat, doc: d }, &stack, r.left() - 1) {
                    r.text(" ");
                    stack.push(Cmd { indent, mode, doc: d });
                } else if r.fits(Cmd { indent: indent + 1, mode: Mode::Flat, doc: d }, &stack, next_line_left) {
                    r.newline(indent + 1);
                    stack.push(Cmd { indent: indent + 1, mode: Mode::Flat, doc: d });
                } else if !r.fits(Cmd { indent, mode: Mode::Break, doc: d }, &stack, r.left() - 1)
                    && r.fits(Cmd { indent: indent + 1, mode: Mode::Break, doc: d }, &stack, next_line_left)
                {
                    r.newline(indent + 1);
                    stack.push(Cmd { indent: indent + 1, mode: Mode::Break, doc: d });
                } else {
                    // Its first line fits here, or nowhere: it stays on the line.
                    r.text(" ");
                    stack.push(Cmd { indent, mode: Mode::Break, doc: d });
                }
            }
        }
    }
    r.out
}

impl Renderer {
    fn text(&mut self, s: &str) {
        self.out.push_str(s);
        self.col += s.chars().count();
    }

    fn newline(&mut self, indent: usize) {
        // No trailing white space, also on blank lines.
        let trimmed = self.out.trim_end_matches(' ').len();
        self.out.truncate(trimmed);
        self.out.push('\n');
        let spaces = indent * INDENT_WIDTH;
        self.out.push_str(&" ".repeat(spaces));
        self.col = spaces;
    }

    fn left(&self) -> isize {
        self.width as isize - self.col as isize
    }

    /// A group not decided yet counts as flat: it is the one being measured.
    fn group_mode(&self, id: GroupId) -> Mode {
        self.groups.get(&id).copied().unwrap_or(Mode::Flat)
    }

    /// True if `next` fits in `width` columns, followed by what `rest` prints up to its first
    /// possible line break (the rest is measured in its own modes: a line of a broken group ends
    /// the measurement).
    fn fits(&self, next: Cmd<'_>, rest: &[Cmd<'_>], mut width: isize) -> bool {
        let mut stack: Vec<(Mode, &Doc)> = vec![(next.mode, next.doc)];
        let mut rest = rest.iter().rev();
        loop {
            if width < 0 {
                return false;
            }
            let (mode, doc) = match stack.pop() {
                Some(x) => x,
                None => match rest.next() {
                    Some(c) => (c.mode, c.doc),
                    None => return true,
                },
            };
            match doc {
                Doc::Nil | Doc::Comment(_) => {}
                Doc::Text(s) => width -= s.chars().count() as isize,
                Doc::Line if mode == Mode::Flat => width -= 1,
                Doc::SoftLine if mode == Mode::Flat => {}
                Doc::Line | Doc::SoftLine | Doc::HardLine => return true,
                Doc::Nest(d) | Doc::Group(_, d) => stack.push((mode, d)),
                Doc::Concat(ds) => stack.extend(ds.iter().rev().map(|d| (mode, d))),
                Doc::IfBreak(id, broken, flat) => {
                    let m = id.map_or(mode, |id| self.group_mode(id));
                    stack.push((mode, if m == Mode::Break { broken } else { flat }));
                }
                Doc::Breaking(d) => stack.push((Mode::Break, d)),
                // In a broken context the right-hand side may move to the next line.
                Doc::Rhs(_) if mode == Mode::Break => return true,
                Doc::Rhs(d) => {
                    width -= 1;
                    stack.push((mode, d));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Doc {
        Doc::text(s)
    }

    fn list(items: &[&str]) -> Doc {
        let mut inner = vec![Doc::SoftLine];
        for (i, s) in items.iter().enumerate() {
            if i > 0 {
                inner.push(t(","));
                inner.push(Doc::Line);
            }
            inner.push(t(s));
        }
        inner.push(Doc::if_break(None, t(","), Doc::Nil));
        Doc::group(Doc::Concat(vec![t("f("), Doc::nest(Doc::Concat(inner)), Doc::SoftLine, t(")")]))
    }

    #[test]
    fn groups_break_only_when_they_do_not_fit() {
        assert_eq!(render(&list(&["a", "b"]), 20), "f(a, b)");
        assert_eq!(render(&list(&["aaaa", "bbbb", "cccc"]), 10), "f(\n    aaaa,\n    bbbb,\n    cccc,\n)");
    }

    #[test]
    fn the_rest_of_the_line_counts() {
        // `f(a, b);` is 8 wide: with the `;` it does not fit in 7.
        let d = Doc::Concat(vec![list(&["a", "b"]), t(";")]);
        assert_eq!(render(&d, 8), "f(a, b);");
        assert_eq!(render(&d, 7), "f(\n    a,\n    b,\n);");
    }

    #[test]
    fn comments_have_no_width_and_blank_lines_no_spaces() {
        let d = Doc::Concat(vec![
            list(&["a", "b"]),
            t(";"),
            Doc::Comment(" // a long comment".into()),
            Doc::nest(Doc::Concat(vec![Doc::HardLine, Doc::HardLine, t("x")])),
        ]);
        assert_eq!(render(&d, 8), "f(a, b); // a long comment\n\n    x");
    }

    #[test]
    fn right_hand_sides_move_to_the_next_line_before_breaking() {
        let rhs = |items: &[&str]| Doc::Concat(vec![t("let x ="), Doc::Rhs(Box::new(list(items))), t(";")]);
        assert_eq!(render(&rhs(&["a"]), 20), "let x = f(a);");
        assert_eq!(render(&rhs(&["aaaa", "bbbb"]), 19), "let x =\n    f(aaaa, bbbb);");
        assert_eq!(render(&rhs(&["aaaa", "bbbb"]), 16), "let x = f(\n    aaaa,\n    bbbb,\n);");
        // Text that fits nowhere stays on the line.
        let long = Doc::Concat(vec![t("x ="), Doc::Rhs(Box::new(t("aaaaaaaaaaaa"))), t(";")]);
        assert_eq!(render(&long, 10), "x = aaaaaaaaaaaa;");
    }

    #[test]
    fn if_break_follows_the_named_group() {
        let cond = Doc::group_id(7, Doc::Concat(vec![t("aaaa"), Doc::nest(Doc::Concat(vec![Doc::Line, t("&& b")]))]));
        let d = Doc::Concat(vec![t("if "), cond, Doc::if_break(Some(7), Doc::HardLine, t(" ")), t("{")]);
        assert_eq!(render(&d, 20), "if aaaa && b {");
        assert_eq!(render(&d, 12), "if aaaa\n    && b\n{");
    }
}
