//! Device builtins: atomics (`atomicAdd` … `atomicCAS`).

use super::*;
use strata_ir::ir::AtomicOp;

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
        let Some(p) = self.ptr_expr(args[0], src)? else {
            return Err(self.unsupported(
                args[0],
                src,
                format!("the first argument of `{name}`, which is not a pointer"),
            ));
        };
        let t = p.elem;
        if !atomic_types(op).contains(&t) {
            return Err(self.unsupported(n, src, format!("`{name}` on `{}`", c_name(t))));
        }
        let span = self.span(n, src);
        let mut values = vec![Expr::Ref(self.ptr_place(p, None, span))];
        for a in &args[1..] {
            let (e, et) = self.rvalue(*a, src)?;
            if !matches!(et, CTy::S(_)) {
                return Err(self.unsupported(*a, src, format!("this argument of `{name}`")));
            }
            values.push(self.convert(e, et, CTy::S(t), *a, src)?);
        }
        Ok((Expr::Builtin(Builtin::AtomicRmw(op, t), values, span), CTy::S(t)))
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
        _ => "bool",
    }
}
