//! The C types of the subset and their mapping to IR types; conversions between them.

use super::*;

/// A scalar type of C. The 8- and 16-bit integers (`char`, `short`, `int8_t`…`uint16_t`) have no
/// IR type of their own: a value of one is an IR `i32` that always holds a value of the C type
/// (every conversion into it wraps as C's does, [`cast`]), and memory holds one per element
/// (`sizeof` is still C's, so byte counts of copies and allocations convert to elements as in C).
/// `bool` is the IR's `bool`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum ScalarTy {
    Bool,
    I8,
    U8,
    I16,
    U16,
    I32,
    I64,
    U32,
    U64,
    F32,
    F64,
    Unit,
}

impl ScalarTy {
    /// The IR type that holds values of this type.
    pub(crate) fn ir(self) -> ir::ScalarTy {
        match self {
            ScalarTy::Bool => ir::ScalarTy::Bool,
            ScalarTy::I8 | ScalarTy::U8 | ScalarTy::I16 | ScalarTy::U16 | ScalarTy::I32 => ir::ScalarTy::I32,
            ScalarTy::I64 => ir::ScalarTy::I64,
            ScalarTy::U32 => ir::ScalarTy::U32,
            ScalarTy::U64 => ir::ScalarTy::U64,
            ScalarTy::F32 => ir::ScalarTy::F32,
            ScalarTy::F64 => ir::ScalarTy::F64,
            ScalarTy::Unit => ir::ScalarTy::Unit,
        }
    }

    /// An 8- or 16-bit integer: its bits and whether it is signed.
    pub(crate) fn narrow(self) -> Option<(u32, bool)> {
        match self {
            ScalarTy::I8 => Some((8, true)),
            ScalarTy::U8 => Some((8, false)),
            ScalarTy::I16 => Some((16, true)),
            ScalarTy::U16 => Some((16, false)),
            _ => None,
        }
    }
}

pub(crate) fn size_of(t: ScalarTy) -> u64 {
    match t {
        ScalarTy::I64 | ScalarTy::U64 | ScalarTy::F64 => 8,
        ScalarTy::Bool | ScalarTy::I8 | ScalarTy::U8 => 1,
        ScalarTy::I16 | ScalarTy::U16 => 2,
        _ => 4,
    }
}

pub(crate) fn zero(t: ScalarTy) -> Expr {
    match t {
        ScalarTy::F32 | ScalarTy::F64 => Expr::Lit(Lit::Float(0.0, t.ir())),
        ScalarTy::Bool => Expr::Lit(Lit::Bool(false)),
        _ => Expr::Lit(Lit::Int(0, t.ir())),
    }
}

pub(crate) fn int(v: u128, t: ScalarTy) -> Expr {
    Expr::Lit(Lit::Int(v, t.ir()))
}

/// C's conversion of a value of type `from` to type `to`.
pub(crate) fn cast(e: Expr, from: ScalarTy, to: ScalarTy) -> Expr {
    if from == to {
        return e;
    }
    if let Some((bits, signed)) = to.narrow() {
        if from.narrow().is_some_and(|(b, s)| b < bits && (s == signed || !s)) {
            return e; // every value of `from` is one of `to`
        }
        // Wrap modulo 2^bits: `x & mask`, then `(x ^ sign) - sign` for a signed type (no shift
        // of a negative number, no overflow).
        let e = cast(e, from, ScalarTy::I32);
        if let Expr::Lit(Lit::Int(v, ir::ScalarTy::I32)) = e {
            let x = v as u64 as i32 as i64 & ((1 << bits) - 1);
            let x = if signed && x >= 1 << (bits - 1) { x - (1 << bits) } else { x };
            if x >= 0 {
                return int(x as u128, ScalarTy::I32);
            }
        }
        let mask = int((1u128 << bits) - 1, ScalarTy::I32);
        let masked = Expr::Binary(BinOp::BitAnd, Box::new(e), Box::new(mask));
        if !signed {
            return masked;
        }
        let sign = || int(1u128 << (bits - 1), ScalarTy::I32);
        let flipped = Expr::Binary(BinOp::BitXor, Box::new(masked), Box::new(sign()));
        return Expr::Binary(BinOp::Sub, Box::new(flipped), Box::new(sign()));
    }
    if from.ir() == to.ir() {
        return e;
    }
    use ir::ScalarTy::*;
    let (from, to) = (from.ir(), to.ir());
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
            I32 if exact(31) => return Expr::Lit(Lit::Int(x as u128, to)),
            U32 if exact(32) => return Expr::Lit(Lit::Int(x as u128, to)),
            I64 if exact(63) => return Expr::Lit(Lit::Int(x as u128, to)),
            U64 if exact(64) => return Expr::Lit(Lit::Int(x as u128, to)),
            F32 if exact(24) => return Expr::Lit(Lit::Float(x as f64, to)),
            F64 if exact(53) => return Expr::Lit(Lit::Float(x as f64, to)),
            _ => {}
        }
    }
    Expr::Cast(Box::new(e), to)
}

/// C's integer promotion: 8- and 16-bit integers and `bool` are computed with as `int`.
pub(crate) fn promote(t: ScalarTy) -> ScalarTy {
    if t == ScalarTy::Bool || t.narrow().is_some() {
        ScalarTy::I32
    } else {
        t
    }
}

/// `x + 1` (`x - 1` with `minus`) of the value `x` of type `t`, converted back to `t` (`x++` of
/// an `unsigned char` 255 is 0).
pub(crate) fn step(x: Expr, t: ScalarTy, minus: bool) -> Expr {
    let op = if minus { BinOp::Sub } else { BinOp::Add };
    let p = promote(t);
    let one = cast(int(1, ScalarTy::I32), ScalarTy::I32, p);
    cast(Expr::Binary(op, Box::new(cast(x, t, p)), Box::new(one)), p, t)
}

/// C's usual arithmetic conversions, on the scalar types of the subset.
pub(crate) fn arith(a: ScalarTy, b: ScalarTy) -> ScalarTy {
    use ScalarTy::*;
    // (8- and 16-bit integers and `bool` are promoted to `int`.)
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
    let arr = Box::new(Ty::Array { elem: Box::new(Ty::Scalar(t.ir())), len: IExpr::Const(0) });
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
            "int" | "signed" | "signed int" | "cudaError_t" | "int32_t" => ScalarTy::I32,
            "char" | "signed char" | "int8_t" => ScalarTy::I8,
            "unsigned char" | "uint8_t" | "uchar" => ScalarTy::U8,
            "short" | "short int" | "signed short" | "signed short int" | "int16_t" => ScalarTy::I16,
            "unsigned short" | "unsigned short int" | "uint16_t" | "ushort" => ScalarTy::U16,
            "uint32_t" | "uint" => ScalarTy::U32,
            "int64_t" | "clock_t" => ScalarTy::I64,
            "uint64_t" => ScalarTy::U64,
            "bool" => ScalarTy::Bool,
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
            Elem::S(t) => Ty::Scalar(t.ir()),
            // (`Split` never reaches memory as one element: each field is a buffer of its own.)
            Elem::Struct(id) | Elem::Split(id) => {
                Ty::Tuple(self.structs[id].fields.iter().map(|(_, t)| self.field_ty(*t)).collect())
            }
        }
    }

    /// The IR type of a struct member in memory: a scalar, or a pointer (a reference to the
    /// elements it points to; `sim` keeps the buffer and offset, C a pointer).
    pub(crate) fn field_ty(&self, t: structs::FTy) -> Ty {
        match t {
            structs::FTy::S(t) => Ty::Scalar(t.ir()),
            structs::FTy::Ptr(e) => self.elem_ptr(e, Mem::GpuGlobal, false),
            structs::FTy::Arr { elem, .. } => {
                Ty::Tuple(vec![Ty::Array { elem: Box::new(self.elem_ty(elem)), len: IExpr::Const(t.len()) }])
            }
        }
    }

    /// A struct member's zero: `0`, or the null pointer (a new allocation's contents).
    pub(crate) fn field_zero(&self, t: structs::FTy) -> Expr {
        match t {
            structs::FTy::S(t) => zero(t),
            structs::FTy::Ptr(_) => Expr::Builtin(Builtin::NullPtr, Vec::new(), Span::DUMMY),
            structs::FTy::Arr { elem, .. } => {
                Expr::Tuple(vec![Expr::ArrayRepeat(Box::new(self.elem_zero(elem)), IExpr::Const(t.len()))])
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
                Expr::Tuple(self.structs[id].fields.iter().map(|(_, t)| self.field_zero(*t)).collect())
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
