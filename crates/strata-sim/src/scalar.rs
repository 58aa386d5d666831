//! Scalar expressions evaluated in registers.
//!
//! Thread code (a CUDA-C kernel above all) is mostly small trees of arithmetic, comparisons,
//! casts and loads of scalar variables. [`Machine::eval`] returns a [`Value`] (four words)
//! wrapped in a `Result` through memory, and reading that back after the callee wrote it in
//! smaller pieces stalled the processor (store forwarding) at every node. [`Sc`] is two words, so
//! it comes back in two registers; an error or a value that is not a scalar travels beside it,
//! in the machine. Every expression gives exactly the value `eval` would: what is not handled
//! here is handed to `eval`, and operators other than same-typed integer arithmetic go through
//! the same [`binary`] function.

use crate::{binary, fail, uninit_variable, Fail, Frame, Machine, Value, Who, R};
use strata_diag::{codes, Span};
use strata_ir::ir::{BinOp, Expr, Lit, ScalarTy, UnOp};

/// What an [`Sc`] holds. `Held`: a value that is not a scalar, on [`Machine::held`] (a stack:
/// the operands of one operator come off in reverse order). `Err`: the evaluation failed, the
/// error is in [`Machine::held_err`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u64)]
pub(crate) enum K {
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
    Nat,
    Held,
    Err,
}

/// A scalar value as two words (returned in registers): its kind and its bits (integers
/// sign- or zero-extended, floats by `to_bits`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sc {
    pub k: K,
    pub bits: u64,
}

impl Sc {
    #[inline(always)]
    fn new(k: K, bits: u64) -> Sc {
        Sc { k, bits }
    }

    /// The kind of a scalar type that has one here.
    #[inline(always)]
    fn kind_of(t: ScalarTy) -> Option<K> {
        Some(match t {
            ScalarTy::Bool => K::Bool,
            ScalarTy::I8 => K::I8,
            ScalarTy::U8 => K::U8,
            ScalarTy::I16 => K::I16,
            ScalarTy::U16 => K::U16,
            ScalarTy::I32 => K::I32,
            ScalarTy::I64 => K::I64,
            ScalarTy::U32 => K::U32,
            ScalarTy::U64 => K::U64,
            ScalarTy::F32 => K::F32,
            ScalarTy::F64 => K::F64,
            _ => return None,
        })
    }

    /// A scalar `Value` as an `Sc`; `None` for every other value.
    #[inline(always)]
    pub fn of(v: &Value) -> Option<Sc> {
        Some(match *v {
            Value::Bool(b) => Sc::new(K::Bool, u64::from(b)),
            Value::I8(x) => Sc::new(K::I8, x as i64 as u64),
            Value::U8(x) => Sc::new(K::U8, u64::from(x)),
            Value::I16(x) => Sc::new(K::I16, x as i64 as u64),
            Value::U16(x) => Sc::new(K::U16, u64::from(x)),
            Value::I32(x) => Sc::new(K::I32, x as i64 as u64),
            Value::I64(x) => Sc::new(K::I64, x as u64),
            Value::U32(x) => Sc::new(K::U32, u64::from(x)),
            Value::U64(x) => Sc::new(K::U64, x),
            Value::F32(x) => Sc::new(K::F32, u64::from(x.to_bits())),
            Value::F64(x) => Sc::new(K::F64, x.to_bits()),
            Value::Nat(x) => Sc::new(K::Nat, x),
            _ => return None,
        })
    }

    /// The `Value` of a scalar kind (`Held` and `Err` are the machine's to resolve).
    #[inline(always)]
    pub fn scalar_value(self) -> Value {
        match self.k {
            K::Bool => Value::Bool(self.bits != 0),
            K::I8 => Value::I8(self.bits as i8),
            K::U8 => Value::U8(self.bits as u8),
            K::I16 => Value::I16(self.bits as i16),
            K::U16 => Value::U16(self.bits as u16),
            K::I32 => Value::I32(self.bits as i32),
            K::I64 => Value::I64(self.bits as i64),
            K::U32 => Value::U32(self.bits as u32),
            K::U64 => Value::U64(self.bits),
            K::F32 => Value::F32(f32::from_bits(self.bits as u32)),
            K::F64 => Value::F64(f64::from_bits(self.bits)),
            K::Nat => Value::Nat(self.bits),
            K::Held | K::Err => Value::Uninit,
        }
    }

    #[inline(always)]
    pub fn is_scalar(self) -> bool {
        !matches!(self.k, K::Held | K::Err)
    }

    /// [`Value::scalar`]: the scalar type of a number that has a fixed one.
    #[inline(always)]
    fn has_ty(self, t: ScalarTy) -> bool {
        Sc::kind_of(t) == Some(self.k)
    }

    /// [`Value::cast`] of a scalar: integers to integer types here (an integer, widened to
    /// `i128` and truncated, is the integer truncated), the rest through `Value::cast`.
    /// `t` must have a kind ([`Sc::kind_of`]).
    #[inline(always)]
    pub fn cast(self, t: ScalarTy) -> Sc {
        if self.has_ty(t) {
            return self;
        }
        let i: i64 = match self.k {
            K::I8 | K::U8 | K::I16 | K::U16 | K::I32 | K::I64 | K::U32 | K::U64 | K::Nat => self.bits as i64,
            _ => return Sc::cast_slow(self, t),
        };
        match t {
            ScalarTy::I8 => Sc::new(K::I8, i as i8 as i64 as u64),
            ScalarTy::U8 => Sc::new(K::U8, u64::from(i as u8)),
            ScalarTy::I16 => Sc::new(K::I16, i as i16 as i64 as u64),
            ScalarTy::U16 => Sc::new(K::U16, u64::from(i as u16)),
            ScalarTy::I32 => Sc::new(K::I32, i as i32 as i64 as u64),
            ScalarTy::I64 => Sc::new(K::I64, i as u64),
            ScalarTy::U32 => Sc::new(K::U32, u64::from(i as u32)),
            ScalarTy::U64 => Sc::new(K::U64, i as u64),
            _ => Sc::cast_slow(self, t),
        }
    }

    #[inline(never)]
    fn cast_slow(self, t: ScalarTy) -> Sc {
        let v = self.scalar_value().cast(t);
        // A scalar cast to a type with a kind is a scalar of that kind.
        Sc::of(&v).unwrap_or(self)
    }
}

/// Same-typed integer arithmetic and comparisons, as [`binary`] does them; `None` where it
/// would not give a value of the operand type (division by zero, `&&`/`||`).
#[inline(always)]
fn int_op(op: BinOp, k: K, x: u64, y: u64) -> Option<Sc> {
    macro_rules! go {
        ($t:ty, $wrap:expr) => {{
            let (a, b) = (x as $t, y as $t);
            let wrap = $wrap;
            Some(match op {
                BinOp::Add => Sc::new(k, wrap(a.wrapping_add(b))),
                BinOp::Sub => Sc::new(k, wrap(a.wrapping_sub(b))),
                BinOp::Mul => Sc::new(k, wrap(a.wrapping_mul(b))),
                BinOp::Div => Sc::new(k, wrap(a.checked_div(b)?)),
                BinOp::Rem => Sc::new(k, wrap(a.checked_rem(b)?)),
                BinOp::BitAnd => Sc::new(k, wrap(a & b)),
                BinOp::BitOr => Sc::new(k, wrap(a | b)),
                BinOp::BitXor => Sc::new(k, wrap(a ^ b)),
                BinOp::Shl => Sc::new(k, wrap(a.wrapping_shl(b as u32))),
                BinOp::Shr => Sc::new(k, wrap(a.wrapping_shr(b as u32))),
                BinOp::Eq => Sc::new(K::Bool, u64::from(a == b)),
                BinOp::Ne => Sc::new(K::Bool, u64::from(a != b)),
                BinOp::Lt => Sc::new(K::Bool, u64::from(a < b)),
                BinOp::Le => Sc::new(K::Bool, u64::from(a <= b)),
                BinOp::Gt => Sc::new(K::Bool, u64::from(a > b)),
                BinOp::Ge => Sc::new(K::Bool, u64::from(a >= b)),
                BinOp::And | BinOp::Or => return None,
            })
        }};
    }
    match k {
        K::U32 => go!(u32, |r: u32| u64::from(r)),
        K::I32 => go!(i32, |r: i32| r as i64 as u64),
        K::U64 => go!(u64, |r: u64| r),
        K::I64 => go!(i64, |r: i64| r as u64),
        K::U8 => go!(u8, |r: u8| u64::from(r)),
        K::I8 => go!(i8, |r: i8| r as i64 as u64),
        K::U16 => go!(u16, |r: u16| u64::from(r)),
        K::I16 => go!(i16, |r: i16| r as i64 as u64),
        _ => None,
    }
}

/// What checked integer arithmetic ([`Expr::Checked`]) gives.
enum Arith {
    Val(Sc),
    /// The result does not fit the type (E0913).
    Overflow,
    /// A division or remainder by zero (E0909).
    DivZero,
    /// Not integer arithmetic: evaluated as the plain operator.
    Other,
}

/// The width in bits of an integer kind (`nat` values: 64).
#[inline(always)]
fn width(k: K) -> Option<u32> {
    match k {
        K::I8 | K::U8 => Some(8),
        K::I16 | K::U16 => Some(16),
        K::I32 | K::U32 => Some(32),
        K::I64 | K::U64 | K::Nat => Some(64),
        _ => None,
    }
}

/// A `nat` value (`x`) converted to the integer kind `k`, where it fits.
#[inline(always)]
fn nat_to(k: K, x: u64) -> Option<Sc> {
    let fits = match k {
        K::I8 => x <= i8::MAX as u64,
        K::U8 => x <= u64::from(u8::MAX),
        K::I16 => x <= i16::MAX as u64,
        K::U16 => x <= u64::from(u16::MAX),
        K::I32 => x <= i32::MAX as u64,
        K::U32 => x <= u64::from(u32::MAX),
        K::I64 => x <= i64::MAX as u64,
        K::U64 | K::Nat => true,
        _ => return None,
    };
    fits.then_some(Sc::new(k, x))
}

/// `x op y` of two integers of kind `k` (`nat` values as `u64`), checked as
/// docs/language.md says ("Literals and operators"); a shift's amount `y` may be of any
/// integer kind `ky`.
#[inline(always)]
fn checked_int_op(op: BinOp, k: K, x: u64, ky: K, y: u64) -> Arith {
    if matches!(op, BinOp::Shl | BinOp::Shr) {
        let (Some(w), Some(_)) = (width(k), width(ky)) else { return Arith::Other };
        // A negative amount (sign-extended bits) is above every width too.
        if y >= u64::from(w) {
            return Arith::Overflow;
        }
        return match int_op(op, if k == K::Nat { K::U64 } else { k }, x, y) {
            Some(s) => Arith::Val(Sc::new(k, s.bits)),
            None => Arith::Other,
        };
    }
    if k != ky {
        return Arith::Other;
    }
    macro_rules! go {
        ($t:ty, $wrap:expr) => {{
            let (a, b) = (x as $t, y as $t);
            let wrap = $wrap;
            let r = match op {
                BinOp::Add => a.checked_add(b),
                BinOp::Sub => a.checked_sub(b),
                BinOp::Mul => a.checked_mul(b),
                BinOp::Div | BinOp::Rem if b == 0 => return Arith::DivZero,
                BinOp::Div => a.checked_div(b),
                BinOp::Rem => a.checked_rem(b),
                _ => return Arith::Other,
            };
            match r {
                Some(r) => Arith::Val(Sc::new(k, wrap(r))),
                None => Arith::Overflow,
            }
        }};
    }
    match k {
        K::U32 => go!(u32, |r: u32| u64::from(r)),
        K::I32 => go!(i32, |r: i32| r as i64 as u64),
        K::U64 | K::Nat => go!(u64, |r: u64| r),
        K::I64 => go!(i64, |r: i64| r as u64),
        K::U8 => go!(u8, |r: u8| u64::from(r)),
        K::I8 => go!(i8, |r: i8| r as i64 as u64),
        K::U16 => go!(u16, |r: u16| u64::from(r)),
        K::I16 => go!(i16, |r: i16| r as i64 as u64),
        _ => Arith::Other,
    }
}

/// The message of an overflow of `op` (the words the cpu device's C prints too).
pub(crate) fn overflow_message(op: &str) -> &'static str {
    match op {
        "+" => "attempt to add with overflow",
        "-" => "attempt to subtract with overflow",
        "*" => "attempt to multiply with overflow",
        "/" => "attempt to divide with overflow",
        "%" => "attempt to calculate the remainder with overflow",
        "<<" => "attempt to shift left with overflow",
        ">>" => "attempt to shift right with overflow",
        _ => "attempt to negate with overflow",
    }
}

/// A label of an arithmetic error, with the thread that made it in GPU code.
fn by_whom(label: &str, who: Who) -> String {
    if who.gpu {
        format!("{label}, in thread {} of block {}", crate::coords(who.thread), crate::coords(who.block))
    } else {
        label.to_string()
    }
}

/// The name of an integer kind, for messages.
fn kind_name(k: K) -> &'static str {
    match k {
        K::I8 => "i8",
        K::U8 => "u8",
        K::I16 => "i16",
        K::U16 => "u16",
        K::I32 => "i32",
        K::I64 => "i64",
        K::U32 => "u32",
        K::U64 => "u64",
        _ => "nat",
    }
}

/// A unary operator (Rust semantics: wrapping negation, bitwise `!` of integers); other
/// operands, held values and errors pass unchanged.
#[inline(always)]
fn unary(op: UnOp, s: Sc) -> Sc {
    match (op, s.k) {
        (UnOp::Not, K::Bool) => Sc::new(K::Bool, u64::from(s.bits == 0)),
        (UnOp::Neg, K::I32) => Sc::new(K::I32, (s.bits as i32).wrapping_neg() as i64 as u64),
        (UnOp::Neg, K::I64) => Sc::new(K::I64, (s.bits as i64).wrapping_neg() as u64),
        (UnOp::Neg, K::F32) => Sc::new(K::F32, u64::from((-f32::from_bits(s.bits as u32)).to_bits())),
        (UnOp::Neg, K::F64) => Sc::new(K::F64, (-f64::from_bits(s.bits)).to_bits()),
        (UnOp::Not, K::U32) => Sc::new(K::U32, u64::from(!(s.bits as u32))),
        (UnOp::Not, K::U64) => Sc::new(K::U64, !s.bits),
        (UnOp::Not, K::I32) => Sc::new(K::I32, !(s.bits as i32) as i64 as u64),
        (UnOp::Not, K::I64) => Sc::new(K::I64, !s.bits),
        (UnOp::Neg, K::I8) => Sc::new(K::I8, (s.bits as i8).wrapping_neg() as i64 as u64),
        (UnOp::Neg, K::I16) => Sc::new(K::I16, (s.bits as i16).wrapping_neg() as i64 as u64),
        (UnOp::Not, K::I8) => Sc::new(K::I8, !(s.bits as i8) as i64 as u64),
        (UnOp::Not, K::I16) => Sc::new(K::I16, !(s.bits as i16) as i64 as u64),
        (UnOp::Not, K::U8) => Sc::new(K::U8, u64::from(!(s.bits as u8))),
        (UnOp::Not, K::U16) => Sc::new(K::U16, u64::from(!(s.bits as u16))),
        _ => s,
    }
}

/// The value of an integer literal of a common type or of a scalar variable in the frame (what
/// [`Machine::sc`] gives for it), without a call; `None` for every other expression.
#[inline(always)]
fn leaf(e: &Expr, f: &Frame) -> Option<Sc> {
    match e {
        Expr::Lit(Lit::Int(v, ScalarTy::U32)) => Some(Sc::new(K::U32, u64::from(*v as u32))),
        Expr::Lit(Lit::Int(v, ScalarTy::I32)) => Some(Sc::new(K::I32, *v as i32 as i64 as u64)),
        Expr::Load(p) if p.path.is_empty() && p.checks.is_empty() => f.locals.get(p.root).and_then(Sc::of),
        _ => None,
    }
}

impl Machine<'_, '_> {
    /// An error, set aside for the caller.
    #[cold]
    fn sc_err(&mut self, d: Fail) -> Sc {
        self.held_err = Some(d);
        Sc::new(K::Err, 0)
    }

    /// A value from `eval` (or a load) as an `Sc`.
    #[inline(always)]
    fn sc_of(&mut self, r: R<Value>) -> Sc {
        match r {
            Ok(v) => match Sc::of(&v) {
                Some(s) => s,
                None => {
                    self.held.push(v);
                    Sc::new(K::Held, 0)
                }
            },
            Err(d) => self.sc_err(d),
        }
    }

    /// The `Value` behind an `Sc` (taking a held value or the error off the machine).
    #[inline(always)]
    pub(crate) fn sc_value(&mut self, s: Sc) -> R<Value> {
        match s.k {
            K::Held => Ok(self.held.pop().unwrap_or(Value::Uninit)),
            K::Err => Err(self.take_err()),
            _ => Ok(s.scalar_value()),
        }
    }

    #[cold]
    pub(crate) fn take_err(&mut self) -> Fail {
        self.held_err.take().unwrap_or_else(|| fail(codes::UNSUPPORTED, "lost error", Span::DUMMY, ""))
    }

    /// `eval_bool`: `true` only for the boolean `true`.
    #[inline(always)]
    pub(crate) fn sc_bool(&mut self, e: &Expr, f: &mut Frame, who: Who) -> R<bool> {
        let s = self.sc(e, f, who);
        match s.k {
            K::Bool => Ok(s.bits != 0),
            K::Err => Err(self.take_err()),
            K::Held => {
                self.held.pop();
                Ok(false)
            }
            _ => Ok(false),
        }
    }

    /// The value of `e` as `eval` gives it, as an [`Sc`].
    pub(crate) fn sc(&mut self, e: &Expr, f: &mut Frame, who: Who) -> Sc {
        match e {
            Expr::Lit(Lit::Int(v, ScalarTy::U32)) => Sc::new(K::U32, u64::from(*v as u32)),
            Expr::Lit(Lit::Int(v, ScalarTy::I32)) => Sc::new(K::I32, *v as i32 as i64 as u64),
            Expr::Lit(Lit::Int(v, ScalarTy::U64)) => Sc::new(K::U64, *v as u64),
            Expr::Lit(Lit::Int(v, ScalarTy::I64)) => Sc::new(K::I64, *v as i64 as u64),
            Expr::Lit(Lit::Bool(b)) => Sc::new(K::Bool, u64::from(*b)),
            Expr::Nat(i) => match self.iexpr(i, f, who) {
                Ok(x) => Sc::new(K::Nat, x),
                Err(d) => self.sc_err(d),
            },
            Expr::Load(p) => {
                if p.path.is_empty() && p.checks.is_empty() {
                    if let Some(s) = f.locals.get(p.root).and_then(Sc::of) {
                        return s;
                    }
                }
                let r = self.load(p, f, who);
                self.sc_of(r)
            }
            Expr::Binary(op, a, b) => {
                // Operands that are literals or scalar variables (most of them): without a call.
                let x = match leaf(a, f) {
                    Some(x) => x,
                    None => self.sc(a, f, who),
                };
                if x.k == K::Err {
                    return x;
                }
                // `&&` and `||` short-circuit, as in C: the right operand (an index checked when
                // it runs, a division, an atomic) is not evaluated when the left decides.
                if x.k == K::Bool && ((*op == BinOp::And && x.bits == 0) || (*op == BinOp::Or && x.bits != 0)) {
                    return x;
                }
                let y = match leaf(b, f) {
                    Some(y) => y,
                    None => self.sc(b, f, who),
                };
                if y.k == K::Err {
                    if x.k == K::Held {
                        self.held.pop();
                    }
                    return y;
                }
                if x.k == y.k {
                    if let Some(s) = int_op(*op, x.k, x.bits, y.bits) {
                        return s;
                    }
                }
                self.sc_binary(*op, x, y)
            }
            Expr::Unary(op, x) => {
                let s = self.sc(x, f, who);
                unary(*op, s)
            }
            Expr::Checked(inner, span) => self.sc_checked(inner, *span, f, who),
            Expr::Cast(x, t) => {
                let s = self.sc(x, f, who);
                if !s.is_scalar() {
                    // Not a number: a held value stays as it is (as `Value::cast` leaves it).
                    s
                } else if Sc::kind_of(*t).is_some() {
                    s.cast(*t)
                } else {
                    // `()` and the atomic types, through `Value::cast`.
                    let v = s.scalar_value().cast(*t);
                    self.sc_of(Ok(v))
                }
            }
            _ => {
                let r = self.eval(e, f, who);
                self.sc_of(r)
            }
        }
    }

    /// Checked integer arithmetic ([`Expr::Checked`]): `inner` is a `Binary` or `Unary`.
    #[inline(never)]
    fn sc_checked(&mut self, inner: &Expr, span: Span, f: &mut Frame, who: Who) -> Sc {
        match inner {
            Expr::Binary(op, a, b) => {
                let x = match leaf(a, f) {
                    Some(x) => x,
                    None => self.sc(a, f, who),
                };
                if x.k == K::Err {
                    return x;
                }
                let y = match leaf(b, f) {
                    Some(y) => y,
                    None => self.sc(b, f, who),
                };
                if y.k == K::Err {
                    if x.k == K::Held {
                        self.held.pop();
                    }
                    return y;
                }
                let shift = matches!(op, BinOp::Shl | BinOp::Shr);
                // A `nat` operand takes the other side's integer type, where it fits (a shift's
                // amount keeps its own).
                let (mut x, mut y) = (x, y);
                let mut misfit = false;
                if x.k == K::Nat && y.k != K::Nat && width(y.k).is_some() {
                    match nat_to(y.k, x.bits) {
                        Some(v) => x = v,
                        None => misfit = true,
                    }
                }
                if !shift && y.k == K::Nat && x.k != K::Nat && width(x.k).is_some() {
                    match nat_to(x.k, y.bits) {
                        Some(v) => y = v,
                        None => misfit = true,
                    }
                }
                let r = if misfit { Arith::Overflow } else { checked_int_op(*op, x.k, x.bits, y.k, y.bits) };
                match r {
                    Arith::Val(s) => s,
                    Arith::Other => self.sc_binary(*op, x, y),
                    Arith::DivZero => {
                        let what = if *op == BinOp::Div {
                            "the divisor is zero"
                        } else {
                            "the remainder of a division by zero"
                        };
                        self.sc_err(fail(codes::RUN_ARITHMETIC, "division by zero", span, by_whom(what, who)))
                    }
                    Arith::Overflow => {
                        let k = if x.k == K::Nat { y.k } else { x.k };
                        let label = if misfit {
                            format!("a `nat` operand does not fit `{}`", kind_name(k))
                        } else if shift {
                            format!(
                                "the shift amount is negative or at least {}, the width of `{}`",
                                width(k).unwrap_or(64),
                                kind_name(k)
                            )
                        } else {
                            format!("the result does not fit `{}`", kind_name(k))
                        };
                        self.sc_err(fail(
                            codes::RUN_OVERFLOW,
                            overflow_message(op.symbol()),
                            span,
                            by_whom(&label, who),
                        ))
                    }
                }
            }
            Expr::Unary(UnOp::Neg, x) => {
                let s = self.sc(x, f, who);
                let ok = match s.k {
                    K::I8 => s.bits as i8 != i8::MIN,
                    K::I16 => s.bits as i16 != i16::MIN,
                    K::I32 => s.bits as i32 != i32::MIN,
                    K::I64 => s.bits as i64 != i64::MIN,
                    K::U8 | K::U16 | K::U32 | K::U64 | K::Nat => s.bits == 0,
                    _ => return unary(UnOp::Neg, s),
                };
                if ok {
                    // Unsigned (and `nat`) zero negates to itself.
                    return if matches!(s.k, K::U8 | K::U16 | K::U32 | K::U64 | K::Nat) {
                        s
                    } else {
                        unary(UnOp::Neg, s)
                    };
                }
                let label = format!("the negation does not fit `{}`", kind_name(s.k));
                self.sc_err(fail(codes::RUN_OVERFLOW, overflow_message("neg"), span, by_whom(&label, who)))
            }
            _ => self.sc(inner, f, who),
        }
    }

    /// A binary operator on anything but two integers of one type: through [`binary`]. An operand
    /// that is a variable never assigned (C's `int x; … x + 1`) is E0904.
    #[inline(never)]
    fn sc_binary(&mut self, op: BinOp, x: Sc, y: Sc) -> Sc {
        // Held values come off in reverse order.
        let b = if y.k == K::Held { self.held.pop().unwrap_or(Value::Uninit) } else { y.scalar_value() };
        let a = if x.k == K::Held { self.held.pop().unwrap_or(Value::Uninit) } else { x.scalar_value() };
        if matches!(a, Value::Uninit) || matches!(b, Value::Uninit) {
            return self.sc_err(uninit_variable());
        }
        match binary(op, a, b) {
            Some(v) => self.sc_of(Ok(v)),
            None => self.sc_err(fail(
                codes::RUN_ARITHMETIC,
                format!("arithmetic error in `{}`", op.symbol()),
                Span::DUMMY,
                "division by zero or overflow",
            )),
        }
    }

    /// Writes `v` into a frame variable, without dropping the old value out of line when it
    /// owns nothing (a number, a pointer).
    #[inline(always)]
    pub(crate) fn put_scalar(slot: &mut Value, v: Value) {
        let owns_nothing =
            matches!(slot, Value::Uninit | Value::Unit | Value::Ref { .. } | Value::Owned { .. } | Value::Boxed { .. });
        if owns_nothing || Sc::of(slot).is_some() {
            std::mem::forget(std::mem::replace(slot, v));
        } else {
            *slot = v;
        }
    }

    /// `let` of a scalar variable of type `t`: the value takes the variable's type (as a C
    /// assignment does). `Ok(Some(v))`: the value `v` is left for the general path to store.
    #[inline(always)]
    pub(crate) fn sc_let(&mut self, local: usize, t: ScalarTy, e: &Expr, f: &mut Frame, who: Who) -> R<Option<Value>> {
        let s = self.sc(e, f, who);
        match s.k {
            K::Err => Err(self.take_err()),
            K::Held => Ok(Some(self.held.pop().unwrap_or(Value::Uninit))),
            // `()` and the atomic types: the general path converts.
            _ if Sc::kind_of(t).is_none() => Ok(Some(s.scalar_value())),
            _ => {
                let s = if s.k == K::Nat || !s.has_ty(t) { s.cast(t) } else { s };
                if let Some(slot) = f.locals.get_mut(local) {
                    Self::put_scalar(slot, s.scalar_value());
                }
                Ok(None)
            }
        }
    }

    /// [`crate::convert_like`] for a scalar stored into `old`.
    #[inline(always)]
    pub(crate) fn sc_like(old: &Value, s: Sc) -> Value {
        match old.scalar() {
            Some(t) if matches!(s.k, K::Nat | K::I32 | K::F64 | K::U64) && !s.has_ty(t) => s.cast(t).scalar_value(),
            _ => s.scalar_value(),
        }
    }

    /// An index `IExpr::Value` counted from where a reference points: any integer (the caller
    /// checks the element it reaches).
    pub(crate) fn sc_index_signed(&mut self, e: &Expr, f: &mut Frame, who: Who) -> R<i128> {
        let s = self.sc(e, f, who);
        match s.k {
            K::I8 | K::I16 | K::I32 | K::I64 => Ok(i128::from(s.bits as i64)),
            K::U8 | K::U16 | K::U32 | K::U64 | K::Nat => Ok(i128::from(s.bits)),
            K::Err => Err(self.take_err()),
            _ => match self.sc_value(s)? {
                Value::Uninit => Err(uninit_variable()),
                v => Err(fail(codes::RUN_OUT_OF_BOUNDS, format!("index `{v}` is not an integer"), Span::DUMMY, "")),
            },
        }
    }

    /// An index `IExpr::Value`: a natural number, or the error for a negative one.
    pub(crate) fn sc_index(&mut self, e: &Expr, f: &mut Frame, who: Who) -> R<u64> {
        let s = self.sc(e, f, who);
        let x = match s.k {
            K::I8 | K::I16 | K::I32 | K::I64 => u64::try_from(s.bits as i64).ok(),
            K::U8 | K::U16 | K::U32 | K::U64 | K::Nat => Some(s.bits),
            K::Err => return Err(self.take_err()),
            _ => None,
        };
        match x {
            Some(x) => Ok(x),
            None => match self.sc_value(s)? {
                Value::Uninit => Err(uninit_variable()),
                v => Err(fail(codes::RUN_OUT_OF_BOUNDS, format!("index `{v}` is negative"), Span::DUMMY, "")),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Numbers of every kind, with the edges of each type.
    fn samples() -> Vec<Value> {
        let mut vs = vec![Value::Bool(false), Value::Bool(true)];
        for x in [
            0i64, 1, 2, 3, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 255, 256, -1, -2, -33, -64, -65, -128,
            -129,
        ] {
            vs.push(Value::I8(x as i8));
            vs.push(Value::U8(x as u8));
            vs.push(Value::I16(x as i16));
            vs.push(Value::U16(x as u16));
            vs.push(Value::I32(x as i32));
            vs.push(Value::I64(x));
            vs.push(Value::U32(x as u32));
            vs.push(Value::U64(x as u64));
            vs.push(Value::Nat(x as u64));
        }
        for x in [i32::MIN, i32::MAX] {
            vs.push(Value::I32(x));
            vs.push(Value::U32(x as u32));
        }
        for x in [i64::MIN, i64::MAX] {
            vs.push(Value::I64(x));
            vs.push(Value::U64(x as u64));
            vs.push(Value::Nat(x as u64));
        }
        for x in [0.0, -0.0, 1.5, -2.5, 3e9, -3e9, 1e20, f64::NAN, f64::INFINITY] {
            vs.push(Value::F32(x as f32));
            vs.push(Value::F64(x));
        }
        vs
    }

    fn of(v: &Value) -> Sc {
        Sc::of(v).unwrap_or_else(|| panic!("{v:?} is a scalar"))
    }

    /// Equal as values, NaN equal to NaN of the same type.
    fn same(a: &Value, b: &Value) -> bool {
        match (a, b) {
            (Value::F32(x), Value::F32(y)) => x.to_bits() == y.to_bits(),
            (Value::F64(x), Value::F64(y)) => x.to_bits() == y.to_bits(),
            _ => a == b,
        }
    }

    #[test]
    fn scalars_round_trip() {
        for v in samples() {
            assert!(same(&of(&v).scalar_value(), &v), "{v:?}");
        }
        for v in [Value::Unit, Value::Uninit, Value::Null, Value::Ref { buf: 1, off: 2 }] {
            assert!(Sc::of(&v).is_none(), "{v:?}");
        }
    }

    #[test]
    fn int_ops_agree_with_binary() {
        use BinOp::*;
        let ops = [Add, Sub, Mul, Div, Rem, And, Or, BitAnd, BitOr, BitXor, Shl, Shr, Eq, Ne, Lt, Le, Gt, Ge];
        let vs = samples();
        for a in &vs {
            for b in &vs {
                let (x, y) = (of(a), of(b));
                if x.k != y.k {
                    continue;
                }
                for op in ops {
                    let want = binary(op, a.clone(), b.clone());
                    match int_op(op, x.k, x.bits, y.bits) {
                        // Where the fast path answers, `binary` gives the same value.
                        Some(s) => assert!(
                            want.as_ref().is_some_and(|w| same(&s.scalar_value(), w)),
                            "{a:?} {op:?} {b:?}: {:?} against {want:?}",
                            s.scalar_value()
                        ),
                        // Otherwise `binary` is asked, so only kinds it handles are left out.
                        None => assert!(
                            !matches!(x.k, K::I8 | K::U8 | K::I16 | K::U16 | K::I32 | K::I64 | K::U32 | K::U64)
                                || want.is_none(),
                            "{a:?} {op:?} {b:?}"
                        ),
                    }
                }
            }
        }
    }

    #[test]
    fn casts_agree_with_value_cast() {
        use ScalarTy::*;
        for v in samples() {
            for t in [Bool, I8, U8, I16, U16, I32, I64, U32, U64, F32, F64] {
                let got = of(&v).cast(t).scalar_value();
                assert!(same(&got, &v.cast(t)), "{v:?} as {t:?}: {got:?} against {:?}", v.cast(t));
            }
        }
    }

    #[test]
    fn unary_agrees_with_rust() {
        for v in samples() {
            for op in [UnOp::Neg, UnOp::Not] {
                let want = match (op, &v) {
                    (UnOp::Not, Value::Bool(b)) => Value::Bool(!b),
                    (UnOp::Neg, Value::I32(x)) => Value::I32(x.wrapping_neg()),
                    (UnOp::Neg, Value::I64(x)) => Value::I64(x.wrapping_neg()),
                    (UnOp::Neg, Value::F32(x)) => Value::F32(-x),
                    (UnOp::Neg, Value::F64(x)) => Value::F64(-x),
                    (UnOp::Not, Value::U32(x)) => Value::U32(!x),
                    (UnOp::Not, Value::U64(x)) => Value::U64(!x),
                    (UnOp::Not, Value::I32(x)) => Value::I32(!x),
                    (UnOp::Not, Value::I64(x)) => Value::I64(!x),
                    (UnOp::Neg, Value::I8(x)) => Value::I8(x.wrapping_neg()),
                    (UnOp::Neg, Value::I16(x)) => Value::I16(x.wrapping_neg()),
                    (UnOp::Not, Value::I8(x)) => Value::I8(!x),
                    (UnOp::Not, Value::I16(x)) => Value::I16(!x),
                    (UnOp::Not, Value::U8(x)) => Value::U8(!x),
                    (UnOp::Not, Value::U16(x)) => Value::U16(!x),
                    (_, v) => v.clone(),
                };
                assert!(same(&unary(op, of(&v)).scalar_value(), &want), "{op:?} {v:?}");
            }
        }
    }
}
