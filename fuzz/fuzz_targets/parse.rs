//! Fuzz target: arbitrary bytes -> (if UTF-8) lex + parse -> render every diagnostic.
//!
//! The parser must never panic, hang or overflow the stack, and the renderer must accept every
//! span the parser produces.
#![no_main]

use libfuzzer_sys::fuzz_target;
use strata_diag::{render_plain, SourceMap};

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    let mut sources = SourceMap::new();
    let file = sources.add("fuzz.strata", src);
    let parsed = strata_syntax::parse(file, src);
    // Every diagnostic's spans must lie inside the file, on character boundaries.
    for d in &parsed.diagnostics {
        for span in std::iter::once(d.primary.span).chain(d.secondary.iter().map(|l| l.span)) {
            assert!(span.lo <= span.hi, "inverted span {span:?}");
            assert!(src.get(span.range()).is_some(), "span {span:?} off a char boundary");
        }
    }
    let rendered = render_plain(&parsed.diagnostics, &sources);
    assert_eq!(parsed.diagnostics.is_empty(), rendered.is_empty());
    // The structurally-erased parse must agree on whether there are errors.
    let erased = strata_syntax::parse_erased(src);
    assert_eq!(erased.diagnostics.len(), parsed.diagnostics.len());
});
