//! The formatter's guarantees: on every `.strata` file of the repository and on random trees,
//! formatting keeps the tree, is idempotent and keeps every comment in order.

use proptest::prelude::*;
use std::path::{Path, PathBuf};
use strata_diag::FileId;
use strata_syntax::ast::*;
use strata_syntax::{format_module, format_module_with_width, format_source, parse, parse_erased, CommentKind};

// ------------------------------------------------------------------------------------------------
// The repository's programs

fn strata_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            strata_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "strata") {
            out.push(path);
        }
    }
}

fn comment_texts(src: &str) -> Vec<String> {
    parse(FileId(0), src)
        .comments
        .iter()
        .map(|c| match c.kind {
            CommentKind::Line => c.text.trim_end().to_string(),
            CommentKind::Block => c.text.clone(),
        })
        .collect()
}

/// Checks the three guarantees on one source text; returns a description of the first failure.
fn check_source(src: &str) -> Result<(), String> {
    check_source_at(src, strata_syntax::format::MAX_WIDTH)
}

/// Formats with the line width `width` (0 breaks every group).
fn format_at(src: &str, width: usize) -> Result<String, String> {
    let parsed = parse(FileId(0), src);
    if !parsed.diagnostics.is_empty() {
        return Err(format!("does not parse: {:?}", parsed.diagnostics));
    }
    Ok(format_module_with_width(&parsed.module, &parsed.comments, src, width))
}

/// [`check_source`] at the line width `width`.
fn check_source_at(src: &str, width: usize) -> Result<(), String> {
    let once = format_at(src, width)?;
    let reparsed = parse_erased(&once);
    if !reparsed.diagnostics.is_empty() {
        return Err(format!("formatted text has syntax errors {:?}:\n{once}", reparsed.diagnostics));
    }
    if reparsed.module != parse_erased(src).module {
        return Err(format!("formatting changed the tree:\n{once}"));
    }
    let twice = format_at(&once, width)?;
    if twice != once {
        return Err(format!("not idempotent:\n--- once\n{once}\n--- twice\n{twice}"));
    }
    if comment_texts(&once) != comment_texts(src) {
        return Err(format!("comments lost or reordered:\n{:#?}\n{:#?}", comment_texts(src), comment_texts(&once)));
    }
    Ok(())
}

#[test]
fn every_repository_program_round_trips() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    strata_files(&root.join("tests"), &mut files);
    strata_files(&root.join("examples"), &mut files);
    let mut checked = 0;
    let mut failures = Vec::new();
    for path in &files {
        let Ok(src) = std::fs::read_to_string(path) else {
            continue;
        };
        if !parse(FileId(0), &src).diagnostics.is_empty() {
            continue;
        }
        checked += 1;
        // Also at narrow widths, where almost every group breaks.
        for width in [strata_syntax::format::MAX_WIDTH, 40, 0] {
            if let Err(e) = check_source_at(&src, width) {
                failures.push(format!("{} (width {width}): {e}", path.display()));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(checked >= 10, "only {checked} programs found under tests/ and examples/");
}

#[test]
fn comments_everywhere_survive() {
    let src = "/* a */ fn /* b */ f(/* c */ x: i32, // d
    y: i32) -[t: cpu.thread]-> () // e
{ // f
    let z = /* g */ { 1 } + /* h */ 2; // i
    if x /* j */ { } /* k */ else { /* l */ }
    split(X) t at /* m */ 1 { // n
        a => { } /* o */, // p

        // q
        b => sync /* r */
        // s
    } // t
    // u
} // v
/* w */ const N: nat = 1; /* x */ // y
";
    check_source(src).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn blank_lines_are_kept_once() {
    let src = "fn f() {\n\n    a;\n\n\n    b;\n    c;\n\n}\n\n\n\nconst N: nat = 1;\nconst M: nat = 2;\n";
    let out = format_source(FileId(0), src).unwrap_or_else(|d| panic!("{d:?}"));
    assert_eq!(out, "fn f() {\n    a;\n\n    b;\n    c;\n}\n\nconst N: nat = 1;\nconst M: nat = 2;\n");
}

#[test]
fn block_like_statements_keep_their_shape() {
    for src in [
        "fn f() { if a { } *p = 1; ({ 1 })[0]; ({ x } + 1); }",
        "fn f() { for i in 0..4 { } -x }",
        "fn f() { unsafe { a }; unsafe <'a> { b }[0] }",
        "fn f() { let x = if a { 1 } else { 2 } + 3; x = return 1 + 2; }",
        "fn f() { (return 1) + 2; (a = b).fst; -return }",
        "fn f() { g::<(m), m, (n + 1) * 2, (), (u32,), _, gpu.local>::<t.threads>(); }",
        "fn f() { let x: [ [[f32; 2]]; 4] = [ [1]; 2][ [0][0]]; }",
        "fn f() { g(return, [return], (return)); (return)[0]; let x = a + return; x = return }",
    ] {
        check_source(src).unwrap_or_else(|e| panic!("{src}: {e}"));
    }
}

// ------------------------------------------------------------------------------------------------
// Random trees

const D: Span = Span::DUMMY;

fn id(name: &str) -> Ident {
    Ident { name: name.to_string(), span: D }
}

fn ex(kind: ExprKind) -> Expr {
    Expr { kind, span: D }
}

fn bx(e: Expr) -> Box<Expr> {
    Box::new(e)
}

/// Names that are no keyword, contextual word, scalar type, dimension or exec step.
fn ident() -> BoxedStrategy<Ident> {
    prop::sample::select(vec!["a", "b", "c", "x", "y", "n", "k", "foo", "bar_1", "tmp", "v0"]).prop_map(id).boxed()
}

fn region() -> BoxedStrategy<Ident> {
    prop::sample::select(vec!["'a", "'b", "'r"]).prop_map(id).boxed()
}

fn view_name() -> BoxedStrategy<Ident> {
    prop::sample::select(vec!["group", "map", "transpose", "rev", "take_left", "join"]).prop_map(id).boxed()
}

fn nat_op() -> BoxedStrategy<NatOp> {
    prop::sample::select(vec![NatOp::Add, NatOp::Sub, NatOp::Mul, NatOp::Div, NatOp::Rem, NatOp::Pow]).boxed()
}

fn nat() -> BoxedStrategy<Nat> {
    let leaf = prop_oneof![(0u64..2000).prop_map(NatKind::Lit), ident().prop_map(NatKind::Var),]
        .prop_map(|kind| Nat { kind, span: D });
    leaf.prop_recursive(4, 24, 3, |inner| {
        prop_oneof![
            3 => (nat_op(), inner.clone(), inner.clone())
                .prop_map(|(op, l, r)| NatKind::Bin(op, Box::new(l), Box::new(r))),
            1 => (ident(), prop::collection::vec(inner, 0..3))
                .prop_map(|(f, args)| NatKind::Call(f, args)),
        ]
        .prop_map(|kind| Nat { kind, span: D })
    })
    .boxed()
}

fn dim_name() -> BoxedStrategy<DimName> {
    prop::sample::select(vec![DimName::X, DimName::Y, DimName::Z]).boxed()
}

fn dim() -> BoxedStrategy<Dim> {
    let shapes = vec![
        vec![DimName::X],
        vec![DimName::Y],
        vec![DimName::Z],
        vec![DimName::X, DimName::Y],
        vec![DimName::X, DimName::Z],
        vec![DimName::Y, DimName::Z],
        vec![DimName::X, DimName::Y, DimName::Z],
    ];
    (prop::sample::select(shapes), prop::collection::vec(nat(), 3))
        .prop_map(|(names, sizes)| Dim { dims: names.into_iter().zip(sizes).collect(), span: D })
        .boxed()
}

fn exec_expr() -> BoxedStrategy<ExecExpr> {
    let base = prop_oneof![
        4 => ident().prop_map(ExecBase::Var),
        1 => Just(ExecBase::CpuThread),
        1 => (dim(), dim()).prop_map(|(a, b)| ExecBase::Grid(a, b)),
    ];
    let step = prop_oneof![
        Just(ExecStep::Blocks),
        Just(ExecStep::Threads),
        Just(ExecStep::Warps),
        Just(ExecStep::Lanes),
        Just(ExecStep::ToThreads),
        Just(ExecStep::ToWarps),
        dim_name().prop_map(ExecStep::Forall),
        (nat(), nat(), dim_name()).prop_map(|(a, b, d)| ExecStep::Range(a, b, d)),
    ];
    (base, prop::collection::vec(step, 0..4)).prop_map(|(base, path)| ExecExpr { base, path, span: D }).boxed()
}

fn exec_ty() -> BoxedStrategy<ExecTy> {
    let kind = prop_oneof![
        Just(ExecTyKind::CpuThread),
        (dim(), dim()).prop_map(|(a, b)| ExecTyKind::Grid(a, b)),
        (dim(), dim()).prop_map(|(a, b)| ExecTyKind::BlockGrp(a, b)),
        dim().prop_map(ExecTyKind::Block),
        dim().prop_map(ExecTyKind::ThreadGrp),
        nat().prop_map(ExecTyKind::WarpGrp),
        Just(ExecTyKind::Warp),
        Just(ExecTyKind::Thread),
        Just(ExecTyKind::Any),
    ];
    (kind, any::<bool>())
        .prop_map(|(kind, capitalised)| {
            // Only these have a lower-case spelling as well.
            let two_spellings = matches!(
                kind,
                ExecTyKind::CpuThread
                    | ExecTyKind::Grid(..)
                    | ExecTyKind::Block(_)
                    | ExecTyKind::Warp
                    | ExecTyKind::Thread
            );
            ExecTy { kind, capitalised: capitalised || !two_spellings, ordered: false, span: D }
        })
        .boxed()
}

fn mem() -> BoxedStrategy<Mem> {
    prop_oneof![
        Just(MemKind::CpuMem),
        Just(MemKind::GpuGlobal),
        Just(MemKind::GpuShared),
        Just(MemKind::GpuLocal),
        ident().prop_map(MemKind::Var),
    ]
    .prop_map(|kind| Mem { kind, span: D })
    .boxed()
}

fn scalar() -> BoxedStrategy<ScalarTy> {
    prop::sample::select(vec![
        ScalarTy::Bool,
        ScalarTy::I32,
        ScalarTy::I64,
        ScalarTy::U32,
        ScalarTy::U64,
        ScalarTy::F32,
        ScalarTy::F64,
        ScalarTy::Unit,
        ScalarTy::AtomicU32,
        ScalarTy::AtomicI32,
    ])
    .boxed()
}

fn ty() -> BoxedStrategy<Ty> {
    let leaf = prop_oneof![
        3 => scalar().prop_map(TyKind::Scalar),
        2 => ident().prop_map(TyKind::Var),
        1 => Just(TyKind::Infer),
    ]
    .prop_map(|kind| Ty { kind, span: D });
    leaf.prop_recursive(4, 16, 3, |inner| {
        let prv = prop_oneof![region().prop_map(Prv::Region), ident().prop_map(Prv::Var),];
        let own = prop_oneof![Just(Ownership::Uniq), Just(Ownership::Shrd)];
        let reference = (prop::option::of(prv), prop::option::of(own), prop::option::of(mem()), inner.clone())
            .prop_map(|(prv, own, mem, ty)| {
                // `&r T` reads `r` as a memory space: a provenance variable needs `uniq`/`shrd`.
                let prv = match (prv, own) {
                    (Some(Prv::Var(_)), None) => None,
                    (p, _) => p,
                };
                TyKind::Ref(RefTy { prv, own, mem, ty: Box::new(ty) })
            });
        prop_oneof![
            (prop::collection::vec(inner.clone(), 1..4)).prop_map(TyKind::Tuple),
            (inner.clone(), nat()).prop_map(|(t, n)| TyKind::Array(Box::new(t), n)),
            (inner.clone(), nat()).prop_map(|(t, n)| TyKind::ViewArray(Box::new(t), n)),
            reference,
            (inner.clone(), mem()).prop_map(|(t, m)| TyKind::At(Box::new(t), m)),
            (prop::collection::vec(inner.clone(), 0..3), prop::option::of(exec_ty()), inner)
                .prop_map(|(params, exec, ret)| TyKind::Fn(FnTy { params, exec, ret: Box::new(ret) })),
        ]
        .prop_map(|kind| Ty { kind, span: D })
    })
    .boxed()
}

/// Types after `as`: a reference ending in a type variable would read a following `&` as the
/// start of its referent.
fn cast_ty() -> BoxedStrategy<Ty> {
    ty().prop_filter("no reference after `as`", |t| !matches!(t.kind, TyKind::Ref(_))).boxed()
}

fn generic_arg() -> BoxedStrategy<GenericArg> {
    prop_oneof![
        3 => nat().prop_map(GenericArg::Nat),
        2 => ty().prop_map(GenericArg::Ty),
        // A memory variable cannot be written as a generic argument (it reads as a nat).
        1 => mem().prop_filter("not a variable", |m| !matches!(m.kind, MemKind::Var(_))).prop_map(GenericArg::Mem),
    ]
    .boxed()
}

fn view_ref() -> BoxedStrategy<ViewRef> {
    let leaf = (view_name(), prop::collection::vec(nat(), 0..3)).prop_map(|(name, nat_args)| ViewRef {
        name,
        nat_args,
        view_args: Vec::new(),
        span: D,
    });
    leaf.prop_recursive(3, 8, 2, |inner| {
        (
            view_name(),
            prop::collection::vec(nat(), 0..2),
            prop::collection::vec(prop::collection::vec(inner, 1..3), 0..3),
        )
            .prop_map(|(name, nat_args, view_args)| ViewRef { name, nat_args, view_args, span: D })
    })
    .boxed()
}

fn lit() -> BoxedStrategy<Lit> {
    let int_suffix = prop::option::of(prop::sample::select(vec![
        ScalarTy::I32,
        ScalarTy::I64,
        ScalarTy::U32,
        ScalarTy::U64,
        ScalarTy::F32,
        ScalarTy::F64,
    ]));
    let float_suffix = prop::option::of(prop::sample::select(vec![ScalarTy::F32, ScalarTy::F64]));
    let float = prop::sample::select(vec!["1.0", "0.5", "3.25", "1e5", "2.5e-3", "7E+2", "1_000.0", "0.000"]);
    let string = prop::collection::vec(
        prop::sample::select(vec!['a', ' ', '\\', '"', '\n', '\t', '\0', '\r', 'é', '/', '*']),
        0..8,
    )
    .prop_map(|cs| cs.into_iter().collect::<String>());
    prop_oneof![
        any::<bool>().prop_map(Lit::Bool),
        (any::<u128>(), int_suffix.clone()).prop_map(|(v, s)| Lit::Int(v, s)),
        (0u128..100, int_suffix).prop_map(|(v, s)| Lit::Int(v, s)),
        (float, float_suffix).prop_map(|(f, s)| Lit::Float(f.to_string(), s)),
        string.prop_map(Lit::Str),
        Just(Lit::Unit),
    ]
    .boxed()
}

fn bin_op() -> BoxedStrategy<BinOp> {
    prop::sample::select(vec![
        BinOp::Add,
        BinOp::Sub,
        BinOp::Mul,
        BinOp::Div,
        BinOp::Rem,
        BinOp::And,
        BinOp::Or,
        BinOp::BitAnd,
        BinOp::BitOr,
        BinOp::BitXor,
        BinOp::Shl,
        BinOp::Shr,
        BinOp::Eq,
        BinOp::Ne,
        BinOp::Lt,
        BinOp::Le,
        BinOp::Gt,
        BinOp::Ge,
    ])
    .boxed()
}

fn path() -> BoxedStrategy<Vec<Ident>> {
    prop::collection::vec(ident(), 1..3).boxed()
}

fn block_of(stmt: BoxedStrategy<Stmt>) -> BoxedStrategy<Block> {
    (prop::collection::vec(region(), 0..2), prop::collection::vec(stmt, 0..4))
        .prop_map(|(regions, stmts)| Block { regions, stmts, span: D })
        .boxed()
}

fn stmt_of(expr: BoxedStrategy<Expr>) -> BoxedStrategy<Stmt> {
    let let_stmt =
        (prop::option::of(exec_expr()), any::<bool>(), ident(), prop::option::of(ty()), prop::option::of(expr.clone()))
            .prop_map(|(exec, mutable, name, ty, init)| Stmt::Let(LetStmt { exec, mutable, name, ty, init, span: D }));
    prop_oneof![
        1 => let_stmt,
        3 => (expr, any::<bool>()).prop_map(|(expr, semi)| Stmt::Expr { expr, semi }),
        1 => any::<bool>().prop_map(|semi| Stmt::Expr { expr: ex(ExprKind::Return(None)), semi }),
    ]
    .boxed()
}

/// Place expressions (assignable), built from `expr`.
fn place_of(expr: BoxedStrategy<Expr>) -> BoxedStrategy<Expr> {
    let var = ident().prop_map(|i| ex(ExprKind::Path(vec![i])));
    var.prop_recursive(3, 6, 1, move |inner| {
        prop_oneof![
            expr.clone().prop_map(|e| ex(ExprKind::Deref(bx(e)))),
            (inner.clone(), prop::sample::select(vec![Field::Fst, Field::Snd, Field::Index(0), Field::Index(12)]))
                .prop_map(|(p, f)| ex(ExprKind::Field(bx(p), f))),
            (inner.clone(), expr.clone()).prop_map(|(p, i)| ex(ExprKind::Index(bx(p), bx(i)))),
            (inner.clone(), exec_expr()).prop_map(|(p, e)| ex(ExprKind::Select(bx(p), e))),
            (inner.clone(), view_ref()).prop_map(|(p, v)| ex(ExprKind::View(bx(p), v))),
            inner.prop_map(|p| ex(ExprKind::Paren(bx(p)))),
        ]
    })
    .boxed()
}

fn expr() -> BoxedStrategy<Expr> {
    let leaf = prop_oneof![
        3 => lit().prop_map(ExprKind::Lit),
        3 => path().prop_map(ExprKind::Path),
        1 => prop::option::of(exec_expr()).prop_map(ExprKind::Sync),
    ]
    .prop_map(ex);
    leaf.prop_recursive(5, 64, 4, |e| {
        let stmt = stmt_of(e.clone());
        let block = block_of(stmt);
        let place = place_of(e.clone());
        let compound = prop::sample::select(vec![BinOp::Add, BinOp::Sub, BinOp::Mul, BinOp::Div, BinOp::Rem]);
        let launch = (dim(), dim(), prop::option::of(ident()), prop::collection::vec(ty(), 0..2))
            .prop_map(|(grid, block, stream, shared)| Launch { grid, block, stream, shared });
        let call = (
            path(),
            prop::collection::vec(generic_arg(), 0..3),
            prop_oneof![
                2 => Just((None, None)),
                1 => exec_expr().prop_map(|x| (Some(x), None)),
                1 => launch.prop_map(|l| (None, Some(l))),
            ],
            prop::collection::vec(e.clone(), 0..3),
        )
            .prop_map(|(func, generics, (exec, launch), args)| ExprKind::Call {
                func,
                generics,
                exec,
                launch,
                args,
            });
        let if_expr = (e.clone(), block.clone(), prop::option::of(block.clone())).prop_map(|(cond, then, els)| {
            ExprKind::If { cond: bx(cond), then, els: els.map(|b| bx(ex(ExprKind::Block(b)))) }
        });
        let else_if = (e.clone(), block.clone(), e.clone(), block.clone()).prop_map(|(c1, b1, c2, b2)| ExprKind::If {
            cond: bx(c1),
            then: b1,
            els: Some(bx(ex(ExprKind::If { cond: bx(c2), then: b2, els: None }))),
        });
        let arm = (ident(), e.clone()).prop_map(|(name, body)| SplitArm { name, body });
        let arm_block = (ident(), block.clone()).prop_map(|(name, b)| SplitArm { name, body: ex(ExprKind::Block(b)) });
        let split =
            (dim_name(), exec_expr(), nat(), prop_oneof![arm_block.clone(), arm.clone()], prop_oneof![arm_block, arm])
                .prop_map(|(dim, exec, at, a, b)| ExprKind::Split { dim, exec, at, arms: Box::new([a, b]) });
        prop_oneof![
            (prop::sample::select(vec![UnOp::Neg, UnOp::Not]), e.clone())
                .prop_map(|(op, x)| ExprKind::Unary(op, bx(x))),
            (bin_op(), e.clone(), e.clone()).prop_map(|(op, l, r)| ExprKind::Binary(op, bx(l), bx(r))),
            (bin_op(), e.clone(), e.clone()).prop_map(|(op, l, r)| ExprKind::Binary(op, bx(l), bx(r))),
            (e.clone(), cast_ty()).prop_map(|(x, t)| ExprKind::Cast(bx(x), t)),
            (e.clone(), prop::sample::select(vec![Field::Fst, Field::Snd, Field::Index(0), Field::Index(3)]))
                .prop_map(|(x, f)| ExprKind::Field(bx(x), f)),
            e.clone().prop_map(|x| ExprKind::Deref(bx(x))),
            (e.clone(), e.clone()).prop_map(|(x, i)| ExprKind::Index(bx(x), bx(i))),
            (e.clone(), exec_expr()).prop_map(|(x, s)| ExprKind::Select(bx(x), s)),
            (e.clone(), view_ref()).prop_map(|(x, v)| ExprKind::View(bx(x), v)),
            // `&uniq p`, `&shrd p` and the short form `&p`.
            (prop::option::of(region()), 0u8..3, e.clone()).prop_map(|(prv, form, x)| {
                ExprKind::Borrow {
                    prv: prv.map(Prv::Region),
                    own: if form == 0 { Ownership::Uniq } else { Ownership::Shrd },
                    short: form == 2,
                    place: bx(x),
                }
            }),
            (place.clone(), e.clone()).prop_map(|(l, r)| ExprKind::Assign(bx(l), bx(r))),
            (compound, place, e.clone()).prop_map(|(op, l, r)| ExprKind::CompoundAssign(op, bx(l), bx(r))),
            block.clone().prop_map(ExprKind::Block),
            (ident(), nat(), nat(), block.clone())
                .prop_map(|(var, start, end, body)| { ExprKind::For { var, start, end, body } }),
            (e.clone(), block.clone()).prop_map(|(cond, body)| ExprKind::While { cond: bx(cond), body }),
            if_expr,
            else_if,
            (prop::collection::vec(dim_name(), 1..4), ident(), exec_expr(), block.clone())
                .prop_map(|(dims, var, exec, body)| ExprKind::Sched { dims, var, exec, body }),
            split,
            block.prop_map(|b| ExprKind::Unsafe(bx(ex(ExprKind::Block(b))))),
            e.clone().prop_map(|x| ExprKind::Unsafe(bx(x))),
            call,
            prop::collection::vec(e.clone(), 1..4).prop_map(ExprKind::Tuple),
            prop::collection::vec(e.clone(), 0..4).prop_map(ExprKind::ArrayList),
            (e.clone(), nat()).prop_map(|(x, n)| ExprKind::ArrayRepeat(bx(x), n)),
            e.clone().prop_map(|x| ExprKind::Return(Some(bx(x)))),
            Just(ExprKind::Return(None)),
            e.prop_map(|x| ExprKind::Paren(bx(x))),
        ]
        .prop_map(ex)
    })
    .boxed()
}

fn generic_params() -> BoxedStrategy<Vec<GenericParam>> {
    prop::collection::vec(
        (ident(), prop::sample::select(vec![Kind::Nat, Kind::Mem, Kind::DataTy, Kind::Num, Kind::Prv]))
            .prop_map(|(name, kind)| GenericParam { name, kind, span: D }),
        0..3,
    )
    .boxed()
}

fn cmp_op() -> BoxedStrategy<CmpOp> {
    prop::sample::select(vec![CmpOp::Eq, CmpOp::Ne, CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge]).boxed()
}

fn item() -> BoxedStrategy<Item> {
    let param = (prop::option::of(exec_expr()), any::<bool>(), ident(), ty())
        .prop_map(|(exec, mutable, name, ty)| Param { exec, mutable, name, ty, span: D });
    let exec_decl = (ident(), exec_ty()).prop_map(|(name, ty)| ExecDecl { name, ty, span: D });
    let constraint = (nat(), cmp_op(), nat()).prop_map(|(lhs, op, rhs)| NatConstraint { lhs, op, rhs, span: D });
    let fn_decl = (
        ident(),
        generic_params(),
        prop::collection::vec(param, 0..5),
        prop::option::of(exec_decl),
        prop::option::of(ty()),
        prop::collection::vec(constraint, 0..3),
        prop::option::weighted(0.9, block_of(stmt_of(expr()))),
    )
        .prop_map(|(name, generics, params, exec, ret, where_clauses, body)| {
            // With an execution resource the return type is required.
            let ret = match (&exec, ret) {
                (Some(_), None) => Some(Ty { kind: TyKind::Scalar(ScalarTy::Unit), span: D }),
                (_, r) => r,
            };
            Item::Fn(FnDecl { name, generics, params, exec, ret, where_clauses, body, span: D })
        });
    let const_decl = (ident(), any::<bool>(), nat())
        .prop_map(|(name, annotated, value)| Item::Const(ConstDecl { name, annotated, value, span: D }));
    let view_decl = (ident(), generic_params(), prop::collection::vec(view_ref(), 1..4))
        .prop_map(|(name, generics, body)| Item::View(ViewDecl { name, generics, body, span: D }));
    prop_oneof![4 => fn_decl, 1 => const_decl, 1 => view_decl].boxed()
}

fn module() -> impl Strategy<Value = Module> {
    prop::collection::vec(item(), 1..4).prop_map(|items| {
        let mut m = Module { items, span: D };
        normalize_module(&mut m);
        m
    })
}

// ------------------------------------------------------------------------------------------------
// Making random trees ones the parser can build: parentheses where precedence needs them, `;`
// where a statement needs one, `return` without a value only before `;` or `}`.

fn paren(e: Expr) -> Expr {
    ex(ExprKind::Paren(bx(e)))
}

fn level(e: &Expr) -> u8 {
    match &e.kind {
        ExprKind::Assign(..) | ExprKind::CompoundAssign(..) => 0,
        ExprKind::Binary(op, ..) => op.precedence(),
        ExprKind::Cast(..) => 10,
        ExprKind::Unary(..) | ExprKind::Deref(_) | ExprKind::Borrow { .. } => 11,
        ExprKind::Unsafe(x) if !plain_block(x) => 11,
        _ => 12,
    }
}

fn plain_block(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::Block(b) if b.regions.is_empty())
}

fn open_end(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Return(_) | ExprKind::Assign(..) | ExprKind::CompoundAssign(..) => true,
        ExprKind::Binary(_, _, r) => open_end(r),
        ExprKind::Unary(_, x) | ExprKind::Deref(x) | ExprKind::Borrow { place: x, .. } => open_end(x),
        ExprKind::Unsafe(x) => !plain_block(x) && open_end(x),
        _ => false,
    }
}

fn first_token_expr(e: &Expr) -> &Expr {
    match &e.kind {
        ExprKind::Binary(_, l, _)
        | ExprKind::Assign(l, _)
        | ExprKind::CompoundAssign(_, l, _)
        | ExprKind::Cast(l, _)
        | ExprKind::Field(l, _)
        | ExprKind::Index(l, _)
        | ExprKind::Select(l, _)
        | ExprKind::View(l, _) => first_token_expr(l),
        _ => e,
    }
}

fn block_like(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Block(_)
        | ExprKind::For { .. }
        | ExprKind::While { .. }
        | ExprKind::If { .. }
        | ExprKind::Sched { .. }
        | ExprKind::Split { .. } => true,
        // `unsafe <'a> { … }` ends a statement at its `}` too.
        ExprKind::Unsafe(x) => matches!(x.kind, ExprKind::Block(_)),
        _ => false,
    }
}

/// Normalises `e` for a position read at level `min`; `open_ok`: nothing follows that an
/// open-ended expression would swallow.
fn norm(mut e: Expr, min: u8, open_ok: bool) -> Expr {
    let k = std::mem::replace(&mut e.kind, ExprKind::Error);
    let kind = match k {
        ExprKind::Unary(op, x) => ExprKind::Unary(op, bx(norm(*x, 11, open_ok))),
        ExprKind::Deref(x) => ExprKind::Deref(bx(norm(*x, 11, open_ok))),
        ExprKind::Borrow { prv, own, short, place } => {
            ExprKind::Borrow { prv, own, short, place: bx(norm(*place, 11, open_ok)) }
        }
        ExprKind::Unsafe(x) if plain_block(&x) => ExprKind::Unsafe(bx(norm(*x, 0, true))),
        ExprKind::Unsafe(x) => {
            let x = norm(*x, 11, open_ok);
            // `unsafe {…}[0]` is an index of an `unsafe` block.
            if plain_block(first_token_expr(&x)) {
                ExprKind::Unsafe(bx(paren(x)))
            } else {
                ExprKind::Unsafe(bx(x))
            }
        }
        ExprKind::Binary(op, l, r) => {
            let p = op.precedence();
            ExprKind::Binary(op, bx(norm(*l, p, false)), bx(norm(*r, p + 1, open_ok)))
        }
        ExprKind::Cast(x, t) => ExprKind::Cast(bx(norm(*x, 10, false)), t),
        ExprKind::Field(x, f) => {
            let mut x = norm(*x, 12, false);
            if matches!(f, Field::Index(_)) && matches!(x.kind, ExprKind::Lit(Lit::Int(_, None))) {
                x = paren(x);
            }
            ExprKind::Field(bx(x), f)
        }
        ExprKind::Index(x, i) => ExprKind::Index(bx(norm(*x, 12, false)), bx(norm(*i, 0, true))),
        ExprKind::Select(x, s) => ExprKind::Select(bx(norm(*x, 12, false)), s),
        ExprKind::View(x, v) => ExprKind::View(bx(norm(*x, 12, false)), v),
        ExprKind::Assign(l, r) => ExprKind::Assign(bx(norm(*l, 1, false)), bx(norm(*r, 0, open_ok))),
        ExprKind::CompoundAssign(op, l, r) => {
            ExprKind::CompoundAssign(op, bx(norm(*l, 1, false)), bx(norm(*r, 0, open_ok)))
        }
        ExprKind::Block(b) => ExprKind::Block(norm_block(b)),
        ExprKind::For { var, start, end, body } => ExprKind::For { var, start, end, body: norm_block(body) },
        // `if c <'a> {` reads as `c < 'a`: no region binders on these blocks.
        ExprKind::While { cond, body } => {
            ExprKind::While { cond: bx(norm_cond(*cond)), body: norm_block(no_regions(body)) }
        }
        ExprKind::If { cond, then, els } => ExprKind::If {
            cond: bx(norm_cond(*cond)),
            then: norm_block(no_regions(then)),
            els: els.map(|x| {
                let x = *x;
                bx(match x.kind {
                    ExprKind::Block(b) => ex(ExprKind::Block(norm_block(b))),
                    _ => norm(x, 12, true),
                })
            }),
        },
        ExprKind::Sched { dims, var, exec, body } => ExprKind::Sched { dims, var, exec, body: norm_block(body) },
        ExprKind::Split { dim, exec, at, arms } => {
            let [a, b] = *arms;
            let arm = |a: SplitArm| SplitArm { name: a.name, body: norm(a.body, 0, true) };
            ExprKind::Split { dim, exec, at, arms: Box::new([arm(a), arm(b)]) }
        }
        ExprKind::Call { func, generics, exec, launch, args } => {
            ExprKind::Call { func, generics, exec, launch, args: args.into_iter().map(|a| norm(a, 0, true)).collect() }
        }
        ExprKind::Tuple(xs) => ExprKind::Tuple(xs.into_iter().map(|a| norm(a, 0, true)).collect()),
        ExprKind::ArrayList(xs) => ExprKind::ArrayList(xs.into_iter().map(|a| norm(a, 0, true)).collect()),
        ExprKind::ArrayRepeat(x, n) => ExprKind::ArrayRepeat(bx(norm(*x, 0, true)), n),
        ExprKind::Return(Some(x)) => ExprKind::Return(Some(bx(norm(*x, 0, open_ok)))),
        ExprKind::Paren(x) => ExprKind::Paren(bx(norm(*x, 0, true))),
        other => other,
    };
    e.kind = kind;
    if level(&e) < min || (!open_ok && open_end(&e)) {
        paren(e)
    } else {
        e
    }
}

/// A condition: `if return {` would return the block, so no bare `return` at its end.
fn norm_cond(e: Expr) -> Expr {
    fn strip(e: &mut Expr) {
        if matches!(e.kind, ExprKind::Return(None)) {
            e.kind = ExprKind::Lit(Lit::Unit);
            return;
        }
        match &mut e.kind {
            ExprKind::Binary(_, _, x)
            | ExprKind::Assign(_, x)
            | ExprKind::CompoundAssign(_, _, x)
            | ExprKind::Unary(_, x)
            | ExprKind::Deref(x)
            | ExprKind::Borrow { place: x, .. }
            | ExprKind::Unsafe(x)
            | ExprKind::Return(Some(x)) => strip(x),
            _ => {}
        }
    }
    let mut e = norm(e, 0, true);
    strip(&mut e);
    e
}

fn no_regions(mut b: Block) -> Block {
    b.regions.clear();
    b
}

fn norm_block(mut b: Block) -> Block {
    let n = b.stmts.len();
    let stmts = std::mem::take(&mut b.stmts);
    b.stmts = stmts
        .into_iter()
        .enumerate()
        .map(|(i, s)| match s {
            Stmt::Let(mut l) => {
                l.init = l.init.map(|e| norm(e, 0, true));
                Stmt::Let(l)
            }
            Stmt::Expr { expr, semi } => {
                let last = i + 1 == n;
                if matches!(expr.kind, ExprKind::Return(None)) {
                    return Stmt::Expr { expr, semi: semi || !last };
                }
                let mut expr = norm(expr, 0, true);
                let first = first_token_expr(&expr);
                // A statement that starts like `if … { }` ends at its `}`.
                if !std::ptr::eq(first, &expr) && block_like(first) {
                    expr = paren(expr);
                }
                let semi = semi || (!last && !block_like(&expr));
                Stmt::Expr { expr, semi }
            }
        })
        .collect();
    b
}

fn normalize_module(m: &mut Module) {
    for item in &mut m.items {
        if let Item::Fn(f) = item {
            f.body = f.body.take().map(norm_block);
        }
    }
}

fn check_tree(m: &Module, width: usize) -> Result<(), TestCaseError> {
    let text = format_module_with_width(m, &[], "", width);
    let parsed = parse_erased(&text);
    prop_assert!(parsed.diagnostics.is_empty(), "syntax errors {:?} in\n{text}", parsed.diagnostics);
    if parsed.module != *m {
        let a = format!("{m:?}");
        let b = format!("{:?}", parsed.module);
        let at = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
        let lo = at.saturating_sub(300);
        return Err(TestCaseError::fail(format!(
            "tree changed:\n{text}\nwanted …{}\nparsed …{}",
            a.get(lo..(at + 300).min(a.len())).unwrap_or(""),
            b.get(lo..(at + 300).min(b.len())).unwrap_or("")
        )));
    }
    let again = format_module_with_width(&parsed.module, &[], &text, width);
    prop_assert_eq!(&again, &text);
    Ok(())
}

/// `text` on one line: every run of white space between two tokens becomes one space.
fn squash(text: &str) -> String {
    let lexed = strata_syntax::lexer::lex(FileId(0), text);
    let mut out = String::new();
    let mut last = 0;
    for t in &lexed.tokens {
        if (t.span.lo as usize) > last {
            out.push(' ');
        }
        out.push_str(&text[t.span.range()]);
        last = t.span.hi as usize;
    }
    out
}

/// Puts comments into `text` at token boundaries that already have white space (so no two
/// touching tokens are separated), numbered in source order.
fn with_comments(text: &str, picks: &[(prop::sample::Index, u8)]) -> String {
    let lexed = strata_syntax::lexer::lex(FileId(0), text);
    let spots: Vec<usize> = std::iter::once(0)
        .chain(lexed.tokens.iter().map(|t| t.span.hi as usize))
        .filter(|&p| p == text.len() || text[p..].starts_with(char::is_whitespace))
        .collect();
    let mut at: Vec<(usize, u8)> = picks.iter().map(|(i, k)| (*i.get(&spots), *k)).collect();
    at.sort();
    let mut out = String::new();
    let mut last = 0;
    for (n, (pos, kind)) in at.into_iter().enumerate() {
        out.push_str(&text[last..pos]);
        last = pos;
        match kind % 4 {
            0 => out.push_str(&format!(" // c{n}\n")),
            1 => out.push_str(&format!(" /* c{n} */ ")),
            2 => out.push_str(&format!("\n\n/* c{n}\n   more */\n")),
            _ => out.push_str(&format!("\n// c{n}\n\n")),
        }
    }
    out.push_str(&text[last..]);
    out
}

proptest! {
    #![proptest_config(ProptestConfig {
        // 512 by default; `PROPTEST_CASES=20000` for a longer search.
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(512),
        max_shrink_iters: 2000,
        ..ProptestConfig::default()
    })]

    /// At the normal width, at width 0 (every group broken: line breaks wherever the layout
    /// allows them) and at narrow widths (some groups broken, some not).
    #[test]
    fn random_trees_round_trip(m in module(), width in prop_oneof![Just(100usize), Just(0), 8usize..60]) {
        check_tree(&m, width)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        // Each case formats and parses twice: 256 by default, or `PROPTEST_CASES`.
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(256),
        max_shrink_iters: 2000,
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_comments_survive(
        m in module(),
        picks in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..12),
        one_line in any::<bool>(),
        width in prop_oneof![Just(100usize), Just(0), 8usize..60],
    ) {
        let mut text = format_module(&m, &[], "");
        if one_line {
            text = squash(&text);
        }
        let text = with_comments(&text, &picks);
        if let Err(e) = check_source_at(&text, width) {
            return Err(TestCaseError::fail(format!("{e}\n--- input\n{text}")));
        }
    }
}

#[test]
#[ignore]
fn show_samples() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::default();
    for _ in 0..4 {
        let m = module().new_tree(&mut runner).unwrap().current();
        println!("{}\n-----", format_module(&m, &[], ""));
    }
}

#[test]
fn deep_nesting_formats_on_a_small_stack() {
    let depth = 100;
    let parens = format!("fn f() {{ let x = {}1{}; }}", "(".repeat(depth), ")".repeat(depth));
    let chain = format!("fn f() {{ let x = 1{}; }}", " + 1".repeat(depth));
    let blocks = format!("fn f() {{ {}x{} }}", "{ ".repeat(depth / 2), " }".repeat(depth / 2));
    let nats = format!("const N: nat = {}1{};", "(2 ^ ".repeat(depth / 2), ")".repeat(depth / 2));
    for src in [parens, chain, blocks, nats] {
        // Test threads have 2 MiB of stack: formatting must fit where parsing does.
        let result =
            std::thread::Builder::new().stack_size(2 << 20).spawn(move || check_source(&src)).map(|h| h.join());
        match result {
            Ok(Ok(Ok(()))) => {}
            Ok(Ok(Err(e))) => panic!("{e}"),
            _ => panic!("formatting thread failed"),
        }
    }
}
