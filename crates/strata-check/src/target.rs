//! The target profile: the limits of the GPU a program is written for, checked as part of its
//! type (E0703–E0707).
//!
//! A kernel's grid and block sizes and the shared memory each of its blocks uses are part of its
//! type, and a GPU cannot launch every such type: a block has at most 1024 threads, a grid at most
//! 65,535 blocks along Y and Z, a block at most 48 KiB of static shared memory, and so on. The
//! checker holds a program to the limits of one architecture, sm_80 unless `--arch` selects
//! another, on every device: a program that cannot run on the GPU is rejected by `check`, and by
//! `run` on `cpu` and `sim` as well, because the type system does not depend on the device.
//!
//! The limits are checked where they are known: at a kernel's signature for every size that is
//! a constant there (after `const` items and `-D` overrides are substituted), and at each launch
//! for the sizes that depend on the kernel's generic parameters, after they are instantiated. A
//! size that is still symbolic at a launch (a loop counter, a generic parameter of the host
//! function) must be *provably* within the limits under the facts in scope, as every other side
//! condition on sizes is.
//!
//! Figures: NVIDIA, *CUDA C++ Programming Guide*, table "Technical Specifications per Compute
//! Capability" (<https://docs.nvidia.com/cuda/cuda-c-programming-guide/#features-and-technical-specifications>),
//! as NVIDIA's CUDA C++ Core Libraries encode it in `cuda::arch_traits`
//! (`libcudacxx/include/cuda/__device/arch_traits.h` in github.com/NVIDIA/cccl): the opt-in
//! maximum of shared memory per block is the shared memory of a multiprocessor less the 1 KiB
//! the driver reserves per block from compute capability 8.0 on.

use crate::nat::{Facts, Nat, Truth};
use crate::ty::Ty;
use strata_diag::{codes, Diagnostic, Span};
use strata_syntax::ast::{DimName, ScalarTy};

/// The limits of one GPU architecture that a program's types must respect.
#[derive(Debug, PartialEq, Eq)]
pub struct TargetProfile {
    /// The architecture's name, as nvcc's `-arch` takes it: `sm_80`.
    pub arch: &'static str,
    /// Threads per block.
    pub max_threads_per_block: u64,
    /// Threads along X, Y and Z of a block.
    pub max_block_dim: [u64; 3],
    /// Blocks along X, Y and Z of a grid.
    pub max_grid_dim: [u64; 3],
    /// Static shared memory per block, in bytes (`__shared__` arrays of fixed size).
    pub max_static_shared: u64,
    /// Shared memory per block, static and dynamic together, in bytes, for a kernel that opts in
    /// (`cudaFuncAttributeMaxDynamicSharedMemorySize`).
    pub max_shared_optin: u64,
}

const KIB: u64 = 1024;

const fn profile(arch: &'static str, max_shared_optin: u64) -> TargetProfile {
    TargetProfile {
        arch,
        max_threads_per_block: 1024,
        max_block_dim: [1024, 1024, 64],
        max_grid_dim: [(1 << 31) - 1, 65_535, 65_535],
        max_static_shared: 48 * KIB,
        max_shared_optin,
    }
}

/// Every architecture `--arch` accepts, oldest first.
pub static PROFILES: &[TargetProfile] = &[
    profile("sm_70", 96 * KIB),
    profile("sm_75", 64 * KIB),
    profile("sm_80", 163 * KIB),
    profile("sm_86", 99 * KIB),
    profile("sm_87", 163 * KIB),
    profile("sm_89", 99 * KIB),
    profile("sm_90", 227 * KIB),
    profile("sm_100", 227 * KIB),
    profile("sm_120", 99 * KIB),
];

/// The architecture a program is checked for unless `--arch` says otherwise.
pub const DEFAULT_ARCH: &str = "sm_80";

impl TargetProfile {
    /// The profile of `arch` (`sm_80`), if it is one of [`PROFILES`].
    pub fn for_arch(arch: &str) -> Option<&'static TargetProfile> {
        PROFILES.iter().find(|p| p.arch == arch)
    }

    /// The profile of [`DEFAULT_ARCH`].
    pub fn default_profile() -> &'static TargetProfile {
        Self::for_arch(DEFAULT_ARCH).unwrap_or(&PROFILES[0])
    }

    /// The known architectures, for messages: `sm_70, sm_75, …`.
    pub fn known_archs() -> String {
        PROFILES.iter().map(|p| p.arch).collect::<Vec<_>>().join(", ")
    }

    fn grid_limit(&self, d: DimName) -> u64 {
        self.max_grid_dim[dim_index(d)]
    }

    fn block_limit(&self, d: DimName) -> u64 {
        self.max_block_dim[dim_index(d)]
    }
}

fn dim_index(d: DimName) -> usize {
    match d {
        DimName::X => 0,
        DimName::Y => 1,
        DimName::Z => 2,
    }
}

/// `48 KiB (49152 bytes)`, or `100 bytes`.
pub fn bytes_text(b: u64) -> String {
    if b == u64::MAX {
        return "2^64 bytes or more".to_string();
    }
    if b >= KIB && b.is_multiple_of(KIB) {
        format!("{} KiB ({b} bytes)", b / KIB)
    } else {
        format!("{b} bytes")
    }
}

/// `48 KiB`, or `100 bytes`.
fn bytes_short(b: u64) -> String {
    if b == u64::MAX {
        return "2^64 bytes or more".to_string();
    }
    if b >= KIB && b.is_multiple_of(KIB) {
        format!("{} KiB", b / KIB)
    } else {
        format!("{b} bytes")
    }
}

// ------------------------------------------------------------------------------------------------
// Grids and blocks

/// Whether a shape is a grid (of blocks) or a block (of threads).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ShapeKind {
    Grid,
    Block,
}

impl ShapeKind {
    fn noun(self) -> &'static str {
        match self {
            ShapeKind::Grid => "grid",
            ShapeKind::Block => "block",
        }
    }

    fn item(self) -> &'static str {
        match self {
            ShapeKind::Grid => "block",
            ShapeKind::Block => "thread",
        }
    }

    fn items(self) -> &'static str {
        match self {
            ShapeKind::Grid => "blocks",
            ShapeKind::Block => "threads",
        }
    }
}

/// One dimension of a grid or block as written: its name, its size and where it is written.
#[derive(Clone, Debug)]
pub struct DimSize {
    pub dim: DimName,
    pub size: Nat,
    pub span: Span,
}

/// The value of a size without variables. A constant too large for 64 bits counts as
/// `u64::MAX`: it exceeds every limit, so it must be judged (and refused) where it is written,
/// never left for later as if it were symbolic.
pub fn concrete(n: &Nat) -> Option<u64> {
    match n.eval(&|_| None) {
        Ok(v) => Some(v),
        Err(_) if n.vars().is_empty() => Some(u64::MAX),
        Err(_) => None,
    }
}

/// For a size with a single variable `v` that grows with it (`(n + 255) / 256`), the condition on
/// `v` itself under which the size is at least 1 (`at_most` None) or at most `at_most`: `v >= k`
/// or `v <= k`, a fact an `if` establishes directly (facts from conditions take only exact
/// forms, and `(n + 255) / 256 >= 1` is not one). None where the size is not of that shape.
pub fn single_size_bound(size: &Nat, at_most: Option<u64>) -> Option<String> {
    let vars = size.vars();
    if vars.len() != 1 || size.terms().any(|(_, c)| c < 0) {
        return None;
    }
    let v = vars.into_iter().next()?;
    let at = |x: u64| size.eval(&|name| (name == &*v).then_some(x)).ok();
    // Search 0..=2^62 assuming the size grows with `v`, then confirm around the threshold.
    let (mut lo, mut hi) = (0u64, 1u64 << 62);
    match at_most {
        None => {
            // The least x with size(x) >= 1.
            if at(hi).is_none_or(|s| s < 1) {
                return None;
            }
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                if at(mid).is_some_and(|s| s >= 1) {
                    hi = mid;
                } else {
                    lo = mid + 1;
                }
            }
            let ok = at(hi).is_some_and(|s| s >= 1) && (hi == 0 || at(hi - 1).is_some_and(|s| s < 1));
            ok.then(|| format!("{v} >= {hi}"))
        }
        Some(limit) => {
            // The greatest x with size(x) <= limit.
            if at(0).is_none_or(|s| s > limit) {
                return None;
            }
            while lo < hi {
                let mid = lo + (hi - lo).div_ceil(2);
                if at(mid).is_some_and(|s| s <= limit) {
                    lo = mid;
                } else {
                    hi = mid - 1;
                }
            }
            let ok = at(lo).is_some_and(|s| s <= limit) && at(lo + 1).is_none_or(|s| s > limit);
            ok.then(|| format!("{v} <= {lo}"))
        }
    }
}

/// How a limit compares with a size: known to hold, known to fail, or not provable.
fn decide(facts: Option<&Facts>, a: &Nat, b: &Nat) -> Option<Truth> {
    match (concrete(a), concrete(b)) {
        (Some(x), Some(y)) => Some(if x <= y { Truth::Proven } else { Truth::Disproven }),
        // Symbolic sizes are only judged where facts are given (at launches); a signature leaves
        // them to each launch.
        _ => facts.map(|f| f.le(a, b)),
    }
}

fn shown(n: &Nat) -> String {
    match concrete(n) {
        Some(u64::MAX) => "2^64 or more".to_string(),
        Some(v) => v.to_string(),
        None => format!("`{n}`"),
    }
}

/// Checks one grid or block shape against the profile: no zero-sized dimension (E0705), each
/// dimension within its limit (E0703 for blocks, E0704 for grids) and, for a block, the threads
/// of all dimensions together within the per-block limit (E0703). `whole` is the span of the
/// whole shape (`XY<64, 32>`). With `facts`, a symbolic size must be provably within the limits;
/// without, only constant sizes are judged.
pub fn check_shape(
    profile: &TargetProfile,
    kind: ShapeKind,
    dims: &[DimSize],
    whole: Span,
    facts: Option<&Facts>,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let arch = profile.arch;
    // A size the facts in scope cannot bound: `goal` is `size >= 1` (`at_most` None) or
    // `size <= at_most`.
    let unproven = |code, message: String, span, size: &Nat, goal: String, at_most: Option<u64>| {
        let mut d = Diagnostic::error(code, message, span, format!("cannot prove `{goal}`"));
        let context = facts.map(|f| f.describe(&size.vars())).unwrap_or_default();
        if !context.is_empty() {
            d = d.with_note(format!("in scope: {context}"));
        }
        let check = match single_size_bound(size, at_most) {
            Some(c) => format!("`if {c} {{ … }}`"),
            None => "`if …`, see facts from conditions".to_string(),
        };
        d.with_note(format!(
            "help: use sizes that provably respect it: check it before the launch ({check}), a loop range for which it holds, or a `where` clause of the enclosing function (`where {goal}`)"
        ))
    };
    // Zero-sized dimensions: nothing to launch.
    let mut zero = false;
    for d in dims {
        match decide(facts, &Nat::lit(1), &d.size) {
            Some(Truth::Disproven) => {
                zero = true;
                out.push(
                    Diagnostic::error(
                        codes::ZERO_SIZED_LAUNCH,
                        format!("this {} has no {} along {}", kind.noun(), kind.items(), d.dim.letter()),
                        d.span,
                        match concrete(&d.size) {
                            Some(_) => format!("0 {} along {}", kind.items(), d.dim.letter()),
                            None => format!("`{}` is 0 here", d.size),
                        },
                    )
                    .with_note(format!(
                        "a GPU cannot launch a {} with a zero-sized dimension; every dimension needs at least 1",
                        kind.noun()
                    )),
                );
            }
            Some(Truth::Unknown) => {
                zero = true;
                out.push(unproven(
                    codes::ZERO_SIZED_LAUNCH,
                    format!("cannot prove that this {} has a {} along {}", kind.noun(), kind.item(), d.dim.letter()),
                    d.span,
                    &d.size,
                    format!("{} >= 1", d.size),
                    None,
                ));
            }
            _ => {}
        }
    }
    if zero {
        return out;
    }
    // A block: all threads together first (for a one-dimensional block that is the whole story).
    if kind == ShapeKind::Block {
        let mut total = Some(Nat::lit(1));
        for d in dims {
            total = total.and_then(|t| t.mul(&d.size).ok());
        }
        // A product the size arithmetic cannot form cannot be proven within the limit either.
        if total.is_none() {
            let product = dims.iter().map(|d| format!("{}", d.size)).collect::<Vec<_>>().join(" * ");
            out.push(
                Diagnostic::error(
                    codes::BLOCK_TOO_LARGE,
                    format!(
                        "cannot prove that this block has at most {} threads ({arch})",
                        profile.max_threads_per_block
                    ),
                    whole,
                    format!("the product `{product}` is too complex to bound"),
                )
                .with_note("help: bound each dimension with simpler sizes, or fix the block's shape with constants"),
            );
            return out;
        }
        if let Some(total) = total {
            let limit = Nat::lit(profile.max_threads_per_block);
            let product = || dims.iter().map(|d| shown(&d.size)).collect::<Vec<_>>().join(" × ");
            match decide(facts, &total, &limit) {
                Some(Truth::Disproven) => {
                    let n = concrete(&total).map_or_else(|| format!("`{total}`"), |v| v.to_string());
                    let label =
                        if dims.len() > 1 { format!("{} = {n} threads", product()) } else { format!("{n} threads") };
                    out.push(
                        Diagnostic::error(
                            codes::BLOCK_TOO_LARGE,
                            format!(
                                "this block has {n} threads; {arch} allows at most {} per block",
                                profile.max_threads_per_block
                            ),
                            whole,
                            label,
                        )
                        .with_note(restructure_block()),
                    );
                    return out;
                }
                Some(Truth::Unknown) => {
                    out.push(unproven(
                        codes::BLOCK_TOO_LARGE,
                        format!(
                            "cannot prove that this block has at most {} threads ({arch})",
                            profile.max_threads_per_block
                        ),
                        whole,
                        &total,
                        format!("{total} <= {}", profile.max_threads_per_block),
                        Some(profile.max_threads_per_block),
                    ));
                    return out;
                }
                _ => {}
            }
        }
    }
    for d in dims {
        let (limit, code) = match kind {
            ShapeKind::Grid => (profile.grid_limit(d.dim), codes::GRID_TOO_LARGE),
            ShapeKind::Block => (profile.block_limit(d.dim), codes::BLOCK_TOO_LARGE),
        };
        let l = d.dim.letter();
        match decide(facts, &d.size, &Nat::lit(limit)) {
            Some(Truth::Disproven) => {
                let note = match kind {
                    ShapeKind::Grid => restructure_grid(),
                    ShapeKind::Block => restructure_block(),
                };
                out.push(
                    Diagnostic::error(
                        code,
                        format!(
                            "this {} has {} {} along {l}; {arch} allows at most {limit} along {l}",
                            kind.noun(),
                            shown(&d.size),
                            kind.items()
                        ),
                        d.span,
                        format!("{} {} along {l}", shown(&d.size), kind.items()),
                    )
                    .with_note(note),
                );
            }
            Some(Truth::Unknown) => out.push(unproven(
                code,
                format!(
                    "cannot prove that this {} has at most {limit} {} along {l} ({arch})",
                    kind.noun(),
                    kind.items()
                ),
                d.span,
                &d.size,
                format!("{} <= {limit}", d.size),
                Some(limit),
            )),
            _ => {}
        }
    }
    out
}

fn restructure_block() -> String {
    "help: use more blocks with fewer threads each (a larger grid), or let each thread handle several elements (a loop over a `group` of the data)".to_string()
}

fn restructure_grid() -> String {
    "help: put the large dimension along X (up to 2147483647 blocks), use larger blocks, or let each block handle several tiles (a loop over a `group` of the data)".to_string()
}

// ------------------------------------------------------------------------------------------------
// Shared memory

/// The size in bytes of a value of `t` as the devices lay it out (`bool` 1, 32-bit scalars 4,
/// 64-bit scalars 8, arrays their elements'), or `None` for a type without a fixed layout (a
/// generic type, a reference).
pub fn byte_size(t: &Ty) -> Option<Nat> {
    match t {
        Ty::Scalar(s) => Some(Nat::lit(match s {
            ScalarTy::Bool | ScalarTy::I8 | ScalarTy::U8 => 1,
            ScalarTy::I16 | ScalarTy::U16 => 2,
            ScalarTy::I64 | ScalarTy::U64 | ScalarTy::F64 => 8,
            ScalarTy::AtomicU64 | ScalarTy::AtomicI64 | ScalarTy::AtomicF64 => 8,
            ScalarTy::I32 | ScalarTy::U32 | ScalarTy::F32 => 4,
            ScalarTy::AtomicU32 | ScalarTy::AtomicI32 | ScalarTy::AtomicF32 => 4,
            // The C dialects store a unit as an `int`.
            ScalarTy::Unit => 4,
        })),
        Ty::IntLit => Some(Nat::lit(4)),
        Ty::FloatLit => Some(Nat::lit(8)),
        // A size the arithmetic cannot represent is beyond every limit (not unknown: dropping it
        // from the count would let any amount of shared memory through).
        Ty::Array(e, n) | Ty::ViewArray(e, n) => Some(byte_size(e)?.mul(n).unwrap_or_else(|_| Nat::lit(u64::MAX))),
        Ty::Tuple(ts) => {
            let mut total = Nat::zero();
            for t in ts {
                total = total.add(&byte_size(t)?).unwrap_or_else(|_| Nat::lit(u64::MAX));
            }
            Some(total)
        }
        Ty::Var(_) | Ty::Ref { .. } | Ty::At(..) | Ty::Nat | Ty::Stream | Ty::Error => None,
    }
}

/// The alignment of every shared-memory buffer: each buffer counts its size rounded up to a
/// multiple of this many bytes, as the CUDA emitter lays buffers out.
pub const SHARED_ALIGN: u64 = 16;

fn round_up(b: u64) -> Option<u64> {
    b.checked_add(SHARED_ALIGN - 1).map(|x| x / SHARED_ALIGN * SHARED_ALIGN)
}

/// One shared-memory buffer of a block: its size in bytes (symbolic in the generic parameters
/// of the function it belongs to), where it is declared, and its name for messages.
#[derive(Clone, Debug)]
pub struct SharedBuf {
    pub bytes: Nat,
    pub span: Span,
    pub what: String,
}

/// The shared memory one block of a function uses: `statics` are declared in its body (`let … @
/// gpu.shared`, also in the `gpu.block` functions it calls, which are inlined); `dynamics` are a
/// kernel's shared-memory parameters, which the launch provides.
#[derive(Clone, Debug, Default)]
pub struct SharedUse {
    pub statics: Vec<SharedBuf>,
    pub dynamics: Vec<SharedBuf>,
}

/// The shared-memory use of every function checked so far, by name.
pub type SharedUses = std::collections::HashMap<String, SharedUse>;

impl SharedUse {
    /// Whether every size is a constant.
    pub fn statics_concrete(&self) -> bool {
        self.statics.iter().all(|b| concrete(&b.bytes).is_some())
    }

    pub fn all_concrete(&self) -> bool {
        self.statics_concrete() && self.dynamics.iter().all(|b| concrete(&b.bytes).is_some())
    }

    /// Every size with `f` applied (a call's or launch's generic arguments substituted).
    pub fn map(&self, f: impl Fn(&Nat) -> Nat) -> SharedUse {
        let m = |bs: &[SharedBuf]| {
            bs.iter().map(|b| SharedBuf { bytes: f(&b.bytes), span: b.span, what: b.what.clone() }).collect()
        };
        SharedUse { statics: m(&self.statics), dynamics: m(&self.dynamics) }
    }
}

/// Which of the two shared-memory rules to check.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SharedRules {
    /// Static shared memory within [`TargetProfile::max_static_shared`] (E0706).
    pub statics: bool,
    /// Static and dynamic together within [`TargetProfile::max_shared_optin`] (E0707).
    pub total: bool,
}

/// The sum of the rounded sizes of `bufs` if they are all constants, with the first buffer at
/// which the running sum exceeds `limit`.
fn concrete_sum(bufs: &[&SharedBuf], limit: u64) -> Option<(u64, Option<usize>)> {
    let mut sum: u64 = 0;
    let mut crossing = None;
    for (i, b) in bufs.iter().enumerate() {
        sum = sum.saturating_add(round_up(concrete(&b.bytes)?).unwrap_or(u64::MAX));
        if sum > limit && crossing.is_none() {
            crossing = Some(i);
        }
    }
    Some((sum, crossing))
}

/// Checks the shared memory of one block of `kernel` against the profile. At a signature
/// (`launch` is `None`) only constant sizes are judged; at a launch, `facts` decide symbolic ones
/// and the error points at the launch, with the buffers as secondary labels.
pub fn check_shared(
    profile: &TargetProfile,
    kernel: &str,
    use_: &SharedUse,
    rules: SharedRules,
    launch: Option<(Span, &Facts)>,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let arch = profile.arch;
    let statics: Vec<&SharedBuf> = use_.statics.iter().collect();
    let all: Vec<&SharedBuf> = use_.statics.iter().chain(&use_.dynamics).collect();
    let static_note = "static shared memory is what a kernel's body declares (`let … @ gpu.shared`, also in the `gpu.block` functions it calls); its shared-memory parameters are dynamic shared memory, which the launch provides";
    let mut static_failed = false;
    if rules.statics && !statics.is_empty() {
        let limit = profile.max_static_shared;
        match concrete_sum(&statics, limit) {
            Some((sum, Some(i))) => {
                static_failed = true;
                let (span, label) = match launch {
                    Some((at, _)) => {
                        (at, format!("`{kernel}` launched with {} of static shared memory per block", bytes_text(sum)))
                    }
                    None => (statics[i].span, format!("{}: {}", statics[i].what, buf_text(statics[i]))),
                };
                let mut d = Diagnostic::error(
                    codes::STATIC_SHARED_TOO_LARGE,
                    format!(
                        "`{kernel}` has {} of static shared memory per block; at most {} can be static",
                        bytes_text(sum),
                        bytes_text(limit)
                    ),
                    span,
                    label,
                );
                for (j, b) in statics.iter().enumerate() {
                    if launch.is_some() || j != i {
                        d = d.with_label(b.span, format!("{}: {}", b.what, buf_text(b)));
                    }
                }
                if sum != raw_sum(&statics) {
                    d = d.with_note(ALIGN_NOTE);
                }
                out.push(d.with_note(static_note).with_note(format!(
                    "help: make the largest buffer a shared-memory parameter of the kernel (`[grid.blocks.forall(X)] tmp: &uniq gpu.shared …`), which {arch} allows up to {} together with the static ones; or use smaller tiles",
                    bytes_text(profile.max_shared_optin)
                )));
            }
            Some((_, None)) => {}
            None => {
                if let Some((at, facts)) = launch {
                    static_failed = symbolic_shared(
                        &mut out,
                        codes::STATIC_SHARED_TOO_LARGE,
                        &statics,
                        limit,
                        at,
                        facts,
                        &format!("`{kernel}`'s static shared memory per block"),
                        "at most 48 KiB of shared memory can be static",
                    );
                }
            }
        }
    }
    if rules.total && !static_failed && !all.is_empty() {
        let limit = profile.max_shared_optin;
        match concrete_sum(&all, limit) {
            Some((sum, Some(i))) => {
                let st: u64 = statics.iter().filter_map(|b| concrete(&b.bytes).and_then(round_up)).sum();
                let (span, label) = match launch {
                    Some((at, _)) => {
                        (at, format!("`{kernel}` launched with {} of shared memory per block", bytes_text(sum)))
                    }
                    None => (all[i].span, format!("{}: {}", all[i].what, buf_text(all[i]))),
                };
                let mut d = Diagnostic::error(
                    codes::SHARED_ABOVE_ARCH_MAX,
                    format!(
                        "`{kernel}` needs {} of shared memory per block; {arch} allows at most {}",
                        bytes_text(sum),
                        bytes_text(limit)
                    ),
                    span,
                    label,
                )
                .with_note(format!(
                    "{} static (declared in the body) and {} dynamic (the shared-memory parameters)",
                    bytes_short(st),
                    bytes_short(sum - st)
                ));
                for (j, b) in all.iter().enumerate() {
                    if launch.is_some() || j != i {
                        d = d.with_label(b.span, format!("{}: {}", b.what, buf_text(b)));
                    }
                }
                if sum != raw_sum(&all) {
                    d = d.with_note(ALIGN_NOTE);
                }
                let larger: Vec<&str> = PROFILES.iter().filter(|p| p.max_shared_optin >= sum).map(|p| p.arch).collect();
                if !larger.is_empty() {
                    d = d.with_note(format!("it fits on {} (`--arch`)", larger.join(", ")));
                }
                out.push(d.with_note("help: use smaller tiles, or split the work of a block between several blocks"));
            }
            Some((_, None)) => {}
            None => {
                if let Some((at, facts)) = launch {
                    symbolic_shared(
                        &mut out,
                        codes::SHARED_ABOVE_ARCH_MAX,
                        &all,
                        limit,
                        at,
                        facts,
                        &format!("`{kernel}`'s shared memory per block"),
                        &format!("{arch} allows at most {} of shared memory per block", bytes_text(limit)),
                    );
                }
            }
        }
    }
    out
}

const ALIGN_NOTE: &str =
    "each buffer counts its size rounded up to a multiple of 16 bytes, the alignment the CUDA emitter gives it";

/// The sum of the unrounded sizes of constant buffers.
fn raw_sum(bufs: &[&SharedBuf]) -> u64 {
    bufs.iter().filter_map(|b| concrete(&b.bytes)).fold(0, u64::saturating_add)
}

/// `32768 bytes (32 KiB)` for a constant buffer, `4 * n bytes` for a symbolic one.
fn buf_text(b: &SharedBuf) -> String {
    match concrete(&b.bytes) {
        Some(v) => bytes_text(v),
        None => format!("`{}` bytes", b.bytes),
    }
}

/// A symbolic sum of buffers at a launch: it must provably fit (each buffer may be padded by up
/// to `SHARED_ALIGN - 1` bytes). Reports and returns `true` if it does not.
#[allow(clippy::too_many_arguments)]
fn symbolic_shared(
    out: &mut Vec<Diagnostic>,
    code: strata_diag::Code,
    bufs: &[&SharedBuf],
    limit: u64,
    at: Span,
    facts: &Facts,
    what: &str,
    rule: &str,
) -> bool {
    let too_complex = |out: &mut Vec<Diagnostic>| {
        let mut d = Diagnostic::error(
            code,
            format!("cannot prove that {what} is at most {}", bytes_text(limit)),
            at,
            "the sum of these sizes is too complex to bound",
        );
        for b in bufs {
            d = d.with_label(b.span, format!("{}: {}", b.what, buf_text(b)));
        }
        out.push(d.with_note(rule.to_string()));
        true
    };
    let mut raw = Nat::zero();
    for b in bufs {
        match raw.add(&b.bytes) {
            Ok(r) => raw = r,
            Err(_) => return too_complex(out),
        }
    }
    // Every limit is a multiple of the alignment, so one buffer of at most `limit` bytes still
    // fits when rounded up; each further buffer may add up to `SHARED_ALIGN - 1` bytes.
    debug_assert!(limit.is_multiple_of(SHARED_ALIGN));
    let padding = (SHARED_ALIGN - 1) * (bufs.len() as u64).saturating_sub(1);
    let padded = match raw.add(&Nat::lit(padding)) {
        Ok(p) => p,
        Err(_) => return too_complex(out),
    };
    if facts.le(&padded, &Nat::lit(limit)) == Truth::Proven {
        return false;
    }
    let (message, label) = match facts.le(&raw, &Nat::lit(limit)) {
        Truth::Disproven => (format!("{what} is more than {}", bytes_text(limit)), format!("`{raw}` bytes here")),
        _ => (
            format!("cannot prove that {what} is at most {}", bytes_text(limit)),
            format!("cannot prove `{padded} <= {limit}` (each buffer is aligned to {SHARED_ALIGN} bytes)"),
        ),
    };
    let mut d = Diagnostic::error(code, message, at, label);
    for b in bufs {
        d = d.with_label(b.span, format!("{}: {}", b.what, buf_text(b)));
    }
    out.push(d.with_note(rule.to_string()));
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_size_bounds_are_exact_thresholds() {
        let n = Nat::var("n");
        let blocks = n.add(&Nat::lit(255)).unwrap().div(&Nat::lit(256)).unwrap();
        assert_eq!(single_size_bound(&blocks, None).as_deref(), Some("n >= 1"));
        let tail = n.add(&Nat::lit(253)).unwrap().div(&Nat::lit(256)).unwrap();
        assert_eq!(single_size_bound(&tail, None).as_deref(), Some("n >= 3"));
        assert_eq!(single_size_bound(&blocks, Some(4)).as_deref(), Some("n <= 1024"));
        assert_eq!(single_size_bound(&n.div(&Nat::lit(256)).unwrap(), None).as_deref(), Some("n >= 256"));
        // Two variables, or a size that is never small enough: no suggestion.
        assert_eq!(single_size_bound(&n.mul(&Nat::var("m")).unwrap(), None), None);
        assert_eq!(single_size_bound(&n.add(&Nat::lit(10)).unwrap(), Some(4)), None);
    }

    #[test]
    fn default_is_sm_80_and_figures_are_the_documented_ones() {
        let p = TargetProfile::default_profile();
        assert_eq!(p.arch, "sm_80");
        assert_eq!(p.max_shared_optin, 166_912);
        assert_eq!(TargetProfile::for_arch("sm_90").map(|p| p.max_shared_optin), Some(232_448));
        assert_eq!(TargetProfile::for_arch("sm_75").map(|p| p.max_shared_optin), Some(65_536));
        assert_eq!(TargetProfile::for_arch("sm_86").map(|p| p.max_shared_optin), Some(101_376));
        assert!(TargetProfile::for_arch("sm_81").is_none());
        for p in PROFILES {
            assert_eq!(p.max_static_shared, 49_152);
            assert_eq!(p.max_grid_dim, [2_147_483_647, 65_535, 65_535]);
            assert!(p.max_shared_optin >= p.max_static_shared);
        }
    }

    fn dims(sizes: &[(DimName, u64)]) -> Vec<DimSize> {
        sizes.iter().map(|(d, n)| DimSize { dim: *d, size: Nat::lit(*n), span: Span::DUMMY }).collect()
    }

    fn codes_of(ds: &[Diagnostic]) -> Vec<&'static str> {
        ds.iter().map(|d| d.code.as_str()).collect()
    }

    #[test]
    fn block_limits() {
        let p = TargetProfile::default_profile();
        let check = |s: &[(DimName, u64)]| codes_of(&check_shape(p, ShapeKind::Block, &dims(s), Span::DUMMY, None));
        assert!(check(&[(DimName::X, 1024)]).is_empty());
        assert!(check(&[(DimName::X, 32), (DimName::Y, 32)]).is_empty());
        assert_eq!(check(&[(DimName::X, 1025)]), ["E0703"]);
        assert_eq!(check(&[(DimName::X, 64), (DimName::Y, 32)]), ["E0703"]);
        assert!(check(&[(DimName::X, 1), (DimName::Y, 1), (DimName::Z, 64)]).is_empty());
        assert_eq!(check(&[(DimName::X, 1), (DimName::Y, 1), (DimName::Z, 65)]), ["E0703"]);
        assert_eq!(check(&[(DimName::X, 0)]), ["E0705"]);
        assert_eq!(check(&[(DimName::X, 4), (DimName::Y, 0)]), ["E0705"]);
    }

    #[test]
    fn grid_limits() {
        let p = TargetProfile::default_profile();
        let check = |s: &[(DimName, u64)]| codes_of(&check_shape(p, ShapeKind::Grid, &dims(s), Span::DUMMY, None));
        assert!(check(&[(DimName::X, (1 << 31) - 1)]).is_empty());
        assert_eq!(check(&[(DimName::X, 1 << 31)]), ["E0704"]);
        assert!(check(&[(DimName::X, 1), (DimName::Y, 65_535)]).is_empty());
        assert_eq!(check(&[(DimName::X, 1), (DimName::Y, 65_536)]), ["E0704"]);
        assert_eq!(check(&[(DimName::X, 1), (DimName::Y, 1), (DimName::Z, 65_536)]), ["E0704"]);
        assert_eq!(check(&[(DimName::X, 0)]), ["E0705"]);
    }

    #[test]
    fn symbolic_sizes_need_facts_or_wait() {
        let p = TargetProfile::default_profile();
        let n = vec![DimSize { dim: DimName::X, size: Nat::var("n"), span: Span::DUMMY }];
        assert!(check_shape(p, ShapeKind::Block, &n, Span::DUMMY, None).is_empty());
        let none = Facts::new();
        assert_eq!(codes_of(&check_shape(p, ShapeKind::Block, &n, Span::DUMMY, Some(&none))), ["E0705"]);
        let mut f = Facts::new();
        f.add_ge(&Nat::var("n"), &Nat::lit(1)).unwrap();
        f.add_le(&Nat::var("n"), &Nat::lit(256)).unwrap();
        assert!(check_shape(p, ShapeKind::Block, &n, Span::DUMMY, Some(&f)).is_empty());
    }

    fn buf(bytes: u64) -> SharedBuf {
        SharedBuf { bytes: Nat::lit(bytes), span: Span::DUMMY, what: "`b`".into() }
    }

    #[test]
    fn shared_memory_rules() {
        let sm80 = TargetProfile::default_profile();
        let sm75 = TargetProfile::for_arch("sm_75").unwrap();
        let both = SharedRules { statics: true, total: true };
        let check = |p, u: &SharedUse| codes_of(&check_shared(p, "k", u, both, None));
        let u = SharedUse { statics: vec![buf(48 * KIB)], dynamics: vec![] };
        assert!(check(sm80, &u).is_empty());
        let u = SharedUse { statics: vec![buf(48 * KIB), buf(4)], dynamics: vec![] };
        assert_eq!(check(sm80, &u), ["E0706"]);
        let u = SharedUse { statics: vec![buf(16 * KIB)], dynamics: vec![buf(96 * KIB)] };
        assert!(check(sm80, &u).is_empty());
        assert_eq!(check(sm75, &u), ["E0707"]);
        let u = SharedUse { statics: vec![], dynamics: vec![buf(163 * KIB)] };
        assert!(check(sm80, &u).is_empty());
        let u = SharedUse { statics: vec![], dynamics: vec![buf(163 * KIB + 1)] };
        assert_eq!(check(sm80, &u), ["E0707"]);
        // Buffers are aligned to 16 bytes each.
        let u = SharedUse { statics: vec![buf(48 * KIB - 16), buf(4), buf(4)], dynamics: vec![] };
        assert_eq!(check(sm80, &u), ["E0706"]);
    }

    #[test]
    fn byte_sizes() {
        let f32s = Ty::Array(Box::new(Ty::Scalar(ScalarTy::F32)), Nat::lit(32));
        assert_eq!(byte_size(&f32s).and_then(|n| concrete(&n)), Some(128));
        let nested = Ty::Array(Box::new(Ty::Array(Box::new(Ty::Scalar(ScalarTy::F64)), Nat::lit(8))), Nat::lit(4));
        assert_eq!(byte_size(&nested).and_then(|n| concrete(&n)), Some(256));
        assert_eq!(byte_size(&Ty::Var("d".into())), None);
    }
}
