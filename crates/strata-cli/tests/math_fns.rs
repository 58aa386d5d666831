//! `Builtin::Math` (CUDA-C's `expf`, `fabs`, `powf`, …) gives bit-identical results on `sim` and
//! the `cpu` device: every function on many inputs, printed with enough digits to tell any two
//! floats apart (`%.9g` for `float`, `%.17g` for `double`).

mod common;
use strata_diag::Span;
use strata_ir::ir::{Builtin, Expr, Function, Lit, MathFn, Program, ScalarTy, Stmt};

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
                if m.arity() >= 2 {
                    args.push(Expr::Lit(Lit::Float(y, t)));
                }
                if m.arity() == 3 {
                    args.push(Expr::Lit(Lit::Float(inputs[(k * 7 + 1) % inputs.len()], t)));
                }
                let v = Expr::Builtin(Builtin::Math(m, t), args, Span::DUMMY);
                body.push(put(s(&format!("{}({x}, {y}) = ", m.c_name()))));
                body.push(Stmt::Eval(Expr::Builtin(Builtin::PrintFormatted, vec![s(spec), v], Span::DUMMY)));
                body.push(put(s("\n")));
            }
        }
    }
    let main = Function::host_main(Vec::new(), body);
    let p = Program { functions: vec![main], entry: Some(0), ..Default::default() };
    let (sim, cpu) = common::output_on_both_devices(&p);
    for (a, b) in sim.lines().zip(cpu.lines()) {
        assert_eq!(a, b, "sim and cpu differ");
    }
    assert_eq!(sim.lines().count(), 2 * MathFn::ALL.len() * inputs.len());
    assert!(sim.lines().any(|l| l.starts_with("fabs(-7.5, ") && l.ends_with(") = 7.5")), "{sim}");
}
