//! Streams and events in the IR (`Builtin::StreamNew` … `CopyAsync`, `Stmt::Launch::stream`),
//! on hand-built programs: a correctly synchronised two-stream program prints the same on `sim`
//! and `cpu`; each missing synchronisation is a race on `sim` (E0901) under every schedule; where
//! work on two streams is unordered, the schedule picks the order (the output differs between
//! seeds without the race check); the CUDA code uses real streams and compiles with nvcc.

mod common;
use strata_diag::{codes, Span};
use strata_ir::ir::{
    BinOp, Builtin, DimName, Expr, FnKind, Function, IExpr, Level, Lit, Local, Mem, PathStep, Place, Program, ScalarTy,
    Stmt, Ty,
};

const N: u64 = 64;
const D: Span = Span::DUMMY;
/// The span of memory accesses (run-time errors at `Span::DUMMY` get their statement's words).
const A: Span = Span { file: strata_diag::FileId(0), lo: 1, hi: 2 };

fn arr() -> Box<Ty> {
    Box::new(Ty::Array { elem: Box::new(Ty::Scalar(ScalarTy::I32)), len: IExpr::Const(N) })
}

fn at(root: usize, i: IExpr) -> Place {
    Place { root, path: vec![PathStep::Deref, PathStep::Elem(i)], checks: Vec::new(), span: A }
}

fn load(l: usize) -> Expr {
    Expr::Load(Place::local(l, D))
}

fn int(v: i32) -> Expr {
    Expr::Lit(Lit::Int(v as u128, ScalarTy::I32))
}

fn call(b: Builtin, args: Vec<Expr>) -> Stmt {
    Stmt::Eval(Expr::Builtin(b, args, D))
}

/// `a[t] = a[t] + x` for thread `t`, where `x` is `b[t]` for a kernel of two arrays, else `v`.
fn kernel(name: &str, two: bool, v: i32) -> Function {
    let t = || IExpr::ThreadIdx(DimName::X);
    let x = if two { Expr::Load(at(1, t())) } else { int(v) };
    let sum = Expr::Binary(BinOp::Add, Box::new(Expr::Load(at(0, t()))), Box::new(x));
    let mut locals = vec![Local { name: "a".into(), ty: Ty::Ref(arr(), Mem::GpuGlobal), level: Level::Block }];
    if two {
        locals.push(Local { name: "b".into(), ty: Ty::Ref(arr(), Mem::GpuGlobal), level: Level::Block });
    }
    Function {
        name: name.into(),
        kind: FnKind::Kernel {
            grid: [IExpr::Const(1), IExpr::Const(1), IExpr::Const(1)],
            block: [IExpr::Const(N), IExpr::Const(1), IExpr::Const(1)],
            shared: Vec::new(),
            ordered: false,
        },
        nat_params: Vec::new(),
        nat_max: Default::default(),
        params: (0..locals.len()).collect(),
        locals,
        body: vec![Stmt::Threads { set: Vec::new(), body: vec![Stmt::Store { place: at(0, t()), value: sum }] }],
        ret: Ty::Scalar(ScalarTy::Unit),
        span: D,
        shrd_params: Vec::new(),
    }
}

fn launch(kernel: usize, args: Vec<Expr>, stream: Option<usize>) -> Stmt {
    Stmt::Launch {
        kernel,
        nats: Vec::new(),
        grid: [IExpr::Const(1), IExpr::Const(1), IExpr::Const(1)],
        block: [IExpr::Const(N), IExpr::Const(1), IExpr::Const(1)],
        args,
        stream: stream.map(load),
        span: D,
    }
}

// Locals of main.
const H: usize = 0;
const D1: usize = 1;
const D2: usize = 2;
const S1: usize = 3;
const S2: usize = 4;
const E: usize = 5;

/// What to leave out of the correct program.
#[derive(Clone, Copy, PartialEq)]
enum Bug {
    None,
    /// Stream 2 does not wait for the event recorded on stream 1.
    NoWait,
    /// The event is recorded before the work it should mark.
    EarlyRecord,
    /// The host prints before it waits for the copy.
    ReadBeforeSync,
}

/// Two streams: `inc1` on stream 1 adds 1 to `d1`, `inc2` on stream 2 adds 2 to `d2`, then stream
/// 2 waits for an event recorded on stream 1 and adds `d1` into `d2` (`acc`), copies `d2` back
/// asynchronously and the host waits for stream 2: every element is (1 + 1) + (1 + 2) = 5.
fn program(bug: Bug) -> Program {
    let mut body = vec![
        Stmt::Let {
            local: H,
            init: Some(Expr::Builtin(Builtin::HeapNew, vec![Expr::ArrayRepeat(Box::new(int(1)), IExpr::Const(N))], D)),
            span: D,
        },
        Stmt::Let { local: D1, init: Some(Expr::Builtin(Builtin::GlobalAllocCopy, vec![load(H)], D)), span: D },
        Stmt::Let { local: D2, init: Some(Expr::Builtin(Builtin::GlobalAllocCopy, vec![load(H)], D)), span: D },
        Stmt::Let { local: S1, init: Some(Expr::Builtin(Builtin::StreamNew, Vec::new(), D)), span: D },
        Stmt::Let { local: S2, init: Some(Expr::Builtin(Builtin::StreamNew, Vec::new(), D)), span: D },
        Stmt::Let { local: E, init: Some(Expr::Builtin(Builtin::EventNew, Vec::new(), D)), span: D },
    ];
    let record = call(Builtin::EventRecord, vec![load(E), load(S1)]);
    if bug == Bug::EarlyRecord {
        body.push(record.clone());
    }
    body.push(launch(0, vec![load(D1)], Some(S1)));
    body.push(launch(1, vec![load(D2)], Some(S2)));
    if bug != Bug::EarlyRecord {
        body.push(record);
    }
    if bug != Bug::NoWait {
        body.push(call(Builtin::StreamWaitEvent, vec![load(S2), load(E)]));
    }
    body.push(launch(2, vec![load(D2), load(D1)], Some(S2)));
    body.push(call(Builtin::CopyAsync, vec![load(H), load(D2), Expr::Nat(IExpr::Const(N)), load(S2)]));
    let print = |k: u64| call(Builtin::PrintInline, vec![Expr::Load(at(H, IExpr::Const(k)))]);
    if bug == Bug::ReadBeforeSync {
        body.push(print(0));
    }
    body.push(call(Builtin::StreamSync, vec![load(S2)]));
    for k in [0, 1, N - 1] {
        body.push(print(k));
        body.push(call(Builtin::PrintInline, vec![Expr::Lit(Lit::Str(" ".into()))]));
    }
    body.extend([
        call(Builtin::DeviceSync, Vec::new()),
        call(Builtin::EventDestroy, vec![load(E)]),
        call(Builtin::StreamDestroy, vec![load(S1)]),
        call(Builtin::StreamDestroy, vec![load(S2)]),
        Stmt::Free { local: D2, gpu: true, span: D },
        Stmt::Free { local: D1, gpu: true, span: D },
        Stmt::Free { local: H, gpu: false, span: D },
    ]);
    let main = Function::host_main(
        vec![
            Local { name: "h".into(), ty: Ty::Owned(arr(), Mem::Cpu), level: Level::Host },
            Local { name: "d1".into(), ty: Ty::Owned(arr(), Mem::GpuGlobal), level: Level::Host },
            Local { name: "d2".into(), ty: Ty::Owned(arr(), Mem::GpuGlobal), level: Level::Host },
            Local { name: "s1".into(), ty: Ty::Stream, level: Level::Host },
            Local { name: "s2".into(), ty: Ty::Stream, level: Level::Host },
            Local { name: "e".into(), ty: Ty::Event, level: Level::Host },
        ],
        body,
    );
    Program {
        functions: vec![kernel("inc1", false, 1), kernel("inc2", false, 2), kernel("acc", true, 0), main],
        entry: Some(3),
        ..Default::default()
    }
}

fn sim(p: &Program, seed: Option<u64>, races: bool) -> Result<String, Box<strata_diag::Diagnostic>> {
    let opts = strata_sim::Options { random_seed: seed, check_races: races, ..Default::default() };
    let mut out = Vec::new();
    strata_sim::run(p, &opts, &mut out).map(|_| String::from_utf8(out).unwrap())
}

#[test]
fn synchronised_streams_print_the_same_on_sim_and_cpu_under_every_schedule() {
    let p = program(Bug::None);
    assert_eq!(strata_ir::validate::validate(&p), Ok(()));
    let (s, c) = common::output_on_both_devices(&p);
    assert_eq!(s, "5 5 5 ");
    assert_eq!(s, c);
    for seed in 1..=8 {
        assert_eq!(sim(&p, Some(seed), true).unwrap(), s, "seed {seed}");
    }
}

#[test]
fn each_missing_synchronisation_is_a_race_under_every_schedule() {
    for (bug, what) in [(Bug::NoWait, "d1"), (Bug::EarlyRecord, "d1"), (Bug::ReadBeforeSync, "h")] {
        for seed in [None, Some(1), Some(2), Some(3)] {
            let d = sim(&program(bug), seed, true).expect_err("a race");
            assert_eq!(d.code, codes::RUN_DATA_RACE, "{}", d.message);
            assert!(d.message.contains(&format!("`{what}[")), "{}", d.message);
            // Both sides are named: the stream of each, or the host.
            let labels: Vec<&str> =
                std::iter::once(&d.primary).chain(&d.secondary).map(|l| l.message.as_str()).collect();
            assert_eq!(labels.len(), 2, "{labels:?}");
            assert!(labels.iter().any(|l| l.contains("stream 2")), "{labels:?}");
            if bug == Bug::ReadBeforeSync {
                assert!(labels.iter().any(|l| l.contains("by the host")), "{labels:?}");
            } else {
                assert!(labels.iter().any(|l| l.contains("stream 1")), "{labels:?}");
            }
        }
    }
}

#[test]
fn the_schedule_orders_unsynchronised_streams() {
    // Without the wait, `acc` may add `d1` before or after `inc1` added 1 to it: 4 or 5, by seed.
    let p = program(Bug::NoWait);
    let outs: std::collections::BTreeSet<String> = (1..=16).map(|seed| sim(&p, Some(seed), false).unwrap()).collect();
    assert_eq!(outs.into_iter().collect::<Vec<_>>(), ["4 4 4 ", "5 5 5 "]);
    // The default schedule runs work in issue order.
    assert_eq!(sim(&p, None, false).unwrap(), "5 5 5 ");
}

#[test]
fn cuda_code_uses_real_streams_and_events() {
    let cuda = strata_emit::emit_cuda(&program(Bug::None)).unwrap();
    for f in [
        "cudaStreamCreate(",
        "cudaEventCreate(",
        "cudaEventRecord(e, s1)",
        "cudaStreamWaitEvent(s2, e, 0)",
        "cudaMemcpyAsync(h, d2, ",
        "cudaStreamSynchronize(s2)",
        "cudaDeviceSynchronize()",
        "cudaStreamDestroy(s1)",
        "cudaEventDestroy(e)",
        ", 0, s1>>>(",
    ] {
        assert!(cuda.contains(f), "{f} missing:\n{cuda}");
    }
    let Some(nvcc) = common::nvcc() else {
        eprintln!("streams_ir: nvcc not found ($NVCC or .venv/bin/nvcc); the compile is skipped");
        return;
    };
    let dir = std::env::temp_dir().join(format!("strata-streams-ir-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cu = dir.join("streams.cu");
    std::fs::write(&cu, &cuda).unwrap();
    let out = std::process::Command::new(nvcc)
        .args(["-Werror", "all-warnings", "-gencode", "arch=compute_80,code=sm_80", "-o"])
        .arg(dir.join("streams"))
        .arg(&cu)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "nvcc failed:\n{}\n{cuda}", String::from_utf8_lossy(&out.stderr));
}
