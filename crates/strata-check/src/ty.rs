//! The checker's own representation of data types (Fig. 5): sizes are symbolic [`Nat`]s,
//! memory spaces and scalar kinds are resolved, and literal types wait for inference.

use crate::nat::Nat;
use std::fmt;
use strata_syntax::ast::{Ownership, ScalarTy};

/// A memory space.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Mem {
    CpuMem,
    GpuGlobal,
    GpuShared,
    GpuLocal,
    /// A generic memory-space parameter `m: mem`.
    Var(String),
}

impl Mem {
    pub fn is_gpu(&self) -> bool {
        matches!(self, Mem::GpuGlobal | Mem::GpuShared | Mem::GpuLocal)
    }
}

impl fmt::Display for Mem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mem::CpuMem => f.write_str("cpu.mem"),
            Mem::GpuGlobal => f.write_str("gpu.global"),
            Mem::GpuShared => f.write_str("gpu.shared"),
            Mem::GpuLocal => f.write_str("gpu.local"),
            Mem::Var(v) => f.write_str(v),
        }
    }
}

/// A data type.
#[derive(Clone, Debug, PartialEq)]
pub enum Ty {
    Scalar(ScalarTy),
    /// A generic data-type parameter `d: dty`.
    Var(String),
    Tuple(Vec<Ty>),
    Array(Box<Ty>, Nat),
    ViewArray(Box<Ty>, Nat),
    Ref {
        own: Ownership,
        mem: Mem,
        ty: Box<Ty>,
    },
    /// `T @ m`: an owning pointer to memory in `m`.
    At(Box<Ty>, Mem),
    /// An integer literal whose type is not fixed yet (defaults to `i32`).
    IntLit,
    /// A float literal whose type is not fixed yet (defaults to `f64`).
    FloatLit,
    /// A natural number used as a value (a `for` variable, a size); converts to any integer type.
    Nat,
    /// A stream made by `Stream::new()` (host code only): named, never a value.
    Stream,
    /// The type of an expression that already produced an error: compatible with everything,
    /// so one mistake is reported once.
    Error,
}

impl Ty {
    pub const UNIT: Ty = Ty::Scalar(ScalarTy::Unit);
    pub const BOOL: Ty = Ty::Scalar(ScalarTy::Bool);

    pub fn is_error(&self) -> bool {
        matches!(self, Ty::Error)
    }

    pub fn is_int(&self) -> bool {
        matches!(self, Ty::IntLit | Ty::Nat) || matches!(self, Ty::Scalar(s) if s.is_int())
    }

    pub fn is_float(&self) -> bool {
        matches!(self, Ty::FloatLit | Ty::Scalar(ScalarTy::F32 | ScalarTy::F64))
    }

    pub fn is_numeric(&self) -> bool {
        self.is_int() || self.is_float()
    }

    /// Values of this type are copied, not moved (T-READ-BY-COPY).
    pub fn is_copy(&self) -> bool {
        self.is_copy_with(&|_| false)
    }

    /// [`Ty::is_copy`] where the data-type generics for which `num` holds (those bounded by
    /// `num`: numeric scalars) are copied too.
    pub fn is_copy_with(&self, num: &dyn Fn(&str) -> bool) -> bool {
        match self {
            Ty::Scalar(s) => !s.is_atomic(),
            Ty::Ref { own, .. } => *own == Ownership::Shrd,
            Ty::Tuple(ts) => ts.iter().all(|t| t.is_copy_with(num)),
            Ty::Array(t, _) => t.is_copy_with(num),
            Ty::Var(v) => num(v),
            Ty::At(..) | Ty::ViewArray(..) | Ty::Stream => false,
            Ty::IntLit | Ty::FloatLit | Ty::Nat | Ty::Error => true,
        }
    }

    /// Whether a stream occurs anywhere in this type.
    pub fn mentions_stream(&self) -> bool {
        match self {
            Ty::Stream => true,
            Ty::Tuple(ts) => ts.iter().any(Ty::mentions_stream),
            Ty::Array(t, _) | Ty::ViewArray(t, _) | Ty::At(t, _) | Ty::Ref { ty: t, .. } => t.mentions_stream(),
            _ => false,
        }
    }

    /// A stream, or a reference to one: the only types a stream may have in a program (a `let`
    /// of `Stream::new()`, a `&Stream` parameter of a host function, a `let r = &s;`).
    pub fn is_stream_handle(&self) -> bool {
        match self {
            Ty::Stream => true,
            Ty::Ref { ty, mem: Mem::CpuMem, .. } => **ty == Ty::Stream,
            _ => false,
        }
    }

    /// Element type and length of an array or view array.
    pub fn as_array(&self) -> Option<(&Ty, &Nat)> {
        match self {
            Ty::Array(t, n) | Ty::ViewArray(t, n) => Some((t, n)),
            _ => None,
        }
    }

    /// Replaces literal types by their defaults (`i32`, `f64`), also inside compound types.
    pub fn defaulted(&self) -> Ty {
        match self {
            Ty::IntLit => Ty::Scalar(ScalarTy::I32),
            Ty::FloatLit => Ty::Scalar(ScalarTy::F64),
            Ty::Tuple(ts) => Ty::Tuple(ts.iter().map(Ty::defaulted).collect()),
            Ty::Array(t, n) => Ty::Array(Box::new(t.defaulted()), n.clone()),
            Ty::ViewArray(t, n) => Ty::ViewArray(Box::new(t.defaulted()), n.clone()),
            Ty::Ref { own, mem, ty } => Ty::Ref { own: *own, mem: mem.clone(), ty: Box::new(ty.defaulted()) },
            Ty::At(t, m) => Ty::At(Box::new(t.defaulted()), m.clone()),
            other => other.clone(),
        }
    }
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ty::Scalar(s) => f.write_str(s.name()),
            Ty::Var(v) => f.write_str(v),
            Ty::Tuple(ts) => {
                f.write_str("(")?;
                for (i, t) in ts.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{t}")?;
                }
                if ts.len() == 1 {
                    f.write_str(",")?;
                }
                f.write_str(")")
            }
            Ty::Array(t, n) => write!(f, "[{t}; {n}]"),
            Ty::ViewArray(t, n) => write!(f, "[[{t}; {n}]]"),
            Ty::Ref { own, mem, ty } => write!(f, "&{} {mem} {ty}", own.keyword()),
            Ty::At(t, m) => write!(f, "{t} @ {m}"),
            Ty::IntLit => f.write_str("{integer}"),
            Ty::FloatLit => f.write_str("{float}"),
            Ty::Nat => f.write_str("nat"),
            Ty::Stream => f.write_str("Stream"),
            Ty::Error => f.write_str("{error}"),
        }
    }
}
