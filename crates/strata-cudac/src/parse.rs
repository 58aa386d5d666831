//! Parsing with tree-sitter-cuda, syntax errors, spans, and the file-level preprocessor items
//! (`#include`, object-like `#define`).

use super::*;

pub(crate) fn parse(text: &str) -> Option<Tree> {
    let mut p = Parser::new();
    p.set_language(&tree_sitter_cuda::LANGUAGE.into()).ok()?;
    p.parse(text, None)
}

pub(crate) fn syntax_errors(file: FileId, n: Node, src: &Src) -> R<()> {
    if n.is_error() || n.is_missing() {
        let span = span_of(file, n, src);
        let what =
            if n.is_missing() { format!("expected `{}`", n.kind()) } else { "this is not valid CUDA-C".to_string() };
        return Err(Box::new(Diagnostic::error(codes::UNEXPECTED_TOKEN, "syntax error", span, what)));
    }
    if n.has_error() {
        let mut c = n.walk();
        for ch in n.children(&mut c) {
            syntax_errors(file, ch, src)?;
        }
    }
    Ok(())
}

pub(crate) fn span_of(file: FileId, n: Node, src: &Src) -> Span {
    if let Some(at) = src.at {
        return at;
    }
    let lo = (n.start_byte() as i64 + src.base).max(0) as u32;
    let hi = (n.end_byte() as i64 + src.base).max(0) as u32;
    Span::new(file, lo, hi.max(lo))
}

/// The expression of a macro body (parsed inside `int __strata_macro = (…);`).
pub(crate) fn macro_expr(m: &Macro) -> Option<Node<'_>> {
    let root = m.tree.root_node();
    let decl = root.named_child(0)?;
    let init = decl.child_by_field_name("declarator")?;
    let value = init.child_by_field_name("value")?;
    // Skip the wrapper's own parentheses.
    if value.kind() == "parenthesized_expression" {
        value.named_child(0)
    } else {
        Some(value)
    }
}

impl Lx {
    /// Defines `name` as the C expression `value` (a `#define`'s value, or the initialiser of a
    /// file-level `const` scalar), parsed on its own with spans into the file.
    pub(crate) fn object_macro(&mut self, name: String, value: Node, src: &Src) -> R<()> {
        let body = self.text(value, src);
        let prefix = "int __strata_macro = (";
        let text = format!("{prefix}{body});");
        let tree = parse(&text).ok_or_else(|| self.unsupported(value, src, "this macro body"))?;
        let base = value.start_byte() as i64 + src.base - prefix.len() as i64;
        let span = self.span(value, src);
        if tree.root_node().has_error() {
            return Err(self.unsupported(value, src, "a macro whose value is not a C expression"));
        }
        self.macros.insert(name, Rc::new(Macro { tree, text, base, span }));
        Ok(())
    }

    pub(crate) fn item(&mut self, n: Node, src: &Src) -> R<()> {
        match n.kind() {
            "comment" => Ok(()),
            "preproc_include" if self.include(n, src, false)? => Ok(()),
            "preproc_include" => {
                let path = self.child(n, "path", src)?;
                let name = self.text(path, src).trim_matches(|c| c == '<' || c == '>' || c == '"');
                if STD_HEADERS.contains(&name) {
                    Ok(())
                } else {
                    Err(self.unsupported(path, src, format!("`#include` of `{name}`")))
                }
            }
            "preproc_def" => {
                let name = self.text(self.child(n, "name", src)?, src).to_string();
                let Some(value) = n.child_by_field_name("value") else {
                    return Err(self.unsupported(n, src, "a `#define` without a value"));
                };
                self.object_macro(name, value, src)
            }
            // Inlined where called ([`ptr_fn`]).
            "function_definition" if self.returns_pointer(n) => Ok(()),
            "function_definition" => self.function(n, src),
            // Function templates: recorded by the first pass, lowered where instantiated.
            "template_declaration" => Ok(()),
            // Defined by the first pass (`declare`).
            "struct_specifier" | "type_definition" => self.struct_methods(n, src),
            "declaration" if n.child_by_field_name("declarator").is_some_and(|d| d.kind() == "function_declarator") => {
                self.prototype(n, src)
            }
            "preproc_function_def" => self.define_fn_macro(n, src),
            // Global variables: lowered by the first pass (`declare`, [`globals`]).
            "declaration" => Ok(()),
            other => Err(self.unsupported(n, src, format!("`{other}` at file level"))),
        }
    }
}

/// The headers whose declarations the front end knows (everything else it would need is refused
/// where used).
pub(crate) const STD_HEADERS: &[&str] = &[
    "stdio.h",
    "stdlib.h",
    "cuda.h",
    "cuda_runtime.h",
    "cuda_runtime_api.h",
    "device_launch_parameters.h",
    "assert.h",
    "math.h",
    "stdint.h",
    "stdbool.h",
    "string.h",
    "cstring",
    "time.h",
    "ctime",
    "cstdio",
    "cstdlib",
    "cstdint",
    "cmath",
    "cassert",
];
