//! Kernel libraries: the kernels of a file without `main` as a C or CUDA C++ source file and a
//! header with one typed host launch function per kernel (`docs/libraries.md`).
//!
//! The source is the emitter's translation unit without `main` (the runtime, the kernels and the
//! device functions they call, all internal except the CUDA kernels themselves), followed by the
//! header's text and the launch functions. Embedding the header makes the compiler check the
//! declarations the application sees against the definitions, and keeps the source
//! self-contained wherever the header is put.
//!
//! A launch function takes the kernel's size parameters (`uint64_t`, first), then its parameters
//! in order: scalars by value, `&shrd` references as `const T *`, `&uniq` ones (and owning
//! pointers) as `T *restrict`. It checks what a Strata launch would have checked when the program
//! was compiled and a C caller cannot be trusted with: the kernel's `where` clauses and that every
//! size it computes fits 64 bits. Then it runs the kernel with the grid its signature declares:
//! on the cpu device, every block on the calling thread's OpenMP team, returning when all are
//! done; on CUDA, on the caller's stream with the dynamic shared memory the kernel needs, without
//! waiting.

use crate::emit::{c_ident, c_type, scalar_c, Emitter, RUNTIME};
use std::fmt::Write;
use strata_diag::Diagnostic;
use strata_ir::ir::{leaf, FnKind, IExpr, Program, ScalarTy, Ty};
use strata_ir::library::{eval_const, has_param, Access, LibKernel, Library};

type E = Box<Diagnostic>;

/// A kernel library in C or CUDA C++: the source file and its header.
#[derive(Clone, Debug)]
pub struct LibraryOutput {
    /// The kernels and their launch functions (`.c` or `.cu`); includes the header's declarations.
    pub source: String,
    /// The declarations of the launch functions (`.h`).
    pub header: String,
}

/// The C or CUDA C++ library of `lib`. `name` (the Strata file's name without extension) names
/// the header's include guard.
pub(crate) fn emit_library(lib: &Library, program: &Program, name: &str, cuda: bool) -> Result<LibraryOutput, E> {
    let emitter =
        if cuda { Emitter::new_cuda(program) } else { Emitter::new(program).narrow_indices(crate::narrow_c()) };
    let names: Vec<String> = (0..program.functions.len()).map(|i| emitter.c_name(i)).collect();
    let smem: Vec<Option<String>> =
        (0..program.functions.len()).map(|i| emitter.smem_fn(i).map(str::to_string)).collect();
    let kernels: Vec<Kernel> =
        lib.kernels.iter().map(|k| Kernel::new(k, program, &names, &smem, cuda)).collect::<Result<_, E>>()?;
    let header = header(&kernels, name, cuda);
    let mut source = emitter.emit()?;
    if !cuda {
        // `clock_gettime` of the runtime is POSIX: declared under a strict `-std=c11` only when
        // asked for (the cpu device builds with `-std=gnu11`, which declares it anyway).
        source.insert_str(
            0,
            "#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)\n#define _POSIX_C_SOURCE 200809L\n#endif\n",
        );
    } else {
        // In C every function but the launch functions is `static`. In CUDA C++ the kernels, the
        // device functions and the shared-memory size functions go into an unnamed namespace
        // instead: internal to this file, so that two libraries in one application cannot clash
        // on their names (or, worse, merge two different inline `_smem` functions of one name).
        // The runtime before them stays outside: its `inline` helpers are the same everywhere.
        let Some(at) = source.find(RUNTIME).map(|i| i + RUNTIME.len()) else {
            return Err(Box::new(Diagnostic::error(
                strata_diag::codes::UNSUPPORTED,
                "internal error: the emitted CUDA has no runtime",
                program.functions.first().map_or(strata_diag::Span::DUMMY, |f| f.span),
                "please report this",
            )));
        };
        source.insert_str(at, "\nnamespace {\n");
        source.push_str("} // namespace\n");
    }
    source.push_str(CHECKED_ARITHMETIC);
    source.push('\n');
    source.push_str(&header);
    for k in &kernels {
        source.push('\n');
        k.definition(&mut source, cuda);
    }
    Ok(LibraryOutput { source, header })
}

/// Size arithmetic of the launch functions: a result that does not fit 64 bits, a difference
/// below zero and a division by zero clear `*ok` (the launch is refused).
const CHECKED_ARITHMETIC: &str = r#"
/* Checked size arithmetic of the launch functions: a result that does not fit 64 bits, a
   difference below zero or a division by zero clears *ok, and the launch is refused. */
STRATA_INLINE uint64_t strata_lib_add(uint64_t a, uint64_t b, int *ok) { if (b > UINT64_MAX - a) *ok = 0; return a + b; }
STRATA_INLINE uint64_t strata_lib_sub(uint64_t a, uint64_t b, int *ok) { if (b > a) { *ok = 0; return 0; } return a - b; }
STRATA_INLINE uint64_t strata_lib_mul(uint64_t a, uint64_t b, int *ok) { if (a != 0 && b > UINT64_MAX / a) *ok = 0; return a * b; }
STRATA_INLINE uint64_t strata_lib_div(uint64_t a, uint64_t b, int *ok) { if (b == 0) { *ok = 0; return 0; } return a / b; }
STRATA_INLINE uint64_t strata_lib_rem(uint64_t a, uint64_t b, int *ok) { if (b == 0) { *ok = 0; return 0; } return a % b; }
STRATA_INLINE uint64_t strata_lib_pow(uint64_t a, uint64_t b, int *ok) {
    if (a <= 1) return b == 0 ? 1 : a;
    uint64_t r = 1;
    while (b-- > 0 && *ok) r = strata_lib_mul(r, a, ok);
    return r;
}
"#;

/// One kernel's launch function, with every name and type decided.
struct Kernel {
    /// The Strata name (`NAME_launch`).
    name: String,
    /// The kernel's C name.
    c_name: String,
    /// The size parameters: (Strata name, C name).
    sizes: Vec<(String, String)>,
    /// The parameters: (C name, C type in the header, C type of the kernel's parameter, how
    /// passed, the elements and element type it points to, for the comment).
    params: Vec<Param>,
    /// `where` clauses, as C conditions over the size arguments, with their Strata text.
    requires: Vec<(String, String)>,
    /// Grid and block extents (x, y, z) as C expressions, and whether each is a constant.
    dims: Vec<(String, bool)>,
    /// Byte sizes of the shared-memory buffers, as checked C expressions (only those that depend
    /// on sizes: constant ones were checked by the checker).
    size_checks: Vec<String>,
    /// The CUDA dynamic shared memory size function's call (`scan_smem_bytes(n)`), or `0`.
    smem_call: String,
    /// Comment lines on the grid and each parameter.
    doc: Vec<String>,
}

struct Param {
    c_name: String,
    header_ty: String,
    kernel_ty: String,
    access: Access,
}

impl Kernel {
    fn new(
        k: &LibKernel,
        program: &Program,
        names: &[String],
        smem: &[Option<String>],
        cuda: bool,
    ) -> Result<Kernel, E> {
        let f = &program.functions[k.func];
        let FnKind::Kernel { grid, block, shared, .. } = &f.kind else {
            return Err(Box::new(Diagnostic::error(
                strata_diag::codes::UNSUPPORTED,
                "internal error: a library kernel that is not a kernel",
                f.span,
                "please report this",
            )));
        };
        // Parameter names follow the emitter's rules (keywords, header macros, runtime names get
        // a numbered suffix), and never hide one of the library's functions.
        let mut scope = crate::names::Names::default();
        names.iter().for_each(|n| scope.reserve(n));
        // The names the launch function itself writes (besides its `strata_*` locals, which no
        // Strata name is given): its CUDA stream parameter, and the types, constants and
        // functions of its body.
        for n in [
            "stream",
            "cudaStream_t",
            "cudaError_t",
            "cudaSuccess",
            "cudaErrorInvalidValue",
            "cudaErrorInvalidConfiguration",
            "cudaFuncSetAttribute",
            "cudaFuncAttributeMaxDynamicSharedMemorySize",
            "cudaDeviceGetAttribute",
            "cudaDevAttrMaxSharedMemoryPerBlockOptin",
            "cudaGetDevice",
            "cudaGetLastError",
            "dim3",
            "size_t",
            "uint64_t",
            "unsigned",
            "UINT32_MAX",
            "INT_MAX",
            "SIZE_MAX",
            "EINVAL",
            "STRATA_RESTRICT",
        ] {
            scope.reserve(n);
        }
        let mut fresh = |strata: &str| scope.take(strata, false);
        let sizes: Vec<(String, String)> = f.nat_params.iter().map(|n| (n.clone(), fresh(n))).collect();
        let c_of = |e: &IExpr| host_iexpr(e, &sizes);
        let mut doc = Vec::new();
        // `4 x 1 x 1` is written `4`, `2 x 2 x 1` `2 x 2`.
        let shape = |d: &[IExpr; 3]| {
            let n = d.iter().rposition(|x| *x != IExpr::Const(1)).map_or(1, |i| i + 1);
            d[..n].iter().map(pretty).collect::<Vec<_>>().join(" x ")
        };
        let count = |d: &[IExpr; 3], one: &str, many: &str| match shape(d).as_str() {
            "1" => format!("1 {one}"),
            s => format!("{s} {many}"),
        };
        doc.push(format!(
            "Runs the kernel `{}` on a grid of {} of {}{}.",
            f.name,
            count(grid, "block", "blocks"),
            count(block, "thread", "threads"),
            if cuda { " on `stream`, without waiting for it" } else { "; returns when it is done" }
        ));
        if cuda && matches!(f.kind, FnKind::Kernel { ordered: true, .. }) {
            doc.push(
                "Its grid is ordered (blocks start in index order, numbered from one counter of the \
                 kernel): a launch must end before the next launch of this kernel starts."
                    .to_string(),
            );
        }
        for (strata, c) in &sizes {
            doc.push(format!("`{c}`: the size parameter `{strata}`."));
        }
        let mut params = Vec::new();
        let mut size_checks: Vec<String> = Vec::new();
        for (local, p) in f.params.iter().zip(&k.params) {
            let ty = &f.locals[*local].ty;
            let kernel_ty = c_type(ty, f.span)?;
            let c_name = fresh(&p.name);
            let (header_ty, line) = match (p.access, ty) {
                (Access::Value, t) => (kernel_ty.clone(), format!("`{c_name}`: by value ({}).", strata_scalar(t))),
                (access, Ty::Ref(inner, _) | Ty::Owned(inner, _)) => {
                    let elems = flat_len(inner);
                    let scalar = c_type(leaf(inner), f.span)?;
                    let check = format!("strata_lib_mul({}, sizeof({scalar}), &strata_ok)", c_of(&elems));
                    if has_param(&elems) && !size_checks.contains(&check) {
                        size_checks.push(check);
                    }
                    let space = if cuda { " in GPU global memory (a device pointer)" } else { "" };
                    let (ty, what) = if access == Access::Read {
                        (format!("const {scalar} *"), "read only; may overlap other read-only arguments")
                    } else {
                        (format!("{scalar} *STRATA_RESTRICT "), "written; must not overlap any other argument")
                    };
                    let count = match elems {
                        IExpr::Const(1) => "1 element".to_string(),
                        _ => format!("{} elements", pretty(&elems)),
                    };
                    (ty, format!("`{c_name}`: points to {count} of `{scalar}`{space}, {what}."))
                }
                _ => (kernel_ty.clone(), format!("`{c_name}`.")),
            };
            doc.push(line);
            params.push(Param { c_name, header_ty, kernel_ty, access: p.access });
        }
        for (_, s, len) in shared {
            let check = format!("strata_lib_mul({}, sizeof({}), &strata_ok)", c_of(len), scalar_c(*s));
            if has_param(len) && !size_checks.contains(&check) {
                size_checks.push(check);
            }
        }
        let requires: Vec<(String, String)> = k
            .requires
            .iter()
            .map(|(a, op, b)| {
                (
                    format!("{} {} {}", c_of(a), op.symbol(), c_of(b)),
                    format!("{} {} {}", pretty(a), op.symbol(), pretty(b)),
                )
            })
            .collect();
        for (_, text) in &requires {
            doc.push(format!("Requires `{text}`."));
        }
        let dims = grid.iter().chain(block).map(|d| (c_of(d), !has_param(d))).collect();
        let smem_args: Vec<&str> = sizes.iter().map(|(_, c)| c.as_str()).collect();
        let c_name = names[k.func].clone();
        Ok(Kernel {
            name: f.name.clone(),
            // Static shared memory only (or none): the launch passes no dynamic shared memory.
            smem_call: smem[k.func]
                .as_ref()
                .map_or_else(|| "0".to_string(), |f| format!("{f}({})", smem_args.join(", "))),
            c_name,
            sizes,
            params,
            requires,
            dims,
            size_checks,
            doc,
        })
    }

    fn prototype(&self, cuda: bool) -> String {
        let mut args: Vec<String> = self.sizes.iter().map(|(_, c)| format!("uint64_t {c}")).collect();
        for p in &self.params {
            let sep = if p.header_ty.ends_with(' ') || p.header_ty.ends_with('*') { "" } else { " " };
            args.push(format!("{}{sep}{}", p.header_ty, p.c_name));
        }
        if cuda {
            args.push("cudaStream_t stream".into());
        }
        if args.is_empty() {
            args.push("void".into());
        }
        let ret = if cuda { "cudaError_t" } else { "int" };
        format!("{ret} {}_launch({})", self.name, args.join(", "))
    }

    fn definition(&self, out: &mut String, cuda: bool) {
        let invalid = if cuda { "cudaErrorInvalidValue" } else { "EINVAL" };
        writeln!(out, "{} {{", self.prototype(cuda)).ok();
        let checked = !self.requires.is_empty() || !self.size_checks.is_empty() || self.dims.iter().any(|d| !d.1);
        if checked {
            writeln!(out, "    int strata_ok = 1;").ok();
        }
        for (cond, text) in &self.requires {
            writeln!(out, "    /* where {text} */").ok();
            writeln!(out, "    if (!({cond}) || !strata_ok) return {invalid};").ok();
        }
        for check in &self.size_checks {
            writeln!(out, "    (void){check};").ok();
        }
        let names = ["strata_gx", "strata_gy", "strata_gz", "strata_bx", "strata_by", "strata_bz"];
        for ((c, _), n) in self.dims.iter().zip(names) {
            writeln!(out, "    const uint64_t {n} = {c};").ok();
        }
        if checked {
            writeln!(out, "    if (!strata_ok) return {invalid};").ok();
        }
        // An empty grid or block (a size argument of 0) runs nothing, on both targets (CUDA would
        // refuse the launch; the cpu device would run block-level code for threads that do not
        // exist).
        let variable: Vec<&str> =
            self.dims.iter().zip(names).filter(|((_, constant), _)| !constant).map(|(_, n)| n).collect();
        if !variable.is_empty() {
            let tests: Vec<String> = variable.iter().map(|n| format!("{n} == 0")).collect();
            let ok = if cuda { "cudaSuccess" } else { "0" };
            writeln!(out, "    if ({}) return {ok};", tests.join(" || ")).ok();
        }
        let mut args: Vec<String> = self.sizes.iter().map(|(_, c)| c.clone()).collect();
        for p in &self.params {
            args.push(match p.access {
                Access::Value => p.c_name.clone(),
                _ => format!("({}){}", p.kernel_ty, p.c_name),
            });
        }
        if cuda {
            // A grid or block extent a size parameter gives must fit CUDA's `unsigned`; the
            // runtime itself refuses extents beyond the device's limits.
            if !variable.is_empty() {
                let tests: Vec<String> = variable.iter().map(|n| format!("{n} > UINT32_MAX")).collect();
                writeln!(out, "    if ({}) return cudaErrorInvalidConfiguration;", tests.join(" || ")).ok();
            }
            // The size is computed with overflow checks (SIZE_MAX where it does not fit), and
            // refused before any launch where it exceeds what `int` (the attribute's type) or the
            // device's opt-in maximum can hold: never truncated.
            writeln!(out, "    size_t strata_smem = {};", self.smem_call).ok();
            writeln!(out, "    if (strata_smem > (size_t)0x7fffffff) return cudaErrorInvalidValue;").ok();
            // Above 48 KiB a kernel must opt in to dynamic shared memory.
            writeln!(out, "    if (strata_smem > 48 * 1024) {{").ok();
            writeln!(out, "        int strata_dev = 0, strata_optin = 0;").ok();
            writeln!(out, "        cudaError_t strata_e = cudaGetDevice(&strata_dev);").ok();
            writeln!(out, "        if (strata_e != cudaSuccess) return strata_e;").ok();
            writeln!(
                out,
                "        strata_e = cudaDeviceGetAttribute(&strata_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, strata_dev);"
            )
            .ok();
            writeln!(out, "        if (strata_e != cudaSuccess) return strata_e;").ok();
            writeln!(out, "        if (strata_smem > (size_t)strata_optin) return cudaErrorInvalidValue;").ok();
            writeln!(
                out,
                "        strata_e = cudaFuncSetAttribute({}, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)strata_smem);",
                self.c_name
            )
            .ok();
            writeln!(out, "        if (strata_e != cudaSuccess) return strata_e;\n    }}").ok();
            writeln!(
                out,
                "    {}<<<dim3((unsigned)strata_gx, (unsigned)strata_gy, (unsigned)strata_gz), \
                 dim3((unsigned)strata_bx, (unsigned)strata_by, (unsigned)strata_bz), strata_smem, stream>>>({});",
                self.c_name,
                args.join(", ")
            )
            .ok();
            writeln!(out, "    return cudaGetLastError();").ok();
        } else {
            args.extend(names.iter().map(|n| n.to_string()));
            writeln!(out, "    {}({});", self.c_name, args.join(", ")).ok();
            // What the kernel's threads printed, in order (docs/language.md).
            writeln!(out, "    strata_kprint_flush();").ok();
            writeln!(out, "    return 0;").ok();
        }
        writeln!(out, "}}").ok();
    }
}

/// The header: include guard, includes, `extern "C"`, and each launch function with its contract.
fn header(kernels: &[Kernel], name: &str, cuda: bool) -> String {
    let guard = format!("STRATA_{}_H", c_ident(name).to_ascii_uppercase());
    let target = if cuda { "cuda" } else { "c" };
    let mut h = String::new();
    writeln!(
        h,
        "/* The Strata kernel library `{name}`, generated by `strata emit --target {target}`: do not edit.\n\
         \n   Each kernel was checked free of data races and out-of-bounds accesses for arguments as its\n\
         \x20  Strata signature declares them. The launch functions cannot check what a C caller passes,\n\
         \x20  so the caller promises it: every pointer points to at least the number of elements\n\
         \x20  stated below, a written (`restrict`) argument overlaps no other argument, and no other\n\
         \x20  code writes the arguments while the kernel runs. The caller owns the memory.\n"
    )
    .ok();
    if cuda {
        writeln!(
            h,
            "   Pointers are device pointers (cudaMalloc). A launch function only enqueues the kernel on\n\
             \x20  `stream`: synchronise (cudaStreamSynchronize) before reading the results. It returns\n\
             \x20  cudaErrorInvalidValue if a size requirement fails, cudaErrorInvalidConfiguration if a\n\
             \x20  grid extent does not fit, or else the launch's cudaGetLastError(). */"
        )
        .ok();
    } else {
        writeln!(
            h,
            "   Pointers are ordinary host pointers. A launch function runs all blocks of the kernel (in\n\
             \x20  parallel with OpenMP when the library is compiled with -fopenmp) and returns when they\n\
             \x20  are done: 0, or EINVAL (errno.h) if a size requirement fails. Compile the library with\n\
             \x20  -fwrapv -ffp-contract=off for the results of `strata run`. */"
        )
        .ok();
    }
    writeln!(h, "#ifndef {guard}\n#define {guard}\n").ok();
    writeln!(h, "#include <stdint.h>\n#include <stdbool.h>").ok();
    if cuda {
        writeln!(h, "#include <cuda_runtime.h>").ok();
    } else {
        writeln!(h, "#include <errno.h>").ok();
    }
    writeln!(
        h,
        "\n#ifndef STRATA_RESTRICT\n#ifdef __cplusplus\n#define STRATA_RESTRICT __restrict__\n#else\n\
         #define STRATA_RESTRICT restrict\n#endif\n#endif\n\n#ifdef __cplusplus\nextern \"C\" {{\n#endif\n"
    )
    .ok();
    for k in kernels {
        writeln!(h, "/* {} */", k.doc.join("\n   ")).ok();
        writeln!(h, "{};\n", k.prototype(cuda)).ok();
    }
    writeln!(h, "#ifdef __cplusplus\n}}\n#endif\n\n#endif /* {guard} */").ok();
    h
}

/// A size as Strata writes it, without the outermost parentheses (`n / 256`, not `(n / 256)`).
fn pretty(e: &IExpr) -> String {
    match e.infix() {
        Some((a, op, b)) => format!("{a} {op} {b}"),
        None => e.to_string(),
    }
}

/// The number of scalars in a value of type `t`.
fn flat_len(t: &Ty) -> IExpr {
    match t {
        Ty::Array { elem, len } => len.clone() * flat_len(elem),
        _ => IExpr::Const(1),
    }
}

fn strata_scalar(t: &Ty) -> String {
    match t {
        Ty::Scalar(s) => match s {
            ScalarTy::Bool => "bool",
            ScalarTy::I8 => "i8",
            ScalarTy::U8 => "u8",
            ScalarTy::I16 => "i16",
            ScalarTy::U16 => "u16",
            ScalarTy::I32 | ScalarTy::AtomicI32 => "i32",
            ScalarTy::I64 | ScalarTy::AtomicI64 => "i64",
            ScalarTy::U32 | ScalarTy::AtomicU32 => "u32",
            ScalarTy::U64 | ScalarTy::AtomicU64 => "u64",
            ScalarTy::F32 | ScalarTy::AtomicF32 => "f32",
            ScalarTy::F64 | ScalarTy::AtomicF64 => "f64",
            ScalarTy::Unit => "()",
        }
        .to_string(),
        _ => "a value".to_string(),
    }
}

/// A size in host C: a constant folded, otherwise checked arithmetic over the size arguments
/// (clearing `strata_ok` where the value does not fit).
fn host_iexpr(e: &IExpr, sizes: &[(String, String)]) -> String {
    if !has_param(e) {
        return match eval_const(e) {
            Some(c) => format!("UINT64_C({c})"),
            // The checker computed every constant size; one that does not evaluate is refused.
            None => "(strata_ok = 0, UINT64_C(0))".to_string(),
        };
    }
    let bin = |f: &str, a: &IExpr, b: &IExpr| {
        format!("strata_lib_{f}({}, {}, &strata_ok)", host_iexpr(a, sizes), host_iexpr(b, sizes))
    };
    match e {
        IExpr::Param(p) => sizes
            .iter()
            .find(|(s, _)| s == p)
            .map_or_else(|| "(strata_ok = 0, UINT64_C(0))".to_string(), |(_, c)| c.clone()),
        IExpr::Add(a, b) => bin("add", a, b),
        IExpr::Sub(a, b) => bin("sub", a, b),
        IExpr::Mul(a, b) => bin("mul", a, b),
        IExpr::Div(a, b) => bin("div", a, b),
        IExpr::Rem(a, b) => bin("rem", a, b),
        IExpr::Pow(a, b) => bin("pow", a, b),
        // Coordinates, counters and run-time values cannot occur in a signature.
        _ => "(strata_ok = 0, UINT64_C(0))".to_string(),
    }
}
