//! The C types of the subset and their mapping to IR types; conversions between them.

use super::*;

pub(crate) fn size_of(t: ScalarTy) -> u64 {
    match t {
        ScalarTy::I64 | ScalarTy::U64 | ScalarTy::F64 => 8,
        ScalarTy::Bool => 1,
        _ => 4,
    }
}

pub(crate) fn zero(t: ScalarTy) -> Expr {
    match t {
        ScalarTy::F32 | ScalarTy::F64 => Expr::Lit(Lit::Float(0.0, t)),
        _ => Expr::Lit(Lit::Int(0, t)),
    }
}

pub(crate) fn int(v: u128, t: ScalarTy) -> Expr {
    Expr::Lit(Lit::Int(v, t))
}

pub(crate) fn cast(e: Expr, from: ScalarTy, to: ScalarTy) -> Expr {
    use ScalarTy::*;
    if from == to {
        return e;
    }
    // An integer constant that the target type holds exactly is converted here, once, instead
    // of at every evaluation (`256` compared with an `unsigned`, `1` added to a `float`).
    if let Expr::Lit(Lit::Int(v, t)) = e {
        let x = match (t == from).then_some(from) {
            Some(I32) => i128::from(v as u64 as i32),
            Some(I64) => i128::from(v as u64 as i64),
            Some(U32) => i128::from(v as u64 as u32),
            Some(U64) => i128::from(v as u64),
            _ => -1,
        };
        let exact = |bits: u32| x >= 0 && x < 1i128 << bits;
        match to {
            I32 if exact(31) => return int(x as u128, to),
            U32 if exact(32) => return int(x as u128, to),
            I64 if exact(63) => return int(x as u128, to),
            U64 if exact(64) => return int(x as u128, to),
            F32 if exact(24) => return Expr::Lit(Lit::Float(x as f64, to)),
            F64 if exact(53) => return Expr::Lit(Lit::Float(x as f64, to)),
            _ => {}
        }
    }
    Expr::Cast(Box::new(e), to)
}

/// C's usual arithmetic conversions, on the scalar types of the subset.
pub(crate) fn arith(a: ScalarTy, b: ScalarTy) -> ScalarTy {
    use ScalarTy::*;
    for t in [F64, F32, U64, I64, U32] {
        if a == t || b == t {
            return t;
        }
    }
    I32
}

/// A pointer to a flat array of `t` in `mem`: owning for host variables (`malloc`, `cudaMalloc`,
/// local arrays), a reference for kernel parameters and shared memory. The length is not known
/// statically; `sim` checks every access against the buffer's real length.
pub(crate) fn array_ptr(t: ScalarTy, mem: Mem, owned: bool) -> Ty {
    let arr = Box::new(Ty::Array { elem: Box::new(Ty::Scalar(t)), len: IExpr::Const(0) });
    if owned {
        Ty::Owned(arr, mem)
    } else {
        Ty::Ref(arr, mem)
    }
}

impl Lx {
    pub(crate) fn scalar_type(&self, n: Node, src: &Src) -> R<ScalarTy> {
        let t = self.text(n, src).split_whitespace().collect::<Vec<_>>().join(" ");
        Ok(match t.as_str() {
            "int" | "signed" | "signed int" | "cudaError_t" => ScalarTy::I32,
            "unsigned" | "unsigned int" => ScalarTy::U32,
            "long long" | "long long int" | "long" | "long int" => ScalarTy::I64,
            "unsigned long long" | "unsigned long" | "size_t" | "unsigned long long int" => ScalarTy::U64,
            "float" => ScalarTy::F32,
            "double" => ScalarTy::F64,
            _ if self.typedefs.contains_key(&t) => self.typedefs[&t],
            _ => return Err(self.unsupported(n, src, format!("the type `{t}`"))),
        })
    }

    /// Converts a value between C types of the subset (implicitly, as an assignment does).
    pub(crate) fn convert(&self, e: Expr, from: CTy, to: CTy, n: Node, src: &Src) -> R<Expr> {
        match (from, to) {
            (CTy::S(a), CTy::S(b)) => Ok(cast(e, a, b)),
            (CTy::Ptr(a), CTy::Ptr(b)) if a == b => Ok(e),
            (CTy::Null, CTy::Ptr(_)) => Ok(e),
            _ => Err(self.unsupported(n, src, "converting between pointers and numbers")),
        }
    }
}

impl Lx {
    /// The IR type of one element: a scalar, or a struct as the tuple of its fields (memory
    /// holds it field by field, so every field is checked and race-logged on its own).
    pub(crate) fn elem_ty(&self, e: Elem) -> Ty {
        match e {
            Elem::S(t) => Ty::Scalar(t),
            // (`Split` never reaches memory as one element: each field is a buffer of its own.)
            Elem::Struct(id) | Elem::Split(id) => {
                Ty::Tuple(self.structs[id].fields.iter().map(|(_, t)| Ty::Scalar(*t)).collect())
            }
        }
    }

    /// [`array_ptr`] of elements `e`.
    pub(crate) fn elem_ptr(&self, e: Elem, mem: Mem, owned: bool) -> Ty {
        let arr = Box::new(Ty::Array { elem: Box::new(self.elem_ty(e)), len: IExpr::Const(0) });
        if owned {
            Ty::Owned(arr, mem)
        } else {
            Ty::Ref(arr, mem)
        }
    }

    /// An element of zeros (a new allocation's contents).
    pub(crate) fn elem_zero(&self, e: Elem) -> Expr {
        match e {
            Elem::S(t) => zero(t),
            Elem::Struct(id) | Elem::Split(id) => {
                Expr::Tuple(self.structs[id].fields.iter().map(|(_, t)| zero(*t)).collect())
            }
        }
    }

    /// `sizeof` an element, with C's layout.
    pub(crate) fn elem_size(&self, e: Elem) -> u64 {
        match e {
            Elem::S(t) => size_of(t),
            Elem::Struct(id) | Elem::Split(id) => self.structs[id].size(),
        }
    }

    /// The scalar type of a pointer's elements; a struct (used whole where a number is needed) is
    /// not supported.
    pub(crate) fn scalar_elem(&self, e: Elem, n: Node, src: &Src) -> R<ScalarTy> {
        match e {
            Elem::S(t) => Ok(t),
            Elem::Struct(id) | Elem::Split(id) => Err(self.unsupported(
                n,
                src,
                format!("a whole `{}` here (use one of its fields)", self.structs[id].name),
            )),
        }
    }
}
