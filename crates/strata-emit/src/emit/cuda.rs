//! The CUDA dialect's kernels (the cuda target): `__global__` functions that every thread of the
//! launch runs, so that a thread region is an `if` on `threadIdx`; shared memory static or
//! dynamic; launches with `<<<…>>>` that wait for their kernel only when timing.

use super::*;

/// One shared-memory buffer of a kernel: its local, C element type and length expression.
type SharedBuf = (LocalId, &'static str, String);

/// The most static shared memory a kernel may declare (48 KiB on every CUDA GPU). Beyond it,
/// shared memory must be dynamic, and the launch must raise the kernel's limit first.
const STATIC_SHARED_MAX: u64 = 48 * 1024;

/// Whether a kernel's shared-memory buffers are static `__shared__` arrays on CUDA: all of
/// constant size and together at most [`STATIC_SHARED_MAX`] bytes. Otherwise they are carved out
/// of dynamic shared memory, whose size the launch passes.
pub(super) fn static_shared(f: &Function) -> bool {
    let FnKind::Kernel { shared, .. } = &f.kind else { return true };
    let mut total: u64 = 0;
    for (_, s, len) in shared {
        let IExpr::Const(n) = len else { return false };
        total = total.saturating_add(n.saturating_mul(scalar_bytes(*s)));
    }
    total <= STATIC_SHARED_MAX
}

fn scalar_bytes(s: ScalarTy) -> u64 {
    match s {
        ScalarTy::Bool | ScalarTy::I8 | ScalarTy::U8 => 1,
        ScalarTy::I16 | ScalarTy::U16 => 2,
        ScalarTy::I64
        | ScalarTy::U64
        | ScalarTy::F64
        | ScalarTy::AtomicI64
        | ScalarTy::AtomicU64
        | ScalarTy::AtomicF64 => 8,
        ScalarTy::Unit
        | ScalarTy::I32
        | ScalarTy::U32
        | ScalarTy::AtomicI32
        | ScalarTy::AtomicU32
        | ScalarTy::F32
        | ScalarTy::AtomicF32 => 4,
    }
}

impl Emitter<'_> {
    /// A kernel's shared-memory buffers: local, C element type and length (as C).
    pub(super) fn shared_buffers(&self, cx: &Cx, f: &Function) -> Result<Vec<SharedBuf>, E> {
        let FnKind::Kernel { shared, .. } = &f.kind else { return Ok(Vec::new()) };
        let mut out = Vec::new();
        for (local, s, len) in shared {
            out.push((*local, scalar_c(*s), self.iexpr(cx, len)?));
        }
        Ok(out)
    }

    /// For a kernel with dynamic shared memory: the host function that computes how many bytes
    /// its launch must provide (each buffer rounded up to 16 bytes, as the kernel carves them).
    pub(super) fn smem_size_function(&mut self, i: usize, f: &Function) -> Result<(), E> {
        let Some(name) = self.smem_fns[i].clone() else { return Ok(()) };
        let cx = self.cx(i, f);
        let bufs = self.shared_buffers(&cx, f)?;
        let params: Vec<String> = f.nat_params.iter().map(|n| format!("uint64_t {}", nat_name(&cx.names, n))).collect();
        let params = if params.is_empty() { "void".to_string() } else { params.join(", ") };
        writeln!(self.out, "STRATA_INLINE size_t {name}({params}) {{").ok();
        for n in &f.nat_params {
            writeln!(self.out, "    (void){};", nat_name(&cx.names, n)).ok();
        }
        // Every product, rounding and sum is checked: a size that does not fit `size_t` gives
        // SIZE_MAX, which no launch accepts (never a wrapped, smaller size).
        writeln!(self.out, "    size_t bytes = 0, one;").ok();
        for (_, t, len) in &bufs {
            writeln!(self.out, "    if ((uint64_t)({len}) > (uint64_t)(SIZE_MAX / sizeof({t}))) return SIZE_MAX;").ok();
            writeln!(self.out, "    one = (size_t)({len}) * sizeof({t});").ok();
            writeln!(self.out, "    if (one > SIZE_MAX - 15) return SIZE_MAX;").ok();
            writeln!(self.out, "    one = (one + 15) & ~(size_t)15;").ok();
            writeln!(self.out, "    if (bytes > SIZE_MAX - one) return SIZE_MAX;").ok();
            writeln!(self.out, "    bytes += one;").ok();
        }
        writeln!(self.out, "    return bytes;\n}}").ok();
        Ok(())
    }

    /// Shared memory: static `__shared__` arrays where every size is a constant and they fit in
    /// the 48 KiB of static shared memory ([`static_shared`]), otherwise carved out of the
    /// launch's dynamic shared memory (whose size the `…_smem_bytes` helper computes on the
    /// host). Either way each buffer is named after its Strata parameter. A buffer the kernel
    /// never uses is not declared: nvcc would warn about it (and `strata build` makes warnings
    /// errors).
    pub(super) fn cuda_kernel_body(&mut self, cx: &mut Cx, i: usize, f: &Function) -> Result<(), E> {
        let bufs = self.shared_buffers(cx, f)?;
        let mut used = HashSet::new();
        f.body.iter().for_each(|s| locals_in_stmt(s, &mut used));
        if self.smem_fns[i].is_none() {
            for (local, t, len) in bufs.iter().filter(|b| used.contains(&b.0)) {
                let name = &cx.names.locals[*local];
                // A buffer the kernel only writes would be "set but never used" without this.
                writeln!(self.out, "    __shared__ {t} {name}[{len}];\n    (void)&{name}[0];").ok();
            }
        } else {
            writeln!(self.out, "    extern __shared__ __align__(16) unsigned char strata_smem[];").ok();
            writeln!(self.out, "    size_t smem_off_ = 0;").ok();
            for (local, t, len) in &bufs {
                let name = &cx.names.locals[*local];
                if used.contains(local) {
                    writeln!(self.out, "    {t} *{name} = ({t} *)(strata_smem + smem_off_);").ok();
                }
                writeln!(self.out, "    smem_off_ += ((size_t)({len}) * sizeof({t}) + 15) & ~(size_t)15;").ok();
            }
            writeln!(self.out, "    (void)smem_off_;").ok();
        }
        if self.ordered_cuda {
            // An ordered grid: the block's first thread takes the next number when the block
            // starts, so a block's number is only taken after every lower one was (docs/language.md,
            // "Ordered grids"); GPUs start blocks in about that order, and a block that waits for
            // a lower one waits for a block that is resident or done.
            let name = &self.fn_names[i];
            writeln!(
                self.out,
                "    __shared__ unsigned long long ticket_s_;\n    \
                 if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) \
                 ticket_s_ = atomicAdd(&strata_ticket_{name}, 1ULL);\n    \
                 __syncthreads();\n    \
                 const unsigned long long olin_ = ticket_s_ % ((unsigned long long)gridDim.x * gridDim.y * gridDim.z);\n    \
                 const uint3 obid_ = make_uint3((unsigned)(olin_ % gridDim.x), (unsigned)(olin_ / gridDim.x % gridDim.y), \
                 (unsigned)(olin_ / gridDim.x / gridDim.y));\n    \
                 (void)obid_;"
            )
            .ok();
        }
        cx.in_threads = true;
        self.stmts(cx, &f.body, 1)
    }

    /// A kernel launch in host code: `kernel<<<grid, block[, smem[, stream]]>>>(…)`, the launch
    /// checked, and timed with `STRATA_TIME=1`.
    pub(super) fn cuda_launch(
        &mut self,
        cx: &Cx,
        kernel: FnId,
        (nats, grid, block, stream): (&[IExpr], &[IExpr; 3], &[IExpr; 3], Option<&Expr>),
        args: &[Expr],
        span: Span,
        ind: usize,
    ) -> Result<(), E> {
        let pad = "    ".repeat(ind);
        let at = self.at(span);
        let mut n: Vec<String> = Vec::new();
        for x in nats {
            n.push(self.iexpr(cx, x)?);
        }
        let mut a = n.clone();
        for x in args {
            a.push(self.expr(cx, x)?);
        }
        let mut dims = Vec::new();
        for d in grid.iter().chain(block) {
            dims.push(match d {
                IExpr::Const(c) if *c <= u64::from(u32::MAX) => c.to_string(),
                // Checked: a dimension beyond 32 bits must not wrap to a smaller launch.
                other => format!("strata_cuda_dim({}, {at})", self.iexpr(cx, other)?),
            });
        }
        let kname = &self.fn_names[kernel];
        writeln!(self.out, "{pad}{{").ok();
        let mut smem = String::new();
        if let Some(bytes) = &self.smem_fns[kernel] {
            writeln!(self.out, "{pad}    const size_t smem_ = {bytes}({});", n.join(", ")).ok();
            // Beyond 48 KiB a kernel must opt in to more dynamic shared memory.
            writeln!(self.out, "{pad}    if (smem_ > {STATIC_SHARED_MAX}) strata_cuda_check(cudaFuncSetAttribute({kname}, cudaFuncAttributeMaxDynamicSharedMemorySize, strata_cuda_smem_bytes(smem_)), {at});").ok();
            smem = ", smem_".to_string();
        }
        if let Some(s) = stream {
            // The stream is the fourth launch parameter, after the dynamic shared memory.
            let s = self.expr(cx, s)?;
            smem = format!("{}, {s}", if smem.is_empty() { ", 0" } else { &smem });
        }
        writeln!(self.out, "{pad}    const double t0_ = strata_time_begin();").ok();
        writeln!(
            self.out,
            "{pad}    {kname}<<<dim3({}, {}, {}), dim3({}, {}, {}){smem}>>>({});",
            dims[0],
            dims[1],
            dims[2],
            dims[3],
            dims[4],
            dims[5],
            a.join(", ")
        )
        .ok();
        let label = c_string(&self.p.functions[kernel].name);
        writeln!(self.out, "{pad}    strata_cuda_check_kernel({label}, t0_, {at});").ok();
        writeln!(self.out, "{pad}}}").ok();
        Ok(())
    }
}
