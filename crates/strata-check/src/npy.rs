//! What `load_npy` and `save_npy` can read and write: the data type `d` of a call must be an
//! array of one or two dimensions of a scalar type an `.npy` file names (`[T; n]` is shape
//! `(n,)`, `[[T; m]; n]` shape `(n, m)` in C order).

use crate::nat::Nat;
use crate::ty::Ty;
use strata_syntax::ast::ScalarTy;

/// The prelude functions that read or write `.npy` files with a data type `d`.
pub const NPY_FUNCTIONS: [&str; 2] = ["load_npy", "save_npy"];

/// The scalar types an `.npy` file can hold for Strata, with numpy's type string of each.
pub const NPY_SCALARS: [(ScalarTy, &str); 11] = [
    (ScalarTy::Bool, "|b1"),
    (ScalarTy::I8, "|i1"),
    (ScalarTy::U8, "|u1"),
    (ScalarTy::I16, "<i2"),
    (ScalarTy::U16, "<u2"),
    (ScalarTy::I32, "<i4"),
    (ScalarTy::I64, "<i8"),
    (ScalarTy::U32, "<u4"),
    (ScalarTy::U64, "<u8"),
    (ScalarTy::F32, "<f4"),
    (ScalarTy::F64, "<f8"),
];

/// The element type and the dimensions (outermost first) of `t`, if an `.npy` file can hold it;
/// else why not (completing "an .npy file cannot hold `t`: …").
pub fn npy_array(t: &Ty) -> Result<(ScalarTy, Vec<Nat>), String> {
    let mut dims = Vec::new();
    let mut at = t;
    while let Ty::Array(elem, n) = at {
        dims.push(n.clone());
        at = elem;
    }
    if matches!(at, Ty::ViewArray(..)) {
        return Err(
            "it is a view, whose elements need not lie in memory in order; copy it into an array first".to_string()
        );
    }
    if dims.is_empty() {
        return Err("it is not an array".to_string());
    }
    let scalar = match at {
        Ty::Scalar(s) if NPY_SCALARS.iter().any(|(x, _)| x == s) => *s,
        other => return Err(format!("its elements are `{other}`, not `bool`, an integer or a float")),
    };
    match dims.len() {
        1 | 2 => Ok((scalar, dims)),
        n => Err(format!("it has {n} dimensions, not 1 or 2")),
    }
}

/// Whether `t` holds an error (a type already reported).
pub fn has_error(t: &Ty) -> bool {
    match t {
        Ty::Error => true,
        Ty::Array(e, _) | Ty::ViewArray(e, _) | Ty::At(e, _) | Ty::Ref { ty: e, .. } => has_error(e),
        Ty::Tuple(ts) => ts.iter().any(has_error),
        _ => false,
    }
}
