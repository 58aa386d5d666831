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

/// Every line of `out` fits in 100 columns.
fn assert_narrow(out: &str) {
    for line in out.lines() {
        assert!(line.chars().count() <= 100, "line over 100 columns:\n{line}\nin\n{out}");
    }
}

#[test]
fn short_borrows_are_kept_as_written() {
    let src = "fn main() -[t: cpu.thread]-> () { let a = &h; let b = &shrd h; let c = &uniq h; let d = &'r h; let e = &'r shrd h; let f = & &h; let g = & &shrd h; }";
    let out = assert_stable(src);
    assert_eq!(
        out,
        "fn main() -[t: cpu.thread]-> () {
    let a = &h;
    let b = &shrd h;
    let c = &uniq h;
    let d = &'r h;
    let e = &'r shrd h;
    let f = & &h;
    let g = & &shrd h;
}
"
    );
}

#[test]
fn execution_resource_types_keep_their_spelling() {
    let src = "fn a() -[t: cpu.Thread]-> () {} fn b() -[g: gpu.Grid<X<1>, X<32>>]-> () {} fn c() -[g: gpu.grid<X<1>, X<32>>]-> () {}
fn d() -[b: gpu.block<X<32>>]-> () {} fn e() -[b: gpu.Block<X<32>>]-> () {} fn f() -[w: gpu.warp]-> () {} fn g() -[w: gpu.Warp]-> () {}
fn h(x: f32) -[t: gpu.thread]-> f32 { x } fn i(x: f32) -[t: gpu.Thread]-> f32 { x } fn j() -[t: Any]-> () {}";
    let out = assert_stable(src);
    for written in [
        "cpu.Thread",
        "gpu.Grid<X<1>, X<32>>",
        "gpu.grid<X<1>, X<32>>",
        "gpu.block<X<32>>",
        "gpu.Block<X<32>>",
        "gpu.warp]",
        "gpu.Warp]",
        "gpu.thread]",
        "gpu.Thread]",
        "-[t: Any]->",
    ] {
        assert!(out.contains(written), "`{written}` lost:\n{out}");
    }
}

#[test]
fn constants_keep_their_form() {
    assert_eq!(assert_stable("const N: nat = 4;\nconst M = N*2;"), "const N: nat = 4;\nconst M = N * 2;\n");
}

#[test]
fn powers_in_sizes_are_tight() {
    let out = assert_stable(
        "fn f<k: nat>(a: &shrd [f32; 2 ^ (k + 1) * 3]) -[t: gpu.thread]-> () { let p = a.group::<2^k>; }",
    );
    assert!(out.contains("[f32; 2^(k + 1) * 3]") && out.contains("a.group::<2^k>"), "{out}");
}

#[test]
fn long_signatures_break_their_lists() {
    // Generic parameters, then parameters, one per line with a trailing comma.
    let src = "fn red<first_size: nat, second_size: nat, third_size: nat, fourth_size: nat, fifth_size: nat, m: mem>(input: &shrd gpu.global [u32; first_size], output: &uniq gpu.global [u32; second_size]) -[grid: gpu.grid<X<1>, X<32>>]-> () { }";
    let out = assert_stable(src);
    assert_narrow(&out);
    assert_eq!(
        out,
        "fn red<
    first_size: nat,
    second_size: nat,
    third_size: nat,
    fourth_size: nat,
    fifth_size: nat,
    m: mem,
>(
    input: &shrd gpu.global [u32; first_size],
    output: &uniq gpu.global [u32; second_size],
) -[grid: gpu.grid<X<1>, X<32>>]-> () {}
"
    );
    // Without parameters the arrow moves to the next line.
    let out = assert_stable(
        "fn a_kernel_with_a_rather_long_name_and_no_parameters() -[grid: gpu.grid<XY<1024, 1024>, XYZ<32, 8, 4>>]-> () { }",
    );
    assert_eq!(
        out,
        "fn a_kernel_with_a_rather_long_name_and_no_parameters()\n    -[grid: gpu.grid<XY<1024, 1024>, XYZ<32, 8, 4>>]-> () {}\n"
    );
}

#[test]
fn where_clauses_take_their_own_lines_when_needed() {
    let short = assert_stable("fn f<n: nat>(v: &shrd [f32; n]) -[t: gpu.thread]-> () where n >= 1 { }");
    assert_eq!(short, "fn f<n: nat>(v: &shrd [f32; n]) -[t: gpu.thread]-> () where n >= 1 {}\n");
    let src = "fn block_rev<n: nat>(v: &uniq gpu.global [i32; n]) -[grid: gpu.grid<X<n / 32>, X<32>>]-> () where n % 32 == 0 { sync }";
    let out = assert_stable(src);
    assert_eq!(
        out,
        "fn block_rev<n: nat>(v: &uniq gpu.global [i32; n]) -[grid: gpu.grid<X<n / 32>, X<32>>]-> ()
where n % 32 == 0
{
    sync
}
"
    );
    let src = "fn f<n: nat, m: nat>(v: &shrd [f32; n]) -[t: gpu.thread]-> () where n % 256 == 0, m <= n, n >= 1024, m % 2 == 0, m % 4 == 0, n % 8 == 0, n % 16 == 0, m >= 1, m <= 4096 { }";
    let out = assert_stable(src);
    assert_narrow(&out);
    assert_eq!(
        out,
        "fn f<n: nat, m: nat>(v: &shrd [f32; n]) -[t: gpu.thread]-> ()
where
    n % 256 == 0,
    m <= n,
    n >= 1024,
    m % 2 == 0,
    m % 4 == 0,
    n % 8 == 0,
    n % 16 == 0,
    m >= 1,
    m <= 4096,
{}
"
    );
}

#[test]
fn long_statements_wrap_at_100_columns() {
    let src = "fn f() -[t: cpu.thread]-> () {
    let result_value_with_long_name = some_function_with_a_long_name(first_argument, second_argument, third_argument_long);
    let value = some_function_with_a_long_name(first_argument_value, second_argument_value, third_argument_value);
    if first_condition_value_is_long && second_condition_value_is_long || third_condition_value_long_too { x = 1; }
    let s = aaaaaaaaaaaaaaaaaaaa + bbbbbbbbbbbbbbbbbbbbbbbbbbb * cccccccccccccccccccccccc + dddddddddddddddddddddd * eeeeeeeeeeeee;
    f::<first_generic_argument_long_name_x, second_generic_argument_long_name_y, third_generic_argument>(a);
    let t = [first_tuple_element_long_name, second_tuple_element_long_name, third_tuple_element_name_x_y];
    x = aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa;
}";
    let out = assert_stable(src);
    assert_eq!(
        out,
        "fn f() -[t: cpu.thread]-> () {
    let result_value_with_long_name =
        some_function_with_a_long_name(first_argument, second_argument, third_argument_long);
    let value = some_function_with_a_long_name(
        first_argument_value,
        second_argument_value,
        third_argument_value,
    );
    if first_condition_value_is_long && second_condition_value_is_long
        || third_condition_value_long_too
    {
        x = 1;
    }
    let s = aaaaaaaaaaaaaaaaaaaa
        + bbbbbbbbbbbbbbbbbbbbbbbbbbb * cccccccccccccccccccccccc
        + dddddddddddddddddddddd * eeeeeeeeeeeee;
    f::<
        first_generic_argument_long_name_x,
        second_generic_argument_long_name_y,
        third_generic_argument,
    >(a);
    let t = [
        first_tuple_element_long_name,
        second_tuple_element_long_name,
        third_tuple_element_name_x_y,
    ];
    x = aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa;
}
"
    );
}

#[test]
fn view_chains_break_at_dots() {
    let src = "fn k(tmp: &uniq gpu.shared [u32; 256]) -[grid: gpu.grid<X<1>, X<128>>]-> () { sched(X) block in grid.blocks { sched(X) thread in block.threads { for k in 0..8 {
        let pair = &uniq tmp.take_left::<NT / 2^k>.group::<NT / 2^(k + 1)>.transpose[[thread]].take_left::<1>;
        tmp.group_by_row::<32, 4>[[thread]][i] = input.group_by_tile::<32, 32>.transpose[[block]].group_by_row::<32, 4>[[thread]][i];
    } } } }
view a_rather_long_view_name<r: nat, c: nat> = group::<r>.transpose.map(map(group::<c>)).map(map(transpose)).map(transpose);";
    let out = assert_stable(src);
    assert_narrow(&out);
    assert!(
        out.contains(
            "
                let pair = &uniq tmp.take_left::<NT / 2^k>
                    .group::<NT / 2^(k + 1)>
                    .transpose[[thread]]
                    .take_left::<1>;
                tmp.group_by_row::<32, 4>[[thread]][i] = input
                    .group_by_tile::<32, 32>
                    .transpose[[block]]
                    .group_by_row::<32, 4>[[thread]][i];
"
        ),
        "{out}"
    );
    assert!(
        out.contains(
            "view a_rather_long_view_name<r: nat, c: nat> =
    group::<r>.transpose.map(map(group::<c>)).map(map(transpose)).map(transpose);"
        ),
        "{out}"
    );
}

#[test]
fn sched_and_split_headers_break_their_resources() {
    let src = "fn k() -[grid: gpu.grid<X<1>, X<32>>]-> () { sched(X) block in grid { sched(X) thread in block { sched(X) a_thread_variable_name in some_execution_resource_name.blocks.forall(X).threads[0..16]_X {
        split(X) some_execution_resource_name.blocks.forall(X).threads.forall(X).threads.forall(X) at 16 { a => {}, b => {} } } } } }";
    let out = assert_stable(src);
    assert_narrow(&out);
    assert!(
        out.contains(
            "
            sched(X) a_thread_variable_name in some_execution_resource_name
                .blocks
                .forall(X)
                .threads[0..16]_X
            {
                split(X) some_execution_resource_name
                    .blocks
                    .forall(X)
                    .threads
                    .forall(X)
                    .threads
                    .forall(X) at 16
                {
                    a => {},
                    b => {},
                }
"
        ),
        "{out}"
    );
}

#[test]
fn short_expression_blocks_stay_on_one_line() {
    let src = "fn f() -[t: cpu.thread]-> () { let x = if a { 1 } else if b { 2 } else { 3 }; let z = unsafe { node_data[dst] }; if a { b } else { c } }";
    let out = assert_stable(src);
    assert_eq!(
        out,
        "fn f() -[t: cpu.thread]-> () {
    let x = if a { 1 } else if b { 2 } else { 3 };
    let z = unsafe { node_data[dst] };
    if a {
        b
    } else {
        c
    }
}
"
    );
    // Too long for one line, or with a comment inside: block by block.
    let src = "fn f() -[t: cpu.thread]-> () { let y = if a_long_condition_name_here { some_long_value_name_one } else { some_long_value_name_two }; let w = if a { 1 } else { /* two */ 2 }; }";
    let out = assert_stable(src);
    assert_eq!(
        out,
        "fn f() -[t: cpu.thread]-> () {
    let y = if a_long_condition_name_here {
        some_long_value_name_one
    } else {
        some_long_value_name_two
    };
    let w = if a {
        1
    } else {
        /* two */
        2
    };
}
"
    );
}

#[test]
fn comments_never_widen_the_code() {
    // A long comment at the end of a statement does not break the statement before it.
    let src = "fn f() -[t: cpu.thread]-> () {\n    let value = some_function(first_argument, second_argument); // a comment that runs far beyond the hundredth column\n}\n";
    let out = assert_stable(src);
    assert_eq!(out, src);
    // A comment inside an expression moves before its statement, broken or not.
    let src = "fn f() -[t: cpu.thread]-> () {\n    g(first_argument_value, /* one */ second_argument_value, third_argument_value, fourth_argument_value_wxyz);\n}\n";
    let out = assert_stable(src);
    assert_eq!(
        out,
        "fn f() -[t: cpu.thread]-> () {
    /* one */
    g(
        first_argument_value,
        second_argument_value,
        third_argument_value,
        fourth_argument_value_wxyz,
    );
}
"
    );
}
