//! Device builtins: atomics (`atomicAdd` … `atomicCAS`).

use super::*;
use strata_ir::ir::{AtomicOp, ShuffleOp};

/// The atomic function `name`, if it is one.
pub(crate) fn atomic_op(name: &str) -> Option<AtomicOp> {
    Some(match name {
        "atomicAdd" => AtomicOp::Add,
        "atomicSub" => AtomicOp::Sub,
        "atomicExch" => AtomicOp::Exch,
        "atomicMin" => AtomicOp::Min,
        "atomicMax" => AtomicOp::Max,
        "atomicAnd" => AtomicOp::And,
        "atomicOr" => AtomicOp::Or,
        "atomicXor" => AtomicOp::Xor,
        "atomicCAS" => AtomicOp::Cas,
        _ => return None,
    })
}

/// The element types CUDA declares `op` for.
fn atomic_types(op: AtomicOp) -> &'static [ScalarTy] {
    use ScalarTy::*;
    match op {
        AtomicOp::Add => &[I32, U32, U64, F32, F64],
        AtomicOp::Sub => &[I32, U32],
        AtomicOp::Exch => &[I32, U32, U64, F32],
        AtomicOp::Min | AtomicOp::Max => &[I32, U32, U64, I64],
        AtomicOp::And | AtomicOp::Or | AtomicOp::Xor | AtomicOp::Cas => &[I32, U32, U64],
    }
}

impl Lx {
    /// `atomicInc(p, limit)` (`old >= limit ? 0 : old + 1`) and `atomicDec(p, limit)`
    /// (`old == 0 || old > limit ? limit : old - 1`) on `unsigned int`: a compare-and-swap loop
    /// (the IR's `AtomicRmw` has no such operation), so every access is an atomic one for the
    /// race check, and the cpu device retries as a GPU's hardware would not need to.
    pub(crate) fn atomic_inc_dec(&mut self, n: Node, dec: bool, args: &[Node], src: &Src) -> R<(Expr, CTy)> {
        let name = if dec { "atomicDec" } else { "atomicInc" };
        if !self.f.gpu {
            return Err(self.unsupported(n, src, format!("`{name}` in host code")));
        }
        if args.len() != 2 {
            return Err(self.unsupported(n, src, format!("`{name}` with {} arguments (it takes 2)", args.len())));
        }
        let span = self.span(n, src);
        let Some(p) = self.ptr_expr(args[0], src)? else {
            return Err(self.unsupported(
                args[0],
                src,
                format!("the first argument of `{name}`, which is not a pointer"),
            ));
        };
        let t = self.scalar_elem(p.elem, args[0], src)?;
        if t != ScalarTy::U32 {
            return Err(self.unsupported(
                n,
                src,
                format!("`{name}` on `{}` (CUDA's takes `unsigned int *`)", c_name(t)),
            ));
        }
        let place = self.ptr_place(p, None, span);
        let (v, vt) = self.rvalue(args[1], src)?;
        let limit_value = self.convert(v, vt, CTy::S(t), args[1], src)?;
        let level = self.level();
        let u32t = Ty::Scalar(ir::ScalarTy::U32);
        let limit = self.new_local(&format!("{name} limit"), u32t.clone(), level);
        let old = self.new_local(&format!("{name} value"), u32t.clone(), level);
        let new = self.new_local(&format!("{name} new"), u32t.clone(), level);
        let seen = self.new_local(&format!("{name} seen"), u32t, level);
        let done = self.new_local(&format!("{name} done"), Ty::Scalar(ir::ScalarTy::Bool), level);
        let load = |l: LocalId| Expr::Load(Place::local(l, span));
        let set = |l: LocalId, e: Expr| Stmt::Store { place: Place::local(l, span), value: e };
        let u = |v: u128| int(v, ScalarTy::U32);
        let bin = |op: BinOp, a: Expr, b: Expr| Expr::Binary(op, Box::new(a), Box::new(b));
        let rmw = |op: AtomicOp, vs: Vec<Expr>| {
            let mut all = vec![Expr::Ref(place.clone())];
            all.extend(vs);
            Expr::Builtin(Builtin::AtomicRmw(op, ir::ScalarTy::U32), all, span)
        };
        let (wrap, next) = if dec {
            (bin(BinOp::Or, bin(BinOp::Eq, load(old), u(0)), bin(BinOp::Gt, load(old), load(limit))), load(limit))
        } else {
            (bin(BinOp::Ge, load(old), load(limit)), u(0))
        };
        let step = bin(if dec { BinOp::Sub } else { BinOp::Add }, load(old), u(1));
        let body = vec![
            Stmt::If { cond: wrap, then: vec![set(new, next)], els: vec![set(new, step)], span },
            Stmt::Let { local: seen, init: Some(rmw(AtomicOp::Cas, vec![load(old), load(new)])), span },
            Stmt::If {
                cond: bin(BinOp::Eq, load(seen), load(old)),
                then: vec![set(done, Expr::Lit(Lit::Bool(true)))],
                els: vec![set(old, load(seen))],
                span,
            },
        ];
        self.f.pre.extend([
            Stmt::Let { local: limit, init: Some(limit_value), span },
            // An atomic read of the current value (`atomicOr(p, 0)`).
            Stmt::Let { local: old, init: Some(rmw(AtomicOp::Or, vec![u(0)])), span },
            Stmt::Let { local: new, init: Some(u(0)), span },
            Stmt::Let { local: done, init: Some(Expr::Lit(Lit::Bool(false))), span },
            Stmt::While { cond: Expr::Unary(UnOp::Not, Box::new(load(done))), body, span },
        ]);
        Ok((load(old), CTy::S(t)))
    }

    /// `atomicOp(p, v)` / `atomicCAS(p, compare, v)`: the old value, of the element type.
    pub(crate) fn atomic(&mut self, n: Node, op: AtomicOp, args: &[Node], src: &Src) -> R<(Expr, CTy)> {
        let name = op.cuda_name();
        if !self.f.gpu {
            return Err(self.unsupported(n, src, format!("`{name}` in host code")));
        }
        let want = if op == AtomicOp::Cas { 3 } else { 2 };
        if args.len() != want {
            return Err(self.unsupported(n, src, format!("`{name}` with {} arguments (it takes {want})", args.len())));
        }
        let span = self.span(n, src);
        // `&p->f`, `&a[i].f`: a field of a struct in memory.
        let field = Some(args[0])
            .filter(|a| a.kind() == "pointer_expression")
            .filter(|a| a.child_by_field_name("operator").is_some_and(|o| self.text(o, src) == "&"))
            .and_then(|a| a.child_by_field_name("argument"))
            .filter(|a| a.kind() == "field_expression");
        let (place, t) = match field {
            Some(f) => self.place(f, src)?,
            None => {
                let Some(p) = self.ptr_expr(args[0], src)? else {
                    return Err(self.unsupported(
                        args[0],
                        src,
                        format!("the first argument of `{name}`, which is not a pointer"),
                    ));
                };
                let t = self.scalar_elem(p.elem, args[0], src)?;
                (self.ptr_place(p, None, span), t)
            }
        };
        if !atomic_types(op).contains(&t) {
            return Err(self.unsupported(n, src, format!("`{name}` on `{}`", c_name(t))));
        }
        let mut values = vec![Expr::Ref(place)];
        for a in &args[1..] {
            let (e, et) = self.rvalue(*a, src)?;
            if !matches!(et, CTy::S(_)) {
                return Err(self.unsupported(*a, src, format!("this argument of `{name}`")));
            }
            values.push(self.convert(e, et, CTy::S(t), *a, src)?);
        }
        Ok((Expr::Builtin(Builtin::AtomicRmw(op, t.ir()), values, span), CTy::S(t)))
    }
}

/// The C name of a scalar type of the subset.
pub(crate) fn c_name(t: ScalarTy) -> &'static str {
    match t {
        ScalarTy::I32 => "int",
        ScalarTy::U32 => "unsigned int",
        ScalarTy::I64 => "long long",
        ScalarTy::U64 => "unsigned long long",
        ScalarTy::F32 => "float",
        ScalarTy::F64 => "double",
        ScalarTy::I8 => "char",
        ScalarTy::U8 => "unsigned char",
        ScalarTy::I16 => "short",
        ScalarTy::U16 => "unsigned short",
        ScalarTy::Unit => "void",
        ScalarTy::Bool => "bool",
    }
}

impl Lx {
    /// Refuses `name` outside a kernel's own body (a warp or block collective needs the launch's
    /// threads together; a `__device__` function is run by one thread on `sim`).
    pub(crate) fn kernel_only(&self, n: Node, name: &str, src: &Src) -> R<()> {
        match self.f.role {
            Role::Kernel => Ok(()),
            Role::Device => Err(self.unsupported(n, src, format!("`{name}` in a `__device__` function"))),
            _ => Err(self.unsupported(n, src, format!("`{name}` outside a kernel"))),
        }
    }

    /// The constant a local integer variable `n` was initialised with (`unsigned mask =
    /// 0xffffffffu;`), if nothing in its function assigns a variable of its name or takes its
    /// address: then it holds that constant everywhere.
    fn unchanged_local(&self, n: Node, src: &Src) -> Option<u64> {
        let n = self.strip_parens(n);
        let name = self.text(n, src);
        let v = self.lookup(name).filter(|_| n.kind() == "identifier")?;
        let value = *self.f.init_consts.get(&v.local)?;
        let mut f = n;
        while f.kind() != "function_definition" {
            f = f.parent()?;
        }
        let mut stack = vec![f];
        while let Some(x) = stack.pop() {
            let target = match x.kind() {
                "assignment_expression" => x.child_by_field_name("left"),
                "update_expression" => x.child_by_field_name("argument"),
                "pointer_expression" if x.child_by_field_name("operator").is_some_and(|o| self.text(o, src) == "&") => {
                    x.child_by_field_name("argument")
                }
                _ => None,
            };
            if target.is_some_and(|t| self.text(self.strip_parens(t), src) == name) {
                return None;
            }
            stack.extend(x.named_children(&mut x.walk()));
        }
        Some(value)
    }

    /// A warp mask must name the whole warp (`0xffffffff`): `sim` runs every lane of a warp
    /// through its collectives together.
    pub(crate) fn full_mask(&self, n: Node, src: &Src) -> R<()> {
        match self.constant(n, src).or_else(|e| self.unchanged_local(n, src).ok_or(e)) {
            Ok(v) if v & 0xffff_ffff == 0xffff_ffff => Ok(()),
            _ => Err(self.unsupported(n, src, "a warp mask other than `0xffffffff` (the whole warp: a constant, or a local initialised with it that nothing assigns)")),
        }
    }

    /// `__shfl_sync`, `__shfl_up_sync`, `__shfl_down_sync`, `__shfl_xor_sync`, `__ballot_sync`
    /// (the IR's warp collectives), if `name` is one of them.
    pub(crate) fn warp_call(&mut self, n: Node, name: &str, args: &[Node], src: &Src) -> R<Option<(Expr, CTy)>> {
        let op = match name {
            "__shfl_sync" => Some(ShuffleOp::Idx),
            "__shfl_up_sync" => Some(ShuffleOp::Up),
            "__shfl_down_sync" => Some(ShuffleOp::Down),
            "__shfl_xor_sync" => Some(ShuffleOp::Xor),
            "__ballot_sync" => None,
            _ => return Ok(None),
        };
        self.kernel_only(n, name, src)?;
        let span = self.span(n, src);
        let Some(op) = op else {
            if args.len() != 2 {
                return Err(self.unsupported(n, src, "`__ballot_sync` takes a mask and a predicate"));
            }
            self.full_mask(args[0], src)?;
            let pred = self.cond(args[1], src)?;
            return Ok(Some((Expr::Builtin(Builtin::Ballot, vec![pred], span), CTy::S(ScalarTy::U32))));
        };
        if args.len() == 4 {
            if self.constant(args[3], src).ok() != Some(32) {
                return Err(self.unsupported(args[3], src, "a shuffle width other than 32 (`warpSize`)"));
            }
        } else if args.len() != 3 {
            return Err(self.unsupported(n, src, format!("`{name}` with {} arguments", args.len())));
        }
        self.full_mask(args[0], src)?;
        let (v, vt) = self.rvalue(args[1], src)?;
        let CTy::S(t) = vt else {
            return Err(self.unsupported(args[1], src, "shuffling a pointer"));
        };
        let t = if t == ScalarTy::Bool { ScalarTy::I32 } else { t };
        let v = cast(v, vt_scalar(vt), t);
        let (a, at) = self.rvalue(args[2], src)?;
        if !matches!(at, CTy::S(s) if !matches!(s, ScalarTy::F32 | ScalarTy::F64)) {
            return Err(self.unsupported(args[2], src, "a lane or offset that is not an integer"));
        }
        let a = self.convert(a, at, CTy::S(ScalarTy::U32), args[2], src)?;
        Ok(Some((Expr::Builtin(Builtin::Shuffle(op, t.ir()), vec![v, a], span), CTy::S(t))))
    }

    /// `__syncthreads_count(p)`, `__syncthreads_and(p)`, `__syncthreads_or(p)` stored into
    /// `target`: each thread puts its predicate into a block-wide buffer between two barriers and
    /// reads everyone's (`sim` reports a thread that does not come, like for `__syncthreads`).
    pub(crate) fn syncthreads_reduce(
        &mut self,
        n: Node,
        target: (Place, ScalarTy),
        src: &Src,
        out: &mut Vec<Stmt>,
    ) -> R<()> {
        let fnode = self.child(n, "function", src)?;
        let name = self.text(fnode, src).to_string();
        self.kernel_only(n, &name, src)?;
        let args = self.args(n, src)?;
        if args.len() != 1 {
            return Err(self.unsupported(n, src, format!("`{name}` takes one argument")));
        }
        let span = self.span(n, src);
        let pred = self.cond(args[0], src)?;
        let bd = |d| IExpr::BlockDim(d);
        let threads = bd(ir::DimName::X) * bd(ir::DimName::Y) * bd(ir::DimName::Z);
        let scratch =
            self.new_local(&format!("{name} buffer"), array_ptr(ScalarTy::U32, Mem::GpuShared, false), Level::Block);
        self.f.shared.push((scratch, ir::ScalarTy::U32, threads.clone()));
        let tid = IExpr::ThreadIdx(ir::DimName::X)
            + bd(ir::DimName::X)
                * (IExpr::ThreadIdx(ir::DimName::Y) + bd(ir::DimName::Y) * IExpr::ThreadIdx(ir::DimName::Z));
        let at = |i: IExpr| Place {
            root: scratch,
            path: vec![PathStep::Deref, PathStep::Elem(i)],
            checks: Vec::new(),
            span,
        };
        let count = self.new_local(&format!("{name} count"), Ty::Scalar(ir::ScalarTy::U32), Level::Thread);
        let k = self.new_local(&format!("{name} thread"), Ty::Nat, Level::Thread);
        let load = |l: LocalId| Expr::Load(Place::local(l, span));
        out.push(Stmt::Store { place: at(tid), value: Expr::Cast(Box::new(pred), ir::ScalarTy::U32) });
        out.push(Stmt::Sync { warp: false, span });
        out.push(Stmt::Let { local: count, init: Some(int(0, ScalarTy::U32)), span });
        let add = Expr::Binary(BinOp::Add, Box::new(load(count)), Box::new(Expr::Load(at(IExpr::Counter(k)))));
        out.push(Stmt::For {
            counter: k,
            lo: IExpr::Const(0),
            hi: threads.clone(),
            body: vec![Stmt::Store { place: Place::local(count, span), value: add }],
            exit: None,
            span,
        });
        out.push(Stmt::Sync { warp: false, span });
        let all = Expr::Cast(Box::new(Expr::Nat(threads)), ir::ScalarTy::U32);
        let (value, vt) = match name.as_str() {
            "__syncthreads_count" => (load(count), ScalarTy::I32),
            "__syncthreads_and" => (Expr::Binary(BinOp::Eq, Box::new(load(count)), Box::new(all)), ScalarTy::Bool),
            "__syncthreads_or" => {
                (Expr::Binary(BinOp::Ne, Box::new(load(count)), Box::new(int(0, ScalarTy::U32))), ScalarTy::Bool)
            }
            _ => return Err(self.unsupported(fnode, src, format!("calls of `{name}`"))),
        };
        let value = match vt {
            ScalarTy::Bool => Expr::Cast(Box::new(value), ir::ScalarTy::I32),
            _ => Expr::Cast(Box::new(value), ir::ScalarTy::I32),
        };
        out.push(Stmt::Store { place: target.0, value: cast(value, ScalarTy::I32, target.1) });
        Ok(())
    }
}

fn vt_scalar(t: CTy) -> ScalarTy {
    match t {
        CTy::S(s) => s,
        _ => ScalarTy::I32,
    }
}

impl Lx {
    /// Whether `n` is a call of `__syncthreads_count`, `_and` or `_or`.
    pub(crate) fn is_syncthreads_reduce(&self, n: Node, src: &Src) -> bool {
        n.kind() == "call_expression"
            && n.child_by_field_name("function").is_some_and(|f| {
                matches!(self.text(f, src), "__syncthreads_count" | "__syncthreads_and" | "__syncthreads_or")
            })
    }
}
