//! The IR validator: structural invariants every producer of IR must keep and every consumer may
//! rely on. Lowering runs it in debug builds and tests; a violation is a compiler bug.

use crate::ir::{Expr, FnKind, IExpr, Level, PathStep, Place, Program, Stmt, Ty};

/// Checks `p`; returns every violation found, described for a compiler developer.
pub fn validate(p: &Program) -> Result<(), Vec<String>> {
    let mut v = Validator { p, errors: Vec::new(), func: 0 };
    if let Some(e) = p.entry {
        if e >= p.functions.len() {
            v.errors.push(format!("entry {e} is not a function"));
        }
    }
    for (i, f) in p.functions.iter().enumerate() {
        v.func = i;
        for l in &f.params {
            v.local(*l, "parameter");
        }
        if let FnKind::Kernel { shared, .. } = &f.kind {
            for (l, _, len) in shared {
                v.local(*l, "shared buffer");
                v.iexpr(len, false);
            }
        }
        let in_kernel = matches!(f.kind, FnKind::Kernel { .. });
        v.stmts(&f.body, in_kernel, matches!(f.kind, FnKind::Device));
    }
    if v.errors.is_empty() {
        Ok(())
    } else {
        Err(v.errors)
    }
}

struct Validator<'p> {
    p: &'p Program,
    errors: Vec<String>,
    func: usize,
}

impl Validator<'_> {
    fn err(&mut self, msg: String) {
        let name = &self.p.functions[self.func].name;
        self.errors.push(format!("in `{name}`: {msg}"));
    }

    fn local(&mut self, l: usize, what: &str) {
        if l >= self.p.functions[self.func].locals.len() {
            self.err(format!("{what} refers to local {l}, which does not exist"));
        }
    }

    /// Block-level code of a kernel runs once for the whole block: it cannot use a value that
    /// each thread has its own copy of.
    fn block_level_use(&mut self, l: usize, region: bool) {
        let f = &self.p.functions[self.func];
        if !region
            && matches!(f.kind, FnKind::Kernel { .. })
            && f.locals.get(l).is_some_and(|x| x.level == Level::Thread)
        {
            self.err(format!("thread-level local {l} used in block-level code"));
        }
    }

    /// `gpu`: inside a kernel (block-level) or a region; `region`: inside a thread region.
    fn stmts(&mut self, body: &[Stmt], gpu: bool, region: bool) {
        for s in body {
            match s {
                Stmt::Let { local, init, .. } => {
                    self.local(*local, "`let`");
                    if let Some(e) = init {
                        self.expr(e, region);
                    }
                    let level = self.p.functions[self.func].locals.get(*local).map(|l| l.level);
                    if region && level == Some(Level::Block) {
                        self.err(format!("block-level local {local} declared inside a thread region"));
                    }
                }
                Stmt::Store { place, value } => {
                    self.place(place, region);
                    self.expr(value, region);
                }
                Stmt::Eval(e) => self.expr(e, region),
                Stmt::For { counter, lo, hi, body, exit, .. } => {
                    self.local(*counter, "loop counter");
                    if let Some(flag) = exit {
                        self.local(*flag, "loop exit flag");
                    }
                    self.iexpr(lo, region);
                    self.iexpr(hi, region);
                    self.stmts(body, gpu, region);
                }
                Stmt::While { cond, body, .. } => {
                    self.expr(cond, region);
                    self.stmts(body, gpu, region);
                }
                Stmt::If { cond, then, els, .. } => {
                    self.expr(cond, region);
                    self.stmts(then, gpu, region);
                    self.stmts(els, gpu, region);
                }
                Stmt::Threads { set, body } => {
                    if !gpu {
                        self.err("a thread region outside a kernel".into());
                    }
                    if region {
                        self.err("thread regions nest".into());
                    }
                    for (on, lo, hi) in set {
                        self.iexpr(on, true);
                        self.iexpr(lo, true);
                        self.iexpr(hi, true);
                    }
                    self.stmts(body, gpu, true);
                }
                Stmt::Sync { .. } => {
                    if !gpu {
                        self.err("a barrier outside GPU code".into());
                    }
                }
                Stmt::Free { local, .. } => {
                    self.local(*local, "`free`");
                    if gpu {
                        self.err("a release of a buffer in GPU code".into());
                    }
                    let ty = self.p.functions[self.func].locals.get(*local).map(|l| &l.ty);
                    if !matches!(ty, None | Some(Ty::Owned(..))) {
                        self.err(format!("a release of local {local}, which is not an owning pointer"));
                    }
                }
                Stmt::Launch { kernel, nats, grid, block, args, stream, .. } => {
                    if let Some(s) = stream {
                        self.expr(s, false);
                    }
                    if gpu {
                        self.err("a kernel launch in GPU code".into());
                    }
                    match self.p.functions.get(*kernel) {
                        Some(k) if matches!(k.kind, FnKind::Kernel { .. }) => {
                            if k.params.len() != args.len() {
                                self.err(format!(
                                    "launch of `{}` with {} arguments for {} parameters",
                                    k.name,
                                    args.len(),
                                    k.params.len()
                                ));
                            }
                            if k.nat_params.len() != nats.len() {
                                self.err(format!(
                                    "launch of `{}` with {} sizes for {} size parameters",
                                    k.name,
                                    nats.len(),
                                    k.nat_params.len()
                                ));
                            }
                        }
                        _ => self.err(format!("launch of function {kernel}, which is not a kernel")),
                    }
                    for e in grid.iter().chain(block) {
                        self.iexpr(e, false);
                    }
                    for a in args {
                        self.expr(a, false);
                    }
                }
                Stmt::Return(v) => {
                    if let Some(e) = v {
                        self.expr(e, region);
                    }
                }
            }
        }
    }

    fn place(&mut self, p: &Place, region: bool) {
        self.local(p.root, "place");
        self.block_level_use(p.root, region);
        for step in &p.path {
            if let PathStep::Elem(e) = step {
                self.iexpr(e, region);
            }
        }
        for (i, b) in &p.checks {
            self.iexpr(i, region);
            self.iexpr(b, region);
        }
    }

    fn expr(&mut self, e: &Expr, region: bool) {
        match e {
            Expr::Lit(_) => {}
            Expr::Nat(i) => self.iexpr(i, region),
            Expr::Load(p) | Expr::Ref(p) => self.place(p, region),
            Expr::Unary(_, x) | Expr::Cast(x, _) | Expr::Checked(x, _) => self.expr(x, region),
            Expr::Binary(_, a, b) => {
                self.expr(a, region);
                self.expr(b, region);
            }
            Expr::Tuple(xs) | Expr::ArrayList(xs) | Expr::Builtin(_, xs, _) => {
                xs.iter().for_each(|x| self.expr(x, region))
            }
            Expr::ArrayRepeat(x, n) => {
                self.expr(x, region);
                self.iexpr(n, region);
            }
            Expr::Call { func, args, nats, .. } => {
                match self.p.functions.get(*func) {
                    Some(f) if matches!(f.kind, FnKind::Kernel { .. }) => {
                        self.err(format!("`{}` is a kernel: it is launched, not called", f.name))
                    }
                    Some(f) if f.params.len() != args.len() => self.err(format!(
                        "call of `{}` with {} arguments for {} parameters",
                        f.name,
                        args.len(),
                        f.params.len()
                    )),
                    Some(_) => {}
                    None => self.err(format!("call of function {func}, which does not exist")),
                }
                nats.iter().for_each(|n| self.iexpr(n, region));
                args.iter().for_each(|a| self.expr(a, region));
            }
        }
    }

    /// Thread coordinates only exist inside thread regions (block coordinates in all GPU code).
    fn iexpr(&mut self, e: &IExpr, region: bool) {
        match e {
            IExpr::ThreadIdx(_) if !region => self.err("`threadIdx` used outside a thread region".into()),
            IExpr::Counter(l) => {
                self.local(*l, "counter");
                self.block_level_use(*l, region);
            }
            IExpr::Value(x) => self.expr(x, region),
            other => {
                if let Some((a, b)) = other.operands() {
                    self.iexpr(a, region);
                    self.iexpr(b, region);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Function, Local, Ty};
    use strata_diag::Span;

    fn func(kind: FnKind, body: Vec<Stmt>) -> Function {
        Function {
            name: "f".into(),
            kind,
            nat_params: vec![],
            nat_max: Default::default(),
            params: vec![],
            locals: vec![Local { name: "x".into(), ty: Ty::Nat, level: Level::Host }],
            body,
            ret: Ty::Nat,
            span: Span::DUMMY,
            shrd_params: Vec::new(),
        }
    }

    #[test]
    fn catches_structural_errors() {
        let bad = Program {
            functions: vec![func(
                FnKind::Host,
                vec![
                    Stmt::Sync { warp: false, span: Span::DUMMY },
                    Stmt::Let { local: 7, init: None, span: Span::DUMMY },
                ],
            )],
            entry: Some(0),
            ..Default::default()
        };
        let errors = validate(&bad).unwrap_err();
        assert_eq!(errors.len(), 2, "{errors:?}");
        let good = Program {
            functions: vec![func(FnKind::Host, vec![Stmt::Let { local: 0, init: None, span: Span::DUMMY }])],
            entry: Some(0),
            ..Default::default()
        };
        assert!(validate(&good).is_ok());
    }
}
