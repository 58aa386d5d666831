//! C's `printf` conversions (`Builtin::PrintFormatted`), byte for byte as C's library writes them:
//! `%d %i %u %x %X %o %c %f %F %e %E %g %G` with the flags `- + space 0 #`, a width and a
//! precision. Decimal digits come from Rust's exact float formatting (correctly rounded, ties to
//! even), as glibc's do.

use crate::Value;

/// A parsed conversion specification (`%-08.3f`).
struct Spec {
    minus: bool,
    plus: bool,
    space: bool,
    zero: bool,
    alt: bool,
    width: usize,
    precision: Option<usize>,
    conv: u8,
}

fn parse(spec: &str) -> Option<Spec> {
    let b = spec.as_bytes();
    let mut i = 1; // past '%'
    let mut s =
        Spec { minus: false, plus: false, space: false, zero: false, alt: false, width: 0, precision: None, conv: 0 };
    while i < b.len() {
        match b[i] {
            b'-' => s.minus = true,
            b'+' => s.plus = true,
            b' ' => s.space = true,
            b'0' => s.zero = true,
            b'#' => s.alt = true,
            _ => break,
        }
        i += 1;
    }
    while i < b.len() && b[i].is_ascii_digit() {
        s.width = s.width.checked_mul(10)?.checked_add(usize::from(b[i] - b'0'))?;
        i += 1;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let mut p = 0usize;
        while i < b.len() && b[i].is_ascii_digit() {
            p = p.checked_mul(10)?.checked_add(usize::from(b[i] - b'0'))?;
            i += 1;
        }
        s.precision = Some(p);
    }
    while i < b.len() && matches!(b[i], b'l' | b'z') {
        i += 1;
    }
    s.conv = *b.get(i)?;
    (i + 1 == b.len()).then_some(s)
}

/// `v` formatted by the conversion `spec` (one `%…` conversion), or `None` for a specification
/// or value it does not take.
pub fn format(spec: &str, v: &Value) -> Option<Vec<u8>> {
    let s = parse(spec)?;
    if s.width > 1 << 20 || s.precision.is_some_and(|p| p > 1 << 20) {
        return None;
    }
    let (sign, body): (&str, Vec<u8>) = match s.conv {
        b'd' | b'i' => {
            let x = int(v)?;
            let sign = if x < 0 { "-" } else { positive(&s) };
            (sign, digits(x.unsigned_abs(), 10, &s, false))
        }
        b'u' | b'x' | b'X' | b'o' => {
            let x = unsigned(v)?;
            let radix = match s.conv {
                b'u' => 10,
                b'o' => 8,
                _ => 16,
            };
            let mut d = digits(x, radix, &s, s.conv == b'X');
            if s.alt && s.conv == b'o' && d.first() != Some(&b'0') {
                d.insert(0, b'0');
            }
            let prefix = match (s.alt && x != 0, s.conv) {
                (true, b'x') => "0x",
                (true, b'X') => "0X",
                _ => "",
            };
            (prefix, d)
        }
        b'c' => ("", vec![int(v)? as u8]),
        b'f' | b'F' | b'e' | b'E' | b'g' | b'G' => {
            let x = float(v)?;
            // A NaN with its sign bit set prints as `-nan`, as glibc writes it.
            let sign = if x.is_sign_negative() { "-" } else { positive(&s) };
            let upper = s.conv.is_ascii_uppercase();
            let body = if x.is_finite() {
                let p = s.precision.unwrap_or(6);
                match s.conv.to_ascii_lowercase() {
                    b'f' => fixed(x.abs(), p, s.alt),
                    b'e' => exp(x.abs(), p, s.alt, upper),
                    _ => general(x.abs(), p, s.alt, upper),
                }
            } else {
                let t = if x.is_nan() { "nan" } else { "inf" };
                if upper {
                    t.to_ascii_uppercase()
                } else {
                    t.to_string()
                }
            };
            // `0` pads numbers only, not `inf` and `nan`.
            let s2 = Spec { zero: s.zero && x.is_finite(), ..s };
            return Some(pad(sign, body.into_bytes(), &s2, true));
        }
        _ => return None,
    };
    let numeric = s.conv != b'c';
    Some(pad(sign, body, &s, numeric && s.precision.is_none()))
}

fn positive(s: &Spec) -> &'static str {
    if s.plus {
        "+"
    } else if s.space {
        " "
    } else {
        ""
    }
}

fn int(v: &Value) -> Option<i64> {
    Some(match v {
        Value::I8(x) => i64::from(*x),
        Value::U8(x) => i64::from(*x),
        Value::I16(x) => i64::from(*x),
        Value::U16(x) => i64::from(*x),
        Value::I32(x) => i64::from(*x),
        Value::I64(x) => *x,
        Value::U32(x) => i64::from(*x as i32),
        Value::U64(x) | Value::Nat(x) => *x as i64,
        Value::Bool(b) => i64::from(*b),
        _ => return None,
    })
}

fn unsigned(v: &Value) -> Option<u64> {
    Some(match v {
        Value::I8(x) => u64::from(*x as u32),
        Value::U8(x) => u64::from(*x),
        Value::I16(x) => u64::from(*x as u32),
        Value::U16(x) => u64::from(*x),
        Value::U32(x) => u64::from(*x),
        Value::I32(x) => u64::from(*x as u32),
        Value::U64(x) | Value::Nat(x) => *x,
        Value::I64(x) => *x as u64,
        Value::Bool(b) => u64::from(*b),
        _ => return None,
    })
}

fn float(v: &Value) -> Option<f64> {
    match v {
        Value::F32(x) => Some(f64::from(*x)),
        Value::F64(x) => Some(*x),
        _ => None,
    }
}

/// The digits of `x` in `radix`, at least `precision` of them (none for 0 with precision 0).
fn digits(x: u64, radix: u64, s: &Spec, upper: bool) -> Vec<u8> {
    let mut d = Vec::new();
    let mut y = x;
    while y > 0 {
        let k = (y % radix) as u8;
        d.push(match k {
            0..=9 => b'0' + k,
            _ if upper => b'A' + k - 10,
            _ => b'a' + k - 10,
        });
        y /= radix;
    }
    let min = s.precision.unwrap_or(1);
    while d.len() < min {
        d.push(b'0');
    }
    d.reverse();
    d
}

/// `sign`, then `body`, padded to the width: with spaces (left, or right for `-`), or with zeros
/// after the sign where `zero_ok` and `0` is given.
fn pad(sign: &str, body: Vec<u8>, s: &Spec, zero_ok: bool) -> Vec<u8> {
    let len = sign.len() + body.len();
    let fill = s.width.saturating_sub(len);
    let mut out = Vec::with_capacity(len + fill);
    if s.minus {
        out.extend_from_slice(sign.as_bytes());
        out.extend(body);
        out.extend(std::iter::repeat_n(b' ', fill));
    } else if s.zero && zero_ok {
        out.extend_from_slice(sign.as_bytes());
        out.extend(std::iter::repeat_n(b'0', fill));
        out.extend(body);
    } else {
        out.extend(std::iter::repeat_n(b' ', fill));
        out.extend_from_slice(sign.as_bytes());
        out.extend(body);
    }
    out
}

fn fixed(x: f64, p: usize, alt: bool) -> String {
    let mut t = format!("{x:.p$}");
    if alt && p == 0 {
        t.push('.');
    }
    t
}

/// `d.ddde±XX`, and the exponent.
fn exp_parts(x: f64, p: usize, alt: bool, upper: bool) -> (String, i32) {
    let t = format!("{x:.p$e}");
    let (m, e) = t.split_once('e').unwrap_or((&t, "0"));
    let e: i32 = e.parse().unwrap_or(0);
    let mut m = m.to_string();
    if alt && p == 0 {
        m.push('.');
    }
    let sign = if e < 0 { '-' } else { '+' };
    let letter = if upper { 'E' } else { 'e' };
    (format!("{m}{letter}{sign}{:02}", e.unsigned_abs()), e)
}

fn exp(x: f64, p: usize, alt: bool, upper: bool) -> String {
    exp_parts(x, p, alt, upper).0
}

/// `%g`: `%e` or `%f` by the exponent, trailing zeros removed unless `#`.
fn general(x: f64, p: usize, alt: bool, upper: bool) -> String {
    let p = p.max(1);
    let (e_form, e) = exp_parts(x, p - 1, alt, upper);
    let mut t = if (p as i64) > i64::from(e) && e >= -4 {
        fixed(x, (p as i64 - 1 - i64::from(e)) as usize, alt)
    } else {
        e_form
    };
    if !alt {
        let (mantissa, rest) = match t.find(['e', 'E']) {
            Some(k) => (t[..k].to_string(), t[k..].to_string()),
            None => (t.clone(), String::new()),
        };
        if mantissa.contains('.') {
            let m = mantissa.trim_end_matches('0').trim_end_matches('.');
            t = format!("{m}{rest}");
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(spec: &str, v: Value) -> String {
        String::from_utf8(format(spec, &v).unwrap()).unwrap()
    }

    #[test]
    fn conversions_as_c_writes_them() {
        assert_eq!(f("%f", Value::F64(1.5)), "1.500000");
        assert_eq!(f("%.2f", Value::F32(2.675)), "2.67"); // 2.67499995…
        assert_eq!(f("%8.3f", Value::F64(-3.25159)), "  -3.252");
        assert_eq!(f("%-8.1f", Value::F64(2.25)), "2.2     ");
        assert_eq!(f("%+08.2f", Value::F64(3.0)), "+0003.00");
        assert_eq!(f("%e", Value::F64(12345.678)), "1.234568e+04");
        assert_eq!(f("%E", Value::F64(0.000123)), "1.230000E-04");
        assert_eq!(f("%g", Value::F64(100000.0)), "100000");
        assert_eq!(f("%g", Value::F64(1000000.0)), "1e+06");
        assert_eq!(f("%g", Value::F64(0.0001)), "0.0001");
        assert_eq!(f("%g", Value::F64(0.00001)), "1e-05");
        assert_eq!(f("%.3g", Value::F64(3.25159)), "3.25");
        assert_eq!(f("%#g", Value::F64(1.0)), "1.00000");
        assert_eq!(f("%g", Value::F64(0.0)), "0");
        assert_eq!(f("%f", Value::F64(f64::INFINITY)), "inf");
        assert_eq!(f("%05f", Value::F64(f64::NAN)), "  nan");
        assert_eq!(f("%5d", Value::I32(-42)), "  -42");
        assert_eq!(f("%05d", Value::I32(-42)), "-0042");
        assert_eq!(f("%.3d", Value::I32(7)), "007");
        assert_eq!(f("%x", Value::U32(255)), "ff");
        assert_eq!(f("%#X", Value::U32(255)), "0XFF");
        assert_eq!(f("%08x", Value::U32(0xbeef)), "0000beef");
        assert_eq!(f("%o", Value::U32(8)), "10");
        assert_eq!(f("%c", Value::I32(65)), "A");
        assert_eq!(f("%-3c", Value::I32(66)), "B  ");
        assert_eq!(f("%lx", Value::U64(u64::MAX)), "ffffffffffffffff");
    }
}
