//! The device-wide atomics of the prelude (`atomic_<op>_at_<t>`, IR [`Builtin::AtomicAt`]) and
//! the value a read-modify-write computes, shared with the CUDA-C front end's `AtomicRmw`.

use crate::value::Value;
use crate::{binary, fail, Fail, Machine, Who, R};
use strata_diag::{codes, Span};
use strata_ir::ir::{AtomicAtOp, AtomicOp, BinOp, ScalarTy};

/// The new value of an element holding `old` after `op` with the arguments `v` (and `w`, the
/// desired value of a compare-and-swap); `None` for an operation the type does not have.
/// Min and max keep `old` unless `v` compares less (greater), so a NaN on either side keeps it.
pub(crate) fn rmw_value(op: AtomicOp, old: &Value, v: &Value, w: &Value) -> Option<Value> {
    let pick = |cmp: BinOp| match binary(cmp, v.clone(), old.clone()) {
        Some(Value::Bool(true)) => Some(v.clone()),
        Some(_) => Some(old.clone()),
        None => None,
    };
    match op {
        AtomicOp::Add => binary(BinOp::Add, old.clone(), v.clone()),
        AtomicOp::Sub => binary(BinOp::Sub, old.clone(), v.clone()),
        AtomicOp::And => binary(BinOp::BitAnd, old.clone(), v.clone()),
        AtomicOp::Or => binary(BinOp::BitOr, old.clone(), v.clone()),
        AtomicOp::Xor => binary(BinOp::BitXor, old.clone(), v.clone()),
        AtomicOp::Exch => Some(v.clone()),
        AtomicOp::Min => pick(BinOp::Lt),
        AtomicOp::Max => pick(BinOp::Gt),
        AtomicOp::Cas => match binary(BinOp::Eq, old.clone(), v.clone()) {
            Some(Value::Bool(true)) => Some(w.clone()),
            _ => Some(old.clone()),
        },
    }
}

impl Machine<'_, '_> {
    /// `AtomicAt(op, t)` with the evaluated arguments `vs`: atoms, index, values, length.
    pub(crate) fn atomic_at(&mut self, op: AtomicAtOp, t: ScalarTy, vs: &[Value], span: Span, who: Who) -> R<Value> {
        let arg = |i: usize| vs.get(i).cloned().unwrap_or(Value::Unit);
        let (buf, off) = self.pointer(&arg(0), span)?;
        let i = arg(1).as_u64().unwrap_or(u64::MAX);
        // The bound is the referenced array's own length (the last argument), and never past
        // the buffer's end.
        let rest = (self.buffers[buf].data.len() as u64).saturating_sub(off);
        let len = vs.get(2 + op.values()).and_then(Value::as_u64).map_or(rest, |n| n.min(rest));
        if i >= len {
            return Err(out_of_bounds(i, len, span));
        }
        let off = off.saturating_add(i);
        if op == AtomicAtOp::StoreRelease {
            // A release store is a fence followed by the store: the race check's release point.
            self.fence(who);
        }
        if op.is_store() {
            // A store does not read what it overwrites (which may never have been written).
            self.write_raw(buf, off, arg(2).cast(t), who, span, true)?;
            return Ok(Value::Unit);
        }
        let old = self.read_raw(buf, off, who, span, true)?.cast(t);
        let new = match op {
            AtomicAtOp::Rmw(rmw) => rmw_value(rmw, &old, &arg(2).cast(t), &arg(3).cast(t)).ok_or_else(|| {
                fail(codes::UNSUPPORTED, format!("`{}` on this value", rmw.cuda_name()), span, "this atomic")
            })?,
            // A load is logged as an atomic access, so that a plain write racing it is reported.
            _ => old.clone(),
        };
        self.write_raw(buf, off, new, who, span, true)?;
        Ok(old)
    }
}

fn out_of_bounds(i: u64, len: u64, span: Span) -> Fail {
    fail(
        codes::RUN_OUT_OF_BOUNDS,
        format!("atomic operation out of bounds: index {i}, length {len}"),
        span,
        "this atomic operation",
    )
}
