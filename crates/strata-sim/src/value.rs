//! Run-time values and their printing.

use crate::arr::Arr;
use std::fmt;
use strata_ir::ir::ScalarTy;

// A fixed layout (a 64-bit tag, then the payload) lets values be copied as whole words: with
// the default layout the interpreter's moves of `Value`s read back bytes just written in other
// sizes, and stalled on it.
#[derive(Clone, Debug, PartialEq)]
#[repr(u64)]
pub enum Value {
    Bool(bool),
    I8(i8),
    U8(u8),
    I16(i16),
    U16(u16),
    I32(i32),
    I64(i64),
    U32(u32),
    U64(u64),
    F32(f32),
    F64(f64),
    Unit,
    /// A natural number used as a value; adopts the type of what it meets.
    Nat(u64),
    Tuple(Vec<Value>),
    /// A by-value array, flattened to its scalars (stored unboxed, see [`Arr`]).
    Array(Box<Arr>),
    /// A reference to element `off` of buffer `buf`.
    Ref {
        buf: usize,
        off: u64,
    },
    /// An owning pointer to buffer `buf`.
    Owned {
        buf: usize,
    },
    /// In a local's slot: the local was moved into buffer `buf` when a reference to it was made
    /// (its scalars, flat), and lives there from then on.
    Boxed {
        buf: usize,
    },
    /// A stream handle (0: the default stream), see `streams.rs`.
    Stream(usize),
    /// An event handle.
    Event(usize),
    /// Memory never written.
    Uninit,
    /// A null pointer (CUDA-C's `NULL`).
    Null,
    /// Text for `println`.
    Str(String),
}

impl Value {
    /// A copy that fails rather than exceed the memory budget (arrays are the large values).
    pub fn try_clone(&self) -> Result<Value, crate::mem::Oom> {
        Ok(match self {
            Value::Array(a) => Value::Array(Box::new(a.try_clone()?)),
            Value::Tuple(vs) => Value::Tuple(vs.iter().map(Value::try_clone).collect::<Result<_, _>>()?),
            v => v.clone(),
        })
    }

    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Value::I8(v) => u64::try_from(v).ok(),
            Value::I16(v) => u64::try_from(v).ok(),
            Value::U8(v) => Some(u64::from(v)),
            Value::U16(v) => Some(u64::from(v)),
            Value::I32(v) => u64::try_from(v).ok(),
            Value::I64(v) => u64::try_from(v).ok(),
            Value::U32(v) => Some(u64::from(v)),
            Value::U64(v) | Value::Nat(v) => Some(v),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match *self {
            Value::Bool(b) => Some(b),
            _ => None,
        }
    }

    /// Converts a number to scalar type `t` with Rust's `as` semantics.
    pub fn cast(&self, t: ScalarTy) -> Value {
        if self.scalar() == Some(t) {
            return self.clone(); // nothing to convert
        }
        let (i, f): (i128, f64) = match *self {
            Value::Bool(b) => (i128::from(b), f64::from(u8::from(b))),
            Value::I8(v) => (v.into(), v.into()),
            Value::U8(v) => (v.into(), v.into()),
            Value::I16(v) => (v.into(), v.into()),
            Value::U16(v) => (v.into(), v.into()),
            Value::I32(v) => (v.into(), v.into()),
            Value::I64(v) => (v.into(), v as f64),
            Value::U32(v) => (v.into(), v.into()),
            Value::U64(v) | Value::Nat(v) => (v.into(), v as f64),
            Value::F32(v) => (v as i128, v.into()),
            Value::F64(v) => (v as i128, v),
            _ => return self.clone(),
        };
        let float_src = matches!(self, Value::F32(_) | Value::F64(_));
        match t {
            // Rust's `as`: integers keep their low bits, floats saturate (NaN gives 0).
            ScalarTy::I8 => Value::I8(if float_src { f as i8 } else { i as i8 }),
            ScalarTy::U8 => Value::U8(if float_src { f as u8 } else { i as u8 }),
            ScalarTy::I16 => Value::I16(if float_src { f as i16 } else { i as i16 }),
            ScalarTy::U16 => Value::U16(if float_src { f as u16 } else { i as u16 }),
            ScalarTy::I32 => Value::I32(if float_src { f as i32 } else { i as i32 }),
            ScalarTy::I64 | ScalarTy::AtomicI64 => Value::I64(if float_src { f as i64 } else { i as i64 }),
            ScalarTy::U32 => Value::U32(if float_src { f as u32 } else { i as u32 }),
            ScalarTy::U64 | ScalarTy::AtomicU64 => Value::U64(if float_src { f as u64 } else { i as u64 }),
            ScalarTy::F32 | ScalarTy::AtomicF32 => Value::F32(if float_src { f as f32 } else { i as f32 }),
            ScalarTy::F64 | ScalarTy::AtomicF64 => Value::F64(if float_src { f } else { i as f64 }),
            ScalarTy::Bool => Value::Bool(i != 0),
            ScalarTy::AtomicU32 => Value::U32(i as u32),
            ScalarTy::AtomicI32 => Value::I32(i as i32),
            ScalarTy::Unit => Value::Unit,
        }
    }

    /// The scalar type of a number, if it has a fixed one.
    pub fn scalar(&self) -> Option<ScalarTy> {
        Some(match self {
            Value::Bool(_) => ScalarTy::Bool,
            Value::I8(_) => ScalarTy::I8,
            Value::U8(_) => ScalarTy::U8,
            Value::I16(_) => ScalarTy::I16,
            Value::U16(_) => ScalarTy::U16,
            Value::I32(_) => ScalarTy::I32,
            Value::I64(_) => ScalarTy::I64,
            Value::U32(_) => ScalarTy::U32,
            Value::U64(_) => ScalarTy::U64,
            Value::F32(_) => ScalarTy::F32,
            Value::F64(_) => ScalarTy::F64,
            _ => return None,
        })
    }
}

/// Prints like Rust's `{}`: `1`, `1.5`, `true`, `[1, 2, 3]`, `(1, 2)`.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Bool(b) => write!(f, "{b}"),
            Value::I8(v) => write!(f, "{v}"),
            Value::U8(v) => write!(f, "{v}"),
            Value::I16(v) => write!(f, "{v}"),
            Value::U16(v) => write!(f, "{v}"),
            Value::I32(v) => write!(f, "{v}"),
            Value::I64(v) => write!(f, "{v}"),
            Value::U32(v) => write!(f, "{v}"),
            Value::U64(v) | Value::Nat(v) => write!(f, "{v}"),
            Value::F32(v) => write!(f, "{v}"),
            Value::F64(v) => write!(f, "{v}"),
            Value::Unit => write!(f, "()"),
            Value::Tuple(vs) => {
                write!(f, "(")?;
                for (i, v) in vs.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{v}")?;
                }
                write!(f, ")")
            }
            Value::Array(vs) => {
                write!(f, "[")?;
                for (i, v) in vs.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{v}")?;
                }
                write!(f, "]")
            }
            Value::Ref { .. } | Value::Owned { .. } | Value::Boxed { .. } => write!(f, "<pointer>"),
            Value::Stream(_) => write!(f, "<stream>"),
            Value::Event(_) => write!(f, "<event>"),
            Value::Uninit => write!(f, "<uninitialised>"),
            Value::Null => write!(f, "NULL"),
            Value::Str(s) => f.write_str(s),
        }
    }
}
