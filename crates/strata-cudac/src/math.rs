//! Math functions: `sqrtf` and every function of [`MathFn`] (`fabsf`, `fminf`, `expf`, `exp2f`,
//! `log1pf`, `atan2f`, `fmaf`, `erff`, `rsqrtf`, …) and their `double` forms
//! (unsuffixed; of `float` arguments they are the `float` functions, as CUDA's C++ overloads
//! are), and integer `min`, `max`, `abs`.

use super::*;
use strata_ir::ir::MathFn;

impl Lx {
    /// A call of a math function, if `name` is one.
    pub(crate) fn math_call(&mut self, n: Node, name: &str, args: &[Node], src: &Src) -> R<Option<(Expr, CTy)>> {
        if matches!(name, "min" | "max" | "abs") {
            return self.int_minmax(n, name, args, src).map(Some);
        }
        let (base, suffixed) = match name.strip_suffix('f') {
            Some(b) if !b.is_empty() && (b == "sqrt" || MathFn::ALL.iter().any(|m| m.c_name() == b)) => (b, true),
            _ => (name, false),
        };
        let f = if base == "sqrt" { None } else { MathFn::ALL.into_iter().find(|m| m.c_name() == base) };
        if base != "sqrt" && f.is_none() {
            return Ok(None);
        }
        let arity = f.map_or(1, MathFn::arity);
        if args.len() != arity {
            return Err(self.unsupported(n, src, format!("`{name}` with {} arguments (it takes {arity})", args.len())));
        }
        let mut values = Vec::new();
        for a in args {
            let (e, t) = self.rvalue(*a, src)?;
            let CTy::S(s) = t else {
                return Err(self.unsupported(*a, src, format!("this argument of `{name}`")));
            };
            values.push((e, s, *a));
        }
        let t = if suffixed || values.iter().all(|v| v.1 == ScalarTy::F32) { ScalarTy::F32 } else { ScalarTy::F64 };
        let mut es = Vec::new();
        for (e, s, a) in values {
            es.push(self.convert(e, CTy::S(s), CTy::S(t), a, src)?);
        }
        let span = self.span(n, src);
        let b = match f {
            Some(m) => Builtin::Math(m, t.ir()),
            None => Builtin::Sqrt(t.ir()),
        };
        Ok(Some((Expr::Builtin(b, es, span), CTy::S(t))))
    }

    /// `min(a, b)`, `max(a, b)` and `abs(a)` of integers (of floats: `fminf`, `fmaxf`, `fabsf`).
    fn int_minmax(&mut self, n: Node, name: &str, args: &[Node], src: &Src) -> R<(Expr, CTy)> {
        let want = if name == "abs" { 1 } else { 2 };
        if args.len() != want {
            return Err(self.unsupported(n, src, format!("`{name}` with {} arguments", args.len())));
        }
        let mut vals = Vec::new();
        for a in args {
            let (e, t) = self.rvalue(*a, src)?;
            let CTy::S(s) = t else {
                return Err(self.unsupported(*a, src, format!("this argument of `{name}`")));
            };
            vals.push((e, s));
        }
        let t = vals
            .iter()
            .fold(ScalarTy::I32, |acc, v| arith(acc, if v.1 == ScalarTy::Bool { ScalarTy::I32 } else { v.1 }));
        let span = self.span(n, src);
        if matches!(t, ScalarTy::F32 | ScalarTy::F64) {
            let m = match name {
                "min" => MathFn::Fmin,
                "max" => MathFn::Fmax,
                _ => MathFn::Fabs,
            };
            let es = vals.into_iter().map(|(e, s)| cast(e, s, t)).collect();
            return Ok((Expr::Builtin(Builtin::Math(m, t.ir()), es, span), CTy::S(t)));
        }
        // An integer result: a temporary set by an `if` (the IR has no select).
        let level = self.level();
        let tmp = self.new_local(&format!("{name} value"), Ty::Scalar(t.ir()), level);
        let mut es = vals.into_iter().map(|(e, s)| cast(e, s, t));
        let a = es.next().unwrap_or(zero(t));
        let load = Expr::Load(Place::local(tmp, span));
        self.f.pre.push(Stmt::Let { local: tmp, init: Some(a), span });
        // The second operand, evaluated once.
        let second = es.next().map(|b| {
            let l = self.new_local(&format!("{name} operand"), Ty::Scalar(t.ir()), level);
            self.f.pre.push(Stmt::Let { local: l, init: Some(b), span });
            Expr::Load(Place::local(l, span))
        });
        let (cond, other) = match (name, second) {
            ("min", Some(b)) => (Expr::Binary(BinOp::Lt, Box::new(b.clone()), Box::new(load.clone())), b),
            ("max", Some(b)) => (Expr::Binary(BinOp::Gt, Box::new(b.clone()), Box::new(load.clone())), b),
            _ => (
                Expr::Binary(BinOp::Lt, Box::new(load.clone()), Box::new(zero(t))),
                Expr::Binary(BinOp::Sub, Box::new(zero(t)), Box::new(load.clone())),
            ),
        };
        self.f.pre.push(Stmt::If {
            cond,
            then: vec![Stmt::Store { place: Place::local(tmp, span), value: other }],
            els: Vec::new(),
            span,
        });
        Ok((load, CTy::S(t)))
    }
}
