//! Program arguments and `.npy` files on the `sim` device (`arg_*`, `npy_len`, `npy_dim`,
//! `load_npy`, `save_npy`).
//!
//! The data of a file is read and written with the `npyz` crate. The header is also parsed here,
//! first, by the same strict grammar as the C runtime's reader (`strata_npy_header` in
//! `strata-emit/src/runtime.h`): so both devices accept exactly the same files and report every
//! problem with the same words (run-time error E0912), and a file `npyz` would fail on in an
//! unexpected way (a shape whose product overflows) never reaches it. The header written is
//! numpy's own (`np.save`), not `npyz`'s, which spells a shape `(5, )` where numpy writes `(5,)`.

use crate::arr::{Arr, Typed};
use crate::mem::{self, Oom};
use crate::value::Value;
use std::ffi::OsString;
use std::io::{Read, Seek, Write};
use std::os::unix::ffi::OsStrExt;
use strata_ir::ir::ScalarTy;

/// Why a call failed: E0912 with this message, or out of memory (E0903).
pub(crate) enum NpyError {
    Msg(String),
    Oom(Oom, &'static str),
    /// `save_npy` of an array whose element `k` was never written (E0904).
    Uninit(usize),
}

impl From<String> for NpyError {
    fn from(m: String) -> NpyError {
        NpyError::Msg(m)
    }
}

type R<T> = Result<T, NpyError>;

/// Longest `descr` string the grammar takes (the C reader's buffer).
const MAX_DESCR: usize = 63;
/// Most dimensions a shape may have (numpy's limit).
const MAX_DIMS: usize = 64;

/// numpy's type string of each scalar type an `.npy` file can hold for Strata.
pub(crate) fn descr_of(t: ScalarTy) -> &'static str {
    match t {
        ScalarTy::Bool => "|b1",
        ScalarTy::I8 => "|i1",
        ScalarTy::U8 => "|u1",
        ScalarTy::I16 => "<i2",
        ScalarTy::U16 => "<u2",
        ScalarTy::I32 => "<i4",
        ScalarTy::I64 => "<i8",
        ScalarTy::U32 => "<u4",
        ScalarTy::U64 => "<u8",
        ScalarTy::F32 => "<f4",
        _ => "<f8",
    }
}

fn size_of(t: ScalarTy) -> u64 {
    match t {
        ScalarTy::Bool | ScalarTy::I8 | ScalarTy::U8 => 1,
        ScalarTy::I16 | ScalarTy::U16 => 2,
        ScalarTy::I32 | ScalarTy::U32 | ScalarTy::F32 => 4,
        _ => 8,
    }
}

/// Text from the program's arguments as messages show it: printable ASCII as it is, every other
/// byte as `\xNN` (the C runtime's `strata_shown` writes the same).
pub(crate) fn shown(bytes: &[u8]) -> String {
    let mut s = String::new();
    for &b in bytes {
        if (0x20..0x7f).contains(&b) {
            s.push(b as char);
        } else {
            s.push_str(&format!("\\x{b:02x}"));
        }
    }
    s
}

fn bytes_of(s: &OsString) -> &[u8] {
    s.as_os_str().as_bytes()
}

/// The C library's words for an I/O error (`strerror`): Rust's, without " (os error N)".
fn os_error(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.rfind(" (os error ") {
        Some(at) if text.ends_with(')') => text[..at].to_string(),
        _ => text,
    }
}

/// Program argument `i`.
pub(crate) fn arg(args: &[OsString], i: u64) -> Result<&[u8], String> {
    match usize::try_from(i).ok().and_then(|i| args.get(i)) {
        Some(a) => Ok(bytes_of(a)),
        None => {
            let n = args.len();
            let s = if n == 1 { "" } else { "s" };
            Err(format!("the program has {n} argument{s}; argument {i} is missing"))
        }
    }
}

/// `arg_u64(i)`: decimal digits only, at most `u64::MAX`.
pub(crate) fn arg_u64(args: &[OsString], i: u64) -> Result<u64, String> {
    let a = arg(args, i)?;
    let value = if !a.is_empty() && a.iter().all(u8::is_ascii_digit) {
        std::str::from_utf8(a).ok().and_then(|s| s.parse::<u64>().ok())
    } else {
        None
    };
    value.ok_or_else(|| {
        format!("argument {i} is `{}`, which is not a u64 (decimal digits, at most 18446744073709551615)", shown(a))
    })
}

/// Whether `s` is a number `arg_f64` takes: `[+-]` then `inf`, `infinity` or `nan` (any case),
/// or digits with an optional fraction and exponent (`2`, `2.5`, `.5`, `5.`, `-1e-3`).
pub(crate) fn float_syntax(s: &[u8]) -> bool {
    let s = match s.first() {
        Some(b'+' | b'-') => &s[1..],
        _ => s,
    };
    let lower = s.to_ascii_lowercase();
    if lower == b"inf" || lower == b"infinity" || lower == b"nan" {
        return true;
    }
    let digits = |s: &[u8]| s.iter().take_while(|b| b.is_ascii_digit()).count();
    let int = digits(s);
    let mut at = int;
    let mut frac = 0;
    if s.get(at) == Some(&b'.') {
        frac = digits(&s[at + 1..]);
        at += 1 + frac;
    }
    if int + frac == 0 {
        return false;
    }
    if matches!(s.get(at), Some(b'e' | b'E')) {
        at += 1;
        if matches!(s.get(at), Some(b'+' | b'-')) {
            at += 1;
        }
        let exp = digits(&s[at..]);
        if exp == 0 {
            return false;
        }
        at += exp;
    }
    at == s.len()
}

/// `arg_f64(i)`: the correctly rounded value of the decimal text (as C's `strtod`).
pub(crate) fn arg_f64(args: &[OsString], i: u64) -> Result<f64, String> {
    let a = arg(args, i)?;
    let value = if float_syntax(a) { std::str::from_utf8(a).ok().and_then(|s| s.parse::<f64>().ok()) } else { None };
    value.ok_or_else(|| {
        format!("argument {i} is `{}`, which is not a number (an f64 such as 2.5, -1e-3, inf or nan)", shown(a))
    })
}

/// A shape as Python writes a tuple: `()`, `(5,)`, `(3, 4)`.
pub(crate) fn shape_text(shape: &[u64]) -> String {
    match shape {
        [n] => format!("({n},)"),
        _ => format!("({})", shape.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")),
    }
}

/// What the header of an `.npy` file says.
pub(crate) struct Header {
    pub descr: String,
    pub fortran: bool,
    pub shape: Vec<u64>,
    /// Where the data starts (the length of magic, version, header length and header).
    pub data_offset: u64,
    /// The file's length when it was opened (at least `data_offset`).
    pub len: u64,
}

/// The header dictionary's grammar: `{`, entries `'key': value` separated by commas (one after
/// the last allowed), `}`, with spaces and tabs around every token. The keys are exactly
/// `descr` (a string of printable ASCII without quotes or backslashes, at most 63 characters),
/// `fortran_order` (`True` or `False`) and `shape` (a tuple of decimal integers up to
/// `u64::MAX`, one-element tuples with their comma), each once, in any order; strings in single
/// or double quotes. The number of elements must fit in 64 bits.
struct Dict<'a> {
    s: &'a [u8],
    at: usize,
}

impl Dict<'_> {
    fn ws(&mut self) {
        while matches!(self.s.get(self.at), Some(b' ' | b'\t')) {
            self.at += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        if self.s.get(self.at) == Some(&c) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.s.get(self.at).copied()
    }

    fn string(&mut self) -> Option<String> {
        let quote = self.peek().filter(|q| *q == b'\'' || *q == b'"')?;
        self.at += 1;
        let start = self.at;
        while let Some(&c) = self.s.get(self.at) {
            if c == quote {
                let text = std::str::from_utf8(&self.s[start..self.at]).ok()?.to_string();
                self.at += 1;
                return (text.len() <= MAX_DESCR).then_some(text);
            }
            if !(0x20..0x7f).contains(&c) || c == b'\\' || c == b'\'' || c == b'"' {
                return None;
            }
            self.at += 1;
        }
        None
    }

    fn word(&mut self, w: &[u8]) -> bool {
        self.ws();
        if self.s[self.at..].starts_with(w) {
            self.at += w.len();
            true
        } else {
            false
        }
    }

    fn int(&mut self) -> Option<u64> {
        self.ws();
        let start = self.at;
        while self.s.get(self.at).is_some_and(u8::is_ascii_digit) {
            self.at += 1;
        }
        let digits = &self.s[start..self.at];
        if digits.is_empty() || (digits.len() > 1 && digits[0] == b'0') {
            return None;
        }
        std::str::from_utf8(digits).ok()?.parse().ok()
    }

    fn shape(&mut self) -> Option<Vec<u64>> {
        if !self.eat(b'(') {
            return None;
        }
        let mut dims = Vec::new();
        if self.eat(b')') {
            return Some(dims);
        }
        loop {
            dims.push(self.int()?);
            if dims.len() > MAX_DIMS {
                return None;
            }
            let comma = self.eat(b',');
            if self.eat(b')') {
                // `(5)` is a number, not a tuple.
                return (comma || dims.len() > 1).then_some(dims);
            }
            if !comma {
                return None;
            }
        }
    }

    fn parse(&mut self) -> Option<(String, bool, Vec<u64>)> {
        let (mut descr, mut fortran, mut shape) = (None, None, None);
        if !self.eat(b'{') {
            return None;
        }
        loop {
            if self.eat(b'}') {
                break;
            }
            let key = self.string()?;
            if !self.eat(b':') {
                return None;
            }
            match key.as_str() {
                "descr" if descr.is_none() => descr = Some(self.string()?),
                "fortran_order" if fortran.is_none() => {
                    fortran = Some(if self.word(b"True") {
                        true
                    } else if self.word(b"False") {
                        false
                    } else {
                        return None;
                    })
                }
                "shape" if shape.is_none() => shape = Some(self.shape()?),
                _ => return None,
            }
            if !self.eat(b',') {
                if !self.eat(b'}') {
                    return None;
                }
                break;
            }
        }
        self.ws();
        if self.at != self.s.len() {
            return None;
        }
        let shape = shape?;
        shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d))?;
        Some((descr?, fortran?, shape))
    }
}

/// Reads and parses the header of the file `name` from `f`, whose length is `len`.
fn read_header(name: &str, f: &mut std::fs::File) -> R<Header> {
    let cannot = |e: std::io::Error| NpyError::Msg(format!("cannot read `{name}`: {}", os_error(&e)));
    let mut pre = [0u8; 12];
    let mut got = 0;
    while got < pre.len() {
        match f.read(&mut pre[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(cannot(e)),
        }
    }
    let len = f.metadata().map_err(cannot)?.len();
    let pre = &pre[..got];
    let not_npy = |why: &str| NpyError::Msg(format!("`{name}` is not an .npy file: {why}"));
    if pre.len() < 6 || &pre[..6] != b"\x93NUMPY" {
        return Err(not_npy("it does not start with the .npy magic string"));
    }
    if pre.len() < 8 {
        return Err(not_npy("its header is cut short"));
    }
    let (start, hlen) = match (pre[6], pre[7]) {
        (1, 0) if pre.len() >= 10 => (10u64, u64::from(u16::from_le_bytes([pre[8], pre[9]]))),
        (2 | 3, 0) if pre.len() >= 12 => (12, u64::from(u32::from_le_bytes([pre[8], pre[9], pre[10], pre[11]]))),
        (1..=3, 0) => return Err(not_npy("its header is cut short")),
        (a, b) => {
            return Err(NpyError::Msg(format!(
            "`{name}` is an .npy file of format version {a}.{b}, which cannot be read (versions 1.0, 2.0 and 3.0 can)"
        )))
        }
    };
    if start + hlen > len {
        return Err(not_npy("its header is cut short"));
    }
    let mut text = Vec::new();
    mem::reserve(&mut text, hlen).map_err(|e| NpyError::Oom(e, "the header of an .npy file"))?;
    let _charge = mem::Hold::adopt(mem::bytes_of(&text));
    f.seek(std::io::SeekFrom::Start(start)).map_err(cannot)?;
    f.take(hlen).read_to_end(&mut text).map_err(cannot)?;
    if (text.len() as u64) < hlen {
        return Err(not_npy("its header is cut short"));
    }
    let body = text.strip_suffix(b"\n").unwrap_or(&text);
    let (descr, fortran, shape) = Dict { s: body, at: 0 }
        .parse()
        .ok_or_else(|| not_npy("its header is not a dictionary of `descr`, `fortran_order` and `shape`"))?;
    Ok(Header { descr, fortran, shape, data_offset: start + hlen, len })
}

/// Opens the file named by argument `i` and reads its header.
fn open(args: &[OsString], i: u64) -> R<(String, std::fs::File, Header)> {
    let a = arg(args, i)?;
    let name = shown(a);
    let path = std::path::Path::new(std::ffi::OsStr::from_bytes(a));
    let mut f = std::fs::File::open(path).map_err(|e| format!("cannot read `{name}`: {}", os_error(&e)))?;
    // A directory fails below with the system's words, as in the C.
    if f.metadata().is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        return Err(NpyError::Msg(format!(
            "cannot read `{name}`: not a regular file (an .npy input is read more than once: give a file, not a pipe or a device)"
        )));
    }
    let h = read_header(&name, &mut f)?;
    Ok((name, f, h))
}

/// `npy_dim(i, axis)` (and `npy_len(i)`, axis 0).
pub(crate) fn dim(args: &[OsString], i: u64, axis: u64) -> R<u64> {
    let (name, _, h) = open(args, i)?;
    match usize::try_from(axis).ok().and_then(|a| h.shape.get(a)) {
        Some(&n) => Ok(n),
        None => {
            let r = h.shape.len();
            let s = if r == 1 { "" } else { "s" };
            Err(NpyError::Msg(format!(
                "`{name}` has {r} dimension{s} (shape {}); axis {axis} does not exist",
                shape_text(&h.shape)
            )))
        }
    }
}

/// The program's words for a scalar type an `.npy` type string names.
fn type_name(descr: &str) -> Option<&'static str> {
    Some(match descr {
        "|b1" => "bool",
        "<i4" => "i32",
        "<i8" => "i64",
        "<u4" => "u32",
        "<u8" => "u64",
        "<f4" => "f32",
        "<f8" => "f64",
        _ => return None,
    })
}

/// `load_npy(i)` into an array of `elem` with dimensions `dims`.
pub(crate) fn load(args: &[OsString], i: u64, elem: ScalarTy, dims: &[u64]) -> R<Arr> {
    let (name, mut f, h) = open(args, i)?;
    let want = descr_of(elem);
    if h.descr.starts_with('>') {
        return Err(NpyError::Msg(format!(
            "`{name}` holds big-endian data ({}); only little-endian .npy files can be read",
            h.descr
        )));
    }
    if h.descr != want {
        let what = type_name(&h.descr).map_or(String::new(), |t| format!(" ({t})"));
        return Err(NpyError::Msg(format!("`{name}` holds {}{what} but the program reads {}", h.descr, elem.name())));
    }
    if h.fortran {
        return Err(NpyError::Msg(format!(
            "`{name}` is stored in Fortran order; only C order can be read (save `np.ascontiguousarray(a)`)"
        )));
    }
    if h.shape != dims {
        return Err(NpyError::Msg(format!(
            "`{name}` holds an array of shape {} but the program reads one of shape {}",
            shape_text(&h.shape),
            shape_text(dims)
        )));
    }
    // (The shapes are equal, and the header's element count fits in 64 bits.)
    let count: u64 = dims.iter().product();
    let has = h.len.saturating_sub(h.data_offset);
    let needs = count.checked_mul(size_of(elem));
    if needs != Some(has) {
        let (shape, d) = (shape_text(dims), &h.descr);
        return Err(NpyError::Msg(match needs {
            Some(n) if n > has => {
                format!("`{name}` is cut short: shape {shape} of {d} needs {n} bytes of data, it has {has}")
            }
            Some(n) => format!(
                "`{name}` is longer than its header says: shape {shape} of {d} is {n} bytes of data, it has {has}"
            ),
            None => {
                format!("`{name}` is cut short: shape {shape} of {d} needs more than 2^64 bytes of data, it has {has}")
            }
        }));
    }
    f.rewind().map_err(|e| format!("cannot read `{name}`: {}", os_error(&e)))?;
    let npy = npyz::NpyFile::new(std::io::BufReader::new(f)).map_err(|_| {
        format!("`{name}` is not an .npy file: its header is not a dictionary of `descr`, `fortran_order` and `shape`")
    })?;
    let agrees = npy.header().dtype().descr() == format!("'{}'", h.descr)
        && npy.header().shape() == h.shape.as_slice()
        && npy.header().order() == npyz::Order::C;
    if !agrees {
        return Err(NpyError::Msg(format!(
            "`{name}` is not an .npy file: its header is not a dictionary of `descr`, `fortran_order` and `shape`"
        )));
    }
    Ok(Arr::from_typed(match elem {
        ScalarTy::Bool => Typed::Bool(read_all(&name, npy, count)?),
        ScalarTy::I8 => Typed::I8(read_all(&name, npy, count)?),
        ScalarTy::U8 => Typed::U8(read_all(&name, npy, count)?),
        ScalarTy::I16 => Typed::I16(read_all(&name, npy, count)?),
        ScalarTy::U16 => Typed::U16(read_all(&name, npy, count)?),
        ScalarTy::I32 => Typed::I32(read_all(&name, npy, count)?),
        ScalarTy::I64 => Typed::I64(read_all(&name, npy, count)?),
        ScalarTy::U32 => Typed::U32(read_all(&name, npy, count)?),
        ScalarTy::U64 => Typed::U64(read_all(&name, npy, count)?),
        ScalarTy::F32 => Typed::F32(read_all(&name, npy, count)?),
        _ => Typed::F64(read_all(&name, npy, count)?),
    }))
}

/// The `count` elements of an open file, into a vector charged to the memory budget.
fn read_all<T: npyz::Deserialize + Clone + Default>(
    name: &str,
    npy: npyz::NpyFile<impl Read>,
    count: u64,
) -> R<Vec<T>> {
    let mut out = mem::try_vec(count, T::default()).map_err(|e| NpyError::Oom(e, "an array read from an .npy file"))?;
    let data = npy.data::<T>().map_err(|e| format!("cannot read `{name}`: {e}"))?;
    for (k, (slot, x)) in out.iter_mut().zip(data).enumerate() {
        *slot = x.map_err(|e| {
            if e.kind() == std::io::ErrorKind::InvalidData {
                format!("`{name}` holds a bool that is neither 0 nor 1 (element {k})")
            } else {
                format!("cannot read `{name}`: {}", os_error(&e))
            }
        })?;
    }
    Ok(out)
}

/// The header numpy's `np.save` writes (format 1.0): the dictionary, spaces and a newline, 64-byte
/// aligned with the 10 bytes before it. (numpy ≥ 1.23 adds spaces for growing axis 0 in place;
/// for one or two dimensions they fall within the same 128 bytes.)
pub(crate) fn header_bytes(descr: &str, shape: &[u64]) -> Vec<u8> {
    let dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {}, }}", shape_text(shape));
    let total = (10 + dict.len() + 1).div_ceil(64) * 64;
    let hlen = total - 10;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    out.extend_from_slice(&(hlen as u16).to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    out.resize(total - 1, b' ');
    out.push(b'\n');
    out
}

/// `save_npy(i, value)`: the elements (`Value`s of type `elem`, in C order) of an array of
/// dimensions `dims`.
pub(crate) fn save(args: &[OsString], i: u64, elem: ScalarTy, dims: &[u64], values: &Arr, off: usize) -> R<()> {
    let a = arg(args, i)?;
    let name = shown(a);
    let count = dims.iter().product::<u64>() as usize;
    let path = std::path::Path::new(std::ffi::OsStr::from_bytes(a));
    let cannot = |e: std::io::Error| NpyError::Msg(format!("cannot write `{name}`: {}", os_error(&e)));
    let file = std::fs::File::create(path).map_err(cannot)?;
    let mut w = std::io::BufWriter::new(file);
    w.write_all(&header_bytes(descr_of(elem), dims)).map_err(cannot)?;
    let dtype = npyz::DType::Plain(descr_of(elem).parse().map_err(|e| format!("cannot write `{name}`: {e}"))?);
    let element = |k: usize| values.get(off + k);
    match elem {
        ScalarTy::Bool => write_all::<bool>(&mut w, &dtype, count, |k| element(k).as_bool()),
        ScalarTy::I8 => write_all::<i8>(&mut w, &dtype, count, |k| match element(k) {
            Value::I8(x) => Some(x),
            _ => None,
        }),
        ScalarTy::U8 => write_all::<u8>(&mut w, &dtype, count, |k| match element(k) {
            Value::U8(x) => Some(x),
            _ => None,
        }),
        ScalarTy::I16 => write_all::<i16>(&mut w, &dtype, count, |k| match element(k) {
            Value::I16(x) => Some(x),
            _ => None,
        }),
        ScalarTy::U16 => write_all::<u16>(&mut w, &dtype, count, |k| match element(k) {
            Value::U16(x) => Some(x),
            _ => None,
        }),
        ScalarTy::I32 => write_all::<i32>(&mut w, &dtype, count, |k| match element(k) {
            Value::I32(x) => Some(x),
            _ => None,
        }),
        ScalarTy::I64 => write_all::<i64>(&mut w, &dtype, count, |k| match element(k) {
            Value::I64(x) => Some(x),
            _ => None,
        }),
        ScalarTy::U32 => write_all::<u32>(&mut w, &dtype, count, |k| match element(k) {
            Value::U32(x) => Some(x),
            _ => None,
        }),
        ScalarTy::U64 => write_all::<u64>(&mut w, &dtype, count, |k| match element(k) {
            Value::U64(x) => Some(x),
            _ => None,
        }),
        ScalarTy::F32 => write_all::<f32>(&mut w, &dtype, count, |k| match element(k) {
            Value::F32(x) => Some(x),
            _ => None,
        }),
        _ => write_all::<f64>(&mut w, &dtype, count, |k| match element(k) {
            Value::F64(x) => Some(x),
            _ => None,
        }),
    }
    .map_err(|e| match e {
        WriteError::Io(e) => cannot(e),
        WriteError::Element(k) => NpyError::Uninit(k),
    })?;
    w.flush().map_err(cannot)?;
    Ok(())
}

enum WriteError {
    Io(std::io::Error),
    /// An element that is not a value of the type (never written).
    Element(usize),
}

fn write_all<T: npyz::Serialize>(
    w: &mut impl Write,
    dtype: &npyz::DType,
    count: usize,
    get: impl Fn(usize) -> Option<T>,
) -> Result<(), WriteError> {
    use npyz::TypeWrite;
    let writer = T::writer(dtype).map_err(|e| WriteError::Io(std::io::Error::other(e.to_string())))?;
    for k in 0..count {
        let x = get(k).ok_or(WriteError::Element(k))?;
        writer.write_one(&mut *w, &x).map_err(WriteError::Io)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dict(s: &str) -> Option<(String, bool, Vec<u64>)> {
        Dict { s: s.as_bytes(), at: 0 }.parse()
    }

    #[test]
    fn the_header_grammar_takes_what_writers_write_and_nothing_else() {
        let numpy = Some(("<f4".to_string(), false, vec![5]));
        assert_eq!(dict("{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }"), numpy);
        assert_eq!(dict("{'descr': '<f4', 'fortran_order': False, 'shape': (5, ), }"), numpy);
        assert_eq!(dict("{\"shape\": (5,),\t\"fortran_order\": False, \"descr\": \"<f4\"}   "), numpy);
        assert_eq!(dict("{'descr': '|b1', 'fortran_order': True, 'shape': (), }"), Some(("|b1".into(), true, vec![])));
        assert_eq!(
            dict("{'descr': '<i8', 'fortran_order': False, 'shape': (0, 18446744073709551615)}").map(|d| d.2),
            Some(vec![0, u64::MAX])
        );
        for bad in [
            "",
            "{}",
            "{'descr': '<f4', 'fortran_order': False}",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (5), }",
            "{'descr': '<f4', 'fortran_order': False, 'shape': [5], }",
            "{'descr': '<f4', 'fortran_order': false, 'shape': (5,), }",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (05,), }",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (-5,), }",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (18446744073709551616,), }",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }",
            "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (5,), }",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (5,), 'extra': 1}",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (5,),, }",
            "{'descr': '<f4\\n', 'fortran_order': False, 'shape': (5,), }",
            "{'descr': '<f4', 'fortran_order': False, 'shape': (5,), } x",
            "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (5,), }",
        ] {
            assert_eq!(dict(bad), None, "{bad}");
        }
    }

    #[test]
    fn numbers_of_arguments() {
        for ok in ["0", "2.5", "-2.5", "+.5", "5.", "1e10", "1E-3", "-1.5e+7", "inf", "-Infinity", "NaN"] {
            assert!(float_syntax(ok.as_bytes()), "{ok}");
            assert!(ok.parse::<f64>().is_ok(), "{ok}");
        }
        for bad in ["", ".", "e5", "1e", "1.2.3", " 1", "1 ", "0x10", "1_000", "infinit", "nan(1)", "--1"] {
            assert!(!float_syntax(bad.as_bytes()), "{bad}");
        }
        let args: Vec<OsString> = vec!["007".into(), "-1".into()];
        assert_eq!(arg_u64(&args, 0), Ok(7));
        assert!(arg_u64(&args, 1).is_err());
        assert_eq!(arg_u64(&args, 2), Err("the program has 2 arguments; argument 2 is missing".to_string()));
        assert_eq!(shown(b"a\x01\xff`"), "a\\x01\\xff`");
    }

    #[test]
    fn the_header_written_is_aligned_to_64_bytes() {
        for shape in [vec![], vec![5], vec![u64::MAX, 1], vec![1; 30]] {
            let h = header_bytes("<f8", &shape);
            assert_eq!(h.len() % 64, 0);
            assert_eq!(h.last(), Some(&b'\n'));
            assert_eq!(usize::from(u16::from_le_bytes([h[8], h[9]])), h.len() - 10);
            let text = std::str::from_utf8(&h[10..h.len() - 1]).unwrap();
            assert_eq!(dict(text).map(|d| d.2), Some(shape.clone()));
        }
        assert_eq!(shape_text(&[]), "()");
        assert_eq!(shape_text(&[5]), "(5,)");
        assert_eq!(shape_text(&[2, 3]), "(2, 3)");
    }
}
