//! `Builtin::Math` (CUDA-C's `expf`, `fabs`, `powf`, …) gives bit-identical results on `sim` and
//! the `cpu` device: every function on many inputs, printed with enough digits to tell any two
//! floats apart (`%.9g` for `float`, `%.17g` for `double`).

use strata_diag::{FileId, Span};
use strata_ir::ir::{Builtin, Expr, FnKind, Function, Lit, MathFn, Program, ScalarTy, Stmt, Ty};

#[test]
fn math_functions_agree_bit_for_bit_on_sim_and_cpu() {
    let inputs = [0.0, -0.0, 0.5, -1.25, 1.0, 2.0, 3.7, -7.5, 10.0, 100.25, 1e-3, 12345.678, 0.7854981];
    let mut body = Vec::new();
    let s = |t: &str| Expr::Lit(Lit::Str(t.to_string()));
    let put = |e: Expr| Stmt::Eval(Expr::Builtin(Builtin::PrintInline, vec![e], Span::DUMMY));
    for t in [ScalarTy::F32, ScalarTy::F64] {
        let spec = if t == ScalarTy::F32 { "%.9g" } else { "%.17g" };
        for m in MathFn::ALL {
            for (k, x) in inputs.iter().enumerate() {
                let y = inputs[(k * 5 + 3) % inputs.len()];
                let mut args = vec![Expr::Lit(Lit::Float(*x, t))];
                if m.arity() == 2 {
                    args.push(Expr::Lit(Lit::Float(y, t)));
                }
                let v = Expr::Builtin(Builtin::Math(m, t), args, Span::DUMMY);
                body.push(put(s(&format!("{}({x}, {y}) = ", m.c_name()))));
                body.push(Stmt::Eval(Expr::Builtin(Builtin::PrintFormatted, vec![s(spec), v], Span::DUMMY)));
                body.push(put(s("\n")));
            }
        }
    }
    let main = Function {
        name: "main".into(),
        kind: FnKind::Host,
        nat_params: Vec::new(),
        nat_max: Default::default(),
        params: Vec::new(),
        locals: Vec::new(),
        body,
        ret: Ty::Scalar(ScalarTy::Unit),
        span: Span::DUMMY,
        shrd_params: Vec::new(),
    };
    let p = Program { functions: vec![main], entry: Some(0), ..Default::default() };
    let mut sim = Vec::new();
    strata_sim::run(&p, &strata_sim::Options::default(), &mut sim).unwrap();
    let mut cpu = Vec::new();
    strata_cpu::run(&p, FileId(0), &mut cpu, &strata_cpu::RunOptions::default()).unwrap();
    let (sim, cpu) = (String::from_utf8(sim).unwrap(), String::from_utf8(cpu).unwrap());
    for (a, b) in sim.lines().zip(cpu.lines()) {
        assert_eq!(a, b, "sim and cpu differ");
    }
    assert_eq!(sim.lines().count(), 2 * 15 * inputs.len());
    assert!(sim.lines().any(|l| l.starts_with("fabs(-7.5, ") && l.ends_with(") = 7.5")), "{sim}");
}
