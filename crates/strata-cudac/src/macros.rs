//! Function-like macros: `#define MAX(a, b) ((a) > (b) ? (a) : (b))`.
//!
//! A use `MAX(x + 1, y)` substitutes the arguments' text for the parameters in the body (token by
//! token, as the C preprocessor does; `#` and `##` are not supported) and parses the result: as an
//! expression where the use is a value, as statements where it is a statement (so
//! `CHECK(cudaMalloc(&p, n))` and `do { … } while (0)` bodies work). Everything in an expansion
//! points at the use in the `.cu` file. Expansions nest up to [`MAX_DEPTH`] deep.

use super::*;

/// A function-like macro.
pub(crate) struct FnMacro {
    pub(crate) params: Vec<String>,
    pub(crate) body: String,
}

const MAX_DEPTH: u32 = 64;

impl Lx {
    /// `#define NAME(params) body`.
    pub(crate) fn define_fn_macro(&mut self, n: Node, src: &Src) -> R<()> {
        let name = self.text(self.child(n, "name", src)?, src).to_string();
        let plist = self.child(n, "parameters", src)?;
        let mut params = Vec::new();
        let mut c = plist.walk();
        for p in plist.named_children(&mut c) {
            if p.kind() != "identifier" {
                return Err(self.unsupported(p, src, "variadic macros"));
            }
            params.push(self.text(p, src).to_string());
        }
        let body = n.child_by_field_name("value").map_or("", |v| self.text(v, src)).trim().to_string();
        if body.contains('#') {
            return Err(self.unsupported(n, src, "`#` and `##` in macros"));
        }
        self.fn_macros.insert(name, Rc::new(FnMacro { params, body }));
        Ok(())
    }

    /// The text of the use `n` (a call of a function-like macro) after substitution.
    fn expansion(&self, n: Node, m: &FnMacro, src: &Src) -> R<String> {
        let args = self.args(n, src)?;
        if args.len() != m.params.len() && !(m.params.is_empty() && args.is_empty()) {
            return Err(self.unsupported(
                n,
                src,
                format!("this macro use with {} arguments (the macro takes {})", args.len(), m.params.len()),
            ));
        }
        if self.macro_depth >= MAX_DEPTH {
            return Err(self.unsupported(n, src, "macros nested this deep (a macro that uses itself?)"));
        }
        let args: Vec<&str> = args.iter().map(|a| self.text(*a, src)).collect();
        Ok(substitute(&m.body, &m.params, &args))
    }

    /// A use of a function-like macro as a value.
    pub(crate) fn macro_value(&mut self, n: Node, m: &FnMacro, src: &Src) -> R<(Expr, CTy)> {
        let text = self.expansion(n, m, src)?;
        let prefix = "int __strata_macro = (";
        let wrapped = format!("{prefix}{text});");
        let tree = parse(&wrapped).ok_or_else(|| self.unsupported(n, src, "this macro use"))?;
        let msrc = Src { text: &wrapped, base: 0, at: Some(self.span(n, src)) };
        if tree.root_node().has_error() {
            return Err(self.unsupported(
                n,
                src,
                format!("this macro use, whose expansion `{text}` is not an expression"),
            ));
        }
        let e = tree
            .root_node()
            .named_child(0)
            .and_then(|d| d.child_by_field_name("declarator"))
            .and_then(|d| d.child_by_field_name("value"))
            .ok_or_else(|| self.unsupported(n, src, "this macro use"))?;
        self.macro_depth += 1;
        let r = self.rvalue(e, &msrc);
        self.macro_depth -= 1;
        r
    }

    /// A use of a function-like macro as a statement.
    pub(crate) fn macro_stmt(&mut self, n: Node, m: &FnMacro, src: &Src, out: &mut Vec<Stmt>) -> R<()> {
        let text = self.expansion(n, m, src)?;
        let wrapped = format!("void __strata_macro(void) {{\n{text};\n}}");
        let tree = parse(&wrapped).ok_or_else(|| self.unsupported(n, src, "this macro use"))?;
        let msrc = Src { text: &wrapped, base: 0, at: Some(self.span(n, src)) };
        if tree.root_node().has_error() {
            return Err(self.unsupported(
                n,
                src,
                format!("this macro use, whose expansion `{text}` is not a statement"),
            ));
        }
        let body = tree
            .root_node()
            .named_child(0)
            .and_then(|f| f.child_by_field_name("body"))
            .ok_or_else(|| self.unsupported(n, src, "this macro use"))?;
        self.macro_depth += 1;
        let mut c = body.walk();
        let r = body.named_children(&mut c).try_for_each(|s| self.stmt(s, &msrc, out));
        self.macro_depth -= 1;
        r
    }
}

/// `body` with every identifier token that is one of `params` replaced by the matching argument
/// (string and character literals left alone).
fn substitute(body: &str, params: &[String], args: &[&str]) -> String {
    let b = body.as_bytes();
    let mut out = String::with_capacity(body.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'"' || c == b'\'' {
            let start = i;
            i += 1;
            while i < b.len() && b[i] != c {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(b.len());
            out.push_str(&body[start..i]);
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let word = &body[start..i];
            match params.iter().position(|p| p == word) {
                Some(k) => out.push_str(args[k]),
                None => out.push_str(word),
            }
        } else if c.is_ascii_digit() {
            // A number (`1e5f`, `0x1F`): its letters are not identifiers.
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.' || b[i] == b'_') {
                i += 1;
            }
            out.push_str(&body[start..i]);
        } else {
            let ch = body[i..].chars().next().unwrap_or(' ');
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}
