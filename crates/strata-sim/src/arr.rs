//! Arrays as the simulator stores them: unboxed by scalar type.
//!
//! An [`Arr`] of `f32` is a `Vec<f32>` (4 bytes an element), not a vector of [`Value`]s (32 bytes
//! an element). Which elements were ever written is a bitset, kept only while some element is
//! not (an array made from values, such as `[0.0; N]`, has none). Arrays whose elements are not
//! scalars of one type (pointers, tuples, natural numbers) fall back to a vector of values.
//! Every allocation is charged against the memory budget ([`crate::mem`]) and fallible.

use crate::mem::{self, Oom};
use crate::value::Value;
use strata_ir::ir::ScalarTy;

/// The elements.
#[derive(Clone)]
enum Data {
    Bool(Vec<bool>),
    I8(Vec<i8>),
    U8(Vec<u8>),
    I16(Vec<i16>),
    U16(Vec<u16>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    /// Values of mixed or non-scalar types; never-written elements are [`Value::Uninit`].
    Any(Vec<Value>),
}

/// `$body` for the vector of any typed variant (bound to `$v`), `$any` for [`Data::Any`].
macro_rules! each {
    ($data:expr, $v:ident => $body:expr, $a:ident => $any:expr) => {
        match $data {
            Data::Bool($v) => $body,
            Data::I8($v) => $body,
            Data::U8($v) => $body,
            Data::I16($v) => $body,
            Data::U16($v) => $body,
            Data::I32($v) => $body,
            Data::I64($v) => $body,
            Data::U32($v) => $body,
            Data::U64($v) => $body,
            Data::F32($v) => $body,
            Data::F64($v) => $body,
            Data::Any($a) => $any,
        }
    };
}

/// A scalar type an array can hold unboxed.
trait Scalar: Copy + Default {
    const TY: ScalarTy;
    /// The value, if it is a number of this type.
    fn exact(v: &Value) -> Option<Self>;
    /// The value as stored into memory of this type: numbers of this type, and natural numbers
    /// and literals of the default types (`i32`, `u64`, `f64`) converted, as a C assignment
    /// converts them (see `convert_like`); `None` for anything else.
    fn stored(v: &Value) -> Option<Self> {
        match v {
            Value::Nat(_) | Value::I32(_) | Value::F64(_) | Value::U64(_) => Self::exact(&v.cast(Self::TY)),
            _ => Self::exact(v),
        }
    }
}

macro_rules! scalar {
    ($t:ty, $ty:ident, $ctor:ident) => {
        impl Scalar for $t {
            const TY: ScalarTy = ScalarTy::$ty;
            fn exact(v: &Value) -> Option<Self> {
                match v {
                    Value::$ctor(x) => Some(*x),
                    _ => None,
                }
            }
        }
    };
}

scalar!(bool, Bool, Bool);
scalar!(i8, I8, I8);
scalar!(u8, U8, U8);
scalar!(i16, I16, I16);
scalar!(u16, U16, U16);
scalar!(i32, I32, I32);
scalar!(i64, I64, I64);
scalar!(u32, U32, U32);
scalar!(u64, U64, U64);
scalar!(f32, F32, F32);
scalar!(f64, F64, F64);

/// Elements of one scalar type, for [`Arr::from_typed`].
pub enum Typed {
    Bool(Vec<bool>),
    I8(Vec<i8>),
    U8(Vec<u8>),
    I16(Vec<i16>),
    U16(Vec<u16>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
}

/// An array of values, stored compactly.
pub struct Arr {
    data: Data,
    /// Bit `i` set: element `i` was written. `None`: every element was (always `None` for
    /// [`Data::Any`], which marks unwritten elements itself).
    init: Option<Vec<u64>>,
    /// Elements whose bit is clear.
    missing: u64,
    /// How many elements to make room for at the first push (the type is not known before).
    hint: u64,
}

impl Drop for Arr {
    fn drop(&mut self) {
        mem::release(self.bytes());
    }
}

impl Clone for Arr {
    /// A copy that cannot fail: charged even beyond the budget (see [`Arr::try_clone`]).
    fn clone(&self) -> Arr {
        let copy = Arr { data: self.data.clone(), init: self.init.clone(), missing: self.missing, hint: 0 };
        mem::charge_anyway(copy.bytes());
        copy
    }
}

impl PartialEq for Arr {
    fn eq(&self, other: &Arr) -> bool {
        self.len() == other.len() && (0..self.len()).all(|i| self.get(i) == other.get(i))
    }
}

impl std::fmt::Debug for Arr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

fn words(n: u64) -> u64 {
    n.div_ceil(64)
}

impl Default for Arr {
    fn default() -> Arr {
        Arr::new()
    }
}

impl Arr {
    /// An empty array.
    pub fn new() -> Arr {
        Arr { data: Data::Any(Vec::new()), init: None, missing: 0, hint: 0 }
    }

    /// An empty array that will hold `n` elements (reserved, and charged, at the first push).
    pub fn with_capacity(n: u64) -> Arr {
        Arr { data: Data::Any(Vec::new()), init: None, missing: 0, hint: n }
    }

    /// `n` elements of scalar type `t`, none of them written yet (shared memory).
    pub fn uninit(t: ScalarTy, n: u64) -> Result<Arr, Oom> {
        // Both parts are requested together, so that the error reports the whole size.
        let whole = |size: usize| Oom { bytes: u128::from(n) * size as u128 + u128::from(words(n)) * 8 };
        let data = match t {
            ScalarTy::Bool => Data::Bool(mem::try_vec(n, false).map_err(|_| whole(1))?),
            ScalarTy::I8 => Data::I8(mem::try_vec(n, 0).map_err(|_| whole(1))?),
            ScalarTy::U8 => Data::U8(mem::try_vec(n, 0).map_err(|_| whole(1))?),
            ScalarTy::I16 => Data::I16(mem::try_vec(n, 0).map_err(|_| whole(2))?),
            ScalarTy::U16 => Data::U16(mem::try_vec(n, 0).map_err(|_| whole(2))?),
            ScalarTy::I32 | ScalarTy::AtomicI32 => Data::I32(mem::try_vec(n, 0).map_err(|_| whole(4))?),
            ScalarTy::I64 | ScalarTy::AtomicI64 => Data::I64(mem::try_vec(n, 0).map_err(|_| whole(8))?),
            ScalarTy::U32 | ScalarTy::AtomicU32 => Data::U32(mem::try_vec(n, 0).map_err(|_| whole(4))?),
            ScalarTy::U64 | ScalarTy::AtomicU64 => Data::U64(mem::try_vec(n, 0).map_err(|_| whole(8))?),
            ScalarTy::F32 | ScalarTy::AtomicF32 => Data::F32(mem::try_vec(n, 0.0).map_err(|_| whole(4))?),
            ScalarTy::F64 | ScalarTy::AtomicF64 => Data::F64(mem::try_vec(n, 0.0).map_err(|_| whole(8))?),
            ScalarTy::Unit => {
                return Ok(Arr { data: Data::Any(mem::try_vec(n, Value::Uninit)?), init: None, missing: 0, hint: 0 })
            }
        };
        let mut a = Arr { data, init: None, missing: 0, hint: 0 };
        if n > 0 {
            let size = a.elem_size();
            a.init = Some(mem::try_vec(words(n), 0u64).map_err(|_| whole(size))?);
            a.missing = n;
        }
        Ok(a)
    }

    /// `n` copies of `v` (an array value repeats its elements).
    pub fn repeat(v: &Value, n: u64) -> Result<Arr, Oom> {
        fn typed<T: Scalar>(x: T, n: u64) -> Result<Vec<T>, Oom> {
            mem::try_vec(n, x)
        }
        let data = match v {
            Value::Bool(x) => Data::Bool(typed(*x, n)?),
            Value::I8(x) => Data::I8(typed(*x, n)?),
            Value::U8(x) => Data::U8(typed(*x, n)?),
            Value::I16(x) => Data::I16(typed(*x, n)?),
            Value::U16(x) => Data::U16(typed(*x, n)?),
            Value::I32(x) => Data::I32(typed(*x, n)?),
            Value::I64(x) => Data::I64(typed(*x, n)?),
            Value::U32(x) => Data::U32(typed(*x, n)?),
            Value::U64(x) => Data::U64(typed(*x, n)?),
            Value::F32(x) => Data::F32(typed(*x, n)?),
            Value::F64(x) => Data::F64(typed(*x, n)?),
            Value::Array(inner) => {
                let Some(total) = (inner.len() as u64).checked_mul(n) else {
                    return Err(Oom::of(u128::from(n) * inner.len() as u128, inner.elem_size()));
                };
                let mut out = Arr::with_capacity(total);
                for _ in 0..n {
                    out.extend(inner, 0, inner.len())?;
                }
                return Ok(out);
            }
            other => Data::Any(mem::try_vec(n, other.clone())?),
        };
        Ok(Arr { data, init: None, missing: 0, hint: 0 })
    }

    /// The array of `values`, in order.
    pub fn from_values(values: impl IntoIterator<Item = Value>) -> Result<Arr, Oom> {
        let mut a = Arr::new();
        for v in values {
            a.push(v)?;
        }
        Ok(a)
    }

    /// The array of these elements, every one written. The vector's allocation must be charged
    /// already (made by [`mem::try_vec`]): the array takes the charge over.
    pub fn from_typed(t: Typed) -> Arr {
        let data = match t {
            Typed::Bool(v) => Data::Bool(v),
            Typed::I8(v) => Data::I8(v),
            Typed::U8(v) => Data::U8(v),
            Typed::I16(v) => Data::I16(v),
            Typed::U16(v) => Data::U16(v),
            Typed::I32(v) => Data::I32(v),
            Typed::I64(v) => Data::I64(v),
            Typed::U32(v) => Data::U32(v),
            Typed::U64(v) => Data::U64(v),
            Typed::F32(v) => Data::F32(v),
            Typed::F64(v) => Data::F64(v),
        };
        Arr { data, init: None, missing: 0, hint: 0 }
    }

    /// A copy that fails rather than exceed the budget.
    pub fn try_clone(&self) -> Result<Arr, Oom> {
        mem::charge(self.len() as u64 * self.elem_size() as u64 + self.init.as_ref().map_or(0, mem::bytes_of))?;
        let copy = Arr { data: self.data.clone(), init: self.init.clone(), missing: self.missing, hint: 0 };
        // The copy's capacity is its length: make the charge match what it will release.
        mem::release(self.len() as u64 * self.elem_size() as u64 + self.init.as_ref().map_or(0, mem::bytes_of));
        mem::charge_anyway(copy.bytes());
        Ok(copy)
    }

    pub fn len(&self) -> usize {
        each!(&self.data, v => v.len(), a => a.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes of one element.
    pub fn elem_size(&self) -> usize {
        match &self.data {
            Data::Bool(_) | Data::I8(_) | Data::U8(_) => 1,
            Data::I16(_) | Data::U16(_) => 2,
            Data::I32(_) | Data::U32(_) | Data::F32(_) => 4,
            Data::I64(_) | Data::U64(_) | Data::F64(_) => 8,
            Data::Any(_) => std::mem::size_of::<Value>(),
        }
    }

    /// The bytes this array holds (what it is charged).
    pub fn bytes(&self) -> u64 {
        each!(&self.data, v => mem::bytes_of(v), a => mem::bytes_of(a)) + self.init.as_ref().map_or(0, mem::bytes_of)
    }

    /// Whether element `i` was ever written.
    pub fn is_init(&self, i: usize) -> bool {
        match (&self.data, &self.init) {
            (Data::Any(a), _) => a.get(i).is_some_and(|v| *v != Value::Uninit),
            (_, None) => i < self.len(),
            (_, Some(bits)) => i < self.len() && bits[i / 64] >> (i % 64) & 1 == 1,
        }
    }

    /// The first element of `lo..hi` (in bounds) that was never written.
    pub fn first_uninit(&self, lo: usize, hi: usize) -> Option<usize> {
        match (&self.data, &self.init) {
            (Data::Any(_), _) => (lo..hi).find(|&i| !self.is_init(i)),
            (_, None) => None,
            (_, Some(_)) if self.missing == 0 => None,
            (_, Some(bits)) => {
                let mut i = lo;
                while i < hi {
                    // A whole word of written elements at a time.
                    let w = bits[i / 64] >> (i % 64);
                    if w == u64::MAX >> (i % 64) {
                        i = (i / 64 + 1) * 64;
                        continue;
                    }
                    let at = i + (!w).trailing_zeros() as usize;
                    return (at < hi).then_some(at);
                }
                None
            }
        }
    }

    /// Element `i` ([`Value::Uninit`] if it was never written, or is past the end).
    pub fn get(&self, i: usize) -> Value {
        if !self.is_init(i) {
            return Value::Uninit;
        }
        match &self.data {
            Data::Bool(v) => Value::Bool(v[i]),
            Data::I8(v) => Value::I8(v[i]),
            Data::U8(v) => Value::U8(v[i]),
            Data::I16(v) => Value::I16(v[i]),
            Data::U16(v) => Value::U16(v[i]),
            Data::I32(v) => Value::I32(v[i]),
            Data::I64(v) => Value::I64(v[i]),
            Data::U32(v) => Value::U32(v[i]),
            Data::U64(v) => Value::U64(v[i]),
            Data::F32(v) => Value::F32(v[i]),
            Data::F64(v) => Value::F64(v[i]),
            Data::Any(a) => a[i].clone(),
        }
    }

    /// The elements in order.
    pub fn iter(&self) -> impl Iterator<Item = Value> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// Element `i`, mutably, where the array holds values (arrays of tuples); `None` for a
    /// typed array or an index past the end.
    pub fn get_mut_value(&mut self, i: usize) -> Option<&mut Value> {
        match &mut self.data {
            Data::Any(a) => a.get_mut(i),
            _ => None,
        }
    }

    /// Writes element `i` (`i < len`), converting literals and natural numbers to the array's
    /// type like `convert_like`; `Value::Uninit` makes the element unwritten again (a copy of
    /// memory never written). Any other value the array's type cannot hold turns the array into
    /// one of values, which keeps it as it is.
    pub fn set(&mut self, i: usize, v: Value) -> Result<(), Oom> {
        if i >= self.len() {
            return Ok(());
        }
        if let Data::Any(a) = &mut self.data {
            let slot = &mut a[i];
            *slot = crate::convert_like(slot, v);
            return Ok(());
        }
        if v == Value::Uninit {
            return self.clear_bit(i);
        }
        let stored = match &mut self.data {
            Data::Bool(d) => put(d, i, &v),
            Data::I8(d) => put(d, i, &v),
            Data::U8(d) => put(d, i, &v),
            Data::I16(d) => put(d, i, &v),
            Data::U16(d) => put(d, i, &v),
            Data::I32(d) => put(d, i, &v),
            Data::I64(d) => put(d, i, &v),
            Data::U32(d) => put(d, i, &v),
            Data::U64(d) => put(d, i, &v),
            Data::F32(d) => put(d, i, &v),
            Data::F64(d) => put(d, i, &v),
            Data::Any(_) => false,
        };
        if stored {
            self.set_bit(i);
            Ok(())
        } else {
            // Not a number: the array holds values from now on.
            self.make_values()?;
            self.set(i, v)
        }
    }

    /// Appends `v` as it is (a value of another type than the array's elements turns it into an
    /// array of values).
    pub fn push(&mut self, v: Value) -> Result<(), Oom> {
        if self.is_empty() && matches!(&self.data, Data::Any(a) if a.capacity() == 0) {
            // The first element decides the type.
            if let Some(t) = v.scalar() {
                self.data = empty(t);
            }
            let hint = std::mem::take(&mut self.hint);
            each!(&mut self.data, d => mem::reserve(d, hint)?, a => mem::reserve(a, hint)?);
        }
        if v != Value::Uninit && !self.holds(&v) {
            self.make_values()?;
        }
        if self.init.is_none() {
            // A number into an array whose elements are all written (or any value into values).
            let pushed = match &mut self.data {
                Data::Bool(d) => push_num(d, &v)?,
                Data::I8(d) => push_num(d, &v)?,
                Data::U8(d) => push_num(d, &v)?,
                Data::I16(d) => push_num(d, &v)?,
                Data::U16(d) => push_num(d, &v)?,
                Data::I32(d) => push_num(d, &v)?,
                Data::I64(d) => push_num(d, &v)?,
                Data::U32(d) => push_num(d, &v)?,
                Data::U64(d) => push_num(d, &v)?,
                Data::F32(d) => push_num(d, &v)?,
                Data::F64(d) => push_num(d, &v)?,
                Data::Any(a) => {
                    mem::reserve_one(a)?;
                    a.push(v);
                    return Ok(());
                }
            };
            if pushed {
                return Ok(());
            }
        }
        // An unwritten element first, then `v` written into it.
        let n = self.len();
        each!(&mut self.data, d => { mem::reserve_one(d)?; d.push(Default::default()) }, a => {
            mem::reserve_one(a)?;
            a.push(Value::Uninit)
        });
        let marked = match &mut self.init {
            Some(bits) => if bits.len() * 64 <= n { mem::reserve_one(bits).map(|()| bits.push(0)) } else { Ok(()) }
                .map(|()| self.missing += 1),
            None => self.clear_bit(n),
        };
        if let Err(e) = marked {
            self.pop();
            return Err(e);
        }
        if v == Value::Uninit {
            return Ok(());
        }
        self.set(n, v)
    }

    /// Whether `v` is an element of this array's type (any value for an array of values).
    fn holds(&self, v: &Value) -> bool {
        match &self.data {
            Data::Bool(_) => bool::exact(v).is_some(),
            Data::I8(_) => i8::exact(v).is_some(),
            Data::U8(_) => u8::exact(v).is_some(),
            Data::I16(_) => i16::exact(v).is_some(),
            Data::U16(_) => u16::exact(v).is_some(),
            Data::I32(_) => i32::exact(v).is_some(),
            Data::I64(_) => i64::exact(v).is_some(),
            Data::U32(_) => u32::exact(v).is_some(),
            Data::U64(_) => u64::exact(v).is_some(),
            Data::F32(_) => f32::exact(v).is_some(),
            Data::F64(_) => f64::exact(v).is_some(),
            Data::Any(_) => true,
        }
    }

    fn pop(&mut self) {
        each!(&mut self.data, d => { d.pop(); }, a => { a.pop(); });
    }

    /// Appends elements `lo..hi` of `src`.
    pub fn extend(&mut self, src: &Arr, lo: usize, hi: usize) -> Result<(), Oom> {
        let hi = hi.min(src.len());
        let lo = lo.min(hi);
        if self.is_empty() && matches!(&self.data, Data::Any(a) if a.capacity() == 0) {
            // Starts with `src`'s type, so the fast path below applies.
            if let Some(t) = src.scalar() {
                self.data = empty(t);
            }
            let hint = std::mem::take(&mut self.hint).max((hi - lo) as u64);
            each!(&mut self.data, d => mem::reserve(d, hint)?, a => mem::reserve(a, hint)?);
        }
        let all_written = src.init.is_none() && self.init.is_none();
        macro_rules! fast {
            ($($ctor:ident),*) => {
                match (&mut self.data, &src.data) {
                    $((Data::$ctor(d), Data::$ctor(s)) if all_written => {
                        mem::reserve(d, (hi - lo) as u64)?;
                        d.extend_from_slice(&s[lo..hi]);
                        return Ok(());
                    })*
                    _ => {}
                }
            };
        }
        fast!(Bool, I8, U8, I16, U16, I32, I64, U32, U64, F32, F64);
        for i in lo..hi {
            self.push(src.get(i))?;
        }
        Ok(())
    }

    /// A new array of elements `lo..hi`.
    pub fn slice(&self, lo: usize, hi: usize) -> Result<Arr, Oom> {
        let mut out = Arr::with_capacity(hi.saturating_sub(lo) as u64);
        out.extend(self, lo, hi)?;
        Ok(out)
    }

    /// Copies `n` elements of `src` from `src_off` to `dst_off` of `self` (both in bounds).
    pub fn copy_from(&mut self, dst_off: usize, src: &Arr, src_off: usize, n: usize) -> Result<(), Oom> {
        let whole = src.init.is_none();
        macro_rules! fast {
            ($($ctor:ident),*) => {
                match (&mut self.data, &src.data) {
                    $((Data::$ctor(d), Data::$ctor(s)) if whole => {
                        d[dst_off..dst_off + n].copy_from_slice(&s[src_off..src_off + n]);
                        for i in dst_off..dst_off + n {
                            self.set_bit(i);
                        }
                        return Ok(());
                    })*
                    _ => {}
                }
            };
        }
        fast!(Bool, I8, U8, I16, U16, I32, I64, U32, U64, F32, F64);
        for i in 0..n {
            self.set(dst_off + i, src.get(src_off + i))?;
        }
        Ok(())
    }

    /// The scalar type of a typed array.
    pub fn scalar(&self) -> Option<ScalarTy> {
        Some(match &self.data {
            Data::Bool(_) => bool::TY,
            Data::I8(_) => i8::TY,
            Data::U8(_) => u8::TY,
            Data::I16(_) => i16::TY,
            Data::U16(_) => u16::TY,
            Data::I32(_) => i32::TY,
            Data::I64(_) => i64::TY,
            Data::U32(_) => u32::TY,
            Data::U64(_) => u64::TY,
            Data::F32(_) => f32::TY,
            Data::F64(_) => f64::TY,
            Data::Any(_) => return None,
        })
    }

    fn set_bit(&mut self, i: usize) {
        if let Some(bits) = &mut self.init {
            let w = &mut bits[i / 64];
            if *w >> (i % 64) & 1 == 0 {
                *w |= 1 << (i % 64);
                self.missing -= 1;
                if self.missing == 0 {
                    // Every element written: the bitset is no longer needed.
                    if let Some(bits) = self.init.take() {
                        mem::release(mem::bytes_of(&bits));
                    }
                }
            }
        }
    }

    fn clear_bit(&mut self, i: usize) -> Result<(), Oom> {
        if self.init.is_none() {
            let n = self.len() as u64;
            let mut bits = mem::try_vec(words(n.max(i as u64 + 1)), u64::MAX)?;
            // Bits past the end are clear, so that pushing sets them explicitly.
            let last = bits.len() - 1;
            let used = n - last as u64 * 64;
            if used < 64 {
                bits[last] = (1u64 << used) - 1;
            }
            self.init = Some(bits);
            self.missing = 0;
        }
        if let Some(bits) = &mut self.init {
            let w = &mut bits[i / 64];
            if *w >> (i % 64) & 1 == 1 {
                *w &= !(1 << (i % 64));
                self.missing += 1;
            }
        }
        Ok(())
    }

    /// Turns a typed array into one of values (for a value that is not a number).
    fn make_values(&mut self) -> Result<(), Oom> {
        if matches!(self.data, Data::Any(_)) {
            return Ok(());
        }
        let n = self.len();
        let mut vals: Vec<Value> = Vec::new();
        mem::reserve(&mut vals, n as u64)?;
        vals.extend(self.iter());
        let old = std::mem::replace(&mut self.data, Data::Any(vals));
        each!(old, v => mem::release(mem::bytes_of(&v)), a => mem::release(mem::bytes_of(&a)));
        if let Some(bits) = self.init.take() {
            mem::release(mem::bytes_of(&bits));
        }
        self.missing = 0;
        Ok(())
    }

    /// Fills elements `off..` with the splitmix64 sequence from `state` (`fill_random`): floats
    /// in `[0, 1)`, booleans from the low bit, integers in `0..100`.
    pub fn fill_random(&mut self, off: usize, state: &mut u64) {
        for i in off..self.len() {
            let x = crate::splitmix64(state);
            let t = self.scalar().or_else(|| self.get(i).scalar());
            let v = match t {
                Some(ScalarTy::F32) => Value::F32(((x >> 11) as f64 / (1u64 << 53) as f64) as f32),
                Some(ScalarTy::F64) => Value::F64((x >> 11) as f64 / (1u64 << 53) as f64),
                Some(ScalarTy::Bool) => Value::Bool(x & 1 == 1),
                Some(t) => Value::U64(x % 100).cast(t),
                None => Value::U64(x % 100).cast(ScalarTy::I32),
            };
            // A number always fits a typed array; an array of values takes it as it is.
            let _ = self.set(i, v);
        }
    }
}

/// An empty vector of scalar type `t`.
fn empty(t: ScalarTy) -> Data {
    match t {
        ScalarTy::Bool => Data::Bool(Vec::new()),
        ScalarTy::I8 => Data::I8(Vec::new()),
        ScalarTy::U8 => Data::U8(Vec::new()),
        ScalarTy::I16 => Data::I16(Vec::new()),
        ScalarTy::U16 => Data::U16(Vec::new()),
        ScalarTy::I32 | ScalarTy::AtomicI32 => Data::I32(Vec::new()),
        ScalarTy::I64 | ScalarTy::AtomicI64 => Data::I64(Vec::new()),
        ScalarTy::U32 | ScalarTy::AtomicU32 => Data::U32(Vec::new()),
        ScalarTy::U64 | ScalarTy::AtomicU64 => Data::U64(Vec::new()),
        ScalarTy::F32 | ScalarTy::AtomicF32 => Data::F32(Vec::new()),
        ScalarTy::F64 | ScalarTy::AtomicF64 => Data::F64(Vec::new()),
        ScalarTy::Unit => Data::Any(Vec::new()),
    }
}

/// Appends `v` to `d` if it is a number.
fn push_num<T: Scalar>(d: &mut Vec<T>, v: &Value) -> Result<bool, Oom> {
    match T::exact(v) {
        Some(x) => {
            mem::reserve_one(d)?;
            d.push(x);
            Ok(true)
        }
        None => Ok(false),
    }
}

/// Stores `v` into `d[i]` if it is a number.
fn put<T: Scalar>(d: &mut [T], i: usize, v: &Value) -> bool {
    match T::stored(v) {
        Some(x) => {
            d[i] = x;
            true
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_storage_round_trips() {
        let _s = mem::Session::start(u64::MAX);
        let mut a = Arr::repeat(&Value::F32(1.5), 10).unwrap();
        assert_eq!(a.bytes(), 40);
        assert_eq!(a.get(3), Value::F32(1.5));
        a.set(3, Value::F64(2.25)).unwrap();
        assert_eq!(a.get(3), Value::F32(2.25));
        a.set(4, Value::Nat(7)).unwrap();
        assert_eq!(a.get(4), Value::F32(7.0));
        assert_eq!(a.get(10), Value::Uninit);
        // A pointer in an f32 array: the array holds values from then on.
        a.set(5, Value::Ref { buf: 1, off: 2 }).unwrap();
        assert_eq!(a.get(5), Value::Ref { buf: 1, off: 2 });
        assert_eq!(a.get(4), Value::F32(7.0));
        assert_eq!(a.scalar(), None);
    }

    #[test]
    fn unwritten_elements_are_tracked() {
        let _s = mem::Session::start(u64::MAX);
        let mut a = Arr::uninit(ScalarTy::I32, 70).unwrap();
        assert!(!a.is_init(0) && !a.is_init(69));
        assert_eq!(a.get(0), Value::Uninit);
        for i in 0..70 {
            a.set(i, Value::I32(i as i32)).unwrap();
        }
        assert!(a.init.is_none(), "the bitset goes once every element is written");
        assert_eq!(a.get(69), Value::I32(69));
        a.set(3, Value::Uninit).unwrap();
        assert!(!a.is_init(3) && a.is_init(2) && a.is_init(69));
        let b = a.slice(2, 5).unwrap();
        assert_eq!(b.iter().collect::<Vec<_>>(), vec![Value::I32(2), Value::Uninit, Value::I32(4)]);
        let mut c = Arr::repeat(&Value::I32(0), 3).unwrap();
        c.copy_from(0, &a, 2, 3).unwrap();
        assert_eq!(c, b);
    }

    #[test]
    fn pushing_keeps_the_type_and_the_gaps() {
        let _s = mem::Session::start(u64::MAX);
        let mut a = Arr::with_capacity(3);
        a.push(Value::U32(1)).unwrap();
        a.push(Value::Uninit).unwrap();
        a.push(Value::I32(3)).unwrap();
        assert_eq!(a.scalar(), None, "mixed types are kept as they are");
        assert_eq!(a.iter().collect::<Vec<_>>(), vec![Value::U32(1), Value::Uninit, Value::I32(3)]);
        let mut b = Arr::new();
        b.push(Value::F32(1.0)).unwrap();
        b.push(Value::Uninit).unwrap();
        b.push(Value::F32(3.0)).unwrap();
        assert_eq!(b.scalar(), Some(ScalarTy::F32));
        assert_eq!(b.iter().collect::<Vec<_>>(), vec![Value::F32(1.0), Value::Uninit, Value::F32(3.0)]);
        let t = Arr::from_values([Value::Tuple(vec![Value::I32(1)]), Value::Nat(2)]).unwrap();
        assert_eq!(t.get(1), Value::Nat(2));
        let r =
            Arr::repeat(&Value::Array(Box::new(Arr::from_values([Value::I64(1), Value::I64(2)]).unwrap())), 3).unwrap();
        assert_eq!(r.len(), 6);
        assert_eq!(r.get(5), Value::I64(2));
    }

    #[test]
    fn charges_are_returned() {
        let _s = mem::Session::start(10_000);
        {
            let a = Arr::repeat(&Value::F64(0.0), 100).unwrap();
            let b = a.clone();
            let c = a.try_clone().unwrap();
            assert_eq!(mem::used(), 2400);
            assert!(Arr::repeat(&Value::F64(0.0), 1000).is_err());
            drop((b, c));
            let mut d = Arr::uninit(ScalarTy::F32, 100).unwrap();
            for i in 0..100 {
                d.set(i, Value::F32(1.0)).unwrap();
            }
            let mut e = Arr::new();
            for i in 0..100 {
                e.push(Value::I32(i)).unwrap();
            }
            e.set(7, Value::Tuple(Vec::new())).unwrap();
        }
        assert_eq!(mem::used(), 0);
        assert_eq!(Arr::repeat(&Value::F32(0.0), 1 << 40), Err(Oom { bytes: 4 << 40 }));
        assert_eq!(Arr::uninit(ScalarTy::F32, 1 << 40).err(), Some(Oom { bytes: (4 << 40) + (1 << 37) }));
    }
}
