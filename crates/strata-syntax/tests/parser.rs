//! Tree-shape tests: each pins down how one construct of the paper's grammar is read.

use strata_syntax::ast::*;
use strata_syntax::parse_erased;

fn module(src: &str) -> Module {
    let parsed = parse_erased(src);
    assert!(parsed.diagnostics.is_empty(), "unexpected errors for {src:?}: {:#?}", parsed.diagnostics);
    parsed.module
}

fn codes(src: &str) -> Vec<&'static str> {
    parse_erased(src).diagnostics.iter().map(|d| d.code.as_str()).collect()
}

fn body(src: &str) -> Vec<Stmt> {
    let m = module(&format!("fn f() {{ {src} }}"));
    let Item::Fn(f) = &m.items[0] else { panic!("not a fn") };
    f.body.clone().expect("body").stmts
}

fn expr(src: &str) -> Expr {
    match body(&format!("{src};")).remove(0) {
        Stmt::Expr { expr, .. } => expr,
        s => panic!("not an expression statement: {s:?}"),
    }
}

fn ty(src: &str) -> Ty {
    let m = module(&format!("fn f(x: {src}) {{}}"));
    let Item::Fn(f) = &m.items[0] else { panic!("not a fn") };
    f.params[0].ty.clone()
}

fn path(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Path(segs) => segs.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join("::"),
        k => panic!("not a path: {k:?}"),
    }
}

#[test]
fn precedence_follows_rust() {
    // `==` binds loosest, then `<<`, then `+`, then `*`.
    let ExprKind::Binary(BinOp::Eq, l, _) = expr("a * b + c << 1 == d").kind else { panic!("top is not ==") };
    let ExprKind::Binary(BinOp::Shl, l, _) = l.kind else { panic!("not <<") };
    let ExprKind::Binary(BinOp::Add, l, _) = l.kind else { panic!("not +") };
    assert!(matches!(l.kind, ExprKind::Binary(BinOp::Mul, _, _)));
}

#[test]
fn subtraction_is_left_associative_and_cast_binds_tighter() {
    let ExprKind::Binary(BinOp::Sub, l, r) = expr("a - b - c").kind else { panic!() };
    assert!(matches!(l.kind, ExprKind::Binary(BinOp::Sub, _, _)));
    assert_eq!(path(&r), "c");
    let ExprKind::Binary(BinOp::Mul, _, r) = expr("x * i as f32").kind else { panic!() };
    assert!(matches!(r.kind, ExprKind::Cast(_, Ty { kind: TyKind::Scalar(ScalarTy::F32), .. })));
}

#[test]
fn select_and_views_chain_left_to_right() {
    let e = expr("input.group_by_tile::<32, 32>.transpose[[block]].group_by_row::<32, 4>[[thread]][i]");
    let ExprKind::Index(e, _) = e.kind else { panic!("outer is index") };
    let ExprKind::Select(e, exec) = e.kind else { panic!("then select") };
    assert!(matches!(exec.base, ExecBase::Var(ref v) if v.name == "thread"));
    let ExprKind::View(e, v) = e.kind else { panic!("then view") };
    assert_eq!(v.name.name, "group_by_row");
    assert_eq!(v.nat_args.len(), 2);
    let ExprKind::Select(e, _) = e.kind else { panic!("select block") };
    let ExprKind::View(e, v) = e.kind else { panic!("transpose") };
    assert_eq!(v.name.name, "transpose");
    let ExprKind::View(e, _) = e.kind else { panic!("group_by_tile") };
    assert_eq!(path(&e), "input");
}

#[test]
fn nested_index_is_not_a_select() {
    let ExprKind::Index(_, idx) = expr("a[b[i]]").kind else { panic!() };
    assert!(matches!(idx.kind, ExprKind::Index(_, _)));
}

#[test]
fn map_view_takes_a_view_chain() {
    let ExprKind::View(_, v) = expr("a.map(group::<2>.transpose)").kind else { panic!() };
    assert_eq!(v.view_args.len(), 1);
    assert_eq!(v.view_args[0].len(), 2);
}

#[test]
fn array_types_of_listing_2() {
    let TyKind::Array(inner, n) = ty("[[f64; 2048]; 2048]").kind else { panic!("array of arrays") };
    assert!(matches!(n.kind, NatKind::Lit(2048)));
    assert!(matches!(inner.kind, TyKind::Array(_, _)));
    assert!(matches!(ty("[[f64; 32]]").kind, TyKind::ViewArray(_, _)));
    assert!(matches!(ty("[ [f64; 32]; 4]").kind, TyKind::Array(_, _)));
}

#[test]
fn reference_types_with_optional_parts() {
    let TyKind::Ref(r) = ty("&r shrd m AtomicU32").kind else { panic!() };
    assert!(matches!(r.prv, Some(Prv::Var(ref v)) if v.name == "r"));
    assert_eq!(r.own, Some(Ownership::Shrd));
    assert!(matches!(r.mem, Some(Mem { kind: MemKind::Var(_), .. })));
    assert!(matches!(r.ty.kind, TyKind::Scalar(ScalarTy::AtomicU32)));
    let TyKind::Ref(r) = ty("&'a uniq gpu.global [f32; n]").kind else { panic!() };
    assert!(matches!(r.prv, Some(Prv::Region(_))));
    assert!(matches!(r.mem, Some(Mem { kind: MemKind::GpuGlobal, .. })));
    let TyKind::Ref(r) = ty("&uniq d").kind else { panic!() };
    assert!(r.mem.is_none());
    assert!(matches!(r.ty.kind, TyKind::Var(_)));
    let TyKind::At(_, m) = ty("[i32; n] @ cpu.mem").kind else { panic!() };
    assert_eq!(m.kind, MemKind::CpuMem);
}

#[test]
fn nat_precedence_and_right_associative_power() {
    let TyKind::Array(_, n) = ty("[f32; 2 ^ 3 ^ 2 + n / 2]").kind else { panic!() };
    let NatKind::Bin(NatOp::Add, l, r) = n.kind else { panic!("+ on top") };
    let NatKind::Bin(NatOp::Pow, _, rr) = l.kind else { panic!("^ left") };
    assert!(matches!(rr.kind, NatKind::Bin(NatOp::Pow, _, _)));
    assert!(matches!(r.kind, NatKind::Bin(NatOp::Div, _, _)));
}

#[test]
fn launches_in_all_three_spellings() {
    for src in [
        "f::<<<X<32>, X<32>>>>(&uniq v)",
        "f::<<<X<32>, X<32>>>(&uniq v)",
        "f<<<X<1>, X<SIZE>>>>(v)",
        "f::<n, f32>::<<<XY<2, 2>, X<32>; [f32; 32]>>>(v)",
    ] {
        let ExprKind::Call { launch: Some(l), args, .. } = expr(src).kind else { panic!("{src} is not a launch") };
        assert_eq!(args.len(), 1, "{src}");
        assert!(!l.grid.dims.is_empty());
    }
    let ExprKind::Call { generics, launch: Some(l), .. } =
        expr("f::<n, f32>::<<<XY<2, 2>, X<32>; [f32; 32]>>>(v)").kind
    else {
        panic!()
    };
    assert_eq!(generics.len(), 2);
    assert!(matches!(generics[1], GenericArg::Ty(_)));
    assert_eq!(l.shared.len(), 1);
    assert_eq!(l.grid.dims.len(), 2);
}

#[test]
fn calls_paths_and_exec_arguments() {
    let ExprKind::Call { func, args, .. } = expr("CpuHeap::new([0; n])").kind else { panic!() };
    assert_eq!(func.len(), 2);
    assert!(matches!(args[0].kind, ExprKind::ArrayRepeat(_, _)));
    let ExprKind::Call { exec: Some(e), .. } = expr("reduce::<32>::<block>(x)").kind else { panic!() };
    assert!(matches!(e.base, ExecBase::Var(_)));
}

#[test]
fn sched_split_sync_and_exec_paths() {
    let ExprKind::Sched { dims, exec, .. } = expr("sched(Y, X) t in grid.blocks.forall(Y) {}").kind else { panic!() };
    assert_eq!(dims, vec![DimName::Y, DimName::X]);
    assert_eq!(exec.path, vec![ExecStep::Blocks, ExecStep::Forall(DimName::Y)]);
    let ExprKind::Split { dim, exec, arms, .. } = expr("split(Y) block.threads at 1 { a => {}, b => { sync } }").kind
    else {
        panic!()
    };
    assert_eq!(dim, DimName::Y);
    assert_eq!(exec.path, vec![ExecStep::Threads]);
    assert_eq!(arms[1].name.name, "b");
    let ExprKind::Sync(Some(e)) = expr("sync(block.threads[0..16]_X)").kind else { panic!() };
    assert!(matches!(e.path[1], ExecStep::Range(_, _, DimName::X)));
    assert!(matches!(expr("indep(X) b at 2 { l => {}, r => {} }").kind, ExprKind::Split { .. }));
}

#[test]
fn statements_lets_and_blocks() {
    let stmts = body("let [block] tmp: [f32; 32]; let mut x: i32 = 1; let(grid.blocks) y: f32; x += 2; <'a> { x } unsafe { x = 1; } for i in 0..4 { } x");
    assert_eq!(stmts.len(), 8);
    let Stmt::Let(l) = &stmts[0] else { panic!() };
    assert!(l.exec.is_some() && l.init.is_none());
    let Stmt::Let(l) = &stmts[1] else { panic!() };
    assert!(l.mutable);
    assert!(
        matches!(&stmts[4], Stmt::Expr { expr: Expr { kind: ExprKind::Block(b), .. }, semi: false } if b.regions.len() == 1)
    );
    assert!(matches!(&stmts[7], Stmt::Expr { semi: false, .. }));
}

#[test]
fn unsafe_prefix_on_an_expression() {
    let ExprKind::Unsafe(e) = expr("unsafe &shrd (*(*graph).node_data)[dst]").kind else { panic!() };
    assert!(matches!(e.kind, ExprKind::Borrow { own: Ownership::Shrd, .. }));
}

#[test]
fn short_shared_borrows_are_recorded() {
    for (src, own, short) in [
        ("&h", Ownership::Shrd, true),
        ("&'a h", Ownership::Shrd, true),
        ("&shrd h", Ownership::Shrd, false),
        ("&'a shrd h", Ownership::Shrd, false),
        ("&uniq h", Ownership::Uniq, false),
    ] {
        let e = expr(src);
        assert!(
            matches!(&e.kind, ExprKind::Borrow { own: o, short: s, .. } if *o == own && *s == short),
            "{src}: {e:?}"
        );
    }
}

#[test]
fn exec_type_spelling_is_recorded() {
    for (src, capitalised) in
        [("cpu.thread", false), ("cpu.Thread", true), ("gpu.grid<X<1>, X<1>>", false), ("gpu.Block<X<32>>", true)]
    {
        let m = module(&format!("fn f() -[e: {src}]-> () {{}}"));
        let Item::Fn(f) = &m.items[0] else { panic!() };
        assert_eq!(f.exec.as_ref().map(|e| e.ty.capitalised), Some(capitalised), "{src}");
    }
}

#[test]
fn items_generics_where_and_declarations() {
    let m = module(
        "const N: nat = 1024;\nview group_by_row<n: nat, k: nat> = group::<n / k>.transpose.map(transpose);\n\
         fn r<n: nat, m: mem, d: dty, r: prv>(x: &r shrd m [d; n]) -[b: gpu.Block<X<32>>]-> () where n % 32 == 0, 32 <= n;",
    );
    assert_eq!(m.items.len(), 3);
    let Item::Fn(f) = &m.items[2] else { panic!() };
    assert_eq!(
        f.generics.iter().map(|g| g.kind).collect::<Vec<_>>(),
        vec![Kind::Nat, Kind::Mem, Kind::DataTy, Kind::Prv]
    );
    assert_eq!(f.where_clauses.len(), 2);
    assert!(f.body.is_none());
    let Item::View(v) = &m.items[1] else { panic!() };
    assert_eq!(v.body.len(), 3);
}

#[test]
fn exec_types() {
    for (src, ok) in [
        ("cpu.thread", true),
        ("gpu.grid<X<64>, X<1024>>", true),
        ("gpu.Grid<XYZ<1, 2, 3>, XY<4, 4>>", true),
        ("gpu.Block<X<32>>", true),
        ("gpu.BlockGrp<X<2>, X<2>>", true),
        ("gpu.ThreadGrp<X<2>>", true),
        ("gpu.WarpGrp<4>", true),
        ("gpu.Warp", true),
        ("gpu.Thread", true),
        ("Any", true),
        ("gpu.Foo", false),
    ] {
        let errs = codes(&format!("fn f() -[e: {src}]-> () {{}}"));
        assert_eq!(errs.is_empty(), ok, "{src}: {errs:?}");
    }
}

#[test]
fn every_independent_error_is_reported() {
    let errs = codes("fn a() { let x = ; }\nfn b() { 1 = 2; }\nfn c() -[t: gpu.Bad]-> () {}\nfn d(n: foo) {}\n§\nfn e<n: bad>() {}\n");
    assert_eq!(errs, vec!["E0010", "E0016", "E0018", "E0001", "E0015"], "{errs:?}");
}

#[test]
fn literals_and_suffixes() {
    assert!(matches!(expr("7u32").kind, ExprKind::Lit(Lit::Int(7, Some(ScalarTy::U32)))));
    assert!(matches!(expr("1.5e3f32").kind, ExprKind::Lit(Lit::Float(ref s, Some(ScalarTy::F32))) if s == "1.5e3"));
    assert!(matches!(expr("2f64").kind, ExprKind::Lit(Lit::Int(2, Some(ScalarTy::F64)))));
    assert_eq!(codes("fn f() { 1.5u32; }"), vec!["E0004"]);
    assert_eq!(codes("fn f() { 1q8; }"), vec!["E0004"]);
    assert!(matches!(expr("t.0.1").kind, ExprKind::Field(_, Field::Index(1))));
}

#[test]
fn unclosed_delimiters_point_at_the_opener() {
    let parsed = parse_erased("fn f() {\n  let x = foo(1;\n");
    assert!(parsed.diagnostics.iter().any(|d| d.code.as_str() == "E0011" || d.code.as_str() == "E0010"));
    assert_eq!(codes("fn f() { { }"), vec!["E0011"]);
}

#[test]
fn unsafe_block_with_regions_ends_the_statement() {
    let stmts = body("unsafe <'a> { x = 1; } *p = 2;");
    assert_eq!(stmts.len(), 2);
    assert!(matches!(&stmts[1], Stmt::Expr { expr: Expr { kind: ExprKind::Assign(..), .. }, semi: true }));
}

#[test]
fn function_types_and_num_generics() {
    let m =
        module("fn r<d: num>(op: fn(d, d) -> d, g: fn() -[gpu.thread]-> (), x: d) -[t: gpu.thread]-> d { op(x, x) }");
    let Item::Fn(f) = &m.items[0] else { panic!() };
    assert_eq!(f.generics[0].kind, Kind::Num);
    let TyKind::Fn(op) = &f.params[0].ty.kind else { panic!("not a function type: {:?}", f.params[0].ty) };
    assert_eq!(op.params.len(), 2);
    assert!(op.exec.is_none());
    let TyKind::Fn(g) = &f.params[1].ty.kind else { panic!("not a function type: {:?}", f.params[1].ty) };
    assert!(g.params.is_empty());
    assert!(matches!(g.exec.as_ref().map(|e| &e.kind), Some(ExecTyKind::Thread)));
    assert!(matches!(f.params[2].ty.kind, TyKind::Var(_)));
}
