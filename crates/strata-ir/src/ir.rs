//! The Strata IR: the one representation the simulator and every backend consume.
//!
//! The IR is structured (loops and conditionals stay loops and conditionals) and explicit:
//!
//! * **No views, no selections.** Every memory access is a [`Place`]: a root variable, a path of
//!   tuple fields and dereferences, and one flat element offset written as index arithmetic
//!   ([`IExpr`]) over block and thread coordinates, loop counters and size parameters. The
//!   lowering composes the views of a place expression (last view first, as in the paper's §5)
//!   into that offset.
//! * **No `sched`, no `split`.** A kernel body is *block-level* code, executed uniformly by every
//!   thread of a block (uniform loops, conditions and barriers), containing *thread regions*
//!   ([`Stmt::Threads`]) that each thread of a set runs with its own coordinates. A `split` of
//!   threads becomes two regions with complementary thread sets; a `split` of blocks, and any
//!   `split` inside a region, an `if` on the coordinate.
//! * **Barriers are statements** ([`Stmt::Sync`]) scoped to a block or a warp. In checked safe
//!   code they stand only where every thread of their scope reaches them; `unsafe` code can put
//!   them anywhere, which is why the simulator checks barrier divergence.
//! * **Types are resolved.** Literals carry their scalar type; arrays are flat with their element
//!   type and length; sizes are [`IExpr`]s over the function's size parameters.
//!
//! Host functions are sequential code that allocates, copies, launches kernels and prints.

use std::fmt;
use std::sync::Arc;
use strata_diag::{FileId, Span};
pub use strata_syntax::ast::{BinOp, DimName, ScalarTy, UnOp};

pub type LocalId = usize;
pub type FnId = usize;

/// Index arithmetic on natural numbers.
#[derive(Clone, Debug, PartialEq)]
pub enum IExpr {
    Const(u64),
    /// A size parameter of the enclosing function (bound at its call or launch).
    Param(String),
    /// The current value of a `for` counter.
    Counter(LocalId),
    BlockIdx(DimName),
    ThreadIdx(DimName),
    BlockDim(DimName),
    GridDim(DimName),
    Add(Box<IExpr>, Box<IExpr>),
    Sub(Box<IExpr>, Box<IExpr>),
    Mul(Box<IExpr>, Box<IExpr>),
    Div(Box<IExpr>, Box<IExpr>),
    Rem(Box<IExpr>, Box<IExpr>),
    Pow(Box<IExpr>, Box<IExpr>),
    /// A run-time integer (an index only `unsafe` code may use), converted to a natural number.
    Value(Box<Expr>),
}

// Constructors that fold constants and drop neutral elements, so lowered index arithmetic
// stays readable (`i * 1 + 0` is `i`).
impl std::ops::Add for IExpr {
    type Output = IExpr;
    fn add(self, b: IExpr) -> IExpr {
        match (&self, &b) {
            (IExpr::Const(0), _) => b,
            (_, IExpr::Const(0)) => self,
            (IExpr::Const(x), IExpr::Const(y)) => {
                x.checked_add(*y).map_or(IExpr::Add(Box::new(self.clone()), Box::new(b.clone())), IExpr::Const)
            }
            _ => IExpr::Add(Box::new(self), Box::new(b)),
        }
    }
}

impl std::ops::Sub for IExpr {
    type Output = IExpr;
    fn sub(self, b: IExpr) -> IExpr {
        match (&self, &b) {
            (_, IExpr::Const(0)) => self,
            (IExpr::Const(x), IExpr::Const(y)) if x >= y => IExpr::Const(x - y),
            _ => IExpr::Sub(Box::new(self), Box::new(b)),
        }
    }
}

impl std::ops::Mul for IExpr {
    type Output = IExpr;
    fn mul(self, b: IExpr) -> IExpr {
        match (&self, &b) {
            (IExpr::Const(0), _) | (_, IExpr::Const(0)) => IExpr::Const(0),
            (IExpr::Const(1), _) => b,
            (_, IExpr::Const(1)) => self,
            (IExpr::Const(x), IExpr::Const(y)) => {
                x.checked_mul(*y).map_or(IExpr::Mul(Box::new(self.clone()), Box::new(b.clone())), IExpr::Const)
            }
            _ => IExpr::Mul(Box::new(self), Box::new(b)),
        }
    }
}

impl std::ops::Div for IExpr {
    type Output = IExpr;
    fn div(self, b: IExpr) -> IExpr {
        match (&self, &b) {
            (_, IExpr::Const(1)) => self,
            (IExpr::Const(x), IExpr::Const(y)) if *y != 0 => IExpr::Const(x / y),
            _ => IExpr::Div(Box::new(self), Box::new(b)),
        }
    }
}

impl std::ops::Rem for IExpr {
    type Output = IExpr;
    fn rem(self, b: IExpr) -> IExpr {
        match (&self, &b) {
            (_, IExpr::Const(1)) => IExpr::Const(0),
            (IExpr::Const(x), IExpr::Const(y)) if *y != 0 => IExpr::Const(x % y),
            _ => IExpr::Rem(Box::new(self), Box::new(b)),
        }
    }
}

impl fmt::Display for IExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IExpr::Const(c) => write!(f, "{c}"),
            IExpr::Param(p) => write!(f, "{p}"),
            IExpr::Counter(l) => write!(f, "%{l}"),
            IExpr::BlockIdx(d) => write!(f, "blockIdx.{}", d.letter().to_ascii_lowercase()),
            IExpr::ThreadIdx(d) => write!(f, "threadIdx.{}", d.letter().to_ascii_lowercase()),
            IExpr::BlockDim(d) => write!(f, "blockDim.{}", d.letter().to_ascii_lowercase()),
            IExpr::GridDim(d) => write!(f, "gridDim.{}", d.letter().to_ascii_lowercase()),
            IExpr::Add(a, b) => write!(f, "({a} + {b})"),
            IExpr::Sub(a, b) => write!(f, "({a} - {b})"),
            IExpr::Mul(a, b) => write!(f, "({a} * {b})"),
            IExpr::Div(a, b) => write!(f, "({a} / {b})"),
            IExpr::Rem(a, b) => write!(f, "({a} % {b})"),
            IExpr::Pow(a, b) => write!(f, "({a} ^ {b})"),
            IExpr::Value(_) => write!(f, "<value>"),
        }
    }
}

/// The memory a pointer points into: the memory space of its type.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Mem {
    Cpu,
    GpuGlobal,
    GpuShared,
    GpuLocal,
    /// A generic memory space (`m: mem`), bound at the call.
    Generic,
}

impl Mem {
    /// Memory of the GPU, which host code cannot read.
    pub fn is_gpu(self) -> bool {
        matches!(self, Mem::GpuGlobal | Mem::GpuShared | Mem::GpuLocal)
    }
}

/// A resolved data type: scalars, flat arrays, tuples, references and owning pointers.
#[derive(Clone, Debug, PartialEq)]
pub enum Ty {
    Scalar(ScalarTy),
    /// `len` elements of `elem`, contiguous; nested arrays are flattened by the lowering.
    Array {
        elem: Box<Ty>,
        len: IExpr,
    },
    Tuple(Vec<Ty>),
    /// A reference to memory in the given space.
    Ref(Box<Ty>, Mem),
    /// An owning pointer (`T @ m`).
    Owned(Box<Ty>, Mem),
    /// A natural number used as a value.
    Nat,
    /// A handle of a stream of GPU work (host code only): CUDA's `cudaStream_t`. Copyable; see
    /// [`Builtin::StreamNew`] and the stream model in docs/architecture.md.
    Stream,
    /// A handle of an event recorded on a stream (host code only): CUDA's `cudaEvent_t`.
    Event,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Lit {
    Bool(bool),
    Int(u128, ScalarTy),
    Float(f64, ScalarTy),
    Unit,
    /// Text, only as the argument of `println`.
    Str(String),
}

/// A step from a root variable towards the accessed memory.
#[derive(Clone, Debug, PartialEq)]
pub enum PathStep {
    /// Follow a reference or owning pointer.
    Deref,
    Field(u32),
    /// The element at this flat offset of an array.
    Elem(IExpr),
}

/// A memory location (or, with a partial path, a contiguous sub-array).
#[derive(Clone, Debug, PartialEq)]
pub struct Place {
    pub root: LocalId,
    pub path: Vec<PathStep>,
    /// Bounds the program did not prove statically (`unsafe` run-time indices): `index < bound`.
    pub checks: Vec<(IExpr, IExpr)>,
    pub span: Span,
}

/// The prelude functions the IR knows.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Builtin {
    HeapNew,
    /// `GlobalAllocCopy(src)`: a new GPU buffer holding a copy of what `src` points to. An
    /// optional last argument (`Expr::Nat`) says how many scalars it copies, where the pointer
    /// is to a part of an array (a row, a view) whose length its type does not say.
    GlobalAllocCopy,
    /// `CopyToHost(src, dst)` / `CopyToGpu(dst, src)`: copies between host and GPU memory; an
    /// optional third argument (`Expr::Nat`) is the number of scalars, as for `GlobalAllocCopy`.
    CopyToHost,
    CopyToGpu,
    /// `copy_elems(dst, src, n)`: copies exactly `n` elements (argument 2, an `Expr::Nat`) from
    /// where pointer `src` points to where pointer `dst` points, in one step (CUDA-C's
    /// `cudaMemcpy`). `dst_gpu`/`src_gpu` say which side is GPU memory. A GPU side must hold the
    /// `n` elements (an out-of-bounds error at the call otherwise); a host side is checked as `n`
    /// element accesses by host code in order (use after free, memory space, bounds, and for the
    /// source uninitialised elements), a host-to-host copy reading and writing element by element.
    /// The two ranges may overlap (the copy is as if through a buffer).
    CopyElems {
        dst_gpu: bool,
        src_gpu: bool,
    },
    AtomicFetchAdd,
    /// `AtomicFetchAddAt(atoms, index, value, n)`: adds `value` to element `index` of the array
    /// of atomics `atoms` points to and yields the old value. Argument 3 (an `Expr::Nat`, always
    /// set by the lowering) is the length of the referenced array as its type says (a row of a
    /// 2-D array, a reference parameter into a bigger buffer): every device checks `index`
    /// against it (E0903), not against the buffer the pointer points into.
    AtomicFetchAddAt,
    AtomicLoad,
    AtomicStore,
    /// A C-style atomic read-modify-write (CUDA-C's `atomicAdd` … `atomicCAS`) of the scalar of
    /// this type that argument 0 points to: `op` with argument 1 (`Cas`: where the element equals
    /// argument 1, it becomes argument 2). The value is the element's old value. Integers wrap.
    /// Not logged by the race check, like every atomic.
    AtomicRmw(AtomicOp, ScalarTy),
    /// `AtomicAt(op, t)`: an atomic operation of the prelude's `atomic_<op>_at_<t>` family on
    /// element `index` of the array of atomics `atoms` points to; the arguments are `atoms`,
    /// `index`, the operation's values (none for `Load`, `expected` and `desired` for `Cas`) and
    /// last the referenced array's length (an `Expr::Nat`), against which every device checks
    /// `index` (E0903). `t` is the plain type the atomic holds. The value is the element's old
    /// value (`()` for `Store`). Integers wrap; float min/max keep the old value where either is
    /// NaN (`v < o`/`v > o` is false). Exempt from the race check against other atomics.
    AtomicAt(AtomicAtOp, ScalarTy),
    Print,
    /// `print`: `Print` without the final newline.
    PrintInline,
    Assert,
    /// C's `printf` of one value by one conversion: arguments `Lit::Str` (the conversion, `%8.3f`:
    /// flags `-+ 0#`, a width, a precision, `l`/`ll`/`z`, one of `d i u x X o c f F e E g G`) and
    /// the value (an integer for `d i u x X o c`, a float for the rest). For the CUDA-C front end;
    /// `sim` writes what C's library writes.
    PrintFormatted,
    FillRandom,
    /// `sqrt_f32` / `sqrt_f64`: the correctly rounded square root of a float of this type.
    Sqrt(ScalarTy),
    /// A C math function (`expf`, `fabs`, …; CUDA-C's) of floats of this type. `sim` and the
    /// `cpu` device both call the host's C math library for it, so they agree bit for bit (a
    /// GPU's functions may differ in the last bits where they are not exact).
    Math(MathFn, ScalarTy),
    /// `min_i32`, `max_u64`, `abs_i64`, …: an integer function of integers of this type.
    IntMath(IntFn, ScalarTy),
    /// `powi_f32(x, n)` / `powi_f64(x, n)`: `x` (a float of this type) to the `i32` power `n`,
    /// by squaring in a fixed order (`r *= b` for each one bit of `|n|` from the lowest, `b *= b`
    /// between), then `1 / r` for a negative `n`: each step one IEEE operation of this type, so
    /// every device gives the same bits.
    Powi(ScalarTy),
    /// `is_nan_f32` / `is_nan_f64`: whether a float of this type is a NaN (a `bool`).
    IsNan(ScalarTy),
    /// `is_finite_f32` / `is_finite_f64`: whether a float of this type is neither infinite nor
    /// a NaN (a `bool`).
    IsFinite(ScalarTy),
    /// A warp shuffle of a scalar of this type; arguments: the value and the delta, mask or lane.
    /// Executed by every lane of the warp together. `sim` and `cpu` run it as an exchange through
    /// shared memory between two warp barriers ([`crate::collectives`]); `cuda` emits `__shfl_*_sync`.
    Shuffle(ShuffleOp, ScalarTy),
    /// `ballot(p)`: a `u32` with bit l set where lane l's predicate holds (a warp collective too).
    Ballot,
    /// `arg_count()`: the number of program arguments, a `u64` (host code only, like the rest).
    ArgCount,
    /// `now_ms()`: the host's monotonic clock in milliseconds, an `f64` (only differences mean
    /// something).
    NowMs,
    /// `arg_u64(i)`: program argument `i` parsed as a decimal `u64`.
    ArgU64,
    /// `arg_f64(i)`: program argument `i` parsed as an `f64`.
    ArgF64,
    /// C's `rand()` (host code): the next number of glibc's `random()` generator (an `i32`, 0 to
    /// `RAND_MAX` = 2^31 - 1), seeded with 1 until `SeedRand`; `sim` and the C runtime compute
    /// the same sequence, which is glibc's.
    Rand,
    /// C's `srand(seed)` (a `u32`): restarts [`Builtin::Rand`]'s sequence.
    SeedRand,
    /// `output_to_stderr(on)` (a `bool`, host code): the prints after it go to the standard error
    /// (`true`) or back to the standard output (`false`); CUDA-C's `fprintf(stderr, …)`.
    OutputToStderr,
    /// C's `exit(status)` (an `i32`, host code; CUDA-C's `exit(n)` and `return n;` in `main`):
    /// ends the whole program at once, from any call depth, with the process exit status
    /// `status & 0xff`; work still in flight on streams is not waited for.
    Exit,
    /// Byte `k` of C's `argv[i]` (both `u64`; `argv[1]` is program argument 0, the first after
    /// `--`) as a C `char`, an `i32` (-128 to 127): 0 at and past the argument's end (CUDA-C's
    /// `argv[i][k]`; `i` of 0 or past the arguments is E0912).
    ArgByte,
    /// `npy_len(i)`: the extent of axis 0 of the `.npy` file named by argument `i` (a `u64`).
    NpyLen,
    /// `npy_dim(i, axis)`: the extent of axis `axis` of that file.
    NpyDim,
    /// `load_npy(i)`: a new host array read from the `.npy` file named by argument `i`, of
    /// elements of this type. Arguments: `i`, then the array's dimensions, outermost first
    /// (`Expr::Nat`, one or two), which the file's shape must equal; the value is an owning
    /// pointer to `cpu.mem` ([`npy_array_ty`]).
    LoadNpy(ScalarTy),
    /// `save_npy(i, value)`: writes the array `value` points to as an `.npy` file named by
    /// argument `i`. Arguments: `i`, the pointer, then the dimensions as for `LoadNpy`.
    SaveNpy(ScalarTy),
    /// CUDA-C's `NULL` (no arguments): a pointer to nothing; an access through it is out of
    /// bounds (E0903) on `sim`. For the CUDA-C front end only (the emitters refuse it).
    NullPtr,
    /// `p == q` of two pointers (a `Bool`): the same element of the same allocation, or both null.
    PtrEq,
    /// `p - q` of two pointers into the same allocation (an `I64`, in elements); pointers into
    /// different allocations (or one null) stop the program (E0903), as C leaves them undefined.
    /// The relational comparisons `p < q` are this compared with 0.
    PtrDiff,
    /// CUDA-C's `__threadfence()` (no arguments, unit): the thread's writes before it are seen by
    /// every thread of the grid before its writes after it. `sim`'s race check takes a fence
    /// followed by an atomic as a release that a later atomic on the same element acquires; the
    /// cpu device emits a sequentially consistent fence, CUDA `__threadfence()`.
    Fence,
    // Streams and events (host code only). Work issued on a stream (a launch with a stream,
    // `CopyAsync`, `EventRecord`) runs after the stream's earlier work and after everything the
    // host did before issuing it, but concurrently with the host and with other streams until a
    // synchronisation orders it. The default stream (a launch without a stream, the synchronous
    // copies) is CUDA's legacy default stream: it waits for every stream and every stream waits
    // for it; the synchronous copies also make the host wait. `sim` checks the races this allows.
    /// `StreamNew()`: a new stream ([`Ty::Stream`]).
    StreamNew,
    /// `StreamSync(stream)`: the host waits until the stream's work issued so far is done.
    StreamSync,
    /// `StreamDestroy(stream)`: the handle is released (work already issued still completes).
    StreamDestroy,
    /// `DeviceSync()`: the host waits until all work issued so far, on every stream, is done.
    DeviceSync,
    /// `EventNew()`: a new event ([`Ty::Event`]), not yet recorded.
    EventNew,
    /// `EventRecord(event, stream)`: the event marks the stream's work issued so far (a later
    /// record moves the mark). A stream `Expr::Lit(Lit::Unit)` is the default stream.
    EventRecord,
    /// `EventSync(event)`: the host waits until the work the event marks is done (at once for an
    /// event never recorded, as in CUDA).
    EventSync,
    /// `EventDestroy(event)`: the handle is released.
    EventDestroy,
    /// `StreamWaitEvent(stream, event)`: the stream's later work waits for the work the event
    /// marks now (without making the host wait).
    StreamWaitEvent,
    /// `CopyAsync(dst, src, n, stream)`: copies `n` elements (a `u64` or `Expr::Nat`) from the
    /// memory reference `src` points to into the memory `dst` points to, as work on `stream` (a
    /// [`Ty::Stream`] value, or `Expr::Lit(Lit::Unit)` for the default stream). Host to GPU, GPU
    /// to host or GPU to GPU (CUDA's `cudaMemcpyAsync`); the host does not wait for it.
    CopyAsync,
}

impl Builtin {
    /// The builtins of streams and events: they only issue or order asynchronous work.
    pub fn is_stream_op(self) -> bool {
        matches!(
            self,
            Builtin::StreamNew
                | Builtin::StreamSync
                | Builtin::StreamDestroy
                | Builtin::DeviceSync
                | Builtin::EventNew
                | Builtin::EventRecord
                | Builtin::EventSync
                | Builtin::EventDestroy
                | Builtin::StreamWaitEvent
                | Builtin::CopyAsync
        )
    }
}

/// The array type of `load_npy`/`save_npy` with element type `elem` and dimensions `dims`
/// (outermost first): `[[elem; dims[1]]; dims[0]]`.
pub fn npy_array_ty(elem: ScalarTy, dims: &[IExpr]) -> Ty {
    dims.iter().rev().fold(Ty::Scalar(elem), |t, n| Ty::Array { elem: Box::new(t), len: n.clone() })
}

/// The dimensions of a `load_npy`/`save_npy` call, from its arguments (`Expr::Nat` after the
/// first `skip` ones).
pub fn npy_dims(args: &[Expr], skip: usize) -> Vec<IExpr> {
    args.iter()
        .skip(skip)
        .filter_map(|a| match a {
            Expr::Nat(n) => Some(n.clone()),
            _ => None,
        })
        .collect()
}

/// The operation of [`Builtin::AtomicAt`]: a load, a store or a read-modify-write.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum AtomicAtOp {
    Load,
    Store,
    /// A load with acquire ordering (`atomic_load_acquire_at_<t>`).
    LoadAcquire,
    /// A store with release ordering (`atomic_store_release_at_<t>`).
    StoreRelease,
    Rmw(AtomicOp),
}

impl AtomicAtOp {
    /// How many values the operation takes after the index.
    /// Whether the operation stores without giving a value back.
    pub fn is_store(self) -> bool {
        matches!(self, AtomicAtOp::Store | AtomicAtOp::StoreRelease)
    }

    pub fn values(self) -> usize {
        match self {
            AtomicAtOp::Load | AtomicAtOp::LoadAcquire => 0,
            AtomicAtOp::Rmw(AtomicOp::Cas) => 2,
            AtomicAtOp::Store | AtomicAtOp::StoreRelease | AtomicAtOp::Rmw(_) => 1,
        }
    }
}

/// The operation of [`Builtin::AtomicRmw`]: the new value from the old one `o` and the arguments.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum AtomicOp {
    Add,
    Sub,
    Exch,
    Min,
    Max,
    And,
    Or,
    Xor,
    Cas,
}

impl AtomicOp {
    /// The CUDA function's name (`atomicAdd`).
    pub fn cuda_name(self) -> &'static str {
        match self {
            AtomicOp::Add => "atomicAdd",
            AtomicOp::Sub => "atomicSub",
            AtomicOp::Exch => "atomicExch",
            AtomicOp::Min => "atomicMin",
            AtomicOp::Max => "atomicMax",
            AtomicOp::And => "atomicAnd",
            AtomicOp::Or => "atomicOr",
            AtomicOp::Xor => "atomicXor",
            AtomicOp::Cas => "atomicCAS",
        }
    }
}

/// A function of [`Builtin::Math`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum MathFn {
    Fabs,
    Fmin,
    Fmax,
    Floor,
    Ceil,
    Trunc,
    Round,
    Fmod,
    Exp,
    Log,
    Sin,
    Cos,
    Tan,
    Tanh,
    Pow,
    Exp2,
    Expm1,
    Log2,
    Log10,
    Log1p,
    Asin,
    Acos,
    Atan,
    Atan2,
    Sinh,
    Cosh,
    Cbrt,
    Hypot,
    Fma,
    Copysign,
    Erf,
    Rsqrt,
}

impl MathFn {
    pub const ALL: [MathFn; 32] = [
        MathFn::Fabs,
        MathFn::Fmin,
        MathFn::Fmax,
        MathFn::Floor,
        MathFn::Ceil,
        MathFn::Trunc,
        MathFn::Round,
        MathFn::Fmod,
        MathFn::Exp,
        MathFn::Log,
        MathFn::Sin,
        MathFn::Cos,
        MathFn::Tan,
        MathFn::Tanh,
        MathFn::Pow,
        MathFn::Exp2,
        MathFn::Expm1,
        MathFn::Log2,
        MathFn::Log10,
        MathFn::Log1p,
        MathFn::Asin,
        MathFn::Acos,
        MathFn::Atan,
        MathFn::Atan2,
        MathFn::Sinh,
        MathFn::Cosh,
        MathFn::Cbrt,
        MathFn::Hypot,
        MathFn::Fma,
        MathFn::Copysign,
        MathFn::Erf,
        MathFn::Rsqrt,
    ];

    /// The C name for `double` (`exp`); `float`'s adds `f` (`expf`). `rsqrt` is CUDA's (C has
    /// none: the C emitter writes `1.0 / sqrt(x)`).
    pub fn c_name(self) -> &'static str {
        match self {
            MathFn::Fabs => "fabs",
            MathFn::Fmin => "fmin",
            MathFn::Fmax => "fmax",
            MathFn::Floor => "floor",
            MathFn::Ceil => "ceil",
            MathFn::Trunc => "trunc",
            MathFn::Round => "round",
            MathFn::Fmod => "fmod",
            MathFn::Exp => "exp",
            MathFn::Log => "log",
            MathFn::Sin => "sin",
            MathFn::Cos => "cos",
            MathFn::Tan => "tan",
            MathFn::Tanh => "tanh",
            MathFn::Pow => "pow",
            MathFn::Exp2 => "exp2",
            MathFn::Expm1 => "expm1",
            MathFn::Log2 => "log2",
            MathFn::Log10 => "log10",
            MathFn::Log1p => "log1p",
            MathFn::Asin => "asin",
            MathFn::Acos => "acos",
            MathFn::Atan => "atan",
            MathFn::Atan2 => "atan2",
            MathFn::Sinh => "sinh",
            MathFn::Cosh => "cosh",
            MathFn::Cbrt => "cbrt",
            MathFn::Hypot => "hypot",
            MathFn::Fma => "fma",
            MathFn::Copysign => "copysign",
            MathFn::Erf => "erf",
            MathFn::Rsqrt => "rsqrt",
        }
    }

    /// How many arguments it takes.
    pub fn arity(self) -> usize {
        match self {
            MathFn::Fma => 3,
            MathFn::Fmin
            | MathFn::Fmax
            | MathFn::Fmod
            | MathFn::Pow
            | MathFn::Atan2
            | MathFn::Hypot
            | MathFn::Copysign => 2,
            _ => 1,
        }
    }

    /// Whether the result is exact (correctly rounded, or no rounding at all) on every device,
    /// so that the C library, a C compiler's constant folding and CUDA all give the same bits.
    pub fn exact(self) -> bool {
        matches!(
            self,
            MathFn::Fabs
                | MathFn::Fmin
                | MathFn::Fmax
                | MathFn::Floor
                | MathFn::Ceil
                | MathFn::Trunc
                | MathFn::Round
                | MathFn::Fmod
                | MathFn::Fma
                | MathFn::Copysign
        )
    }
}

/// An integer function of [`Builtin::IntMath`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum IntFn {
    Min,
    Max,
    /// The absolute value; of the type's minimum it is the minimum itself (it wraps, on every
    /// device).
    Abs,
    /// `+`, `-`, `*` and unary `-` modulo 2^width (two's complement): never an error.
    WrappingAdd,
    WrappingSub,
    WrappingMul,
    WrappingNeg,
    /// `+` and `-` clamped to the type's minimum and maximum.
    SaturatingAdd,
    SaturatingSub,
    /// The number of leading zero bits of the value's bit pattern (the width for 0).
    Clz,
    /// The number of one bits of the value's bit pattern.
    Popcount,
    /// The high half of the double-width product (signed for signed types).
    MulHi,
}

impl IntFn {
    pub const ALL: [IntFn; 12] = [
        IntFn::Min,
        IntFn::Max,
        IntFn::Abs,
        IntFn::WrappingAdd,
        IntFn::WrappingSub,
        IntFn::WrappingMul,
        IntFn::WrappingNeg,
        IntFn::SaturatingAdd,
        IntFn::SaturatingSub,
        IntFn::Clz,
        IntFn::Popcount,
        IntFn::MulHi,
    ];

    /// The prelude's name without the type suffix (`wrapping_add` of `wrapping_add_i32`), which
    /// is also the runtime helper's (`strata_wrapping_add_i32`).
    pub fn name(self) -> &'static str {
        match self {
            IntFn::Min => "min",
            IntFn::Max => "max",
            IntFn::Abs => "abs",
            IntFn::WrappingAdd => "wrapping_add",
            IntFn::WrappingSub => "wrapping_sub",
            IntFn::WrappingMul => "wrapping_mul",
            IntFn::WrappingNeg => "wrapping_neg",
            IntFn::SaturatingAdd => "saturating_add",
            IntFn::SaturatingSub => "saturating_sub",
            IntFn::Clz => "clz",
            IntFn::Popcount => "popcount",
            IntFn::MulHi => "mul_hi",
        }
    }

    /// How many arguments it takes.
    pub fn arity(self) -> usize {
        match self {
            IntFn::Abs | IntFn::WrappingNeg | IntFn::Clz | IntFn::Popcount => 1,
            _ => 2,
        }
    }
}

/// Which lane a warp shuffle reads, for lane `l` and argument `a`; a source outside the warp
/// means the lane keeps its own value.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ShuffleOp {
    /// Lane `l + a` (own value where `l + a >= 32`).
    Down,
    /// Lane `l - a` (own value where `a > l`).
    Up,
    /// Lane `l ^ a` (own value where `a >= 32`).
    Xor,
    /// Lane `a % 32`.
    Idx,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Lit(Lit),
    Nat(IExpr),
    Load(Place),
    /// A reference to a place (`&uniq p`, `&shrd p`).
    Ref(Place),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// Integer arithmetic that must not overflow (Strata's `+ - * / % << >>` and unary `-`;
    /// docs/language.md, "Literals and operators"): `Binary` or `Unary` inside, evaluated as
    /// there, except that where both operands are integers (a `nat` converted to the other
    /// side's type) a result outside the type, a shift by the width or more, a `nat` operand
    /// that does not fit the other side's type and the negation of an unsigned nonzero value
    /// are error E0913 at the span (a division by zero stays E0909), on every device. On floats
    /// it is the plain operation. The CUDA-C front end never produces it: C's integer
    /// arithmetic is the wrapping `Binary`.
    Checked(Box<Expr>, Span),
    Cast(Box<Expr>, ScalarTy),
    Tuple(Vec<Expr>),
    ArrayList(Vec<Expr>),
    ArrayRepeat(Box<Expr>, IExpr),
    Builtin(Builtin, Vec<Expr>, Span),
    Call {
        func: FnId,
        nats: Vec<IExpr>,
        args: Vec<Expr>,
        span: Span,
    },
}

/// Which threads of the block run a region: those whose coordinate `on` lies in `lo..hi`, for
/// every constraint.
pub type ThreadSet = Vec<(IExpr, IExpr, IExpr)>;

#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    Let {
        local: LocalId,
        init: Option<Expr>,
        span: Span,
    },
    Store {
        place: Place,
        value: Expr,
    },
    Eval(Expr),
    For {
        counter: LocalId,
        lo: IExpr,
        hi: IExpr,
        body: Vec<Stmt>,
        /// The loop's `break` flag (a `Bool` local), when it has one. Its body is then
        /// `if !flag { … }` after any `continue` reset, so every iteration after the flag is set
        /// does nothing: an analysis may ignore this field, and a backend uses it only to stop
        /// the loop there instead of counting to `hi` (lower/jumps.rs).
        exit: Option<LocalId>,
        span: Span,
    },
    While {
        cond: Expr,
        body: Vec<Stmt>,
        span: Span,
    },
    If {
        cond: Expr,
        then: Vec<Stmt>,
        els: Vec<Stmt>,
        span: Span,
    },
    /// Each thread of the block in `set` runs `body` with its own locals.
    Threads {
        set: ThreadSet,
        body: Vec<Stmt>,
    },
    /// A barrier for the block (`warp == false`) or the executing thread's warp.
    Sync {
        warp: bool,
        span: Span,
    },
    Launch {
        kernel: FnId,
        nats: Vec<IExpr>,
        grid: [IExpr; 3],
        block: [IExpr; 3],
        args: Vec<Expr>,
        /// The stream the launch is issued on (a [`Ty::Stream`] value); `None`: the default
        /// stream, which waits for all other streams (see [`Builtin::StreamNew`]).
        stream: Option<Expr>,
        span: Span,
    },
    Return(Option<Expr>),
    /// The end of an owning local's scope in host code: its buffer is released (`free`, or
    /// `cudaFree` for GPU memory on the `cuda` target). The lowering emits it only for a local
    /// that is initialised and never moved out of.
    Free {
        local: LocalId,
        gpu: bool,
        span: Span,
    },
}

impl Stmt {
    /// The source span run-time errors inside this statement are reported at (`Span::DUMMY`
    /// for statements that carry none, such as `Threads` and a plain expression statement).
    pub fn span(&self) -> Span {
        match self {
            Stmt::Let { span, .. }
            | Stmt::For { span, .. }
            | Stmt::While { span, .. }
            | Stmt::If { span, .. }
            | Stmt::Sync { span, .. }
            | Stmt::Free { span, .. }
            | Stmt::Launch { span, .. } => *span,
            Stmt::Store { place, .. } => place.span,
            Stmt::Eval(Expr::Builtin(_, _, span) | Expr::Call { span, .. }) => *span,
            _ => Span::DUMMY,
        }
    }
}

impl Stmt {
    /// Calls `f` on every expression of this statement and of the statements nested in it, outer
    /// expressions before the expressions inside them (including run-time indices in places).
    pub fn visit_exprs(&self, f: &mut dyn FnMut(&Expr)) {
        match self {
            Stmt::Let { init, .. } => init.iter().for_each(|e| e.visit(f)),
            Stmt::Store { place, value } => {
                place.visit_exprs(f);
                value.visit(f);
            }
            Stmt::Eval(e) | Stmt::Return(Some(e)) => e.visit(f),
            Stmt::For { lo, hi, body, .. } => {
                lo.visit_exprs(f);
                hi.visit_exprs(f);
                body.iter().for_each(|s| s.visit_exprs(f));
            }
            Stmt::While { cond, body, .. } => {
                cond.visit(f);
                body.iter().for_each(|s| s.visit_exprs(f));
            }
            Stmt::If { cond, then, els, .. } => {
                cond.visit(f);
                then.iter().chain(els).for_each(|s| s.visit_exprs(f));
            }
            Stmt::Threads { body, .. } => body.iter().for_each(|s| s.visit_exprs(f)),
            Stmt::Launch { args, stream, .. } => args.iter().chain(stream).for_each(|e| e.visit(f)),
            Stmt::Sync { .. } | Stmt::Return(None) | Stmt::Free { .. } => {}
        }
    }
}

impl Expr {
    /// Calls `f` on this expression and every expression inside it (see [`Stmt::visit_exprs`]).
    pub fn visit(&self, f: &mut dyn FnMut(&Expr)) {
        f(self);
        match self {
            Expr::Load(p) | Expr::Ref(p) => p.visit_exprs(f),
            Expr::Nat(i) => i.visit_exprs(f),
            Expr::ArrayRepeat(x, i) => {
                x.visit(f);
                i.visit_exprs(f);
            }
            Expr::Unary(_, x) | Expr::Cast(x, _) | Expr::Checked(x, _) => x.visit(f),
            Expr::Binary(_, a, b) => {
                a.visit(f);
                b.visit(f);
            }
            Expr::Tuple(xs) | Expr::ArrayList(xs) | Expr::Builtin(_, xs, _) | Expr::Call { args: xs, .. } => {
                xs.iter().for_each(|x| x.visit(f))
            }
            Expr::Lit(_) => {}
        }
    }
}

impl Place {
    /// The whole of local `l`.
    pub fn local(l: LocalId, span: Span) -> Place {
        Place { root: l, path: Vec::new(), checks: Vec::new(), span }
    }

    fn visit_exprs(&self, f: &mut dyn FnMut(&Expr)) {
        for step in &self.path {
            if let PathStep::Elem(i) = step {
                i.visit_exprs(f);
            }
        }
        for (i, b) in &self.checks {
            i.visit_exprs(f);
            b.visit_exprs(f);
        }
    }
}

impl IExpr {
    /// The two operands of a binary operation (`Add` … `Pow`), if this is one.
    pub fn operands(&self) -> Option<(&IExpr, &IExpr)> {
        match self {
            IExpr::Add(a, b)
            | IExpr::Sub(a, b)
            | IExpr::Mul(a, b)
            | IExpr::Div(a, b)
            | IExpr::Rem(a, b)
            | IExpr::Pow(a, b) => Some((a, b)),
            _ => None,
        }
    }

    /// Whether a subtraction occurs anywhere in the expression: only then can a step leave the
    /// natural numbers (or 64 bits) on the way to a result that fits, as the checker's
    /// normalised `n*m - n*k` for `n * (m - k)` does.
    pub fn has_sub(&self) -> bool {
        match self {
            IExpr::Sub(..) => true,
            _ => self.operands().is_some_and(|(a, b)| a.has_sub() || b.has_sub()),
        }
    }

    /// `(a, op, b)` for the operations C writes infix (`+ - * / %`), if this is one.
    pub fn infix(&self) -> Option<(&IExpr, &'static str, &IExpr)> {
        match self {
            IExpr::Add(a, b) => Some((a, "+", b)),
            IExpr::Sub(a, b) => Some((a, "-", b)),
            IExpr::Mul(a, b) => Some((a, "*", b)),
            IExpr::Div(a, b) => Some((a, "/", b)),
            IExpr::Rem(a, b) => Some((a, "%", b)),
            _ => None,
        }
    }

    /// [`IExpr::operands`], mutably.
    pub fn operands_mut(&mut self) -> Option<(&mut IExpr, &mut IExpr)> {
        match self {
            IExpr::Add(a, b)
            | IExpr::Sub(a, b)
            | IExpr::Mul(a, b)
            | IExpr::Div(a, b)
            | IExpr::Rem(a, b)
            | IExpr::Pow(a, b) => Some((a, b)),
            _ => None,
        }
    }

    fn visit_exprs(&self, f: &mut dyn FnMut(&Expr)) {
        if let IExpr::Value(v) = self {
            v.visit(f);
        } else if let Some((a, b)) = self.operands() {
            a.visit_exprs(f);
            b.visit_exprs(f);
        }
    }
}

/// Where a local lives: host code, block-level code (one per block) or per thread.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Level {
    Host,
    Block,
    Thread,
}

#[derive(Clone, Debug)]
pub struct Local {
    pub name: String,
    pub ty: Ty,
    pub level: Level,
}

#[derive(Clone, Debug)]
pub enum FnKind {
    Host,
    /// Launched on a grid; `shared` lists the per-block buffers the launch allocates.
    Kernel {
        grid: [IExpr; 3],
        block: [IExpr; 3],
        shared: Vec<(LocalId, ScalarTy, IExpr)>,
        /// Blocks start in the order of their linear index (`gpu.ordered_grid`): every device
        /// hands out block numbers from a counter as blocks start, so a block may wait for a
        /// lower one.
        ordered: bool,
    },
    /// Called by one GPU thread.
    Device,
}

#[derive(Clone, Debug)]
pub struct Function {
    pub name: String,
    pub kind: FnKind,
    /// Size parameters, bound by value at each call or launch.
    pub nat_params: Vec<String>,
    /// Upper bounds of size parameters that the function's `where` clauses prove (at most
    /// 2^31 - 1; a parameter without one is absent). Every call and launch satisfies the clauses
    /// (the checker proves them, a library's launch function checks them), so backends may rely
    /// on them, e.g. for 32-bit index arithmetic.
    pub nat_max: std::collections::HashMap<String, u64>,
    /// Parameters passed by the caller, in order (a kernel's shared buffers are not among them).
    pub params: Vec<LocalId>,
    pub locals: Vec<Local>,
    pub body: Vec<Stmt>,
    /// What the function returns (`()` for kernels).
    pub ret: Ty,
    pub span: Span,
    /// The parameters of `&shrd` reference type, in order: the function reads the memory they
    /// refer to and writes it only through atomics (the checker refuses everything else), and at
    /// a launch no other argument refers to that memory uniquely (`check_argument_aliasing`).
    /// Backends use it for `const`/`__restrict__` on kernel parameters.
    pub shrd_params: Vec<LocalId>,
}

/// The innermost element type of (nested) arrays.
pub fn leaf(t: &Ty) -> &Ty {
    match t {
        Ty::Array { elem, .. } => leaf(elem),
        other => other,
    }
}

impl Function {
    /// A host function `main` without parameters or size parameters, returning `()`, with these
    /// locals and statements (programs built by hand: tests, front ends).
    pub fn host_main(locals: Vec<Local>, body: Vec<Stmt>) -> Function {
        Function {
            name: "main".into(),
            kind: FnKind::Host,
            nat_params: Vec::new(),
            nat_max: Default::default(),
            params: Vec::new(),
            locals,
            body,
            ret: Ty::Scalar(ScalarTy::Unit),
            span: Span::DUMMY,
            shrd_params: Vec::new(),
        }
    }

    /// The type of the memory a place denotes (an element offset selects a scalar of the flat
    /// array, a partial path a sub-array or field).
    pub fn place_ty(&self, p: &Place) -> Ty {
        let mut t = self.locals.get(p.root).map_or(Ty::Nat, |l| l.ty.clone());
        for step in &p.path {
            t = match (step, t) {
                (PathStep::Deref, Ty::Ref(x, _) | Ty::Owned(x, _)) => *x,
                (PathStep::Field(i), Ty::Tuple(ts)) => ts.get(*i as usize).cloned().unwrap_or(Ty::Nat),
                (PathStep::Elem(_), arr @ Ty::Array { .. }) => leaf(&arr).clone(),
                (_, other) => other,
            };
        }
        t
    }

    /// The memory space a place lies in: that of the last pointer it dereferences, else the
    /// function's own memory (a local of host code is in `cpu.mem`, of GPU code in `gpu.local`).
    pub fn place_mem(&self, p: &Place) -> Mem {
        let mut t = self.locals.get(p.root).map_or(Ty::Nat, |l| l.ty.clone());
        let mut mem = match self.kind {
            FnKind::Host => Mem::Cpu,
            _ => Mem::GpuLocal,
        };
        for step in &p.path {
            t = match (step, t) {
                (PathStep::Deref, Ty::Ref(x, m) | Ty::Owned(x, m)) => {
                    mem = m;
                    *x
                }
                (PathStep::Field(i), Ty::Tuple(ts)) => ts.get(*i as usize).cloned().unwrap_or(Ty::Nat),
                (PathStep::Elem(_), arr @ Ty::Array { .. }) => leaf(&arr).clone(),
                (_, other) => other,
            };
        }
        mem
    }
}

#[derive(Clone, Debug, Default)]
pub struct Program {
    pub functions: Vec<Function>,
    /// `main`, if the program has one.
    pub entry: Option<FnId>,
    /// The source files the spans point into, so that a backend can report run-time errors as
    /// `file:line:col`. The lowering has no source text: the driver sets this after lowering
    /// (empty where nobody did, e.g. in unit tests; then errors carry no position).
    pub sources: Vec<SourceFile>,
    /// The arrays behind references and owning pointers have no static length: their types say
    /// 0, and an allocation's length is known only at run time (the CUDA-C front end, whose
    /// pointers carry no length). Backends then take the length of a copy or an allocation from
    /// the allocation itself (`sim` always does; the C emitter keeps a registry of allocations).
    pub runtime_lengths: bool,
}

impl Program {
    /// The file name, line and column (both from 1, the column in characters) where `span`
    /// starts, if the span is known and its file is among [`Program::sources`].
    pub fn position(&self, span: Span) -> Option<(&str, u32, u32)> {
        if span.hi == 0 {
            return None;
        }
        let f = self.sources.iter().find(|f| f.file == span.file)?;
        let (line, col) = f.line_col(span.lo)?;
        Some((&f.name, line, col))
    }
}

/// One source file: its name (as the user gave it) and its text.
#[derive(Clone)]
pub struct SourceFile {
    pub file: FileId,
    pub name: String,
    pub text: Arc<str>,
}

impl SourceFile {
    pub fn new(file: FileId, name: impl Into<String>, text: impl Into<Arc<str>>) -> SourceFile {
        SourceFile { file, name: name.into(), text: text.into() }
    }

    /// The line and column (from 1; the column counts characters, as the rendered diagnostics
    /// do) of byte offset `byte`, if it lies in the text on a character boundary.
    pub fn line_col(&self, byte: u32) -> Option<(u32, u32)> {
        let byte = byte as usize;
        let before = self.text.get(..byte)?;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let line = before.matches('\n').count() + 1;
        let col = before[line_start..].chars().count() + 1;
        Some((u32::try_from(line).ok()?, u32::try_from(col).ok()?))
    }
}

/// Only the name: the IR dump (`strata emit --target ir`) should not repeat the source.
impl fmt::Debug for SourceFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SourceFile").field("file", &self.file).field("name", &self.name).finish_non_exhaustive()
    }
}
