//! `Builtin::PrintFormatted` (CUDA-C's `printf` conversions with flags, width and precision)
//! writes the same bytes on `sim` as C's library does on the `cpu` device.

mod common;
use strata_diag::Span;
use strata_ir::ir::{Builtin, Expr, Function, Lit, Program, ScalarTy, Stmt};

fn print(spec: &str, v: Expr) -> Vec<Stmt> {
    let s = |t: &str| Expr::Lit(Lit::Str(t.to_string()));
    vec![
        Stmt::Eval(Expr::Builtin(Builtin::PrintInline, vec![s("[")], Span::DUMMY)),
        Stmt::Eval(Expr::Builtin(Builtin::PrintFormatted, vec![s(spec), v], Span::DUMMY)),
        Stmt::Eval(Expr::Builtin(Builtin::PrintInline, vec![s("]\n")], Span::DUMMY)),
    ]
}

fn float(v: f64, t: ScalarTy) -> Expr {
    Expr::Lit(Lit::Float(v, t))
}

fn int(v: i64, t: ScalarTy) -> Expr {
    Expr::Cast(Box::new(Expr::Lit(Lit::Int(v as u64 as u128, ScalarTy::U64))), t)
}

#[test]
fn formatted_prints_agree_on_sim_and_cpu() {
    use ScalarTy::*;
    let floats = [0.0, -0.0, 1.5, 2.675, -3.25159, 12345.678, 0.000123, 1e-5, 1e6, 123456789.0, 0.5, 2.5, 1e300];
    let specs = [
        "%f", "%.2f", "%8.3f", "%-10.1f", "%+08.2f", "% .0f", "%#.0f", "%e", "%.3E", "%g", "%G", "%.3g", "%#g",
        "%10.4g", "%lf",
    ];
    let mut body = Vec::new();
    for spec in specs {
        for x in floats {
            body.extend(print(spec, float(x, F64)));
            body.extend(print(spec, float(x, F32)));
        }
    }
    let ints = [0, 1, -1, 42, -42, 255, 65536, i32::MAX as i64, i32::MIN as i64];
    for spec in ["%d", "%5d", "%-5d", "%05d", "%+d", "% d", "%.3d", "%x", "%#x", "%08X", "%o", "%#o", "%u", "%c"] {
        for x in ints {
            let t = if spec.ends_with('d') || spec.ends_with('c') { I32 } else { U32 };
            if spec == "%c" && !(32..127).contains(&x) {
                continue;
            }
            body.extend(print(spec, int(x, t)));
        }
    }
    for (spec, t) in [("%ld", I64), ("%lld", I64), ("%lx", U64), ("%llu", U64), ("%zu", U64)] {
        for x in [0, -1, i64::MAX, i64::MIN, 1 << 40] {
            body.extend(print(spec, int(x, t)));
        }
    }
    let main = Function::host_main(Vec::new(), body);
    let p = Program { functions: vec![main], entry: Some(0), ..Default::default() };
    let (sim, cpu) = common::output_on_both_devices(&p);
    for (a, b) in sim.lines().zip(cpu.lines()) {
        assert_eq!(a, b, "sim and cpu differ");
    }
    assert_eq!(sim, cpu);
    assert!(sim.contains("[  -3.252]\n[  -3.252]\n") && sim.contains("[1.234568e+04]\n"), "{sim}");
}
