//! `Builtin::AtomicRmw` (CUDA-C's `atomicAdd` … `atomicCAS`) means the same on `sim` and on the
//! `cpu` device: an IR program whose 64 threads apply every operation to one element each prints
//! the same on both, for every element type the front end allows.

mod common;
use strata_diag::Span;
use strata_ir::ir::{
    AtomicOp, Builtin, DimName, Expr, FnKind, Function, IExpr, Level, Lit, Local, Mem, PathStep, Place, Program,
    ScalarTy, Stmt, Ty,
};

fn elem(root: usize, k: u64) -> Place {
    Place { root, path: vec![PathStep::Deref, PathStep::Elem(IExpr::Const(k))], checks: Vec::new(), span: Span::DUMMY }
}

fn lit(v: i64, t: ScalarTy) -> Expr {
    match t {
        ScalarTy::F32 | ScalarTy::F64 => Expr::Lit(Lit::Float(v as f64, t)),
        _ => Expr::Cast(Box::new(Expr::Lit(Lit::Int(v as u64 as u128, ScalarTy::U64))), t),
    }
}

/// Each thread `t` applies op `k` to element `k` with the value `(t * 7) % 13 + 1` (`atomicCAS`:
/// compares with `t` and stores `t + 1`, so the threads, in order, count the element up).
fn program(t: ScalarTy, ops: &[(AtomicOp, i64)]) -> Program {
    let n = ops.len() as u64;
    let arr = |()| Box::new(Ty::Array { elem: Box::new(Ty::Scalar(t)), len: IExpr::Const(n) });
    let tid = || IExpr::ThreadIdx(DimName::X);
    let value = Expr::Cast(
        Box::new(Expr::Nat(IExpr::Add(
            Box::new(IExpr::Rem(
                Box::new(IExpr::Mul(Box::new(tid()), Box::new(IExpr::Const(7)))),
                Box::new(IExpr::Const(13)),
            )),
            Box::new(IExpr::Const(1)),
        ))),
        t,
    );
    let mut body = Vec::new();
    for (k, (op, _)) in ops.iter().enumerate() {
        let mut args = vec![Expr::Ref(elem(0, k as u64))];
        if *op == AtomicOp::Cas {
            args.push(Expr::Cast(Box::new(Expr::Nat(tid())), t));
            args.push(Expr::Cast(Box::new(Expr::Nat(IExpr::Add(Box::new(tid()), Box::new(IExpr::Const(1))))), t));
        } else {
            args.push(value.clone());
        }
        body.push(Stmt::Eval(Expr::Builtin(Builtin::AtomicRmw(*op, t), args, Span::DUMMY)));
    }
    let kernel = Function {
        name: "k".into(),
        kind: FnKind::Kernel {
            grid: [IExpr::Const(1), IExpr::Const(1), IExpr::Const(1)],
            block: [IExpr::Const(64), IExpr::Const(1), IExpr::Const(1)],
            shared: Vec::new(),
            ordered: false,
        },
        nat_params: Vec::new(),
        nat_max: Default::default(),
        params: vec![0],
        locals: vec![Local { name: "a".into(), ty: Ty::Ref(arr(()), Mem::GpuGlobal), level: Level::Block }],
        body: vec![Stmt::Threads { set: Vec::new(), body }],
        ret: Ty::Scalar(ScalarTy::Unit),
        span: Span::DUMMY,
        shrd_params: Vec::new(),
    };
    let load = |l: usize| Expr::Load(Place::local(l, Span::DUMMY));
    let init = Expr::ArrayList(ops.iter().map(|(_, v)| lit(*v, t)).collect());
    let mut main_body = vec![
        Stmt::Let { local: 0, init: Some(Expr::Builtin(Builtin::HeapNew, vec![init], Span::DUMMY)), span: Span::DUMMY },
        Stmt::Let {
            local: 1,
            init: Some(Expr::Builtin(Builtin::GlobalAllocCopy, vec![load(0)], Span::DUMMY)),
            span: Span::DUMMY,
        },
        Stmt::Launch {
            kernel: 0,
            nats: Vec::new(),
            grid: [IExpr::Const(1), IExpr::Const(1), IExpr::Const(1)],
            block: [IExpr::Const(64), IExpr::Const(1), IExpr::Const(1)],
            args: vec![load(1)],
            stream: None,
            span: Span::DUMMY,
        },
        Stmt::Eval(Expr::Builtin(Builtin::CopyToHost, vec![load(1), load(0)], Span::DUMMY)),
    ];
    for k in 0..n {
        main_body.push(Stmt::Eval(Expr::Builtin(Builtin::PrintInline, vec![Expr::Load(elem(0, k))], Span::DUMMY)));
        main_body.push(Stmt::Eval(Expr::Builtin(
            Builtin::PrintInline,
            vec![Expr::Lit(Lit::Str(" ".into()))],
            Span::DUMMY,
        )));
    }
    main_body.push(Stmt::Free { local: 1, gpu: true, span: Span::DUMMY });
    main_body.push(Stmt::Free { local: 0, gpu: false, span: Span::DUMMY });
    let main = Function::host_main(
        vec![
            Local { name: "h".into(), ty: Ty::Owned(arr(()), Mem::Cpu), level: Level::Host },
            Local { name: "d".into(), ty: Ty::Owned(arr(()), Mem::GpuGlobal), level: Level::Host },
        ],
        main_body,
    );
    Program { functions: vec![kernel, main], entry: Some(1), ..Default::default() }
}

fn on_both(t: ScalarTy, ops: &[(AtomicOp, i64)]) -> String {
    let (sim, cpu) = common::output_on_both_devices(&program(t, ops));
    assert_eq!(sim, cpu, "{t:?}: sim and cpu differ");
    sim
}

#[test]
fn integer_atomics_agree_on_sim_and_cpu_and_wrap() {
    use AtomicOp::*;
    // Initial values: Add starts near the top so that it wraps; Min/Max/And start at extremes.
    let ops =
        [(Add, 2_147_483_600), (Sub, 5), (Exch, 0), (Min, 100), (Max, -100), (And, -1), (Or, 0), (Xor, 0), (Cas, 0)];
    // The values 1..=13 over 64 threads: their sum is 448 (thread t: (7t mod 13) + 1).
    let i32s = on_both(ScalarTy::I32, &ops);
    assert_eq!(i32s, "-2147483248 -443 13 1 13 0 15 6 64 ");
    let u32s = on_both(
        ScalarTy::U32,
        &[(Add, 0), (Sub, 5), (Exch, 0), (Min, 100), (Max, 0), (And, 255), (Or, 0), (Xor, 0), (Cas, 0)],
    );
    assert_eq!(u32s, "448 4294966853 13 1 13 0 15 6 64 ");
    let u64s = on_both(ScalarTy::U64, &[(Add, 0), (Exch, 0), (Min, 100), (Max, 0), (Or, 0), (Cas, 0)]);
    assert_eq!(u64s, "448 13 1 13 15 64 ");
}

#[test]
fn cuda_code_calls_cudas_own_atomics() {
    use AtomicOp::*;
    let ops = [(Add, 0), (Sub, 0), (Exch, 0), (Min, 0), (Max, 0), (And, 0), (Or, 0), (Xor, 0), (Cas, 0)];
    let cuda = strata_emit::emit_cuda(&program(ScalarTy::I32, &ops)).unwrap();
    for f in
        ["atomicAdd(", "atomicSub(", "atomicExch(", "atomicMin(", "atomicMax(", "atomicAnd(", "atomicOr(", "atomicXor("]
    {
        assert!(cuda.contains(f), "{f} missing:\n{cuda}");
    }
    assert!(cuda.contains("atomicCAS(((&a["), "{cuda}");
    // CUDA's 64-bit atomics take `unsigned long long`, which `uint64_t` is not on every platform.
    let cuda = strata_emit::emit_cuda(&program(ScalarTy::U64, &[(Add, 0), (Cas, 0)])).unwrap();
    assert!(cuda.contains("atomicAdd((unsigned long long *)((&a["), "{cuda}");
    assert!(cuda.contains("atomicCAS((unsigned long long *)((&a["), "{cuda}");
}

#[test]
fn float_atomics_agree_on_sim_and_cpu() {
    use AtomicOp::*;
    let f32s = on_both(ScalarTy::F32, &[(Add, 0), (Exch, 0), (Min, 100), (Max, -100)]);
    assert_eq!(f32s, "448 13 1 13 ");
}
