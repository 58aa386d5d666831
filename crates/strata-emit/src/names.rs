//! Names in the emitted C and CUDA C++.
//!
//! Functions, kernels, parameters, size parameters and locals keep their Strata names, so that a
//! profiler shows `transpose` and a debugger `host_in`. A name is changed only where C or C++
//! would not accept it or where it would mean something else, and then deterministically, by a
//! suffix `_1`, `_2`, … (the same program always gets the same names, in C and in CUDA):
//!
//! * C and C++ keywords (`int`, `class`, `and`, …) and macros of the included headers (`linux`,
//!   `stdout`, `NAN`, …), and `errno` and every name of the form `E[A-Z0-9]+` (`EINVAL`, `EDOM`,
//!   …), which C reserves for `<errno.h>` (the C kernel library includes it);
//! * for functions, every name the included C and CUDA headers declare at global scope (`exp`,
//!   `min`, `printf`, `threadIdx`, …), and `main` (the C entry point, which calls the Strata
//!   `main` under the name `strata_main`);
//! * for locals, the library names the emitted code uses inside functions (`putchar`, `memcpy`,
//!   `dim3`, `threadIdx`, …), so that a local never hides one;
//! * the runtime's names: every name that starts with `strata_` (or `STRATA_`), unless it ends
//!   in `_` and digits;
//! * names C reserves for its implementation (leading `_`, `__` anywhere) and names that end in
//!   `_`, which are the emitter's own (`tid_`, `t0_`, per-thread arrays `x_pt_`): `_x` and `x_`
//!   become `x_1`;
//! * a name already taken in the same scope: a second function of that name (cannot happen in
//!   Strata today), or a second local of one function (shadowing, or one name in two blocks),
//!   since the emitter declares all locals of a function in one C scope's worth of names.
//!
//! The lists of the headers' names (`reserved_globals.txt`, `reserved_macros.txt`) are generated
//! by `tools/reserved-names.sh` from gcc's and nvcc's headers.

use std::collections::HashSet;
use std::sync::OnceLock;

/// C11, C23 and C++20 keywords, C++'s alternative operator tokens, and CUDA's keywords without a
/// leading underscore.
const KEYWORDS: &[&str] = &[
    "alignas",
    "alignof",
    "and",
    "and_eq",
    "asm",
    "auto",
    "bitand",
    "bitor",
    "bool",
    "break",
    "case",
    "catch",
    "char",
    "char8_t",
    "char16_t",
    "char32_t",
    "class",
    "co_await",
    "co_return",
    "co_yield",
    "compl",
    "concept",
    "const",
    "const_cast",
    "consteval",
    "constexpr",
    "constinit",
    "continue",
    "decltype",
    "default",
    "delete",
    "do",
    "double",
    "dynamic_cast",
    "else",
    "enum",
    "explicit",
    "export",
    "extern",
    "false",
    "float",
    "for",
    "friend",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "mutable",
    "namespace",
    "new",
    "noexcept",
    "not",
    "not_eq",
    "nullptr",
    "operator",
    "or",
    "or_eq",
    "private",
    "protected",
    "public",
    "register",
    "reinterpret_cast",
    "requires",
    "restrict",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "static_assert",
    "static_cast",
    "struct",
    "switch",
    "template",
    "this",
    "thread_local",
    "throw",
    "true",
    "try",
    "typedef",
    "typeid",
    "typename",
    "typeof",
    "typeof_unqual",
    "union",
    "unsigned",
    "using",
    "virtual",
    "void",
    "volatile",
    "wchar_t",
    "while",
    "xor",
    "xor_eq",
];

/// Library names the emitted code itself writes inside function bodies (besides the runtime's
/// `strata_*` and macros): a local with one of these names would hide it.
const BODY_NAMES: &[&str] = &[
    "putchar",
    "fputs",
    "puts",
    "fflush",
    "stdout",
    "stderr",
    "free",
    "malloc",
    "memcpy",
    "memset",
    "sqrt",
    "sqrtf",
    "fmod",
    "min",
    "max",
    "dim3",
    "atomicAdd",
    "cudaMalloc",
    "cudaMemcpy",
    "cudaFree",
    "cudaGetLastError",
    "cudaDeviceSynchronize",
    "cudaFuncSetAttribute",
    "cudaMemcpyHostToDevice",
    "cudaMemcpyDeviceToHost",
    "cudaFuncAttributeMaxDynamicSharedMemorySize",
    "cudaError_t",
    "size_t",
    "uint8_t",
    "int32_t",
    "int64_t",
    "uint32_t",
    "uint64_t",
    "threadIdx",
    "blockIdx",
    "blockDim",
    "gridDim",
    "warpSize",
];

struct Reserved {
    keywords: HashSet<&'static str>,
    macros: HashSet<&'static str>,
    globals: HashSet<&'static str>,
    body: HashSet<&'static str>,
}

fn reserved() -> &'static Reserved {
    static R: OnceLock<Reserved> = OnceLock::new();
    R.get_or_init(|| Reserved {
        keywords: KEYWORDS.iter().copied().collect(),
        macros: include_str!("reserved_macros.txt").lines().map(str::trim).filter(|l| !l.is_empty()).collect(),
        globals: include_str!("reserved_globals.txt").lines().map(str::trim).filter(|l| !l.is_empty()).collect(),
        body: BODY_NAMES.iter().copied().chain(MATH_NAMES.get_or_init(math_names).iter().map(String::as_str)).collect(),
    })
}

static MATH_NAMES: OnceLock<Vec<String>> = OnceLock::new();

/// The C math functions the emitted code calls (`exp`, `expf`, `rsqrtf`, …): a local never hides one.
fn math_names() -> Vec<String> {
    strata_ir::ir::MathFn::ALL.iter().flat_map(|m| [m.c_name().to_string(), format!("{}f", m.c_name())]).collect()
}

/// Whether `name` ends in `_` followed by one or more digits (the form of renamed names).
fn numbered(name: &str) -> bool {
    let digits = name.bytes().rev().take_while(u8::is_ascii_digit).count();
    digits > 0 && name[..name.len() - digits].ends_with('_')
}

/// Names of this shape are never used as they are: see the module documentation.
fn bad_shape(name: &str) -> bool {
    name.is_empty()
        || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        || name.as_bytes()[0].is_ascii_digit()
        || name.starts_with('_')
        || name.ends_with('_')
        || name.contains("__")
        || ((name.starts_with("strata_") || name.starts_with("STRATA_")) && !numbered(name))
}

/// `errno` and the names C reserves for the macros of `<errno.h>`: `E`, then capitals and digits.
fn errno_name(name: &str) -> bool {
    name == "errno"
        || (name.len() > 1
            && name.starts_with('E')
            && name[1..].bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit()))
}

/// Whether `name` may not be used as it is for a function (`global`) or a local.
fn is_reserved(name: &str, global: bool) -> bool {
    let r = reserved();
    bad_shape(name)
        || r.keywords.contains(name)
        || r.macros.contains(name)
        || r.body.contains(name)
        || errno_name(name)
        || (global && (name == "main" || r.globals.contains(name)))
}

/// The names taken in one scope: the program's functions, or one function's (which start from
/// the program's, so that a local never hides a function).
#[derive(Clone, Debug, Default)]
pub(crate) struct Names {
    taken: HashSet<String>,
}

impl Names {
    /// The C name for the Strata name `name` of a function (`global`) or a local, taken from now
    /// on: `name` itself where possible, else the first free `base_1`, `base_2`, … where `base`
    /// is `name` with `_` runs made single and leading and trailing ones removed.
    pub(crate) fn take(&mut self, name: &str, global: bool) -> String {
        let clean: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
        if !is_reserved(&clean, global) && !self.taken.contains(&clean) {
            self.taken.insert(clean.clone());
            return clean;
        }
        let mut base: String = clean.split('_').filter(|p| !p.is_empty()).collect::<Vec<_>>().join("_");
        if base.is_empty() || base.as_bytes()[0].is_ascii_digit() {
            base.insert(0, 'v');
        }
        // Finitely many names are taken, so some suffix is free.
        let mut k: u64 = 1;
        loop {
            let candidate = format!("{base}_{k}");
            if !is_reserved(&candidate, global) && !self.taken.contains(&candidate) {
                self.taken.insert(candidate.clone());
                return candidate;
            }
            k += 1;
        }
    }

    /// Marks an emitter-made name as taken, so that no Strata name is given it.
    pub(crate) fn reserve(&mut self, name: &str) {
        self.taken.insert(name.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_are_kept() {
        let mut n = Names::default();
        for name in ["transpose", "input", "host_in", "i", "copy", "index", "time", "count", "x1"] {
            assert_eq!(n.take(name, false), name);
        }
        let mut g = Names::default();
        for name in ["transpose", "reduce", "scan", "matmul", "histogram", "copy", "block_sum"] {
            assert_eq!(g.take(name, true), name);
        }
    }

    #[test]
    fn clashes_get_a_numbered_suffix() {
        let mut n = Names::default();
        assert_eq!(n.take("int", false), "int_1");
        assert_eq!(n.take("class", false), "class_1");
        assert_eq!(n.take("threadIdx", false), "threadIdx_1");
        assert_eq!(n.take("linux", false), "linux_1");
        assert_eq!(n.take("i", false), "i");
        assert_eq!(n.take("i", false), "i_1");
        assert_eq!(n.take("i_1", false), "i_1_1");
        assert_eq!(n.take("i", false), "i_2");
        assert_eq!(n.take("strata_alloc", false), "strata_alloc_1");
        assert_eq!(n.take("strata_x_2", false), "strata_x_2");
        assert_eq!(n.take("_x", false), "x_1");
        assert_eq!(n.take("x_", false), "x_2");
        assert_eq!(n.take("a__b", false), "a_b_1");
        assert_eq!(n.take("_", false), "v_1");
        // Library functions may be local names, but not function names; the math functions the
        // emitted code calls (`exp`, `expf`, …) not even local ones.
        assert_eq!(n.take("printf", false), "printf");
        assert_eq!(n.take("exp", false), "exp_1");
        let mut g = Names::default();
        assert_eq!(g.take("exp", true), "exp_1");
        assert_eq!(g.take("printf", true), "printf_1");
        assert_eq!(g.take("min", true), "min_1");
        assert_eq!(g.take("main", true), "main_1");
    }

    #[test]
    fn the_lists_are_present() {
        let r = reserved();
        assert!(r.globals.contains("sinf") && r.globals.contains("cudaMalloc") && r.globals.contains("y0"));
        assert!(r.macros.contains("stdout") && r.macros.contains("NAN"));
        assert!(!r.globals.contains("transpose") && !r.globals.contains("copy"));
    }
}
