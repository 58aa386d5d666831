//! Kernel-only mode (`strata check kernels.cu --kernel NAME --grid G --block B`, docs/cuda-c.md):
//! a file with kernels and no `main` is checked by one launch of one kernel from a synthetic host
//! `main`, built here directly in IR:
//!
//! * every pointer parameter gets a device buffer of `buffer_len` elements, whose host copy is
//!   filled by `fill_random(&uniq h, k + 1)` for parameter `k` (0-based): the k-th scalar takes
//!   splitmix64's k-th output `x` from that seed, integers `x % 100`, floats `(x >> 11) / 2^53`
//!   (the same data on every device; docs/language.md);
//! * a scalar parameter takes the value given by `--arg NAME=VALUE`, else a default: integers the
//!   buffer length (the `n` of the usual `if (i < n)` guard), floating-point numbers `1.0`;
//! * the kernel is launched once with the given grid and block (1-D to 3-D) and dynamic shared
//!   memory, then every buffer is freed (a host copy as soon as its device buffer is made, unless
//!   it is printed);
//! * with [`KernelLaunch::print_buffers`] (`strata run` of such a file), every buffer is copied
//!   back and printed before it is freed, `name: v0 v1 …` on one line each, so that devices can
//!   be compared on what the kernel computed.
//!
//! The race-checker test suites describe kernels the same way; GPUVerify's CUDA suite writes the
//! expected verdict and the launch in the first comment lines of the file ([`Header`]).

use crate::{lower_items, lower_with_globals, R, SMEM_PARAM};
use strata_diag::{Diagnostic, FileId};
use strata_ir::ir::{self, Builtin, Expr, FnKind, IExpr, Level, Lit, Mem, Place, ScalarTy, Stmt, Ty};

/// An integer constant of an IR type.
fn int(v: u128, t: ScalarTy) -> Expr {
    Expr::Lit(Lit::Int(v, t))
}

/// One launch of a kernel of a kernel-only file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelLaunch {
    /// The kernel; `None`: the file's only kernel.
    pub kernel: Option<String>,
    /// `gridDim` and `blockDim`, (x, y, z).
    pub grid: [u64; 3],
    pub block: [u64; 3],
    /// Elements of every pointer parameter's buffer.
    pub buffer_len: u64,
    /// Bytes of dynamic shared memory (`extern __shared__`).
    pub shared_bytes: u64,
    /// Values of scalar parameters, by name (`--arg n=100`).
    pub args: Vec<(String, String)>,
    /// After the launch, copy every buffer back to the host and print it.
    pub print_buffers: bool,
}

/// The expected verdict of a GPUVerify-style test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expect {
    /// `//pass`: the kernel is free of races and barrier divergence.
    Pass,
    /// `//xfail:REASON`: the kernel has a defect (GPUVerify's reason, e.g. `BOOGIE_ERROR`).
    Xfail(String),
}

/// The header of a GPUVerify CUDA test: `//pass` or `//xfail:…` on the first line, then a
/// comment line with the launch, `//--blockDim=64 --gridDim=[4,2]` (other flags are ignored).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    pub expect: Expect,
    pub grid: [u64; 3],
    pub block: [u64; 3],
}

/// `4`, `[4,2]`, `{4, 2, 1}` or `4,2`: launch dimensions, missing ones 1. Zero is refused.
pub fn parse_dims(s: &str) -> Result<[u64; 3], String> {
    let inner = s.trim().trim_start_matches(['[', '{', '(']).trim_end_matches([']', '}', ')']);
    let parts: Vec<&str> = inner.split(',').map(str::trim).collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(format!("`{s}` is not a launch dimension: write `N`, `[X,Y]` or `[X,Y,Z]`"));
    }
    let mut d = [1u64; 3];
    for (i, p) in parts.iter().enumerate() {
        d[i] = match p.parse::<u64>() {
            Ok(0) => return Err(format!("`{s}`: a launch dimension must be at least 1")),
            Ok(v) if v <= u64::from(u32::MAX) => v,
            _ => return Err(format!("`{s}` is not a launch dimension: write `N`, `[X,Y]` or `[X,Y,Z]`")),
        };
    }
    Ok(d)
}

/// The GPUVerify header of `text`, if its first line is `//pass` or `//xfail…`. A header whose
/// launch line is missing or malformed is an error (the file asked for kernel-only mode).
pub fn header(text: &str) -> Result<Option<Header>, String> {
    let mut lines = text.lines().map(str::trim);
    let first = lines.next().unwrap_or("");
    let Some(verdict) = first.strip_prefix("//") else { return Ok(None) };
    let verdict = verdict.trim();
    let expect = if verdict == "pass" {
        Expect::Pass
    } else if let Some(r) = verdict.strip_prefix("xfail") {
        Expect::Xfail(r.trim_start_matches(':').trim().to_string())
    } else {
        return Ok(None);
    };
    let launch = lines.next().and_then(|l| l.strip_prefix("//")).unwrap_or("");
    let (mut grid, mut block) = (None, None);
    for flag in launch.split_whitespace() {
        if let Some(v) = flag.strip_prefix("--blockDim=") {
            block = Some(parse_dims(v)?);
        } else if let Some(v) = flag.strip_prefix("--gridDim=") {
            grid = Some(parse_dims(v)?);
        }
    }
    match (grid, block) {
        (Some(grid), Some(block)) => Ok(Some(Header { expect, grid, block })),
        _ => Err("the GPUVerify header's second line must give `//--blockDim=… --gridDim=…`".to_string()),
    }
}

/// Why kernel-only mode could not build its `main`.
#[derive(Debug)]
pub enum HarnessError {
    /// The file is not valid or not supported CUDA-C (E0801 and friends, at the `.cu` span):
    /// every refusal of the file ([`crate::lower_all`]).
    Diag(Vec<Diagnostic>),
    /// The command line does not fit the file (an unknown kernel or `--arg`): a usage error.
    Usage(String),
}

impl From<Box<Diagnostic>> for HarnessError {
    fn from(d: Box<Diagnostic>) -> Self {
        HarnessError::Diag(vec![*d])
    }
}

impl From<Vec<Diagnostic>> for HarnessError {
    fn from(d: Vec<Diagnostic>) -> Self {
        HarnessError::Diag(d)
    }
}

/// The kernels of the file `text`, by name, in order.
pub fn kernels(file: FileId, text: &str) -> R<Vec<String>> {
    let p = lower_items(file, text)?;
    Ok(p.functions.iter().filter(|f| matches!(f.kind, FnKind::Kernel { .. })).map(|f| f.name.clone()).collect())
}

/// Lowers the kernels of `text` and adds a `main` that launches one of them once as `launch`
/// says (any `main` of the file is left out).
pub fn kernel_only(file: FileId, text: &str, launch: &KernelLaunch) -> Result<ir::Program, HarnessError> {
    kernel_only_with_headers(file, "", text, &[], launch)
}

/// [`kernel_only`], with the program's own headers.
pub fn kernel_only_with_headers(
    file: FileId,
    name: &str,
    text: &str,
    headers: &[crate::Header],
    launch: &KernelLaunch,
) -> Result<ir::Program, HarnessError> {
    let (mut p, prologue, device_globals) = lower_with_globals(file, name, text, headers)?;
    let kernel_ids: Vec<usize> =
        (0..p.functions.len()).filter(|&i| matches!(p.functions[i].kind, FnKind::Kernel { .. })).collect();
    let names = || kernel_ids.iter().map(|&i| format!("`{}`", p.functions[i].name)).collect::<Vec<_>>().join(", ");
    let id = match &launch.kernel {
        Some(name) => match kernel_ids.iter().find(|&&i| &p.functions[i].name == name) {
            Some(&i) => i,
            None if kernel_ids.is_empty() => return Err(HarnessError::Usage("the file has no kernels".to_string())),
            None => {
                return Err(HarnessError::Usage(format!("the file has no kernel `{name}`; its kernels: {}", names())))
            }
        },
        None => match kernel_ids.as_slice() {
            [one] => *one,
            [] => return Err(HarnessError::Usage("the file has no kernels".to_string())),
            _ => return Err(HarnessError::Usage(format!("choose a kernel with `--kernel NAME`: {}", names()))),
        },
    };
    let k = &p.functions[id];
    let span = k.span;
    // The globals first, as in the file's own `main`; the kernel's last parameters are the
    // device globals ([`crate::globals`]).
    let mut prologue = prologue;
    let mut locals: Vec<ir::Local> = std::mem::take(&mut prologue.locals);
    let mut body = std::mem::take(&mut prologue.body);
    let mut args = Vec::new();
    let visible = &k.params[..k.params.len().saturating_sub(device_globals.len())];
    let mut frees = Vec::new();
    let mut shown = Vec::new();
    let load = |l: usize| Expr::Load(Place::local(l, span));
    let narrow = std::mem::take(&mut prologue.narrow_params);
    for (pos, &param) in visible.iter().enumerate() {
        let local = &k.locals[param];
        let name = local.name.clone();
        match &local.ty {
            Ty::Scalar(t) => {
                let given = launch.args.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_str());
                let c_type = narrow.get(&(k.name.clone(), param)).copied();
                args.push(scalar_arg(*t, c_type, given, launch.buffer_len, &name)?);
            }
            Ty::Ref(arr, Mem::GpuGlobal) => {
                let Ty::Array { elem, .. } = &**arr else {
                    return Err(HarnessError::Usage(format!(
                        "parameter `{name}` has a type kernel-only mode cannot fill"
                    )));
                };
                let zero_of = |t: &Ty| match t {
                    Ty::Scalar(t @ (ScalarTy::F32 | ScalarTy::F64)) => Some(Expr::Lit(Lit::Float(0.0, *t))),
                    Ty::Scalar(ScalarTy::Bool) => Some(Expr::Lit(Lit::Bool(false))),
                    Ty::Scalar(t) => Some(int(0, *t)),
                    _ => None,
                };
                // Scalars, or structs (tuples of scalars, filled field by field).
                let zero = match &**elem {
                    Ty::Tuple(ts) => ts.iter().map(zero_of).collect::<Option<Vec<_>>>().map(Expr::Tuple),
                    t => zero_of(t),
                };
                let Some(zero) = zero else {
                    return Err(HarnessError::Usage(format!(
                        "parameter `{name}` has a type kernel-only mode cannot fill"
                    )));
                };
                let buffer = |mem| Ty::Owned(Box::new(Ty::Array { elem: elem.clone(), len: IExpr::Const(0) }), mem);
                let host = locals.len();
                locals.push(ir::Local { name: format!("{name} (host)"), ty: buffer(Mem::Cpu), level: Level::Host });
                let dev = locals.len();
                locals.push(ir::Local { name: name.clone(), ty: buffer(Mem::GpuGlobal), level: Level::Host });
                let alloc = Expr::Builtin(
                    Builtin::HeapNew,
                    vec![Expr::ArrayRepeat(Box::new(zero), IExpr::Const(launch.buffer_len))],
                    span,
                );
                body.push(Stmt::Let { local: host, init: Some(alloc), span });
                let seed = int(pos as u128 + 1, ScalarTy::U64);
                body.push(Stmt::Eval(Expr::Builtin(Builtin::FillRandom, vec![load(host), seed], span)));
                let copy = Expr::Builtin(Builtin::GlobalAllocCopy, vec![load(host)], span);
                body.push(Stmt::Let { local: dev, init: Some(copy), span });
                args.push(load(dev));
                frees.push(Stmt::Free { local: dev, gpu: true, span });
                if launch.print_buffers {
                    shown.push((name.clone(), host, dev));
                    frees.push(Stmt::Free { local: host, gpu: false, span });
                } else {
                    // Nothing reads the host copy again: freeing it now keeps a large launch's
                    // peak memory to the device buffer and sim's own state.
                    body.push(Stmt::Free { local: host, gpu: false, span });
                }
            }
            _ => {
                return Err(HarnessError::Usage(format!("parameter `{name}` has a type kernel-only mode cannot fill")))
            }
        }
    }
    args.extend(device_globals.iter().map(|&l| load(l)));
    if let Some((n, _)) = launch.args.iter().find(|(n, _)| !visible.iter().any(|&l| k.locals[l].name == *n)) {
        return Err(HarnessError::Usage(format!("`--arg {n}=…`: kernel `{}` has no parameter `{n}`", k.name)));
    }
    let dims = |d: [u64; 3]| d.map(IExpr::Const);
    body.push(Stmt::Launch {
        kernel: id,
        nats: vec![IExpr::Const(launch.shared_bytes)],
        grid: dims(launch.grid),
        block: dims(launch.block),
        args,
        stream: None,
        span,
    });
    debug_assert_eq!(k.nat_params, vec![SMEM_PARAM.to_string()]);
    if launch.print_buffers {
        let text = |t: &str| Stmt::Eval(Expr::Builtin(Builtin::PrintInline, vec![Expr::Lit(Lit::Str(t.into()))], span));
        for (name, host, dev) in shown {
            body.push(Stmt::Eval(Expr::Builtin(Builtin::CopyToHost, vec![load(dev), load(host)], span)));
            body.push(text(&format!("{name}:")));
            let k = locals.len();
            locals.push(ir::Local { name: format!("{name} index"), ty: Ty::Nat, level: Level::Host });
            let elem = Place {
                root: host,
                path: vec![ir::PathStep::Deref, ir::PathStep::Elem(IExpr::Counter(k))],
                checks: Vec::new(),
                span,
            };
            let show = Expr::Builtin(Builtin::PrintInline, vec![Expr::Load(elem)], span);
            body.push(Stmt::For {
                counter: k,
                lo: IExpr::Const(0),
                hi: IExpr::Const(launch.buffer_len),
                body: vec![text(" "), Stmt::Eval(show)],
                exit: None,
                span,
            });
            body.push(text("\n"));
        }
    }
    body.extend(frees);
    body.push(Stmt::Return(None));
    // The file's own `main`, if any, stays in the program but is not run.
    p.functions.push(ir::Function { span, ..ir::Function::host_main(locals, body) });
    p.entry = Some(p.functions.len() - 1);
    Ok(p)
}

/// The value of a scalar kernel parameter of IR type `t` (of the 8- or 16-bit C type `c_type`,
/// bits and signedness, where it is one): `given` (`--arg`), else the default (the buffer length,
/// at most the type's largest value).
fn scalar_arg(
    t: ScalarTy,
    c_type: Option<(u32, bool)>,
    given: Option<&str>,
    buffer_len: u64,
    name: &str,
) -> Result<Expr, HarnessError> {
    let bad = |v: &str| HarnessError::Usage(format!("`--arg {name}={v}`: not a value of the parameter's type"));
    let narrow = c_type.map(|(bits, signed)| {
        let bits = bits - u32::from(signed);
        (if signed { -(1i128 << bits) } else { 0 }, (1i128 << bits) - 1)
    });
    Ok(match (t, given) {
        (ScalarTy::F32 | ScalarTy::F64, None) => Expr::Lit(Lit::Float(1.0, t)),
        (ScalarTy::F32 | ScalarTy::F64, Some(v)) => Expr::Lit(Lit::Float(v.trim().parse().map_err(|_| bad(v))?, t)),
        (_, None) => int(narrow.map_or(u128::from(buffer_len), |(_, hi)| u128::from(buffer_len).min(hi as u128)), t),
        (_, Some(v)) => {
            let x: i128 = v.trim().parse().map_err(|_| bad(v))?;
            let (lo, hi): (i128, i128) = match t {
                _ if narrow.is_some() => narrow.unwrap_or_default(),
                ScalarTy::I32 => (i32::MIN.into(), i32::MAX.into()),
                ScalarTy::U32 => (0, u32::MAX.into()),
                ScalarTy::I64 => (i64::MIN.into(), i64::MAX.into()),
                _ => (0, u64::MAX.into()),
            };
            if x < lo || x > hi {
                return Err(bad(v));
            }
            if x < 0 {
                // Negative: 0 - |x| in the parameter's type.
                let abs = int(x.unsigned_abs(), t);
                Expr::Binary(ir::BinOp::Sub, Box::new(int(0, t)), Box::new(abs))
            } else {
                int(x as u128, t)
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dims_and_headers() {
        assert_eq!(parse_dims("64"), Ok([64, 1, 1]));
        assert_eq!(parse_dims("[16,8]"), Ok([16, 8, 1]));
        assert_eq!(parse_dims("{2, 3, 4}"), Ok([2, 3, 4]));
        assert!(parse_dims("0").is_err());
        assert!(parse_dims("[1,2,3,4]").is_err());
        assert!(parse_dims("x").is_err());
        let h = header("//pass\n//--blockDim=32 --gridDim=[2,2] --no-inline\n").unwrap().unwrap();
        assert_eq!(h, Header { expect: Expect::Pass, grid: [2, 2, 1], block: [32, 1, 1] });
        let h = header("//xfail:BOOGIE_ERROR\n//--gridDim=1 --blockDim=8\n").unwrap().unwrap();
        assert_eq!(h.expect, Expect::Xfail("BOOGIE_ERROR".to_string()));
        assert_eq!(header("// a comment\nint x;").unwrap(), None);
        assert!(header("//pass\nint x;").is_err());
    }
}
