//! The target's limits at signatures and launches (see [`crate::target`]): grid and block sizes
//! (E0703–E0705) and the shared memory of a block (E0706, E0707).
//!
//! A function's shared memory is collected while its body is checked: every `let … @ gpu.shared`
//! (static), every call of a GPU function that declares some (its buffers, with the call's size
//! arguments: the callee is inlined, once per call), and a kernel's shared-memory parameters
//! (dynamic). Whatever is constant at the signature is checked there, once; what depends on a
//! kernel's generic parameters is checked at each launch, after they are instantiated.

use super::*;
use crate::target::{
    byte_size, check_shape, check_shared, concrete, DimSize, ShapeKind, SharedBuf, SharedRules, SharedUse, SharedUses,
    TargetProfile,
};

/// What a [`FnCx`] collects about the shared memory of the function it checks.
#[derive(Default)]
pub(super) struct SharedCollect {
    /// `let … @ gpu.shared` buffers, by the span of the name (a loop body is checked twice).
    lets: HashMap<Span, SharedBuf>,
    /// The static buffers of GPU functions called, by the span of the call.
    calls: HashMap<Span, Vec<SharedBuf>>,
}

/// A kernel's shared-memory parameters, which its launch provides (dynamic shared memory).
pub fn params_shared_use(sig: &FnSig) -> SharedUse {
    let mut u = SharedUse::default();
    if !matches!(sig.root, Root::Grid { .. }) {
        return u;
    }
    for p in &sig.params {
        if let (Some(_), Ty::Ref { mem: Mem::GpuShared, ty, .. }) = (&p.exec, &p.ty) {
            if let Some(bytes) = byte_size(ty) {
                u.dynamics.push(SharedBuf { bytes, span: p.span, what: format!("`{}`", p.name) });
            }
        }
    }
    u
}

/// The sizes of a shape as written in `dim`, with the span of each.
fn dim_sizes(shape: &[(DimName, Nat)], dim: &ast::Dim) -> Vec<DimSize> {
    shape
        .iter()
        .map(|(d, n)| DimSize {
            dim: *d,
            size: n.clone(),
            span: dim.dims.iter().find(|(x, _)| x == d).map_or(dim.span, |(_, v)| v.span),
        })
        .collect()
}

/// Whether one of `diags` points into `span` (a size whose lowering failed stands for 0: it is
/// not judged again).
fn has_error_within(diags: &[Diagnostic], span: Span) -> bool {
    diags.iter().any(|d| {
        let p = d.primary.span;
        p.file == span.file && p.lo >= span.lo && p.hi <= span.hi
    })
}

/// The limits a signature can be held to on its own: its constant grid and block sizes and, for
/// a kernel, its shared memory where every size is a constant (`shared`: see [`SharedUse`]).
/// `reported`: the errors found so far (a shape with an error in it is not judged).
pub fn check_signature_limits(
    profile: &TargetProfile,
    f: &ast::FnDecl,
    sig: &FnSig,
    shared: &SharedUse,
    reported: &[Diagnostic],
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let Some(exec) = &f.exec else { return out };
    let mut shape = |kind, sizes: &[(DimName, Nat)], dim: &ast::Dim| {
        if !has_error_within(reported, dim.span) {
            out.extend(check_shape(profile, kind, &dim_sizes(sizes, dim), dim.span, None));
        }
    };
    match (&exec.ty.kind, &sig.root) {
        (ast::ExecTyKind::Grid(b, t) | ast::ExecTyKind::BlockGrp(b, t), Root::Grid { blocks, threads }) => {
            shape(ShapeKind::Grid, blocks, b);
            shape(ShapeKind::Block, threads, t);
            let rules = SharedRules { statics: shared.statics_concrete(), total: shared.all_concrete() };
            out.extend(check_shared(profile, &sig.name, shared, rules, None));
        }
        (ast::ExecTyKind::Block(t) | ast::ExecTyKind::ThreadGrp(t), Root::Block { threads }) => {
            shape(ShapeKind::Block, threads, t);
        }
        _ => {}
    }
    out
}

impl<'p> FnCx<'p> {
    /// Checks against `profile`, with the shared memory of the functions checked before.
    pub fn for_target(mut self, profile: &'p TargetProfile, shared_uses: &'p SharedUses) -> FnCx<'p> {
        self.profile = profile;
        self.shared_uses = Some(shared_uses);
        self
    }

    /// Records `let name: T @ gpu.shared` (`ty` is the variable's type).
    pub(super) fn note_shared_let(&mut self, name: &ast::Ident, ty: &Ty) {
        if let Ty::At(inner, Mem::GpuShared) = ty {
            if let Some(bytes) = byte_size(inner) {
                let buf = SharedBuf { bytes, span: name.span, what: format!("`{}`", name.name) };
                self.require_launch_fixed(&buf, name.span);
                self.shared.lets.insert(name.span, buf);
            }
        }
    }

    /// An array value that is made here (`[x; n]`) must fit in a 64-bit address space: a byte
    /// size of 2^63 or more (including one too large to compute) cannot be allocated on any
    /// device, and its index arithmetic would wrap. Symbolic sizes are left to the allocation.
    pub(super) fn require_addressable(&mut self, array: &Ty, at: Span) {
        const LIMIT: u64 = 1 << 63;
        // CUDA's local memory per thread (ptxas refuses a larger frame); the cpu device keeps
        // such an array on an OpenMP thread's stack, which a much larger one overflows.
        const LOCAL_LIMIT: u64 = 512 * 1024;
        let Some(bytes) = byte_size(array).as_ref().and_then(concrete) else { return };
        let gpu = !matches!(self.level(), Level::Cpu | Level::Any);
        if gpu && (LOCAL_LIMIT..LIMIT).contains(&bytes) {
            self.report(
                Diagnostic::error(
                    codes::SIZE_NOT_PROVEN,
                    format!("this array would take {bytes} bytes of a GPU thread's local memory, which holds less than 512 KiB"),
                    at,
                    format!("{bytes} bytes"),
                )
                .with_note("every GPU thread holds its own copy of a local array, and CUDA gives a thread 512 KiB of local memory in all")
                .with_note("help: keep large data in `gpu.global` memory (a kernel parameter) or share it in `gpu.shared` memory"),
            );
            return;
        }
        if bytes < LIMIT {
            return;
        }
        let shown = if bytes == u64::MAX { "2^64 bytes or more".to_string() } else { format!("{bytes} bytes") };
        self.report(
            Diagnostic::error(
                codes::SIZE_NOT_PROVEN,
                format!("this array would take {shown}; no device can address more than 2^63 bytes"),
                at,
                shown.clone(),
            )
            .with_note("its element count times the element size does not fit in a 64-bit address space"),
        );
    }

    /// A block's shared memory is allocated once, for the whole launch: its size may depend on
    /// the function's size parameters (fixed at the launch) but not on a loop counter or any
    /// other size that changes while the block runs (E0708).
    fn require_launch_fixed(&mut self, buf: &SharedBuf, at: Span) {
        let generics: Vec<&str> =
            self.sig.generics.iter().filter(|(_, k)| *k == Kind::Nat).map(|(g, _)| g.as_str()).collect();
        let moving: Vec<String> =
            buf.bytes.vars().iter().filter(|v| !generics.contains(&&***v)).map(|v| format!("`{v}`")).collect();
        if moving.is_empty() {
            return;
        }
        self.report(
            Diagnostic::error(
                codes::SHARED_SIZE_NOT_FIXED,
                format!("the size of {} depends on {}, which is not fixed for the launch", buf.what, moving.join(", ")),
                at,
                format!("`{}` bytes", buf.bytes),
            )
            .with_note(
                "shared memory is allocated once per block when the kernel is launched, so its size may only depend on the function's size parameters",
            )
            .with_note("help: declare the buffer for the largest size, outside the loop, and use a part of it (`take_left`)"),
        );
    }

    /// Records the static shared memory of the GPU function `callee`, called at `span` with the
    /// size arguments `subst`: an inlined call declares the callee's buffers once more.
    pub(super) fn note_callee_shared(&mut self, callee: &str, subst: &Subst, span: Span) {
        let Some(u) = self.shared_uses.and_then(|m| m.get(callee)) else { return };
        if u.statics.is_empty() || !self.on_gpu() {
            return;
        }
        let bufs: Vec<SharedBuf> = u
            .statics
            .iter()
            .map(|b| SharedBuf {
                bytes: self.subst_nat(&b.bytes, subst),
                span,
                what: format!("{} of `{callee}` (called here)", b.what),
            })
            .collect();
        for b in &bufs {
            self.require_launch_fixed(b, span);
        }
        self.shared.calls.insert(span, bufs);
    }

    /// The shared memory of one block of the function just checked.
    pub(super) fn shared_use(&self) -> SharedUse {
        let mut statics: Vec<SharedBuf> = self.shared.lets.values().cloned().collect();
        for bufs in self.shared.calls.values() {
            statics.extend(bufs.iter().cloned());
        }
        statics.sort_by_key(|b| (b.span.lo, b.span.hi));
        SharedUse { statics, dynamics: params_shared_use(self.sig).dynamics }
    }

    /// A launch of `kernel` with the grid `gb` and block `gt` (lowered from `l`), whose generic
    /// arguments are `subst`: the sizes that depend on the kernel's generic parameters are held
    /// to the target's limits now (the constant ones were at its signature). `shapes_ok`: the
    /// launch's shapes match the kernel's (E0701 was not reported).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn check_launch_limits(
        &mut self,
        kernel: &str,
        sig: &FnSig,
        l: &ast::Launch,
        gb: &[(DimName, Nat)],
        gt: &[(DimName, Nat)],
        subst: &Subst,
        span: Span,
        shapes_ok: bool,
    ) {
        let Root::Grid { blocks, threads } = &sig.root else { return };
        // A generic argument that was not inferred was reported already.
        if sig.generics.iter().any(|(g, k)| *k == Kind::Nat && !subst.nats.contains_key(g)) {
            return;
        }
        let profile = self.profile;
        let symbolic =
            |shape: &[(DimName, Nat)], d: DimName| shape.iter().any(|(x, n)| *x == d && concrete(n).is_none());
        let mut diags = Vec::new();
        let shapes_ok =
            shapes_ok && !has_error_within(&self.diags, l.grid.span) && !has_error_within(&self.diags, l.block.span);
        if shapes_ok {
            // Grids: the dimensions the kernel leaves generic.
            let grid: Vec<DimSize> = dim_sizes(gb, &l.grid).into_iter().filter(|d| symbolic(blocks, d.dim)).collect();
            diags.extend(check_shape(profile, ShapeKind::Grid, &grid, l.grid.span, Some(&self.facts)));
            // Blocks: a generic dimension changes the block's total as well.
            if threads.iter().any(|(d, _)| symbolic(threads, *d)) {
                let block = dim_sizes(gt, &l.block);
                let found = check_shape(profile, ShapeKind::Block, &block, l.block.span, Some(&self.facts));
                // A constant dimension was judged at the signature.
                let judged: Vec<Span> = block.iter().filter(|d| !symbolic(threads, d.dim)).map(|d| d.span).collect();
                diags.extend(
                    found.into_iter().filter(|d| !judged.contains(&d.primary.span) || d.primary.span == l.block.span),
                );
            }
        }
        let own;
        let u = match self.shared_uses.and_then(|m| m.get(kernel)) {
            Some(u) => u,
            None => {
                own = params_shared_use(sig);
                &own
            }
        };
        let rules = SharedRules { statics: !u.statics_concrete(), total: !u.all_concrete() };
        if rules.statics || rules.total {
            let at = u.map(|n| self.subst_nat(n, subst));
            diags.extend(check_shared(profile, kernel, &at, rules, Some((span, &self.facts))));
        }
        for d in diags {
            self.report(d);
        }
    }
}
