//! Arrays declared with their lengths: `T a[N]`, and multi-dimensional `T a[N][M]` (up to any
//! depth) in host code, as GPU locals, `__shared__`, and as globals.
//!
//! An array is one flat allocation of all its elements, row after row, as C lays it out, and
//! its variable is a pointer to the first element (as a one-dimensional array always was). What
//! the variable's type does not say — the lengths — is kept here, by local ([`FnState::arrays`]):
//!
//! * `a[i][j]` is the element `i * M + j`, and `a[i]` (a row) a pointer to element `i * M`, as in
//!   C; the allocation's own bounds check the outermost index (through the flat offset), and each
//!   inner index is checked against its length as the access's own run-time check
//!   ([`Place::checks`]), so `a[0][M]` is out of bounds, as C says, even though element `M` exists;
//! * `sizeof a`, `sizeof a[i]` are the bytes of the array or row (`cudaMemcpy(d, a, sizeof a, …)`);
//! * initialisers nest (`{{1, 2}, {3, 4}}`) or fill the elements in order (`{1, 2, 3, 4}`), the
//!   rest zero.
//!
//! Not supported (E0801): pointer arithmetic or `*` on an array of arrays (`a + 1` is a pointer to
//! a row), and parameters of pointer-to-array type.

use super::*;
use crate::ptr::PtrE;

/// The most elements an array with an initialiser may have.
const MAX_INITIALISED: u64 = 1 << 20;

impl Lx {
    /// The variable and the lengths, outermost first, of an `array_declarator` (`a[N][M]`); a
    /// length is `None` where the brackets are empty (`a[]`).
    pub(crate) fn array_declarator<'t>(&self, d: Node<'t>, src: &Src) -> R<(Node<'t>, Vec<Option<u64>>)> {
        let mut dims = Vec::new();
        let mut at = d;
        while at.kind() == "array_declarator" {
            dims.push(match at.child_by_field_name("size") {
                Some(s) => Some(self.constant(s, src).map_err(|_| {
                    self.unsupported(
                        s,
                        src,
                        "an array length that is not a constant (a literal, a `#define`, or a `const` integer \
                         initialised by a constant)",
                    )
                })?),
                None => None,
            });
            at = self.child(at, "declarator", src)?;
        }
        // (A struct's array member names a `field_identifier`.)
        if at.kind() != "identifier" && at.kind() != "field_identifier" {
            return Err(self.unsupported(at, src, "arrays of pointers and pointers to arrays"));
        }
        dims.reverse();
        if dims[1..].iter().any(Option::is_none) || dims.contains(&Some(0)) {
            return Err(self.unsupported(d, src, "an array with an empty or zero inner length"));
        }
        Ok((at, dims))
    }

    /// The number of elements of an array of lengths `dims` (all given), at most 2^32.
    pub(crate) fn flat_length(&self, dims: &[Option<u64>], d: Node, src: &Src) -> R<u64> {
        dims.iter()
            .try_fold(1u64, |acc, x| x.and_then(|x| acc.checked_mul(x)))
            .filter(|n| *n > 0 && *n <= 1 << 32)
            .ok_or_else(|| self.unsupported(d, src, "an array of this size"))
    }

    /// The lengths of `n` as an array (outermost first): a declared array variable's, minus one
    /// for each subscript; empty for anything else (a pointer, a scalar, an element).
    pub(crate) fn shape(&self, n: Node, src: &Src) -> Vec<u64> {
        match n.kind() {
            "parenthesized_expression" => n.named_child(0).map_or_else(Vec::new, |x| self.shape(x, src)),
            "identifier" => match self.lookup(self.text(n, src)) {
                Some(v) => self.f.arrays.get(&v.local).map_or_else(Vec::new, |(_, dims)| dims.clone()),
                None => Vec::new(),
            },
            "subscript_expression" => match n.child_by_field_name("argument") {
                Some(base) => self.shape(base, src).get(1..).map_or_else(Vec::new, <[u64]>::to_vec),
                None => Vec::new(),
            },
            _ => Vec::new(),
        }
    }

    /// `base[i]` as the pointer `base` decays to and the element offset from it: for an array of
    /// arrays, the start of row `i` (offset `i` times the row's length, with the check that `i`
    /// is below its length where the allocation's bounds do not imply it).
    pub(crate) fn subscript_parts(&mut self, n: Node, src: &Src) -> R<(PtrE, Expr)> {
        let base = self.child(n, "argument", src)?;
        let idx_list = self.child(n, "indices", src)?;
        let mut c = idx_list.walk();
        let idx: Vec<Node> = idx_list.named_children(&mut c).filter(|x| x.kind() != "comment").collect();
        if idx.len() != 1 {
            return Err(self.unsupported(idx_list, src, "this subscript"));
        }
        if let Some(r) = self.member_array_subscript(n, src)? {
            return Ok(r);
        }
        let shape = self.shape(base, src);
        if shape.len() < 2 {
            // A pointer, or an array of scalars (whose allocation has exactly its length).
            let Some(mut p) = self.ptr_expr(base, src)? else {
                return Err(self.unsupported(base, src, "indexing anything but a pointer or array"));
            };
            let i = self.offset(idx[0], src)?;
            if shape.len() == 1 && self.strip_parens(base).kind() == "subscript_expression" {
                // An element of a row: its index is checked against the row's length.
                p.checks.push((IExpr::Value(Box::new(i.clone())), IExpr::Const(shape[0])));
            }
            return Ok((p, i));
        }
        let mut p = self.array_start(base, src)?;
        let i = self.offset(idx[0], src)?;
        // The variable's own first index is checked by its allocation; a row's index by its length.
        if self.strip_parens(base).kind() == "subscript_expression" {
            p.checks.push((IExpr::Value(Box::new(i.clone())), IExpr::Const(shape[0])));
        }
        let row: u64 = shape[1..].iter().product();
        let off = Expr::Binary(BinOp::Mul, Box::new(i), Box::new(int(row.into(), ScalarTy::I64)));
        Ok((p, off))
    }

    /// The first element of `n`, an array of arrays (a declared variable, or a row of one).
    fn array_start(&mut self, n: Node, src: &Src) -> R<PtrE> {
        let n = self.strip_parens(n);
        match n.kind() {
            "identifier" => match self.lookup(self.text(n, src)) {
                Some(Var { local, ty: CTy::Ptr(elem) }) => Ok(PtrE::at(local, elem)),
                _ => Err(self.unknown(n, src)),
            },
            _ => {
                let (p, i) = self.subscript_parts(n, src)?;
                Ok(self.advance(p, i, false))
            }
        }
    }

    /// A row `a[i]` of an array of arrays used as a value: a pointer to its first element. A row
    /// that is itself an array of arrays (of a three-dimensional array) is refused.
    pub(crate) fn row_pointer(&mut self, n: Node, src: &Src) -> R<Option<PtrE>> {
        match self.shape(n, src).len() {
            0 => Ok(None),
            1 => self.array_start_of_row(n, src).map(Some),
            _ => Err(self.unsupported(n, src, "a pointer to an array (index the array down to a row or an element)")),
        }
    }

    fn array_start_of_row(&mut self, n: Node, src: &Src) -> R<PtrE> {
        let (p, i) = self.subscript_parts(self.strip_parens(n), src)?;
        Ok(self.advance(p, i, false))
    }

    pub(crate) fn strip_parens<'t>(&self, mut n: Node<'t>) -> Node<'t> {
        while n.kind() == "parenthesized_expression" {
            match n.named_child(0) {
                Some(x) => n = x,
                None => break,
            }
        }
        n
    }

    /// `sizeof` of an expression that is an array or a row of one, in bytes (`None`: not one).
    pub(crate) fn array_size_of(&self, n: Node, src: &Src) -> Option<u64> {
        let n = self.strip_parens(n);
        let elem = match n.kind() {
            "identifier" => self.lookup(self.text(n, src)).and_then(|v| self.f.arrays.get(&v.local)).map(|(e, _)| *e),
            "subscript_expression" => {
                let mut root = n;
                while root.kind() == "subscript_expression" {
                    root = self.strip_parens(root.child_by_field_name("argument")?);
                }
                self.lookup(self.text(root, src)).and_then(|v| self.f.arrays.get(&v.local)).map(|(e, _)| *e)
            }
            _ => None,
        }?;
        let shape = self.shape(n, src);
        if shape.is_empty() {
            return None;
        }
        let bytes = self.elem_size(elem);
        shape.iter().try_fold(bytes, |acc, d| acc.checked_mul(*d))
    }

    /// The elements an initialiser gives an array of lengths `dims` (of scalars `t`), flat, the
    /// rest zero: nested braces (`{{1, 2}, {3, 4}}`) or the elements in order (`{1, 2, 3, 4}`).
    pub(crate) fn array_init(&mut self, v: Node, dims: &[u64], t: ScalarTy, src: &Src) -> R<Vec<Expr>> {
        if matches!(v.kind(), "string_literal" | "concatenated_string")
            && matches!(t, ScalarTy::I8 | ScalarTy::U8)
            && dims.len() == 1
        {
            // `char s[] = "abc";`: its bytes and the 0 (left out where the length leaves no room
            // for it, as C does).
            let strings::StrE::Lit(text) = self.string_expr(v, src)? else {
                return Err(self.unsupported(v, src, "this array initialiser"));
            };
            let mut bytes: Vec<u8> = text.into_bytes();
            if bytes.len() as u64 != dims[0] {
                bytes.push(0);
            }
            return Ok(bytes.into_iter().map(|b| cast(int(b.into(), ScalarTy::I32), ScalarTy::I32, t)).collect());
        }
        if v.kind() != "initializer_list" {
            return Err(self.unsupported(v, src, "this array initialiser"));
        }
        // (An initialised array is built element by element: a bound keeps that small.)
        let total = dims.iter().fold(1u64, |a, d| a.saturating_mul(*d));
        let row = dims[1..].iter().fold(1u64, |a, d| a.saturating_mul(*d));
        if row > MAX_INITIALISED || (dims[0] != u64::MAX && total > MAX_INITIALISED) {
            return Err(self.unsupported(v, src, "an initialised array of more than 2^20 elements"));
        }
        let mut c = v.walk();
        let parts: Vec<Node> = v.named_children(&mut c).filter(|x| x.kind() != "comment").collect();
        let nested = parts.iter().filter(|p| p.kind() == "initializer_list").count();
        let mut values = Vec::new();
        if nested > 0 && dims.len() > 1 {
            if nested != parts.len() || parts.len() as u64 > dims[0] {
                return Err(self.unsupported(v, src, "this initialiser (mixed or too many rows)"));
            }
            for p in parts {
                let mut r = self.array_init(p, &dims[1..], t, src)?;
                r.resize(row as usize, zero(t));
                values.extend(r);
            }
        } else {
            for p in parts {
                if p.kind() == "initializer_pair" || p.kind() == "initializer_list" {
                    return Err(self.unsupported(p, src, "designated or nested initialisers"));
                }
                let (e, et) = self.rvalue(p, src)?;
                values.push(self.convert(e, et, CTy::S(t), p, src)?);
            }
        }
        if values.len() as u64 > total {
            return Err(self.unsupported(v, src, "an initialiser with more elements than the array"));
        }
        Ok(values)
    }
}
