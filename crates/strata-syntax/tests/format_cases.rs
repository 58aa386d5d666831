//! The canonical layout of the formatter on hand-picked programs (`strata fmt`).

use strata_diag::FileId;
use strata_syntax::{format_source, parse_erased};

fn fmt(src: &str) -> String {
    match format_source(FileId(0), src) {
        Ok(s) => s,
        Err(d) => panic!("syntax errors in {src:?}: {d:?}"),
    }
}

fn assert_stable(src: &str) -> String {
    let once = fmt(src);
    let twice = fmt(&once);
    assert_eq!(once, twice, "not idempotent");
    assert_eq!(parse_erased(&once).module, parse_erased(src).module, "tree changed:\n{once}");
    once
}

#[test]
fn canonical_signature_and_body() {
    let src = "fn transpose(input: &gpu.global [[f64;2048];2048], output: &uniq gpu.global [[f64;2048];2048],\n [grid.blocks.forall(X).forall(Y)] tmp: &uniq gpu.shared [[f64;32];32]\n) -[grid: gpu.Grid<XY<64,64>,XY<32,8>>]-> () {\n sched(Y,X) block in grid { sync(block); tmp.group_by_row::<32,4>[[thread]][i] = 1.0 } }";
    let out = assert_stable(src);
    let expected = "fn transpose(
    input: &gpu.global [[f64; 2048]; 2048],
    output: &uniq gpu.global [[f64; 2048]; 2048],
    [grid.blocks.forall(X).forall(Y)] tmp: &uniq gpu.shared [[f64; 32]; 32],
) -[grid: gpu.Grid<XY<64, 64>, XY<32, 8>>]-> () {
    sched(Y, X) block in grid {
        sync(block);
        tmp.group_by_row::<32, 4>[[thread]][i] = 1.0
    }
}
";
    assert_eq!(out, expected);
}

#[test]
fn launches_splits_and_short_signatures() {
    let src = "fn main() -[t: cpu.thread]-> () { scale_vec<<<X<32>, X<32>>>(&uniq vec); split(X) block at 32 { first => { sync }, other => { } } }";
    let out = assert_stable(src);
    assert_eq!(
        out,
        "fn main() -[t: cpu.thread]-> () {
    scale_vec::<<<X<32>, X<32>>>>(&uniq vec);
    split(X) block at 32 {
        first => {
            sync
        },
        other => {},
    }
}
"
    );
}

#[test]
fn nat_parentheses_follow_precedence() {
    let src = "const A: nat = (a - (b - c)) / (d * e) ^ f ^ g % (h + 1);";
    let out = assert_stable(src);
    assert_eq!(out, "const A: nat = (a - (b - c)) / (d * e)^f^g % (h + 1);\n");
    let out = assert_stable("const B: nat = (2 ^ 3) ^ 4 + (5 + 6);");
    assert_eq!(out, "const B: nat = (2^3)^4 + (5 + 6);\n");
}

#[test]
fn comments_stay_in_place() {
    let src = "// head\n\n\n// about f\nfn f() { // opening\n    let x = 1; // same line\n\n\n    /* own */ let y = x +\n // inside\n 2;\n    // before close\n}\n// tail\n";
    let out = assert_stable(src);
    assert_eq!(
        out,
        "// head

// about f
fn f() {
    // opening
    let x = 1; // same line

    /* own */
    // inside
    let y = x + 2;
    // before close
}
// tail
"
    );
}

#[test]
fn literals_print_exactly() {
    let src = "fn f() { let s = \"a\\\"b\\\\c\\nd\\te\"; let x = 1.50e-3f32 + 7u32 as f32; let t = (1).0; }";
    let out = assert_stable(src);
    assert!(out.contains("\"a\\\"b\\\\c\\nd\\te\""), "{out}");
    assert!(out.contains("1.50e-3f32 + 7u32 as f32"), "{out}");
    assert!(out.contains("(1).0"), "{out}");
}

#[test]
fn refuses_files_with_errors() {
    assert!(format_source(FileId(0), "fn f( {").is_err());
}

#[test]
fn empty_file_stays_empty() {
    assert_eq!(fmt(""), "");
    assert_eq!(fmt("// only\n"), "// only\n");
}
