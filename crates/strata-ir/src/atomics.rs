//! The prelude's device-wide atomics as IR builtins: `atomic_<op>_at_<t>` becomes
//! [`Builtin::AtomicAt`], and the host's `gpu_global_alloc_atomic_<t>` and
//! `copy_atomic_to_host_<t>` are the plain copies (an atomic is laid out as the value it holds);
//! `thread_fence()` is [`Builtin::Fence`].

use crate::ir::{AtomicAtOp, AtomicOp, Builtin, ScalarTy};

/// The builtin of a prelude function of the atomics family, by its name; `None` for any other
/// name (and for `atomic_fetch_add_at_i32`, the older [`Builtin::AtomicFetchAddAt`]).
pub fn atomic_builtin(name: &str) -> Option<Builtin> {
    if name == "thread_fence" {
        return Some(Builtin::Fence);
    }
    if let Some(t) = name.strip_prefix("gpu_global_alloc_atomic_") {
        return scalar(t).map(|_| Builtin::GlobalAllocCopy);
    }
    if let Some(t) = name.strip_prefix("copy_atomic_to_host_") {
        return scalar(t).map(|_| Builtin::CopyToHost);
    }
    let rest = name.strip_prefix("atomic_")?;
    let (op, t) = rest.rsplit_once("_at_")?;
    let t = scalar(t)?;
    let op = match op {
        "load" => AtomicAtOp::Load,
        "store" => AtomicAtOp::Store,
        "load_acquire" => AtomicAtOp::LoadAcquire,
        "store_release" => AtomicAtOp::StoreRelease,
        "exchange" => AtomicAtOp::Rmw(AtomicOp::Exch),
        "compare_exchange" => AtomicAtOp::Rmw(AtomicOp::Cas),
        "fetch_add" => AtomicAtOp::Rmw(AtomicOp::Add),
        "fetch_sub" => AtomicAtOp::Rmw(AtomicOp::Sub),
        "fetch_and" => AtomicAtOp::Rmw(AtomicOp::And),
        "fetch_or" => AtomicAtOp::Rmw(AtomicOp::Or),
        "fetch_xor" => AtomicAtOp::Rmw(AtomicOp::Xor),
        "fetch_min" => AtomicAtOp::Rmw(AtomicOp::Min),
        "fetch_max" => AtomicAtOp::Rmw(AtomicOp::Max),
        _ => return None,
    };
    Some(Builtin::AtomicAt(op, t))
}

/// The plain scalar type of a name suffix (`u32`).
fn scalar(t: &str) -> Option<ScalarTy> {
    Some(match t {
        "i32" => ScalarTy::I32,
        "u32" => ScalarTy::U32,
        "i64" => ScalarTy::I64,
        "u64" => ScalarTy::U64,
        "f32" => ScalarTy::F32,
        "f64" => ScalarTy::F64,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_map_to_operations() {
        assert_eq!(
            atomic_builtin("atomic_fetch_max_at_f32"),
            Some(Builtin::AtomicAt(AtomicAtOp::Rmw(AtomicOp::Max), ScalarTy::F32))
        );
        assert_eq!(
            atomic_builtin("atomic_compare_exchange_at_u64"),
            Some(Builtin::AtomicAt(AtomicAtOp::Rmw(AtomicOp::Cas), ScalarTy::U64))
        );
        assert_eq!(atomic_builtin("atomic_load_at_i64"), Some(Builtin::AtomicAt(AtomicAtOp::Load, ScalarTy::I64)));
        assert_eq!(
            atomic_builtin("atomic_load_acquire_at_u32"),
            Some(Builtin::AtomicAt(AtomicAtOp::LoadAcquire, ScalarTy::U32))
        );
        assert_eq!(
            atomic_builtin("atomic_store_release_at_f64"),
            Some(Builtin::AtomicAt(AtomicAtOp::StoreRelease, ScalarTy::F64))
        );
        assert_eq!(atomic_builtin("atomic_load_release_at_u32"), None);
        assert_eq!(atomic_builtin("gpu_global_alloc_atomic_f64"), Some(Builtin::GlobalAllocCopy));
        assert_eq!(atomic_builtin("copy_atomic_to_host_u32"), Some(Builtin::CopyToHost));
        assert_eq!(atomic_builtin("thread_fence"), Some(Builtin::Fence));
        assert_eq!(atomic_builtin("atomic_fetch_add_at"), None);
        assert_eq!(atomic_builtin("atomic_fetch_nand_at_u32"), None);
        assert_eq!(atomic_builtin("atomic_load_at_bool"), None);
    }
}
