//! The `sim` device: the reference semantics of Strata, run over the IR with every check on.
//!
//! Host code runs sequentially. A kernel launch runs each block in turn; block-level code runs
//! once per block, and a thread region runs every thread of its set as its own program that
//! stops at barriers: when every thread stopped, they must all wait at the same barrier (or all
//! be done) — otherwise the barrier diverges. Every access to GPU memory is logged with its
//! thread and *epoch* (barriers passed by its block so far); two accesses to one element, at
//! least one a write, race when they come from different blocks, or from different threads of
//! a block in the same epoch. Atomics are not logged. The log does not depend on the order in
//! which threads run, so a race is found under every schedule.

mod arr;
mod atomics;
mod cfmt;
mod crand;
pub mod finding;
mod libm;
pub mod mem;
mod npy;
mod race;
mod scalar;
mod stream_exec;
mod streams;
mod value;

pub use arr::Arr;
pub use finding::{Access, AccessKind, Finding};
pub use value::Value;

use mem::Oom;
use race::{Races, Seg};

use std::collections::HashMap;
use std::io::Write;
use strata_diag::{codes, Code, Diagnostic, Span};
use strata_ir::ir::{self, BinOp, Builtin, Expr, FnKind, IExpr, Level, Lit, PathStep, Place, Stmt};

/// How to run.
#[derive(Clone, Debug)]
pub struct Options {
    /// Thread steps a program may take before it is stopped as a runaway.
    pub max_steps: u64,
    /// `Some(seed)`: blocks and threads run in a pseudo-random order derived from the seed.
    pub random_seed: Option<u64>,
    /// Log every GPU memory access to find data races (the expensive check).
    pub check_races: bool,
    /// Wall-clock time after which the program is stopped (E0910), `--time-limit`.
    pub deadline: Option<(std::time::Instant, std::time::Duration)>,
    /// The program's arguments (`arg_u64`, `load_npy`, …): argument 0 is the first after `--`.
    pub args: Vec<std::ffi::OsString>,
}

impl Default for Options {
    fn default() -> Self {
        Options { max_steps: 200_000_000, random_seed: None, check_races: true, deadline: None, args: Vec::new() }
    }
}

/// Statistics of a run (for benchmarks).
#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub thread_steps: u64,
    pub launches: u64,
    /// Every launch in order: the kernel's name and its wall time in seconds (`strata bench`).
    pub launch_times: Vec<(String, f64)>,
    /// The program's own exit status: 0, or `status & 0xff` of its `exit(status)`
    /// ([`ir::Builtin::Exit`]).
    pub exit_status: u8,
    /// Where the program called `exit` ([`ir::Builtin::Exit`]), if it did.
    pub exit_span: Option<Span>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Space {
    Cpu,
    Global,
    Shared,
    /// A GPU thread's (or block's) own variables, once a reference to one is made.
    Local,
}

impl Space {
    fn name(self) -> &'static str {
        match self {
            Space::Cpu => "cpu.mem",
            Space::Global => "gpu.global",
            Space::Shared => "gpu.shared",
            Space::Local => "gpu.local",
        }
    }
}

struct Buffer {
    data: Arr,
    space: Space,
    name: String,
    /// Named after the variable that owns it (otherwise after what allocated it).
    named: bool,
    freed: bool,
    /// Slots per element: 1, or the fields of an array of tuples (CUDA-C structs in memory),
    /// so that messages name the element and field rather than the slot.
    stride: u64,
}

impl Buffer {
    /// Slot `off` as the program sees it: `name[i]`, or `name[i]` field `k` in an array of tuples.
    fn at(&self, off: u64) -> String {
        if self.stride > 1 {
            format!("`{}[{}]` field {}", self.name, off / self.stride, off % self.stride)
        } else {
            format!("`{}[{off}]`", self.name)
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Acc {
    block: u32,
    thread: u32,
    /// Block barriers the block had passed.
    epoch: u32,
    /// Warp barriers the thread's warp had passed (within the block epoch).
    wepoch: u32,
    span: Span,
}

impl Acc {
    fn seg(&self) -> Seg {
        Seg { block: self.block, thread: self.thread, epoch: self.epoch, wepoch: self.wepoch, fgen: 0 }
    }
}

/// Who is executing: the host, or a GPU thread (block-level code runs as the block's thread 0
/// on behalf of all, and never touches memory in checked code).
#[derive(Clone, Copy, Debug)]
struct Who {
    gpu: bool,
    block: [u64; 3],
    thread: [u64; 3],
    block_lin: u32,
    thread_lin: u32,
}

const HOST: Who = Who { gpu: false, block: [0; 3], thread: [0; 3], block_lin: 0, thread_lin: 0 };

/// A launch evaluated where it is issued: grid and block, size parameters, arguments.
struct LaunchWork {
    g: [u64; 3],
    b: [u64; 3],
    kn: HashMap<String, u64>,
    arg_values: Vec<Value>,
}

struct Launch {
    grid: [u64; 3],
    block: [u64; 3],
    nats: HashMap<String, u64>,
    epoch: u32,
    /// Warp barriers passed, per warp of the current block.
    warp_epochs: HashMap<u32, u32>,
    /// `__threadfence()`s executed, per thread of the current block (the race check's release
    /// points: `race.rs`).
    fences: HashMap<u32, u32>,
    /// Threads of the current block (linear numbers) that executed a `return`: they run no
    /// further code of the kernel.
    returned: std::collections::BTreeSet<u32>,
    /// Each thread's locals (by linear number) as its last region left them, the block-level
    /// ones blanked: a thread's variables live for the whole kernel, from one region to the
    /// next. Empty for a thread that ran no region yet; emptied, not freed, between blocks, so
    /// that the next block's threads reuse the space.
    thread_locals: Vec<Vec<Value>>,
}

/// A function activation: its locals (per thread for thread-level locals) and size parameters.
struct Frame {
    func: usize,
    locals: Vec<Value>,
    nats: HashMap<String, u64>,
}

type Fail = Box<Diagnostic>;
type R<T> = Result<T, Fail>;

fn fail(code: Code, message: impl Into<String>, span: Span, label: impl Into<String>) -> Fail {
    Box::new(Diagnostic::error(code, message, span, label))
}

fn size_overflow() -> Fail {
    fail(codes::RUN_OUT_OF_BOUNDS, "size arithmetic overflowed or went below zero", Span::DUMMY, "")
}

/// The headline of every out-of-memory error (the `cpu` device's words too).
const OUT_OF_MEMORY: &str = "out of memory";

/// An allocation of `what` that did not fit, at `span` (`Span::DUMMY`: the statement's).
fn oom(e: Oom, span: Span, what: &str) -> Fail {
    fail(
        codes::RUN_OUT_OF_BOUNDS,
        format!("{OUT_OF_MEMORY}: {} bytes requested for {what}", e.bytes),
        span,
        "this allocation",
    )
    .with_note(format!(
        "the sim device keeps the program's memory and the state of its checks within a budget: half \
             the memory available when it starts, or the bytes set in `{}`",
        mem::BUDGET_VAR
    ))
    .into()
}

/// The diagnostic of a failed argument or `.npy` call at `span`.
fn npy_fail(e: npy::NpyError, span: Span) -> Fail {
    match e {
        npy::NpyError::Msg(m) => fail(codes::RUN_PROGRAM_INPUT, m, span, "in this call"),
        npy::NpyError::Oom(e, what) => oom(e, span, what),
        npy::NpyError::Uninit(k) => fail(
            codes::RUN_UNINIT,
            format!("read of uninitialised memory: element {k} of the array was never written"),
            span,
            "written to a file here",
        ),
    }
}

fn is_oom(d: &Diagnostic) -> bool {
    d.code == codes::RUN_OUT_OF_BOUNDS && d.message.starts_with(OUT_OF_MEMORY)
}

enum Flow {
    Normal,
    Return(Value),
}

/// Elements `lo..hi` of `data` (row-major) as nested lists with dimensions `dims`, outermost
/// first: `[[1, 2], [3, 4]]`.
fn write_nested(out: &mut dyn Write, data: &Arr, lo: usize, hi: usize, dims: &[u64]) -> std::io::Result<()> {
    write!(out, "[")?;
    match dims {
        [] | [_] => {
            for i in lo..hi {
                if i > lo {
                    write!(out, ", ")?;
                }
                write!(out, "{}", data.get(i))?;
            }
        }
        [outer, inner @ ..] => {
            // One part per index of the outer dimension, empty inner lists included (`[[], []]`).
            let step = inner.iter().product::<u64>() as usize;
            for k in 0..*outer as usize {
                if k > 0 {
                    write!(out, ", ")?;
                }
                let at = lo.saturating_add(k.saturating_mul(step)).min(hi);
                write_nested(out, data, at, at.saturating_add(step).min(hi), inner)?;
            }
        }
    }
    write!(out, "]")
}

/// Runs `program` from `main`, printing to `out`, within the memory budget of [`mem`] (set by
/// `STRATA_SIM_MEMORY`, else a fraction of the memory available).
pub fn run(program: &ir::Program, opts: &Options, out: &mut dyn Write) -> Result<Stats, Box<Diagnostic>> {
    let budget = match mem::budget_from_env() {
        Ok(b) => b,
        Err(text) => {
            let span = program.entry.map_or(Span::DUMMY, |e| program.functions[e].span);
            return Err(fail(
                codes::RUN_OUT_OF_BOUNDS,
                format!("`{}` is not a memory size: `{text}`", mem::BUDGET_VAR),
                span,
                "the program was not started",
            )
            .with_note(format!(
                "set `{}` to a number of bytes, optionally followed by K, M, G or T (binary multiples): `8000000000`, `512M`, `8G`",
                mem::BUDGET_VAR
            ))
            .into());
        }
    };
    run_with_budget(program, opts, out, budget)
}

/// [`run`] with a memory budget of `budget` bytes.
pub fn run_with_budget(
    program: &ir::Program,
    opts: &Options,
    out: &mut dyn Write,
    budget: u64,
) -> Result<Stats, Box<Diagnostic>> {
    run_recording(program, opts, out, &mut std::io::stderr(), budget, &mut None)
}

/// [`run`], and on a run-time error of GPU code the threads and accesses behind it ([`Finding`]);
/// what the program prints to the standard error ([`Builtin::OutputToStderr`]) goes to `err`.
pub fn run_with_finding(
    program: &ir::Program,
    opts: &Options,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> (Result<Stats, Box<Diagnostic>>, Option<Finding>) {
    let mut finding = None;
    let r = match mem::budget_from_env() {
        Ok(budget) => run_recording(program, opts, out, err, budget, &mut finding),
        Err(_) => run(program, opts, out),
    };
    (r, finding)
}

fn run_recording(
    program: &ir::Program,
    opts: &Options,
    out: &mut dyn Write,
    err: &mut dyn Write,
    budget: u64,
    finding: &mut Option<Finding>,
) -> Result<Stats, Box<Diagnostic>> {
    let _accounts = mem::Session::start(budget);
    let Some(entry) = program.entry else {
        return Err(fail(codes::NO_MAIN, "the program has no `main` function", Span::DUMMY, "nothing to run"));
    };
    // There are no warp lanes here: shuffles and ballots exchange through shared memory.
    let mut expanded = program.clone();
    strata_ir::expand_warp_collectives(&mut expanded)?;
    let program = &expanded;
    let mut m = Machine {
        program,
        buffers: Vec::new(),
        races: Races::new(),
        launch: None,
        stats: Stats::default(),
        opts: opts.clone(),
        out,
        rng: opts.random_seed.unwrap_or(0) ^ 0x9e37_79b9_7f4a_7c15,
        pending_uninit: Vec::new(),
        finding: None,
        depth: 0,
        streams: streams::Streams::new(),
        held: Vec::new(),
        held_err: None,
        to_stderr: false,
        stderr: err,
        rand: None,
        exited: None,
    };
    let mut frame =
        Frame { func: entry, locals: vec![Value::Uninit; program.functions[entry].locals.len()], nats: HashMap::new() };
    let mut r = m.seq(&program.functions[entry].body, &mut frame, HOST);
    if r.is_ok() {
        // Work still in flight when `main` ends runs (and is checked) too.
        r = m.flush_streams().map(|()| Flow::Normal);
    }
    if let Some(status) = m.exited {
        // `exit(status)`: the program ends here, successfully as far as `sim` is concerned.
        let _ = m.out.flush();
        m.stats.exit_status = status;
        return Ok(m.stats);
    }
    *finding = m.finding.take();
    r?;
    Ok(m.stats)
}

struct Machine<'p, 'o> {
    program: &'p ir::Program,
    buffers: Vec<Buffer>,
    /// The race detector's record of the current launch.
    races: Races,
    launch: Option<Launch>,
    stats: Stats,
    opts: Options,
    out: &'o mut dyn Write,
    rng: u64,
    /// GPU reads of never-written elements, judged when their barrier interval ends: a write by
    /// another thread in the same interval makes them a race (reported by the log), otherwise
    /// they read uninitialised memory. Judging at once would depend on the order threads run in.
    pending_uninit: Vec<(usize, u64, Acc)>,
    /// The threads behind the error of GPU code that stopped the run ([`run_with_finding`]).
    finding: Option<Finding>,
    /// Calls in progress (of [`MAX_CALL_DEPTH`]).
    depth: u32,
    /// Streams, events and the asynchronous work in flight ([`streams`], [`stream_exec`]).
    streams: streams::Streams<stream_exec::Work>,
    /// Values that are not scalars, and the error, beside an [`scalar::Sc`] being evaluated.
    held: Vec<Value>,
    held_err: Option<Box<Diagnostic>>,
    /// Prints go to the standard error ([`Builtin::OutputToStderr`]).
    to_stderr: bool,
    stderr: &'o mut dyn Write,
    /// C's `rand()` state ([`Builtin::Rand`]).
    rand: Option<crand::CRand>,
    /// The status of the program's `exit(status)` ([`ir::Builtin::Exit`]), once called: the
    /// error that unwinds the run from there is not one.
    exited: Option<u8>,
}

/// Calls that may be in progress at once: deeper recursion stops the program (E0907) rather than
/// the simulator's own stack.
pub const MAX_CALL_DEPTH: u32 = 10_000;

/// A resolved place: an element of a buffer, or a path into a local.
enum Loc {
    Buf(usize, u64),
    Local(usize, Vec<LocalStep>),
}

enum LocalStep {
    Field(usize),
    Elem(u64),
}

impl Machine<'_, '_> {
    fn next_random(&mut self) -> u64 {
        splitmix64(&mut self.rng)
    }

    /// Counts a step; past the limit, or every 4096 steps with a time limit, looks further.
    #[inline(always)]
    fn step(&mut self, span: Span) -> R<()> {
        self.stats.thread_steps += 1;
        if self.stats.thread_steps > self.opts.max_steps
            || (self.stats.thread_steps & 4095 == 0 && self.opts.deadline.is_some())
        {
            return self.step_limits(span);
        }
        Ok(())
    }

    #[inline(never)]
    fn step_limits(&mut self, span: Span) -> R<()> {
        if self.stats.thread_steps > self.opts.max_steps {
            return Err(fail(
                codes::RUN_STEP_LIMIT,
                format!("the program ran more than {} steps", self.opts.max_steps),
                span,
                "still running here",
            )
            .with_note("a kernel or loop that never ends? Raise the limit with `--max-steps`")
            .into());
        }
        // Reading the clock is slow next to a step: look every 4096 steps.
        if let Some((end, limit)) = self.opts.deadline.filter(|_| self.stats.thread_steps & 4095 == 0) {
            if std::time::Instant::now() > end {
                return Err(fail(
                    codes::RUN_TIME_LIMIT,
                    format!("the program ran longer than the time limit of {} s and was stopped", limit.as_secs_f64()),
                    span,
                    "still running here",
                )
                .with_note("a kernel or loop that never ends? `--time-limit SECONDS` sets the limit")
                .into());
            }
        }
        Ok(())
    }

    // --------------------------------------------------------------------------------------------
    // Sequential execution (host code, block-level code, device functions)

    fn seq(&mut self, stmts: &[Stmt], f: &mut Frame, who: Who) -> R<Flow> {
        for s in stmts {
            if let Flow::Return(v) = self.stmt(s, f, who, None)? {
                return Ok(Flow::Return(v));
            }
        }
        Ok(Flow::Normal)
    }

    /// Executes one statement; a run-time error without a position gets the statement's.
    fn stmt(&mut self, s: &Stmt, f: &mut Frame, who: Who, threads: Option<()>) -> R<Flow> {
        if !who.gpu
            && self.streams.has_pending()
            && !stream_exec::only_issues(s, &|l| matches!(f.locals.get(l), Some(Value::Boxed { .. })))
        {
            self.flush_streams()?;
        }
        self.stmt_inner(s, f, who, threads).map_err(|mut d| {
            if d.primary.span == Span::DUMMY {
                let span = s.span();
                d.primary.span = span;
                let what = if is_oom(&d) { "this allocation" } else { "" };
                d.primary.message = match (who.gpu, what) {
                    (true, "") => format!("in thread {} of block {}", coords(who.thread), coords(who.block)),
                    (true, what) => format!("{what}, by thread {} of block {}", coords(who.thread), coords(who.block)),
                    (false, "") => "in this statement".to_string(),
                    (false, what) => what.to_string(),
                };
            }
            d
        })
    }

    fn stmt_inner(&mut self, s: &Stmt, f: &mut Frame, who: Who, _threads: Option<()>) -> R<Flow> {
        match s {
            Stmt::Let { local, init, span } => {
                let mut v = match (init, &self.program.functions[f.func].locals[*local].ty) {
                    // A scalar variable: the value computed in registers and stored in place.
                    (Some(e), ir::Ty::Scalar(t)) => match self.sc_let(*local, *t, e, f, who)? {
                        None => return Ok(Flow::Normal),
                        Some(v) => v,
                    },
                    (Some(e), _) => self.eval(e, f, who)?,
                    (None, _) => Value::Uninit,
                };
                // A number takes the type of the variable it initialises (as a C assignment does).
                if let ir::Ty::Scalar(t) = self.program.functions[f.func].locals[*local].ty {
                    if v.scalar().is_some_and(|s| s != t) || matches!(v, Value::Nat(_)) {
                        v = v.cast(t);
                    }
                }
                if let (Value::Owned { buf }, ir::Ty::Owned(t, _)) =
                    (&v, &self.program.functions[f.func].locals[*local].ty)
                {
                    // A fresh allocation of tuples: laid out flat, like all memory.
                    if !self.buffers[*buf].named && matches!(ir::leaf(t), ir::Ty::Tuple(_)) {
                        self.buffers[*buf].stride = self.slots(ir::leaf(t), f, who)?.max(1);
                        let old = std::mem::take(&mut self.buffers[*buf].data);
                        let mut data = Arr::with_capacity(old.len() as u64);
                        for x in old.iter() {
                            Self::flatten(x, ir::leaf(t), &mut data).map_err(|e| oom(e, *span, "an array"))?;
                        }
                        self.buffers[*buf].data = data;
                    }
                }
                if let Value::Owned { buf } = v {
                    if !self.buffers[buf].named {
                        self.buffers[buf].name = self.program.functions[f.func].locals[*local].name.clone();
                        self.buffers[buf].named = true;
                    }
                }
                f.locals[*local] = v;
            }
            Stmt::Store { place, value } => {
                let s = self.sc(value, f, who);
                // A variable in the frame (what `store` does for it, without locating it).
                if s.is_scalar() && place.path.is_empty() && place.checks.is_empty() {
                    if let Some(slot) = f.locals.get_mut(place.root).filter(|x| !matches!(x, Value::Boxed { .. })) {
                        let v = Self::sc_like(slot, s);
                        Self::put_scalar(slot, v);
                        return Ok(Flow::Normal);
                    }
                }
                let v = self.sc_value(s)?;
                if place.path.is_empty() && place.checks.is_empty() {
                    if let Some(slot) = f.locals.get_mut(place.root).filter(|x| !matches!(x, Value::Boxed { .. })) {
                        *slot = convert_like(slot, v);
                        return Ok(Flow::Normal);
                    }
                }
                self.store(place, v, f, who)?;
            }
            Stmt::Eval(e) => {
                self.eval(e, f, who)?;
            }
            Stmt::For { counter, lo, hi, body, .. } => {
                let lo = self.iexpr(lo, f, who)?;
                let hi = self.iexpr(hi, f, who)?;
                for i in lo..hi {
                    self.step(Span::DUMMY)?;
                    f.locals[*counter] = Value::Nat(i);
                    if let Flow::Return(v) = self.seq(body, f, who)? {
                        return Ok(Flow::Return(v));
                    }
                }
            }
            Stmt::While { cond, body, .. } => loop {
                self.step(Span::DUMMY)?;
                if !self.eval_bool(cond, f, who)? {
                    break;
                }
                if let Flow::Return(v) = self.seq(body, f, who)? {
                    return Ok(Flow::Return(v));
                }
            },
            Stmt::If { cond, then, els, .. } => {
                let b = self.eval_bool(cond, f, who)?;
                return self.seq(if b { then } else { els }, f, who);
            }
            Stmt::Threads { set, body } => {
                self.region(set, body, f, who)?;
                // Once every thread of the block has returned (a `return` under a block-uniform
                // condition that the lowering put in a thread region), the block has left the
                // kernel: its later block-level code (a barrier first of all) runs for nobody.
                if let Some(l) = self.launch.as_ref() {
                    if l.returned.len() as u64 == l.block.iter().product::<u64>() {
                        return Ok(Flow::Return(Value::Unit));
                    }
                }
            }
            Stmt::Sync { warp, span } => {
                // Block-level code runs for the whole block; threads that returned never arrive.
                if let Some(&gone) = self.launch.as_ref().and_then(|l| l.returned.iter().next()) {
                    let (bd, t) = self.launch.as_ref().map_or(([1; 3], 0), |l| (l.block, u64::from(gone)));
                    let thread = [t % bd[0], (t / bd[0]) % bd[1], t / (bd[0] * bd[1])];
                    return Err(Box::new(
                        Diagnostic::error(
                            codes::RUN_BARRIER_DIVERGENCE,
                            "barrier divergence: not every thread reaches this barrier",
                            *span,
                            format!("block {} waits here", coords(who.block)),
                        )
                        .with_note(format!(
                            "thread {} of block {} returned before it: a deadlock on a GPU",
                            coords(thread),
                            coords(who.block)
                        )),
                    ));
                }
                self.settle_uninit()?;
                // Block-level barrier: every thread of the block is here by construction.
                if !*warp {
                    if let Some(l) = self.launch.as_mut() {
                        l.epoch += 1;
                    }
                }
            }
            Stmt::Free { local, span, .. } => {
                // Later uses of the buffer (none in checked code) are use-after-free errors.
                let start = match f.locals.get(*local) {
                    // Only unsafe code (CUDA-C) can release through a reference.
                    Some(Value::Ref { buf, off: 0 }) => Some(Value::Owned { buf: *buf }),
                    _ => None,
                };
                match start.as_ref().or(f.locals.get(*local)) {
                    Some(Value::Owned { buf }) if self.buffers[*buf].freed => {
                        let msg = format!("`{}` freed a second time", self.buffers[*buf].name);
                        return Err(fail(codes::RUN_USE_AFTER_FREE, msg, *span, "this release"));
                    }
                    Some(Value::Owned { buf }) => {
                        self.stream_free(*buf, *span)?;
                        self.buffers[*buf].freed = true;
                        self.buffers[*buf].data = Arr::new();
                    }
                    Some(Value::Ref { buf, .. }) => {
                        let msg =
                            format!("release of a pointer into `{}` that is not its start", self.buffers[*buf].name);
                        return Err(fail(codes::RUN_USE_AFTER_FREE, msg, *span, "this release"));
                    }
                    _ => {}
                }
            }
            Stmt::Launch { kernel, nats, grid, block, args, span, stream } => {
                let work = self.prepare_launch(*kernel, nats, grid, block, args, *span, f)?;
                match stream {
                    Some(st) => {
                        let st = self.eval(st, f, who)?;
                        self.issue_launch(*kernel, work, st, *span)?;
                    }
                    None => {
                        // The default stream: after all earlier work, which runs first.
                        if self.streams.active {
                            self.flush_streams()?;
                            self.streams.default_op();
                        }
                        self.run_launch(*kernel, work, *span)?;
                    }
                }
            }
            Stmt::Return(v) => {
                let v = match v {
                    Some(e) => self.eval(e, f, who)?,
                    None => Value::Unit,
                };
                return Ok(Flow::Return(v));
            }
        }
        Ok(Flow::Normal)
    }

    // --------------------------------------------------------------------------------------------
    // Kernels

    /// The launch's shape, sizes and arguments, evaluated where it is issued.
    #[allow(clippy::too_many_arguments)]
    fn prepare_launch(
        &mut self,
        kernel: usize,
        nats: &[IExpr],
        grid: &[IExpr; 3],
        block: &[IExpr; 3],
        args: &[Expr],
        span: Span,
        f: &mut Frame,
    ) -> R<LaunchWork> {
        let func = &self.program.functions[kernel];
        if !matches!(func.kind, FnKind::Kernel { .. }) {
            return Err(fail(codes::UNSUPPORTED, format!("`{}` is not a kernel", func.name), span, "launched here"));
        };
        let mut g = [1u64; 3];
        let mut b = [1u64; 3];
        for i in 0..3 {
            g[i] = self.iexpr(&grid[i], f, HOST)?;
            b[i] = self.iexpr(&block[i], f, HOST)?;
        }
        launch_limits(g, b, span)?;
        let mut kn = HashMap::new();
        for (name, e) in func.nat_params.iter().zip(nats) {
            kn.insert(name.clone(), self.iexpr(e, f, HOST)?);
        }
        let mut arg_values = Vec::new();
        for a in args {
            arg_values.push(self.eval(a, f, HOST)?);
        }
        for v in &arg_values {
            if let Value::Ref { buf, .. } | Value::Owned { buf } = v {
                if self.buffers[*buf].space == Space::Cpu {
                    let name = self.buffers[*buf].name.clone();
                    return Err(fail(
                        codes::RUN_MEMORY_SPACE,
                        format!("a kernel was given host memory `{name}`"),
                        span,
                        "launched with a pointer to `cpu.mem`",
                    ));
                }
            }
        }
        Ok(LaunchWork { g, b, kn, arg_values })
    }

    /// Runs a launch prepared by [`Self::prepare_launch`].
    fn run_launch(&mut self, kernel: usize, work: LaunchWork, span: Span) -> R<()> {
        let t0 = std::time::Instant::now();
        let LaunchWork { g, b, kn, arg_values } = work;
        let func = &self.program.functions[kernel];
        let FnKind::Kernel { shared, .. } = &func.kind else {
            return Err(fail(codes::UNSUPPORTED, format!("`{}` is not a kernel", func.name), span, "launched here"));
        };
        self.stats.launches += 1;
        let used = |d: [u64; 3]| {
            if d[2] > 1 {
                3
            } else if d[1] > 1 {
                2
            } else {
                1
            }
        };
        LAUNCH_DIMS.with(|x| x.set(used(g).max(used(b))));
        self.launch = Some(Launch {
            grid: g,
            block: b,
            nats: kn.clone(),
            epoch: 0,
            warp_epochs: HashMap::new(),
            fences: HashMap::new(),
            returned: Default::default(),
            thread_locals: Vec::new(),
        });
        self.races.begin(b[0].saturating_mul(b[1]).saturating_mul(b[2]));
        let blocks = g[0].saturating_mul(g[1]).saturating_mul(g[2]);
        // Blocks run in order, or in a random order that is made (and charged) first.
        let mut random_order = Vec::new();
        let _order_charge = if self.opts.random_seed.is_some() {
            mem::reserve(&mut random_order, blocks)
                .map_err(|e| oom(e, span, &format!("the random order of the launch's {blocks} blocks")))?;
            random_order.extend(0..blocks);
            self.shuffle(&mut random_order);
            Some(mem::Hold::adopt(mem::bytes_of(&random_order)))
        } else {
            None
        };
        for k in 0..blocks {
            let lin = random_order.get(k as usize).copied().unwrap_or(k);
            let bidx = [lin % g[0], (lin / g[0]) % g[1], lin / (g[0] * g[1])];
            let mut frame = Frame { func: kernel, locals: vec![Value::Uninit; func.locals.len()], nats: kn.clone() };
            for (p, v) in func.params.iter().zip(&arg_values) {
                frame.locals[*p] = v.try_clone().map_err(|e| oom(e, span, "an argument of the kernel"))?;
            }
            // Shared memory: fresh and uninitialised for every block.
            let mut shared_bufs = Vec::new();
            for (local, ty, len) in shared {
                let n = self.iexpr(len, &mut frame, HOST)?;
                let name = &func.locals[*local].name;
                let data = Arr::uninit(*ty, n).map_err(|e| {
                    let block = format!("block {}", coords(bidx));
                    oom(e, span, &format!("shared memory `{name}` of {block}"))
                })?;
                let id = self.alloc(data, Space::Shared, name.clone());
                self.buffers[id].named = true;
                frame.locals[*local] = Value::Ref { buf: id, off: 0 };
                shared_bufs.push(id);
            }
            if let Some(l) = self.launch.as_mut() {
                l.epoch = 0;
                l.warp_epochs.clear();
                l.fences.clear();
                l.returned.clear();
                for v in &mut l.thread_locals {
                    v.clear();
                }
            }
            let who = Who { gpu: true, block: bidx, thread: [0; 3], block_lin: lin as u32, thread_lin: 0 };
            self.seq(&func.body, &mut frame, who)?;
            self.settle_uninit()?;
            for id in shared_bufs {
                self.buffers[id].freed = true;
                self.buffers[id].data = Arr::new();
                self.races.forget(id);
            }
        }
        self.launch = None;
        self.races.clear();
        self.stats.launch_times.push((func.name.clone(), t0.elapsed().as_secs_f64()));
        Ok(())
    }

    fn shuffle(&mut self, v: &mut [u64]) {
        for i in (1..v.len()).rev() {
            let j = (self.next_random() % (i as u64 + 1)) as usize;
            v.swap(i, j);
        }
    }

    /// Runs a thread region: every thread of `set` in this block, each stopping at barriers.
    fn region(&mut self, set: &ir::ThreadSet, body: &[Stmt], f: &mut Frame, who: Who) -> R<()> {
        let Some(l) = self.launch.as_ref() else {
            return Err(fail(codes::UNSUPPORTED, "a thread region outside a kernel", Span::DUMMY, ""));
        };
        let bd = l.block;
        let total = bd[0] * bd[1] * bd[2];
        let returned = l.returned.clone();
        let mut members = Vec::new();
        let threads = |e| oom(e, Span::DUMMY, &format!("the {total} threads of block {}", coords(who.block)));
        for lin in 0..total {
            // A thread that returned has left the kernel.
            if returned.contains(&(lin as u32)) {
                continue;
            }
            let t = [lin % bd[0], (lin / bd[0]) % bd[1], lin / (bd[0] * bd[1])];
            let tw = Who { thread: t, thread_lin: lin as u32, ..who };
            let mut inside = true;
            for (on, lo, hi) in set {
                let c = self.iexpr(on, f, tw)?;
                if c < self.iexpr(lo, f, tw)? || c >= self.iexpr(hi, f, tw)? {
                    inside = false;
                    break;
                }
            }
            if inside {
                mem::reserve_one(&mut members).map_err(threads)?;
                members.push(tw);
            }
        }
        // What the simulator keeps for each thread of the region, charged while it runs.
        let _members_charge = mem::Hold::adopt(mem::bytes_of(&members));
        let per_thread = std::mem::size_of::<(Who, usize, Vec<Value>)>()
            + std::mem::size_of::<Option<Stop>>()
            + 2 * std::mem::size_of::<u64>()
            + f.locals.len() * std::mem::size_of::<Value>();
        let _state_charge = mem::Hold::charge(members.len() as u64 * per_thread as u64).map_err(threads)?;
        let ops = compile(body);
        // Each op's position, read beside the ops (a thread looks at it before every op).
        let spans: Vec<Option<Span>> = ops.iter().map(op_span).collect();
        // Each thread: its own copy of the frame with its thread-level locals, and a program
        // counter.
        let func = &self.program.functions[f.func];
        let mut saved = self.launch.as_mut().map(|l| std::mem::take(&mut l.thread_locals)).unwrap_or_default();
        // An entry per thread up to the last member (24 bytes each, less than `members` took).
        let upto = members.last().map_or(0, |w| w.thread_lin as usize + 1);
        if saved.len() < upto {
            saved.resize_with(upto, Vec::new);
        }
        let block_level: Vec<usize> =
            (0..func.locals.len()).filter(|i| local_level(func, *i) != Level::Thread).collect();
        let mut states: Vec<(Who, usize, Vec<Value>)> = Vec::with_capacity(members.len());
        for w in &members {
            // A thread's own copy of the frame, with its thread-level locals as it left them.
            let what = || format!("the variables of thread {} of block {}", coords(w.thread), coords(w.block));
            let mut locals = std::mem::take(&mut saved[w.thread_lin as usize]);
            if locals.len() == f.locals.len() {
                // Its thread-level locals are in place: the block-level ones come from the frame.
                for i in &block_level {
                    copy_into(&mut locals[*i], &f.locals[*i]).map_err(|e| oom(e, Span::DUMMY, &what()))?;
                }
            } else {
                locals.clear();
                locals.resize_with(f.locals.len(), || Value::Uninit);
                for (slot, v) in locals.iter_mut().zip(&f.locals) {
                    copy_into(slot, v).map_err(|e| oom(e, Span::DUMMY, &what()))?;
                }
            }
            states.push((*w, 0usize, locals));
        }
        let mut order: Vec<usize> = Vec::with_capacity(states.len());
        let mut stops: Vec<Option<Stop>> = vec![None; states.len()];
        loop {
            order.clear();
            order.extend(0..states.len());
            if self.opts.random_seed.is_some() {
                let mut o: Vec<u64> = order.iter().map(|x| *x as u64).collect();
                self.shuffle(&mut o);
                order = o.into_iter().map(|x| x as usize).collect();
            }
            stops.iter_mut().for_each(|s| *s = None);
            for &i in &order {
                let (w, pc, locals) = &mut states[i];
                // The thread runs in the block's frame with its own locals swapped in (the size
                // parameters are the block's: no copy of them per thread).
                std::mem::swap(&mut f.locals, locals);
                let r = self.run_thread(&ops, &spans, pc, f, *w, &mut stops[i]);
                std::mem::swap(&mut f.locals, locals);
                if let Err(d) = &r {
                    self.note_thread(d.primary.span, *w, AccessKind::Executes);
                }
                r?;
            }
            self.settle_uninit()?;
            // Where did everyone stop?
            let at: Vec<&Stop> = stops.iter().flatten().collect();
            if at.is_empty() {
                break;
            }
            // A warp barrier concerns only its warp: warps whose lanes all wait at the same warp
            // barrier go on, while the threads at another barrier (a block barrier the other
            // warps reach first) wait for them.
            // Whether all threads of each warp stopped at the same place (by warp, with the
            // index of its first thread).
            let mixed = stops.iter().any(|s| !same_stop(s, &stops[0]));
            let any_warp_barrier = stops.iter().flatten().any(|s| s.warp);
            // Only warp barriers and threads stopped at different places need it.
            let mut warps: HashMap<u32, (usize, bool)> = HashMap::new();
            if mixed || any_warp_barrier {
                for (i, (w, _, _)) in states.iter().enumerate() {
                    let (first, uniform) = warps.entry(w.thread_lin / 32).or_insert((i, true));
                    *uniform = *uniform && same_stop(&stops[i], &stops[*first]);
                }
            }
            if mixed {
                let ready: std::collections::BTreeSet<u32> = warps
                    .iter()
                    .filter(|(_, (first, uniform))| *uniform && matches!(&stops[*first], Some(s) if s.warp))
                    .map(|(w, _)| *w)
                    .collect();
                if !ready.is_empty() {
                    if let Some(l) = self.launch.as_mut() {
                        for w in &ready {
                            *l.warp_epochs.entry(*w).or_insert(0) += 1;
                        }
                    }
                    for (st, _) in states
                        .iter_mut()
                        .zip(&stops)
                        .filter(|((w, _, _), s)| s.is_some() && ready.contains(&(w.thread_lin / 32)))
                    {
                        st.1 += 1; // past the warp barrier
                    }
                    continue;
                }
            }
            let first = stops.iter().position(|s| s.is_some()).unwrap_or(0);
            let Stop { pc: op, warp, span, instance } =
                stops[first].clone().unwrap_or(Stop { pc: 0, instance: Vec::new(), span: Span::DUMMY, warp: false });
            // The dynamic barrier: the same barrier in the same iteration of the loops around it.
            let at_first = stops[first].clone();
            let differs = |s: &Option<Stop>| !same_stop(s, &at_first);
            // A block barrier needs every thread of the block; a warp barrier every lane of each warp present.
            let gone = self.launch.as_ref().map(|l| l.returned.clone()).unwrap_or_default();
            let divergent = if warp {
                warps.values().any(|(_, uniform)| !uniform)
                    || stops
                        .iter()
                        .zip(&states)
                        .any(|(s, (w, _, _))| s.is_some() && gone.iter().any(|g| g / 32 == w.thread_lin / 32))
            } else {
                stops.iter().any(differs) || (members.len() as u64) < total
            };
            if divergent {
                let waiting = states[first].0;
                let other = stops.iter().position(differs).map(|i| (states[i].0, stops[i].clone()));
                self.note_divergence(waiting, span, &other, &gone, bd);
                let mut d = Diagnostic::error(
                    codes::RUN_BARRIER_DIVERGENCE,
                    "barrier divergence: not every thread reaches this barrier",
                    span,
                    format!("thread {} of block {} waits here", coords(waiting.thread), coords(waiting.block)),
                );
                match other {
                    Some((w, Some(Stop { pc: op2, span: s2, instance: inst2, .. }))) => {
                        let what = if op2 == op {
                            format!("at this barrier in another loop iteration (counters {inst2:?}, not {instance:?})")
                        } else {
                            "at this other barrier".to_string()
                        };
                        d = d.with_label(
                            s2,
                            format!("thread {} of block {} waits {what}", coords(w.thread), coords(w.block)),
                        );
                    }
                    Some((w, None)) => {
                        d = d.with_note(format!(
                            "thread {} of block {} finished without reaching it: a deadlock on a GPU",
                            coords(w.thread),
                            coords(w.block)
                        ));
                    }
                    None if !gone.is_empty() => {
                        let t = u64::from(gone.iter().next().copied().unwrap_or(0));
                        let thread = [t % bd[0], (t / bd[0]) % bd[1], t / (bd[0] * bd[1])];
                        d = d.with_note(format!(
                            "thread {} of block {} returned before it: a deadlock on a GPU",
                            coords(thread),
                            coords(waiting.block)
                        ));
                    }
                    None => {
                        d = d.with_note(format!(
                            "only {} of the block's {total} threads execute this code (a `split` or a condition); the others never arrive: a deadlock on a GPU",
                            members.len()
                        ));
                    }
                }
                return Err(Box::new(d));
            }
            if let Some(l) = self.launch.as_mut() {
                if warp {
                    let warps: std::collections::BTreeSet<u32> = states
                        .iter()
                        .zip(&stops)
                        .filter(|(_, s)| s.is_some())
                        .map(|((w, _, _), _)| w.thread_lin / 32)
                        .collect();
                    for w in warps {
                        *l.warp_epochs.entry(w).or_insert(0) += 1;
                    }
                } else {
                    l.epoch += 1;
                }
            }
            for (st, s) in states.iter_mut().zip(&stops) {
                if s.is_some() {
                    st.1 += 1; // past the barrier
                }
            }
        }
        // Block-level locals written inside the region are not visible outside (lowering makes
        // a block-level local that thread code writes thread-level); thread-level locals live on.
        for (w, _, mut locals) in states {
            for i in &block_level {
                locals[*i] = Value::Uninit;
            }
            saved[w.thread_lin as usize] = locals;
        }
        if let Some(l) = self.launch.as_mut() {
            l.thread_locals = saved;
        }
        Ok(())
    }

    /// Runs one thread from `pc` until a barrier (where it stopped in `stop`) or the end
    /// (`stop` left `None`). The stop is written in place: a `Stop` returned in a `Result` was
    /// copied through memory and read back in other sizes (a stall per thread and barrier).
    #[inline(always)]
    fn run_thread(
        &mut self,
        ops: &[Op],
        spans: &[Option<Span>],
        pc: &mut usize,
        f: &mut Frame,
        who: Who,
        stop: &mut Option<Stop>,
    ) -> R<()> {
        let mut last = Span::DUMMY;
        while *pc < ops.len() {
            // Errors without a position (the step limit, arithmetic) get the loop or statement.
            if let Some(Some(sp)) = spans.get(*pc) {
                last = *sp;
            }
            self.step(last).map_err(|d| at_thread(d, last, who))?;
            match &ops[*pc] {
                Op::Stmt(s) => {
                    if let Flow::Return(_) = self.stmt(s, f, who, None)? {
                        // The thread leaves the kernel: later regions of its block skip it.
                        if let Some(l) = self.launch.as_mut() {
                            l.returned.insert(who.thread_lin);
                        }
                        *pc = ops.len();
                        return Ok(());
                    }
                    *pc += 1;
                }
                Op::JumpIfNot(c, to, _) => {
                    let b = self.eval_bool(c, f, who).map_err(|d| at_thread(d, last, who))?;
                    *pc = if b { *pc + 1 } else { *to };
                }
                Op::Jump(to) => *pc = *to,
                Op::ForInit(c, lo) => {
                    f.locals[*c] = Value::Nat(self.iexpr(lo, f, who)?);
                    *pc += 1;
                }
                Op::ForTest(c, hi, exit, _) => {
                    let i = f.locals[*c].as_u64().unwrap_or(0);
                    *pc = if i < self.iexpr(hi, f, who)? { *pc + 1 } else { *exit };
                }
                Op::ForNext(c, back) => {
                    let i = f.locals[*c].as_u64().unwrap_or(0);
                    f.locals[*c] = Value::Nat(i + 1);
                    *pc = *back;
                }
                Op::Barrier(warp, span, loops) => {
                    // Most barriers are in no `for` loop (CUDA-C's loops are `while`s): their stop
                    // is written directly (an empty list made apart was copied in and stalled).
                    if loops.is_empty() {
                        *stop = Some(Stop { pc: *pc, instance: Vec::new(), span: *span, warp: *warp });
                    } else {
                        let instance = loops.iter().map(|c| f.locals[*c].as_u64().unwrap_or(0)).collect();
                        *stop = Some(Stop { pc: *pc, instance, span: *span, warp: *warp });
                    }
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    // --------------------------------------------------------------------------------------------
    // Expressions

    /// The value of a size or index expression. A size is a natural number below 2^64; the
    /// steps to it are too, except that in host code a subtraction may cancel what a step before
    /// it took beyond 64 bits (the checker normalises `n * (m - k)` to `n*m - n*k`): then the
    /// expression is evaluated again in 128 bits, and only the result must fit. Kernel index
    /// arithmetic stays 64-bit per step, as the C and CUDA of kernels compute it (E0903 where a
    /// step overflows).
    #[inline]
    fn iexpr(&mut self, e: &IExpr, f: &mut Frame, who: Who) -> R<u64> {
        match self.iexpr_u64(e, f, who) {
            Err(err) if !who.gpu && e.has_sub() => match self.iexpr_wide(e, f, who) {
                Ok(v) => u64::try_from(v).map_err(|_| size_overflow()),
                Err(_) => Err(err),
            },
            r => r,
        }
    }

    /// [`Self::iexpr`] in 128-bit signed arithmetic (a step beyond it is an error).
    fn iexpr_wide(&mut self, e: &IExpr, f: &mut Frame, who: Who) -> R<i128> {
        let Some((a, b)) = e.operands() else { return self.iexpr_u64(e, f, who).map(i128::from) };
        let (x, y) = (self.iexpr_wide(a, f, who)?, self.iexpr_wide(b, f, who)?);
        let result = match e {
            IExpr::Add(..) => x.checked_add(y),
            IExpr::Sub(..) => x.checked_sub(y),
            IExpr::Mul(..) => x.checked_mul(y),
            IExpr::Div(..) if x >= 0 && y > 0 => Some(x / y),
            IExpr::Rem(..) if x >= 0 && y > 0 => Some(x % y),
            IExpr::Pow(..) if y >= 0 => u32::try_from(y).ok().and_then(|y| x.checked_pow(y)),
            _ => None,
        };
        result.ok_or_else(size_overflow)
    }

    fn iexpr_u64(&mut self, e: &IExpr, f: &mut Frame, who: Who) -> R<u64> {
        let l = self.launch.as_ref();
        let dims = |i: ir::DimName| match i {
            ir::DimName::X => 0,
            ir::DimName::Y => 1,
            ir::DimName::Z => 2,
        };
        let mut bin = |me: &mut Self, a: &IExpr, b: &IExpr| -> R<(u64, u64)> {
            Ok((me.iexpr_u64(a, f, who)?, me.iexpr_u64(b, f, who)?))
        };
        Ok(match e {
            IExpr::Const(c) => *c,
            IExpr::Param(p) => match f.nats.get(p).copied().or_else(|| l.and_then(|l| l.nats.get(p).copied())) {
                Some(v) => v,
                None => return Err(fail(codes::UNSUPPORTED, format!("size `{p}` has no value"), Span::DUMMY, "")),
            },
            IExpr::Counter(c) => f.locals[*c].as_u64().unwrap_or(0),
            IExpr::BlockIdx(d) => who.block[dims(*d)],
            IExpr::ThreadIdx(d) => who.thread[dims(*d)],
            IExpr::BlockDim(d) => l.map_or(1, |l| l.block[dims(*d)]),
            IExpr::GridDim(d) => l.map_or(1, |l| l.grid[dims(*d)]),
            IExpr::Add(a, b)
            | IExpr::Sub(a, b)
            | IExpr::Mul(a, b)
            | IExpr::Div(a, b)
            | IExpr::Rem(a, b)
            | IExpr::Pow(a, b) => {
                let (x, y) = bin(self, a, b)?;
                let result = match e {
                    IExpr::Add(..) => x.checked_add(y),
                    IExpr::Sub(..) => x.checked_sub(y),
                    IExpr::Mul(..) => x.checked_mul(y),
                    IExpr::Div(..) => x.checked_div(y),
                    IExpr::Rem(..) => x.checked_rem(y),
                    // 0 and 1 to any power (the exponent may exceed 32 bits) never overflow.
                    _ if x <= 1 => Some(if y == 0 { 1 } else { x }),
                    _ => u32::try_from(y).ok().and_then(|y| x.checked_pow(y)),
                };
                result.ok_or_else(size_overflow)?
            }
            IExpr::Value(v) => self.sc_index(v, f, who)?,
        })
    }

    fn eval_bool(&mut self, e: &Expr, f: &mut Frame, who: Who) -> R<bool> {
        self.sc_bool(e, f, who)
    }

    /// The value of `e`. The frequent expressions are here; the rest in [`Self::eval_rest`], so
    /// that this function, which recurses for every node, keeps a small frame.
    fn eval(&mut self, e: &Expr, f: &mut Frame, who: Who) -> R<Value> {
        // Every arm returns on its own: a value merged from all arms into one temporary was
        // copied out in pieces of 1, 4, 2 and 1 bytes, and the caller's whole-word loads of it
        // stalled (store forwarding).
        match e {
            // The frequent integer types without `cast` (the same truncation as `as`).
            Expr::Lit(Lit::Int(v, ir::ScalarTy::U32)) => Ok(Value::U32(*v as u32)),
            Expr::Lit(Lit::Int(v, ir::ScalarTy::I32)) => Ok(Value::I32(*v as i32)),
            Expr::Lit(Lit::Int(v, ir::ScalarTy::U64)) => Ok(Value::U64(*v as u64)),
            Expr::Lit(Lit::Int(v, ir::ScalarTy::I64)) => Ok(Value::I64(*v as i64)),
            Expr::Lit(Lit::Int(v, t)) => Ok(Value::U64(*v as u64).cast(*t)),
            Expr::Lit(Lit::Bool(b)) => Ok(Value::Bool(*b)),
            Expr::Lit(Lit::Unit) => Ok(Value::Unit),
            Expr::Lit(Lit::Str(text)) => Ok(Value::Str(text.clone())),
            Expr::Lit(Lit::Float(v, t)) => Ok(Value::F64(*v).cast(*t)),
            Expr::Nat(i) => Ok(Value::Nat(self.iexpr(i, f, who)?)),
            Expr::Load(p) => self.load(p, f, who),
            Expr::Ref(p) => match self.locate(p, f, who)? {
                Loc::Buf(buf, off) => Ok(Value::Ref { buf, off }),
                Loc::Local(root, path) => self.box_local(root, &path, p.span, f, who),
            },
            // Operators and casts: computed in registers (`scalar.rs`).
            Expr::Unary(..) | Expr::Binary(..) | Expr::Cast(..) => {
                let s = self.sc(e, f, who);
                self.sc_value(s)
            }
            _ => self.eval_rest(e, f, who),
        }
    }

    #[inline(never)]
    fn eval_rest(&mut self, e: &Expr, f: &mut Frame, who: Who) -> R<Value> {
        Ok(match e {
            Expr::Tuple(xs) => {
                let mut vs = Vec::new();
                for x in xs {
                    vs.push(self.eval(x, f, who)?);
                }
                Value::Tuple(vs)
            }
            Expr::ArrayList(xs) => {
                let mut vs = Arr::with_capacity(xs.len() as u64);
                for x in xs {
                    match self.eval(x, f, who)? {
                        Value::Array(inner) => vs.extend(&inner, 0, inner.len()),
                        v => vs.push(v),
                    }
                    .map_err(|e| oom(e, Span::DUMMY, "an array"))?;
                }
                Value::Array(Box::new(vs))
            }
            Expr::ArrayRepeat(x, n) => {
                let v = self.eval(x, f, who)?;
                let n = self.iexpr(n, f, who)?;
                let what = || match (&v, v.scalar()) {
                    (_, Some(t)) => format!("an array of {n} `{}`", t.name()),
                    (Value::Array(a), _) => format!("an array of {n} times {} elements", a.len()),
                    _ => format!("an array of {n} elements"),
                };
                Value::Array(Box::new(Arr::repeat(&v, n).map_err(|e| oom(e, Span::DUMMY, &what()))?))
            }
            Expr::Builtin(b, args, span) => self.builtin(*b, args, *span, f, who)?,
            Expr::Call { func, nats, args, span } => {
                let callee = &self.program.functions[*func];
                let mut frame =
                    Frame { func: *func, locals: vec![Value::Uninit; callee.locals.len()], nats: HashMap::new() };
                for (name, e) in callee.nat_params.iter().zip(nats) {
                    let v = self.iexpr(e, f, who)?;
                    frame.nats.insert(name.clone(), v);
                }
                for (p, a) in callee.params.iter().zip(args) {
                    frame.locals[*p] = self.eval(a, f, who)?;
                }
                self.step(*span)?;
                if self.depth >= MAX_CALL_DEPTH {
                    return Err(fail(
                        codes::RUN_STEP_LIMIT,
                        format!("more than {MAX_CALL_DEPTH} calls in progress at once"),
                        *span,
                        "this call",
                    )
                    .with_note("a recursion that never ends?")
                    .into());
                }
                self.depth += 1;
                let r = self.seq(&callee.body, &mut frame, who);
                self.depth -= 1;
                match r? {
                    Flow::Return(v) => v,
                    Flow::Normal => Value::Unit,
                }
            }
            _ => self.eval(e, f, who)?,
        })
    }

    fn builtin(&mut self, b: Builtin, args: &[Expr], span: Span, f: &mut Frame, who: Who) -> R<Value> {
        // Literal text (the pieces of a `printf` around its conversions) printed from the
        // program without copying it into a `Value` and a list of arguments first.
        if let (Builtin::Print | Builtin::PrintInline, [Expr::Lit(Lit::Str(text))]) = (b, args) {
            let end = if b == Builtin::Print { "\n" } else { "" };
            let w: &mut dyn Write = if self.to_stderr { &mut *self.stderr } else { &mut *self.out };
            let _ = write!(w, "{text}{end}");
            return Ok(Value::Unit);
        }
        let mut vs = Vec::new();
        for a in args {
            // An argument that does not fit in memory (`CpuHeap::new([0; N])`) is this call's
            // allocation.
            vs.push(self.eval(a, f, who).map_err(|mut d| {
                if d.primary.span == Span::DUMMY && is_oom(&d) {
                    d.primary.span = span;
                }
                d
            })?);
        }
        let arg = |i: usize| vs.get(i).cloned().unwrap_or(Value::Unit);
        // An argument index, axis or dimension (a `u64` or size; never negative).
        let index = |i: usize| vs.get(i).and_then(Value::as_u64).unwrap_or(u64::MAX);
        Ok(match b {
            Builtin::Rand => Value::I32(self.rand.get_or_insert_with(|| crand::CRand::new(1)).next()),
            Builtin::SeedRand => {
                self.rand = Some(crand::CRand::new(arg(0).as_u64().unwrap_or(1) as u32));
                Value::Unit
            }
            Builtin::Exit => {
                if who.gpu {
                    return Err(fail(codes::RUN_ASSERTION, "`exit` in GPU code", span, "called here"));
                }
                let _ = self.out.flush();
                self.to_stderr = false;
                // The status as C's `exit` passes it on: its low byte.
                let status = match arg(0) {
                    Value::I32(v) => v as u8,
                    v => v.as_u64().map_or(1, |v| v as u8),
                };
                self.exited = Some(status);
                self.stats.exit_span = Some(span);
                return Err(fail(codes::RUN_ASSERTION, "the program exited", span, "`exit` called here"));
            }
            Builtin::OutputToStderr => {
                let _ = self.out.flush();
                self.to_stderr = arg(0).as_bool() == Some(true);
                Value::Unit
            }
            Builtin::Fence => {
                if who.gpu {
                    if let Some(l) = self.launch.as_mut() {
                        *l.fences.entry(who.thread_lin).or_insert(0) += 1;
                    }
                }
                Value::Unit
            }
            Builtin::NullPtr => Value::Null,
            Builtin::PtrEq | Builtin::PtrDiff => {
                // Pointers as (buffer, slot); a struct element is `stride` slots.
                let at = |v: &Value| match v {
                    Value::Ref { buf, off } => Some((*buf, *off)),
                    Value::Owned { buf } => Some((*buf, 0)),
                    _ => None,
                };
                let (a, b2) = (arg(0), arg(1));
                let (pa, pb) = (at(&a), at(&b2));
                // Each must point into (or just past) a live allocation, as C requires.
                for v in [&a, &b2] {
                    if *v != Value::Null {
                        self.pointer(v, span)?;
                    }
                }
                if b == Builtin::PtrEq {
                    return Ok(Value::Bool(match (pa, pb) {
                        (Some(x), Some(y)) => x == y,
                        _ => a == Value::Null && b2 == Value::Null,
                    }));
                }
                match (pa, pb) {
                    (Some((ba, oa)), Some((bb, ob))) if ba == bb => {
                        let stride = self.buffers[ba].stride.max(1) as i64;
                        Value::I64((oa as i64 - ob as i64) / stride)
                    }
                    _ if a == Value::Null && b2 == Value::Null => Value::I64(0),
                    _ => {
                        return Err(fail(
                            codes::RUN_OUT_OF_BOUNDS,
                            "comparing or subtracting pointers that do not point into the same allocation",
                            span,
                            "this comparison",
                        ))
                    }
                }
            }
            Builtin::HeapNew => {
                let data = match vs.pop() {
                    Some(Value::Array(v)) => *v,
                    v => Arr::from_values(v).map_err(|e| oom(e, span, "a heap allocation"))?,
                };
                Value::Owned { buf: self.alloc(data, Space::Cpu, "a heap allocation".to_string()) }
            }
            Builtin::GlobalAllocCopy => {
                self.device_sync()?;
                let (src, off) = self.pointer(&arg(0), span)?;
                self.check_space(src, Space::Cpu, who, span, "copied to the GPU")?;
                let name = format!("GPU copy of {}", self.buffers[src].name);
                let stride = self.buffers[src].stride;
                let from = &self.buffers[src].data;
                // An explicit count (a row, a view): that many scalars, else the rest of the buffer.
                let end = match vs.get(1).and_then(Value::as_u64) {
                    Some(n) => (off as usize)
                        .saturating_add((n as usize).saturating_mul(stride.max(1) as usize))
                        .min(from.len()),
                    None => from.len(),
                };
                let data = from
                    .slice(off as usize, end)
                    .map_err(|e| oom(e, span, &format!("a GPU copy of `{}`", self.buffers[src].name)))?;
                let buf = self.alloc(data, Space::Global, name);
                if off % stride == 0 {
                    self.buffers[buf].stride = stride;
                }
                Value::Owned { buf }
            }
            Builtin::CopyToHost | Builtin::CopyToGpu => {
                // Default-stream work the host waits for: after all work in flight.
                self.device_sync()?;
                let (src_v, dst_v) = if b == Builtin::CopyToHost { (arg(0), arg(1)) } else { (arg(1), arg(0)) };
                let (src, so) = self.pointer(&src_v, span)?;
                let (dst, doff) = self.pointer(&dst_v, span)?;
                let (so, doff) = (so as usize, doff as usize);
                let mut n = (self.buffers[src].data.len() - so).min(self.buffers[dst].data.len() - doff);
                // An explicit count (a row, a view) copies only that part.
                if let Some(c) = vs.get(2).and_then(Value::as_u64) {
                    n = n.min((c as usize).saturating_mul(self.buffers[src].stride.max(1) as usize));
                }
                self.copy_range(src, so, dst, doff, n).map_err(|e| oom(e, span, "a copy"))?;
                Value::Unit
            }
            Builtin::CopyElems { dst_gpu, src_gpu } => {
                // Default-stream work the host waits for, as `CopyToHost`.
                self.device_sync()?;
                self.copy_elems(&arg(0), dst_gpu, &arg(1), src_gpu, index(2), span)?;
                Value::Unit
            }
            Builtin::AtomicFetchAdd | Builtin::AtomicFetchAddAt | Builtin::AtomicLoad | Builtin::AtomicStore => {
                let (buf, mut off) = self.pointer(&arg(0), span)?;
                let mut next = 1;
                if b == Builtin::AtomicFetchAddAt {
                    let i = arg(1).as_u64().unwrap_or(u64::MAX);
                    next = 2;
                    // The bound is the referenced array's own length (argument 3), not the
                    // buffer's: a row of a 2-D array ends before the buffer does. The buffer's
                    // end still bounds IR built without it.
                    let rest = (self.buffers[buf].data.len() as u64).saturating_sub(off);
                    let len = vs.get(3).and_then(Value::as_u64).map_or(rest, |n| n.min(rest));
                    off = off.saturating_add(i);
                    if i >= len {
                        return Err(fail(
                            codes::RUN_OUT_OF_BOUNDS,
                            format!("atomic update out of bounds: index {i}, length {len}"),
                            span,
                            "this atomic operation",
                        ));
                    }
                }
                // A store does not read what it overwrites (which may never have been written).
                let old =
                    if b == Builtin::AtomicStore { Value::Unit } else { self.read_raw(buf, off, who, span, true)? };
                let new = match b {
                    Builtin::AtomicLoad => old.clone(),
                    Builtin::AtomicStore => vs.get(next).cloned().unwrap_or(Value::Unit),
                    _ => binary(BinOp::Add, old.clone(), vs.get(next).cloned().unwrap_or(Value::Unit))
                        .unwrap_or(old.clone()),
                };
                self.write_raw(buf, off, new, who, span, true)?;
                if b == Builtin::AtomicStore {
                    Value::Unit
                } else {
                    old
                }
            }
            Builtin::AtomicRmw(op, t) => {
                let (buf, off) = self.pointer(&arg(0), span)?;
                let old = self.read_raw(buf, off, who, span, true)?.cast(t);
                let new = atomics::rmw_value(op, &old, &arg(1).cast(t), &arg(2).cast(t)).ok_or_else(|| {
                    fail(codes::UNSUPPORTED, format!("`{}` on this value", op.cuda_name()), span, "this atomic")
                })?;
                self.write_raw(buf, off, new, who, span, true)?;
                old
            }
            Builtin::AtomicAt(op, t) => self.atomic_at(op, t, &vs, span, who)?,
            Builtin::FillRandom => {
                let (buf, off) = self.pointer(&arg(0), span)?;
                let mut state = arg(1).as_u64().unwrap_or(0);
                self.buffers[buf].data.fill_random(off as usize, &mut state);
                Value::Unit
            }
            Builtin::Print | Builtin::PrintInline if vs.len() > 1 => {
                // A (sub-)array with its dimensions: nested lists, outermost first.
                let dims: Vec<u64> = vs[1..].iter().map(|d| d.as_u64().unwrap_or(0)).collect();
                let total: u64 = dims.iter().product();
                let (buf, off) = match arg(0) {
                    Value::Ref { buf, off } => (buf, off),
                    Value::Owned { buf } => (buf, 0),
                    _ => return Err(fail(codes::UNSUPPORTED, "printing this value", span, "not an array")),
                };
                self.pointer(&arg(0), span)?;
                if !who.gpu {
                    self.check_space(buf, Space::Cpu, who, span, "printed")?;
                    let end = off.saturating_add(total).min(self.buffers[buf].data.len() as u64);
                    self.stream_host_access(buf, off, end, false, span)?;
                }
                let data = &self.buffers[buf].data;
                let end = off.saturating_add(total).min(data.len() as u64);
                let w: &mut dyn Write = if self.to_stderr { &mut *self.stderr } else { &mut *self.out };
                let _ = write_nested(w, data, off as usize, (end as usize).max(off as usize), &dims);
                if b == Builtin::Print {
                    let _ = writeln!(w);
                }
                Value::Unit
            }
            Builtin::Print | Builtin::PrintInline | Builtin::PrintFormatted
                if vs.iter().any(|v| matches!(v, Value::Uninit)) =>
            {
                return Err(uninit_variable());
            }
            Builtin::Print | Builtin::PrintInline => {
                let end = if b == Builtin::Print { "\n" } else { "" };
                // Numbers, text and arrays of numbers print as they are (without a copy).
                let plain = match vs.first() {
                    Some(Value::Array(a)) => a.scalar().is_some(),
                    Some(v) => v.scalar().is_some() || matches!(v, Value::Nat(_) | Value::Str(_) | Value::Unit),
                    None => false,
                };
                if plain {
                    let w: &mut dyn Write = if self.to_stderr { &mut *self.stderr } else { &mut *self.out };
                    let _ = write!(w, "{}{end}", vs[0]);
                } else {
                    let ty = args.first().and_then(|a| self.expr_ty(a, f));
                    let v = self.deep(&arg(0), ty.as_ref(), f, who, span)?;
                    let w: &mut dyn Write = if self.to_stderr { &mut *self.stderr } else { &mut *self.out };
                    let _ = write!(w, "{v}{end}");
                }
                Value::Unit
            }
            Builtin::PrintFormatted => {
                // Borrowed, not copied: a `printf` in a host loop is one of these per iteration.
                let spec = match vs.first() {
                    Some(Value::Str(s)) => s.as_str(),
                    _ => "",
                };
                let text = cfmt::format(spec, vs.get(1).unwrap_or(&Value::Unit)).ok_or_else(|| {
                    fail(codes::UNSUPPORTED, format!("printing this value with `{spec}`"), span, "this print")
                })?;
                let w: &mut dyn Write = if self.to_stderr { &mut *self.stderr } else { &mut *self.out };
                let _ = w.write_all(&text);
                Value::Unit
            }
            Builtin::Math(m, t) => {
                let x = |i: usize| arg(i).cast(t);
                match (x(0), x(1), x(2)) {
                    (Value::F32(a), b, c) => {
                        let f = |v: Value| if let Value::F32(v) = v { v } else { 0.0 };
                        Value::F32(libm::f32(m, a, f(b), f(c)))
                    }
                    (Value::F64(a), b, c) => {
                        let f = |v: Value| if let Value::F64(v) = v { v } else { 0.0 };
                        Value::F64(libm::f64(m, a, f(b), f(c)))
                    }
                    _ => return Err(fail(codes::UNSUPPORTED, "a math function of a non-float", span, "not a float")),
                }
            }
            Builtin::IntMath(f, _) => {
                use ir::IntFn;
                match (f, arg(0), arg(1)) {
                    (IntFn::Abs, Value::I32(a), _) => Value::I32(a.wrapping_abs()),
                    (IntFn::Abs, Value::I64(a), _) => Value::I64(a.wrapping_abs()),
                    (IntFn::Min, Value::I32(a), Value::I32(b)) => Value::I32(a.min(b)),
                    (IntFn::Min, Value::I64(a), Value::I64(b)) => Value::I64(a.min(b)),
                    (IntFn::Min, Value::U32(a), Value::U32(b)) => Value::U32(a.min(b)),
                    (IntFn::Min, Value::U64(a), Value::U64(b)) => Value::U64(a.min(b)),
                    (IntFn::Max, Value::I32(a), Value::I32(b)) => Value::I32(a.max(b)),
                    (IntFn::Max, Value::I64(a), Value::I64(b)) => Value::I64(a.max(b)),
                    (IntFn::Max, Value::U32(a), Value::U32(b)) => Value::U32(a.max(b)),
                    (IntFn::Max, Value::U64(a), Value::U64(b)) => Value::U64(a.max(b)),
                    _ => return Err(fail(codes::UNSUPPORTED, "this integer function", span, "these operands")),
                }
            }
            Builtin::IsNan(_) | Builtin::IsFinite(_) => {
                let x = match arg(0) {
                    Value::F32(x) => f64::from(x),
                    Value::F64(x) => x,
                    _ => return Err(fail(codes::UNSUPPORTED, "a float test of a non-float", span, "not a float")),
                };
                Value::Bool(if matches!(b, Builtin::IsNan(_)) { x.is_nan() } else { x.is_finite() })
            }
            Builtin::Sqrt(_) => match arg(0) {
                Value::F32(x) => Value::F32(x.sqrt()),
                Value::F64(x) => Value::F64(x.sqrt()),
                _ => return Err(fail(codes::UNSUPPORTED, "a square root of a non-float", span, "not a float")),
            },
            Builtin::Shuffle(..) | Builtin::Ballot => {
                return Err(fail(codes::UNSUPPORTED, "a warp collective outside a kernel", span, "not expanded"));
            }
            Builtin::ArgCount => Value::U64(self.opts.args.len() as u64),
            Builtin::ArgU64 => Value::U64(self.npy(span, |a| Ok(npy::arg_u64(a, index(0))?))?),
            Builtin::ArgF64 => Value::F64(self.npy(span, |a| Ok(npy::arg_f64(a, index(0))?))?),
            Builtin::ArgByte => {
                let (i, argc) = (index(0), self.opts.args.len() as u64 + 1);
                if i == 0 || i >= argc {
                    return Err(Box::new(
                        Diagnostic::error(
                            codes::RUN_PROGRAM_INPUT,
                            if i == 0 {
                                "`argv[0]`, the program's name, is known only at a constant index".to_string()
                            } else {
                                format!("`argv[{}]` is past the program's arguments (`argc` is {argc})", i as i64)
                            },
                            span,
                            "this argument is missing",
                        )
                        .with_note("the program's arguments follow `--`: `strata run prog.cu -- A B`"),
                    ));
                }
                let k = usize::try_from(index(1)).ok();
                let byte = self.npy(span, |a| Ok(k.and_then(|k| npy::arg(a, i - 1).ok()?.get(k).copied())))?;
                Value::I32(byte.map_or(0, |b| i32::from(b as i8)))
            }
            Builtin::NpyLen => Value::U64(self.npy(span, |a| npy::dim(a, index(0), 0))?),
            Builtin::NpyDim => Value::U64(self.npy(span, |a| npy::dim(a, index(0), index(1)))?),
            Builtin::LoadNpy(elem) => {
                let dims: Vec<u64> = (1..vs.len()).map(index).collect();
                let data = self.npy(span, |a| npy::load(a, index(0), elem, &dims))?;
                let file = self.npy(span, |a| Ok(npy::shown(npy::arg(a, index(0))?)))?;
                Value::Owned { buf: self.alloc(data, Space::Cpu, format!("the array read from `{file}`")) }
            }
            Builtin::SaveNpy(elem) => {
                let dims: Vec<u64> = (2..vs.len()).map(index).collect();
                let (buf, off) = self.pointer(&arg(1), span)?;
                self.check_space(buf, Space::Cpu, who, span, "written to a file")?;
                self.stream_host_access(buf, off, self.buffers[buf].data.len() as u64, false, span)?;
                let args = &self.opts.args;
                let data = &self.buffers[buf].data;
                npy::save(args, index(0), elem, &dims, data, off as usize).map_err(|e| npy_fail(e, span))?;
                Value::Unit
            }
            Builtin::StreamNew
            | Builtin::StreamSync
            | Builtin::StreamDestroy
            | Builtin::DeviceSync
            | Builtin::EventNew
            | Builtin::EventRecord
            | Builtin::EventSync
            | Builtin::EventDestroy
            | Builtin::StreamWaitEvent
            | Builtin::CopyAsync => return self.stream_builtin(b, &vs, span),
            Builtin::Assert => {
                if arg(0).as_bool() != Some(true) {
                    return Err(fail(codes::RUN_ASSERTION, "assertion failed", span, "this condition is false"));
                }
                Value::Unit
            }
        })
    }

    /// [`Builtin::CopyElems`]: `n` elements from `src` to `dst`, with the checks (and the errors,
    /// in the same order) of the element-by-element copy through a host buffer it replaces: a GPU
    /// side is a pointer that must hold `n` elements (source first), a host side `n` accesses by
    /// host code, the source's element `k` read before the destination's is written.
    fn copy_elems(&mut self, dst: &Value, dst_gpu: bool, src: &Value, src_gpu: bool, n: u64, span: Span) -> R<()> {
        // A buffer of structs holds each element's fields one after another (`stride` values):
        // `n` elements are `n * stride` values.
        let stride = match src {
            Value::Ref { buf, .. } | Value::Owned { buf } => self.buffers.get(*buf).map_or(1, |b| b.stride.max(1)),
            _ => 1,
        };
        let n = n.saturating_mul(stride);
        for (v, gpu) in [(src, src_gpu), (dst, dst_gpu)] {
            if gpu {
                let (buf, off) = self.pointer(v, span)?;
                if off.saturating_add(n) > self.buffers[buf].data.len() as u64 {
                    return Err(fail(
                        codes::RUN_OUT_OF_BOUNDS,
                        "a pointer past the end of its buffer",
                        span,
                        "this use",
                    ));
                }
            }
        }
        let (s, so) = self.pointer_parts(src, span)?;
        let (d, doff) = self.pointer_parts(dst, span)?;
        if n == 0 {
            return Ok(());
        }
        // The first element at which each host side fails its checks, with the error.
        let host_side = |m: &Self, buf: usize, off: u64, reads: bool| -> Option<(u64, Fail)> {
            if let Err(e) = m.access_checks(buf, off, HOST, span) {
                return Some((0, e));
            }
            let data = &m.buffers[buf].data;
            // Elements `off..end` are in bounds.
            let end = off.saturating_add(n).min(data.len() as u64).max(off);
            if reads {
                if let Some(i) = data.first_uninit(off as usize, end as usize) {
                    let msg = format!("read of uninitialised memory: `{}[{i}]`", m.buffers[buf].name);
                    return Some((
                        i as u64 - off,
                        fail(codes::RUN_UNINIT, msg, span, "never written before this read"),
                    ));
                }
            }
            if off.saturating_add(n) > end {
                return m.access_checks(buf, end, HOST, span).err().map(|e| (end - off, e));
            }
            None
        };
        let src_fails = if src_gpu { None } else { host_side(self, s, so, true) };
        let dst_fails = if dst_gpu { None } else { host_side(self, d, doff, false) };
        match (src_fails, dst_fails) {
            (Some((ks, e)), Some((kd, _))) if ks <= kd => return Err(e),
            (_, Some((_, e))) | (Some((_, e)), None) => return Err(e),
            (None, None) => {}
        }
        self.copy_range(s, so as usize, d, doff as usize, n as usize).map_err(|e| oom(e, span, "a copy"))
    }

    /// The buffer and offset of a pointer, without checks.
    fn pointer_parts(&self, v: &Value, span: Span) -> R<(usize, u64)> {
        match v {
            Value::Ref { buf, off } => Ok((*buf, *off)),
            Value::Owned { buf } => Ok((*buf, 0)),
            _ => Err(fail(codes::UNSUPPORTED, "expected a pointer", span, "not a pointer")),
        }
    }

    /// Runs `f` on the program's arguments; its error becomes E0912 (or E0903) at `span`.
    fn npy<T>(&self, span: Span, f: impl FnOnce(&[std::ffi::OsString]) -> Result<T, npy::NpyError>) -> R<T> {
        f(&self.opts.args).map_err(|e| npy_fail(e, span))
    }

    /// A value with pointers replaced by what they point to (for printing by `who`): host code
    /// cannot read GPU memory (E0905).
    /// `v` (of type `ty`, where known) with pointers replaced by what they point to, for
    /// printing by `who`: a pointer to a scalar by the scalar, to an array by its elements (with
    /// an unknown type: the rest of the buffer). Host code cannot read GPU memory (E0905).
    fn deep(&mut self, v: &Value, ty: Option<&ir::Ty>, f: &mut Frame, who: Who, span: Span) -> R<Value> {
        if let Value::Owned { .. } | Value::Ref { .. } = v {
            let (buf, _) = self.pointer(v, span)?;
            if !who.gpu {
                self.check_space(buf, Space::Cpu, who, span, "printed")?;
            }
        }
        Ok(match (v, ty) {
            (Value::Owned { buf } | Value::Ref { buf, .. }, Some(ir::Ty::Ref(inner, _) | ir::Ty::Owned(inner, _))) => {
                let off = match v {
                    Value::Ref { off, .. } => *off,
                    _ => 0,
                };
                match &**inner {
                    ir::Ty::Array { .. } => {
                        let n = self.flat_len(inner, f, who)?;
                        let data = &self.buffers[*buf].data;
                        let end = (off.saturating_add(n) as usize).min(data.len());
                        let part = data.slice(off as usize, end).map_err(|e| oom(e, span, "printing"))?;
                        Value::Array(Box::new(part))
                    }
                    t => {
                        let x = self.buffers[*buf].data.get(off as usize);
                        self.deep(&x, Some(t), f, who, span)?
                    }
                }
            }
            (Value::Owned { buf } | Value::Ref { buf, .. }, _) => {
                let off = match v {
                    Value::Ref { off, .. } => *off as usize,
                    _ => 0,
                };
                let data = &self.buffers[*buf].data;
                Value::Array(Box::new(data.slice(off, data.len()).map_err(|e| oom(e, span, "printing"))?))
            }
            // An array of references prints what each refers to.
            (Value::Array(vs), Some(t @ ir::Ty::Array { .. })) if !matches!(ir::leaf(t), ir::Ty::Scalar(_)) => {
                let mut out = Arr::with_capacity(vs.len() as u64);
                for x in vs.iter() {
                    let x = self.deep(&x, Some(ir::leaf(t)), f, who, span)?;
                    out.push(x).map_err(|e| oom(e, span, "printing"))?;
                }
                Value::Array(Box::new(out))
            }
            (Value::Tuple(vs), ty) => {
                let mut out = Vec::new();
                for (i, x) in vs.iter().enumerate() {
                    let t = match ty {
                        Some(ir::Ty::Tuple(ts)) => ts.get(i),
                        _ => None,
                    };
                    out.push(self.deep(x, t, f, who, span)?);
                }
                Value::Tuple(out)
            }
            (other, _) => other.clone(),
        })
    }

    /// The type of an expression where the program states it (places, references to them,
    /// calls, tuples of those).
    fn expr_ty(&self, e: &Expr, f: &Frame) -> Option<ir::Ty> {
        let func = &self.program.functions[f.func];
        match e {
            Expr::Load(p) => Some(func.place_ty(p)),
            Expr::Ref(p) => Some(ir::Ty::Ref(Box::new(func.place_ty(p)), func.place_mem(p))),
            Expr::Call { func, .. } => Some(self.program.functions[*func].ret.clone()),
            Expr::Tuple(xs) => xs.iter().map(|x| self.expr_ty(x, f)).collect::<Option<Vec<_>>>().map(ir::Ty::Tuple),
            _ => None,
        }
    }

    fn pointer(&self, v: &Value, span: Span) -> R<(usize, u64)> {
        let (buf, off) = match v {
            Value::Ref { buf, off } => (*buf, *off),
            Value::Owned { buf } => (*buf, 0),
            Value::Null => return Err(null_deref(span)),
            _ => return Err(fail(codes::UNSUPPORTED, "expected a pointer", span, "not a pointer")),
        };
        let b = &self.buffers[buf];
        if b.freed {
            let msg = format!("use of `{}` after it was freed", b.name);
            return Err(fail(codes::RUN_USE_AFTER_FREE, msg, span, "this use"));
        }
        if off as usize > b.data.len() {
            return Err(fail(codes::RUN_OUT_OF_BOUNDS, "a pointer past the end of its buffer", span, "this use"));
        }
        Ok((buf, off))
    }

    /// A reference to (a part of) local `root`: the local moves into a buffer of its own (in
    /// `cpu.mem` for host code, else `gpu.local`), where it lives from now on.
    fn box_local(&mut self, root: usize, path: &[LocalStep], span: Span, f: &mut Frame, who: Who) -> R<Value> {
        let prog = self.program;
        let mut t = prog.functions[f.func].locals.get(root).map_or(ir::Ty::Nat, |l| l.ty.clone());
        let name = self.program.functions[f.func].locals.get(root).map_or(String::new(), |l| l.name.clone());
        let mut data = Arr::new();
        Self::flatten(std::mem::replace(&mut f.locals[root], Value::Uninit), &t, &mut data)
            .map_err(|e| oom(e, span, &format!("`{name}`, moved to memory because of a reference to it")))?;
        let mut off = 0;
        for step in path {
            match (step, &t) {
                (LocalStep::Elem(o), arr) => {
                    t = ir::leaf(arr).clone();
                    off += o * self.slots(&t, f, who)?;
                }
                (LocalStep::Field(i), ir::Ty::Tuple(ts)) => {
                    for x in ts.iter().take(*i) {
                        off += self.slots(x, f, who)?;
                    }
                    t = ts.get(*i).cloned().unwrap_or(ir::Ty::Nat);
                }
                _ => return Err(fail(codes::UNSUPPORTED, "a reference into this variable", span, "")),
            }
        }
        let space = if who.gpu { Space::Local } else { Space::Cpu };
        let buf = self.alloc(data, space, name);
        self.buffers[buf].named = true;
        f.locals[root] = Value::Boxed { buf };
        Ok(Value::Ref { buf, off })
    }

    /// The number of scalars of a value of type `t` (1 for anything but an array).
    fn flat_len(&mut self, t: &ir::Ty, f: &mut Frame, who: Who) -> R<u64> {
        Ok(match t {
            ir::Ty::Array { elem, len } => self.iexpr(len, f, who)?.saturating_mul(self.flat_len(elem, f, who)?),
            _ => 1,
        })
    }

    fn alloc(&mut self, data: Arr, space: Space, name: String) -> usize {
        self.buffers.push(Buffer { data, space, name, named: false, freed: false, stride: 1 });
        self.buffers.len() - 1
    }

    // --------------------------------------------------------------------------------------------
    // Memory

    /// Errors raised while evaluating the indices of `p` point at `p` and name the thread.
    fn locate(&mut self, p: &Place, f: &mut Frame, who: Who) -> R<Loc> {
        self.locate_inner(p, f, who).map_err(|mut d| {
            if d.primary.span == Span::DUMMY {
                d.primary.span = p.span;
                if who.gpu {
                    d.primary.message = format!("in thread {} of block {}", coords(who.thread), coords(who.block));
                } else {
                    d.primary.message = "in this access".to_string();
                }
            }
            d
        })
    }

    fn locate_inner(&mut self, p: &Place, f: &mut Frame, who: Who) -> R<Loc> {
        for (i, bound) in &p.checks {
            let (i, bound) = (self.iexpr(i, f, who)?, self.iexpr(bound, f, who)?);
            if i >= bound {
                return Err(fail(
                    codes::RUN_OUT_OF_BOUNDS,
                    format!("index out of bounds: the length is {bound} but the index is {i}"),
                    p.span,
                    "this access",
                ));
            }
        }
        // Memory holds values flat: an array's elements, a tuple's fields one after another.
        let prog = self.program;
        let mut t: &ir::Ty = prog.functions[f.func].locals.get(p.root).map_or(&NAT, |l| &l.ty);
        let mut loc = match f.locals.get(p.root) {
            Some(Value::Boxed { buf }) => Loc::Buf(*buf, 0),
            _ => Loc::Local(p.root, Vec::new()),
        };
        // Whether the step before is a dereference: an index right after one may be negative.
        let mut after_deref = false;
        for step in &p.path {
            let deref_before = std::mem::replace(&mut after_deref, matches!(step, PathStep::Deref));
            let next: &ir::Ty = match (step, t) {
                (PathStep::Deref, ir::Ty::Ref(x, _) | ir::Ty::Owned(x, _)) => x,
                (PathStep::Field(i), ir::Ty::Tuple(ts)) => ts.get(*i as usize).unwrap_or(&NAT),
                (PathStep::Elem(_), arr) => ir::leaf(arr),
                (_, other) => other,
            };
            loc = match (loc, step) {
                // A pointer stored in memory (in a local that was moved into a buffer).
                (Loc::Buf(buf, off), PathStep::Deref) => match self.read_raw(buf, off, who, p.span, false)? {
                    Value::Ref { buf, off } => Loc::Buf(buf, off),
                    Value::Owned { buf } => Loc::Buf(buf, 0),
                    Value::Null => return Err(null_deref(p.span)),
                    _ => {
                        return Err(fail(codes::UNSUPPORTED, "dereferencing a value that is not a pointer", p.span, ""))
                    }
                },
                // A pointer variable (the most frequent): read in place, not copied out first.
                (Loc::Local(root, path), PathStep::Deref)
                    if path.is_empty()
                        && matches!(f.locals.get(root), Some(Value::Ref { .. } | Value::Owned { .. })) =>
                {
                    match f.locals.get(root) {
                        Some(Value::Ref { buf, off }) => Loc::Buf(*buf, *off),
                        Some(Value::Owned { buf }) => Loc::Buf(*buf, 0),
                        _ => Loc::Local(root, path),
                    }
                }
                (Loc::Local(root, path), PathStep::Deref) => match self
                    .local_value(f, root, &path)
                    .unwrap_or(Value::Uninit)
                {
                    Value::Ref { buf, off } => Loc::Buf(buf, off),
                    Value::Owned { buf } => Loc::Buf(buf, 0),
                    Value::Null => return Err(null_deref(p.span)),
                    _ => {
                        return Err(fail(codes::UNSUPPORTED, "dereferencing a value that is not a pointer", p.span, ""))
                    }
                },
                (Loc::Local(root, mut path), PathStep::Field(i)) => {
                    path.push(LocalStep::Field(*i as usize));
                    Loc::Local(root, path)
                }
                (Loc::Local(root, mut path), PathStep::Elem(e)) => {
                    let o = self.iexpr(e, f, who)?;
                    path.push(LocalStep::Elem(o));
                    Loc::Local(root, path)
                }
                // C's `p[-1]` and `p - 1` where `p` points into the middle of its buffer: the
                // index counts from where the reference points, and only the element reached
                // must not lie before the buffer's start.
                (Loc::Buf(buf, off), PathStep::Elem(IExpr::Value(v))) if deref_before => {
                    let i = self.sc_index_signed(v, f, who)?;
                    let size = self.slots(next, f, who)?;
                    match u64::try_from(i128::from(off) + i * i128::from(size)) {
                        Ok(at) => Loc::Buf(buf, at),
                        Err(_) => {
                            return Err(fail(
                                codes::RUN_OUT_OF_BOUNDS,
                                format!("index `{i}` is negative"),
                                Span::DUMMY,
                                "",
                            ))
                        }
                    }
                }
                (Loc::Buf(buf, off), PathStep::Elem(e)) => {
                    let o = self.iexpr(e, f, who)?;
                    let size = self.slots(next, f, who)?;
                    Loc::Buf(buf, off + o * size)
                }
                (Loc::Buf(buf, off), PathStep::Field(i)) => {
                    let ir::Ty::Tuple(ts) = t else {
                        return Err(fail(codes::UNSUPPORTED, "a field of a non-tuple", p.span, ""));
                    };
                    let mut o = 0;
                    for x in ts.iter().take(*i as usize) {
                        o += self.slots(x, f, who)?;
                    }
                    Loc::Buf(buf, off + o)
                }
            };
            t = next;
        }
        Ok(loc)
    }

    /// How many slots of a buffer a value of type `t` takes (its scalars and pointers).
    fn slots(&mut self, t: &ir::Ty, f: &mut Frame, who: Who) -> R<u64> {
        Ok(match t {
            ir::Ty::Array { elem, len } => self.iexpr(len, f, who)?.saturating_mul(self.slots(elem, f, who)?),
            ir::Ty::Tuple(ts) => {
                let mut n = 0u64;
                for x in ts {
                    n = n.saturating_add(self.slots(x, f, who)?);
                }
                n
            }
            _ => 1,
        })
    }

    /// A value of type `t` as the slots memory holds it, appended to `out`.
    fn flatten(v: Value, t: &ir::Ty, out: &mut Arr) -> Result<(), Oom> {
        match (v, t) {
            (Value::Array(vs), ir::Ty::Array { .. }) if vs.scalar().is_some() => {
                if out.is_empty() {
                    *out = *vs; // flat already
                    Ok(())
                } else {
                    out.extend(&vs, 0, vs.len())
                }
            }
            (Value::Array(vs), ir::Ty::Array { .. }) => vs.iter().try_for_each(|x| Self::flatten(x, ir::leaf(t), out)),
            (Value::Tuple(vs), ir::Ty::Tuple(ts)) => {
                vs.into_iter().zip(ts).try_for_each(|(x, t)| Self::flatten(x, t, out))
            }
            (v, _) => out.push(v),
        }
    }

    /// The value of type `t` in `slots` (as [`Machine::flatten`] wrote it).
    fn unflatten(&mut self, slots: &mut impl Iterator<Item = Value>, t: &ir::Ty, f: &mut Frame, who: Who) -> R<Value> {
        Ok(match t {
            ir::Ty::Array { .. } => {
                let leaf = ir::leaf(t);
                let n = self.slots(t, f, who)? / self.slots(leaf, f, who)?.max(1);
                let mut vs = Arr::with_capacity(n);
                for _ in 0..n {
                    let v = self.unflatten(slots, leaf, f, who)?;
                    vs.push(v).map_err(|e| oom(e, Span::DUMMY, "an array"))?;
                }
                Value::Array(Box::new(vs))
            }
            ir::Ty::Tuple(ts) => {
                let mut vs = Vec::new();
                for x in ts {
                    vs.push(self.unflatten(slots, x, f, who)?);
                }
                Value::Tuple(vs)
            }
            _ => slots.next().unwrap_or(Value::Uninit),
        })
    }

    /// The value at `path` in local `root` (a copy of a whole array is charged).
    fn local_value(&self, f: &Frame, root: usize, path: &[LocalStep]) -> Result<Value, Oom> {
        fn at(v: &Value, path: &[LocalStep]) -> Result<Value, Oom> {
            match (v, path.split_first()) {
                (v, None) => v.try_clone(),
                (Value::Tuple(vs), Some((LocalStep::Field(i), rest))) => {
                    vs.get(*i).map_or(Ok(Value::Uninit), |x| at(x, rest))
                }
                (Value::Array(vs), Some((LocalStep::Elem(i), []))) => Ok(vs.get(*i as usize)),
                (Value::Array(vs), Some((LocalStep::Elem(i), rest))) => at(&vs.get(*i as usize), rest),
                _ => Ok(Value::Uninit),
            }
        }
        at(&f.locals[root], path)
    }

    fn load(&mut self, p: &Place, f: &mut Frame, who: Who) -> R<Value> {
        // A variable that lives in the frame (the most frequent load): no place to resolve.
        if p.path.is_empty() && p.checks.is_empty() {
            // Scalars rebuilt here rather than by the out-of-line `try_clone`.
            match f.locals.get(p.root) {
                Some(Value::U32(x)) => return Ok(Value::U32(*x)),
                Some(Value::I32(x)) => return Ok(Value::I32(*x)),
                Some(Value::U64(x)) => return Ok(Value::U64(*x)),
                Some(Value::I64(x)) => return Ok(Value::I64(*x)),
                Some(Value::Nat(x)) => return Ok(Value::Nat(*x)),
                Some(Value::Boxed { .. }) | None => {}
                Some(v) => return v.try_clone().map_err(|e| oom(e, p.span, "a copy of this value")),
            }
        }
        self.load_place(p, f, who)
    }

    #[inline(never)]
    fn load_place(&mut self, p: &Place, f: &mut Frame, who: Who) -> R<Value> {
        match self.locate(p, f, who)? {
            // A whole array or tuple in memory (behind a pointer, or a local moved into a buffer).
            Loc::Buf(buf, off)
                if matches!(place_ty(&self.program.functions[f.func], p), ir::Ty::Array { .. } | ir::Ty::Tuple(_)) =>
            {
                let prog = self.program;
                let t = place_ty(&prog.functions[f.func], p);
                let n = self.slots(t, f, who)?;
                let mut vs = Arr::with_capacity(n);
                for k in 0..n {
                    let v = self.read_raw(buf, off + k, who, p.span, false)?;
                    vs.push(v).map_err(|e| oom(e, p.span, "a copy of this value"))?;
                }
                if matches!(t, ir::Ty::Array { .. })
                    && matches!(ir::leaf(t), ir::Ty::Scalar(_))
                    && vs.scalar().is_some()
                {
                    return Ok(Value::Array(Box::new(vs))); // an array of scalars: flat already
                }
                let mut slots = vs.iter();
                self.unflatten(&mut slots, t, f, who)
            }
            Loc::Buf(buf, off) => self.read_raw(buf, off, who, p.span, false),
            Loc::Local(root, path) => {
                let v = self.local_value(f, root, &path).map_err(|e| oom(e, p.span, "a copy of this value"))?;
                if v == Value::Uninit && !path.is_empty() {
                    return Err(fail(codes::RUN_UNINIT, "read of uninitialised memory", p.span, "never written"));
                }
                Ok(v)
            }
        }
    }

    fn store(&mut self, p: &Place, v: Value, f: &mut Frame, who: Who) -> R<()> {
        match self.locate(p, f, who)? {
            Loc::Buf(buf, off) => {
                match &v {
                    Value::Array(a) if a.scalar().is_some() => {
                        // An array of scalars: flat already.
                        for k in 0..a.len() {
                            self.write_raw(buf, off + k as u64, a.get(k), who, p.span, false)?;
                        }
                        return Ok(());
                    }
                    Value::Array(_) | Value::Tuple(_) => {}
                    _ => return self.write_raw(buf, off, v, who, p.span, false),
                }
                let mut slots = Arr::new();
                let prog = self.program;
                Self::flatten(v, place_ty(&prog.functions[f.func], p), &mut slots)
                    .map_err(|e| oom(e, p.span, "a copy of this value"))?;
                for k in 0..slots.len() {
                    self.write_raw(buf, off + k as u64, slots.get(k), who, p.span, false)?;
                }
                Ok(())
            }
            Loc::Local(root, path) => {
                /// Stores `v` at `path` in `slot`; `Ok(false)`: the path leaves the value.
                fn put(slot: &mut Value, path: &[LocalStep], v: Value) -> Result<bool, Oom> {
                    match (slot, path.split_first()) {
                        (slot, None) => {
                            *slot = convert_like(slot, v);
                            Ok(true)
                        }
                        (Value::Tuple(vs), Some((LocalStep::Field(i), rest))) if *i < vs.len() => {
                            put(&mut vs[*i], rest, v)
                        }
                        (Value::Array(vs), Some((LocalStep::Elem(i), []))) if (*i as usize) < vs.len() => {
                            vs.set(*i as usize, v).map(|()| true)
                        }
                        (Value::Array(vs), Some((LocalStep::Elem(i), rest))) => match vs.get_mut_value(*i as usize) {
                            Some(x) => put(x, rest, v),
                            None => Ok(false),
                        },
                        _ => Ok(false),
                    }
                }
                if put(&mut f.locals[root], &path, v).map_err(|e| oom(e, p.span, "a variable"))? {
                    Ok(())
                } else {
                    Err(fail(codes::RUN_OUT_OF_BOUNDS, "store out of bounds of a local array", p.span, "this store"))
                }
            }
        }
    }

    fn check_space(&self, buf: usize, want: Space, who: Who, span: Span, what: &str) -> R<()> {
        let b = &self.buffers[buf];
        if b.space != want {
            let actor = if who.gpu { "GPU code" } else { "host code" };
            return Err(fail(
                codes::RUN_MEMORY_SPACE,
                format!("{actor} accessed `{}` in `{}`", b.name, b.space.name()),
                span,
                format!("{what} here"),
            ));
        }
        Ok(())
    }

    fn access_checks(&self, buf: usize, off: u64, who: Who, span: Span) -> R<()> {
        self.access_checks_inner(buf, off, who, span).map_err(|mut d| {
            if who.gpu {
                d.primary.message =
                    format!("{} by thread {} of block {}", d.primary.message, coords(who.thread), coords(who.block));
            }
            d
        })
    }

    /// [`Self::access_checks`], noting the access of a GPU thread that fails them.
    fn checked_access(&mut self, buf: usize, off: u64, who: Who, span: Span, write: bool) -> R<()> {
        let r = self.access_checks(buf, off, who, span);
        if r.is_err() && who.gpu {
            self.note_accesses(buf, off, &[(self.acc(who, span), write)]);
        }
        r
    }

    /// Records the accesses of GPU threads behind an error about element `off` of `buf`
    /// ([`Finding`]), unless an earlier error was recorded.
    fn note_accesses(&mut self, buf: usize, off: u64, accs: &[(Acc, bool)]) {
        if self.finding.is_some() {
            return;
        }
        let (g, b) = self.launch.as_ref().map_or(([1; 3], [1; 3]), |l| (l.grid, l.block));
        let unlin = |x: u32, d: [u64; 3]| {
            let x = u64::from(x);
            [x % d[0], (x / d[0]) % d[1], x / (d[0] * d[1])]
        };
        let accesses = accs
            .iter()
            .map(|(a, w)| Access {
                span: a.span,
                block: unlin(a.block, g),
                thread: unlin(a.thread, b),
                kind: if *w { AccessKind::Write } else { AccessKind::Read },
            })
            .collect();
        let b = &self.buffers[buf];
        self.finding = Some(Finding {
            buffer: Some(b.name.clone()),
            space: Some(b.space.name()),
            index: Some(off / b.stride),
            field: (b.stride > 1).then_some(off % b.stride),
            accesses,
        });
    }

    /// Records the threads of a barrier divergence: `waiting` at the barrier `span`, and the
    /// thread elsewhere (at another barrier, or finished), or one that returned (`gone`).
    fn note_divergence(
        &mut self,
        waiting: Who,
        span: Span,
        other: &Option<(Who, Option<Stop>)>,
        gone: &std::collections::BTreeSet<u32>,
        bd: [u64; 3],
    ) {
        if self.finding.is_some() {
            return;
        }
        let mut accesses =
            vec![Access { span, block: waiting.block, thread: waiting.thread, kind: AccessKind::Barrier }];
        match other {
            Some((w, Some(Stop { span: s2, .. }))) => {
                accesses.push(Access { span: *s2, block: w.block, thread: w.thread, kind: AccessKind::Barrier });
            }
            Some((w, None)) => {
                accesses.push(Access { span: Span::DUMMY, block: w.block, thread: w.thread, kind: AccessKind::Exit });
            }
            None => {
                if let Some(&t) = gone.iter().next() {
                    let t = u64::from(t);
                    let thread = [t % bd[0], (t / bd[0]) % bd[1], t / (bd[0] * bd[1])];
                    accesses.push(Access { span: Span::DUMMY, block: waiting.block, thread, kind: AccessKind::Exit });
                }
            }
        }
        self.finding = Some(Finding { buffer: None, space: None, index: None, field: None, accesses });
    }

    /// Records the thread `who` (at `span`) behind an error, unless an earlier one was recorded.
    fn note_thread(&mut self, span: Span, who: Who, kind: AccessKind) {
        if self.finding.is_none() && who.gpu {
            let accesses = vec![Access { span, block: who.block, thread: who.thread, kind }];
            self.finding = Some(Finding { buffer: None, space: None, index: None, field: None, accesses });
        }
    }

    fn access_checks_inner(&self, buf: usize, off: u64, who: Who, span: Span) -> R<()> {
        let b = &self.buffers[buf];
        if b.freed {
            return Err(fail(
                codes::RUN_USE_AFTER_FREE,
                format!("use of `{}` after it was freed", b.name),
                span,
                "this access",
            ));
        }
        let wrong = if who.gpu { b.space == Space::Cpu } else { b.space != Space::Cpu };
        if wrong {
            let actor = if who.gpu { "GPU code" } else { "host code" };
            return Err(fail(
                codes::RUN_MEMORY_SPACE,
                format!("{actor} accessed `{}` in `{}`", b.name, b.space.name()),
                span,
                "this access",
            ));
        }
        if off as usize >= b.data.len() {
            return Err(fail(
                codes::RUN_OUT_OF_BOUNDS,
                if b.stride > 1 {
                    format!(
                        "out of bounds: `{}` has {} elements of {} fields, the access is at {}",
                        b.name,
                        b.data.len() as u64 / b.stride,
                        b.stride,
                        b.at(off)
                    )
                } else {
                    format!("out of bounds: `{}` has {} elements, the access is at {off}", b.name, b.data.len())
                },
                span,
                "this access",
            ));
        }
        Ok(())
    }

    fn read_raw(&mut self, buf: usize, off: u64, who: Who, span: Span, atomic: bool) -> R<Value> {
        self.checked_access(buf, off, who, span, false)?;
        self.stream_access(buf, off, who, span, false, atomic)?;
        let v = self.buffers[buf].data.get(off as usize);
        if v == Value::Uninit && who.gpu {
            let acc = self.acc(who, span);
            self.pending_uninit.push((buf, off, acc));
            // An atomic is logged once, at its write.
            if !atomic {
                self.log(buf, off, who, span, false)?;
            }
            // Any value will do: the interval ends in an error either way.
            return Ok(Value::Nat(0));
        }
        if v == Value::Uninit {
            return Err(fail(
                codes::RUN_UNINIT,
                format!("read of uninitialised memory: {}", self.buffers[buf].at(off)),
                span,
                "never written before this read",
            ));
        }
        if who.gpu && !atomic {
            self.log(buf, off, who, span, false)?;
        }
        Ok(v)
    }

    fn write_raw(&mut self, buf: usize, off: u64, v: Value, who: Who, span: Span, atomic: bool) -> R<()> {
        self.checked_access(buf, off, who, span, true)?;
        self.stream_access(buf, off, who, span, true, atomic)?;
        // A thread that read this element before anyone wrote it, and now writes it itself, read
        // uninitialised memory; another thread writing it is a race the log reports.
        if let Some(&(_, _, acc)) = self
            .pending_uninit
            .iter()
            .find(|(b, o, a)| *b == buf && *o == off && a.thread == who.thread_lin && a.block == who.block_lin)
        {
            self.note_accesses(buf, off, &[(acc, false)]);
            return Err(self.uninit_error(buf, off, &acc));
        }
        if who.gpu {
            // An atomic read-modify-write (or store) is logged once, here, as an atomic access.
            if atomic {
                self.log_atomic(buf, off, who, span)?;
            } else {
                self.log(buf, off, who, span, true)?;
            }
        }
        self.buffers[buf].data.set(off as usize, v).map_err(|e| oom(e, span, &format!("`{}`", self.buffers[buf].name)))
    }

    /// The race check of an access against asynchronous work in flight (`streams.rs`): a GPU
    /// thread's of the op running, or the host's against the work it has not waited for.
    #[inline]
    fn stream_access(&mut self, buf: usize, off: u64, who: Who, span: Span, write: bool, atomic: bool) -> R<()> {
        if who.gpu {
            if !atomic && self.opts.check_races && self.streams.recording() {
                self.stream_gpu_access(buf, off, who, span, write)?;
            }
        } else if self.opts.check_races && self.streams.has_live() {
            self.stream_host_access(buf, off, off + 1, write, span)?;
        }
        Ok(())
    }

    fn acc(&self, who: Who, span: Span) -> Acc {
        let (epoch, wepoch) = self
            .launch
            .as_ref()
            .map_or((0, 0), |l| (l.epoch, l.warp_epochs.get(&(who.thread_lin / 32)).copied().unwrap_or(0)));
        Acc { block: who.block_lin, thread: who.thread_lin, epoch, wepoch, span }
    }

    fn uninit_error(&self, buf: usize, off: u64, acc: &Acc) -> Fail {
        let (g, b) = self.launch.as_ref().map_or(([1; 3], [1; 3]), |l| (l.grid, l.block));
        let unlin = |x: u32, d: [u64; 3]| {
            let x = u64::from(x);
            [x % d[0], (x / d[0]) % d[1], x / (d[0] * d[1])]
        };
        fail(
            codes::RUN_UNINIT,
            format!("read of uninitialised memory: {}", self.buffers[buf].at(off)),
            acc.span,
            format!(
                "nothing wrote this element before thread {} of block {} read it",
                coords(unlin(acc.thread, b)),
                coords(unlin(acc.block, g))
            ),
        )
    }

    /// Judges the pending reads of never-written elements at the end of a barrier interval.
    fn settle_uninit(&mut self) -> R<()> {
        for (buf, off, acc) in std::mem::take(&mut self.pending_uninit) {
            if !self.buffers[buf].data.is_init(off as usize) {
                self.note_accesses(buf, off, &[(acc, false)]);
                return Err(self.uninit_error(buf, off, &acc));
            }
        }
        Ok(())
    }

    fn log(&mut self, buf: usize, off: u64, who: Who, span: Span, write: bool) -> R<()> {
        self.log_kind(buf, off, who, span, write, false)
    }

    /// Logs an atomic access: it races with plain accesses nothing orders with it, not with
    /// other atomics (reported as a write).
    fn log_atomic(&mut self, buf: usize, off: u64, who: Who, span: Span) -> R<()> {
        self.log_kind(buf, off, who, span, true, true)
    }

    fn log_kind(&mut self, buf: usize, off: u64, who: Who, span: Span, write: bool, atomic: bool) -> R<()> {
        if !self.opts.check_races {
            return Ok(());
        }
        let acc = self.acc(who, span);
        let len = self.buffers[buf].data.len();
        // (No lookup per access in a block that executed no `__threadfence()`.)
        let fgen = match self.launch.as_ref() {
            Some(l) if !l.fences.is_empty() => l.fences.get(&who.thread_lin).copied().unwrap_or(0),
            _ => 0,
        };
        let seg = Seg { fgen, ..acc.seg() };
        let logged = if atomic {
            self.races.atomic(buf, len, off as usize, seg, span)
        } else {
            self.races.access(buf, len, off as usize, seg, span, write)
        };
        let found = logged.map_err(|e| match e {
            race::Fail::Oom(e) => oom(e, span, &format!("the race detector's record of `{}`", self.buffers[buf].name)),
            race::Fail::Full(limit) => fail(
                codes::RUN_OUT_OF_BOUNDS,
                format!(
                    "{OUT_OF_MEMORY}: the race detector tells apart at most {limit} (block epoch, warp epoch, \
                     position) contexts in one launch of this block size"
                ),
                span,
                "this access",
            )
            .with_note("run with `--no-race-check`, or launch fewer blocks at a time")
            .into(),
        })?;
        if let Some(c) = found {
            let other = Acc { block: c.block, thread: c.thread, epoch: 0, wepoch: 0, span: c.span };
            self.note_accesses(buf, off, &[(acc, write), (other, c.write)]);
            return Err(Box::new(self.race(buf, off, acc, write, other, c.write)));
        }
        Ok(())
    }

    fn race(&self, buf: usize, off: u64, now: Acc, now_write: bool, before: Acc, before_write: bool) -> Diagnostic {
        let l = self.launch.as_ref();
        let (g, b) = l.map_or(([1; 3], [1; 3]), |l| (l.grid, l.block));
        let unlin = |x: u32, d: [u64; 3]| {
            let x = u64::from(x);
            [x % d[0], (x / d[0]) % d[1], x / (d[0] * d[1])]
        };
        let rw = |w: bool| if w { "write" } else { "read" };
        Diagnostic::error(
            codes::RUN_DATA_RACE,
            format!("data race on {} ({})", self.buffers[buf].at(off), self.buffers[buf].space.name()),
            now.span,
            format!(
                "{} by thread {} of block {}",
                rw(now_write),
                coords(unlin(now.thread, b)),
                coords(unlin(now.block, g))
            ),
        )
        .with_label(
            before.span,
            format!(
                "{} by thread {} of block {}",
                rw(before_write),
                coords(unlin(before.thread, b)),
                coords(unlin(before.block, g))
            ),
        )
        .with_note(if now.block != before.block {
            "different blocks are never ordered within one launch".to_string()
        } else {
            "no barrier orders these two accesses".to_string()
        })
    }
}

/// The splitmix64 generator: the defined source of `fill_random` on every device.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The source position of an op, where it has one.
fn op_span(op: &Op) -> Option<Span> {
    match op {
        Op::JumpIfNot(_, _, s) | Op::ForTest(_, _, _, s) | Op::Barrier(_, s, _) => Some(*s),
        Op::Stmt(Stmt::Store { place, .. }) => Some(place.span),
        Op::Stmt(Stmt::Let { span, .. } | Stmt::Launch { span, .. }) => Some(*span),
        _ => None,
    }
}

/// Gives a position-less error the position `span` and the executing thread.
fn at_thread(mut d: Fail, span: Span, who: Who) -> Fail {
    if d.primary.span == Span::DUMMY {
        d.primary.span = span;
        d.primary.message = format!("in thread {} of block {}", coords(who.thread), coords(who.block));
    }
    d
}

/// Coordinates written with as many components as the launch has dimensions.
fn coords(c: [u64; 3]) -> String {
    match LAUNCH_DIMS.with(|d| d.get()) {
        3 => format!("({}, {}, {})", c[0], c[1], c[2]),
        2 => format!("({}, {})", c[0], c[1]),
        _ if c[1] == 0 && c[2] == 0 => format!("({})", c[0]),
        _ if c[2] == 0 => format!("({}, {})", c[0], c[1]),
        _ => format!("({}, {}, {})", c[0], c[1], c[2]),
    }
}

thread_local! {
    /// How many dimensions the current launch's grid or blocks use (for printing coordinates).
    static LAUNCH_DIMS: std::cell::Cell<u8> = const { std::cell::Cell::new(1) };
}

/// Sets `slot`, which holds nothing that needs dropping (a number, a pointer, `Uninit`), to a
/// copy of `v` ([`Value::try_clone`]). Values that own nothing (numbers, pointers) are written
/// in place: a thread's copy of the frame is mostly those, and a copy returned through memory
/// and read back in other sizes stalled.
#[inline(always)]
fn copy_into(slot: &mut Value, v: &Value) -> Result<(), Oom> {
    let plain = match *v {
        Value::Bool(x) => Value::Bool(x),
        Value::I32(x) => Value::I32(x),
        Value::I64(x) => Value::I64(x),
        Value::U32(x) => Value::U32(x),
        Value::U64(x) => Value::U64(x),
        Value::F32(x) => Value::F32(x),
        Value::F64(x) => Value::F64(x),
        Value::Nat(x) => Value::Nat(x),
        Value::Ref { buf, off } => Value::Ref { buf, off },
        Value::Owned { buf } => Value::Owned { buf },
        Value::Boxed { buf } => Value::Boxed { buf },
        Value::Uninit => Value::Uninit,
        _ => {
            *slot = v.try_clone()?;
            return Ok(());
        }
    };
    Machine::put_scalar(slot, plain);
    Ok(())
}

/// Stores keep the type of what they overwrite (a literal `1.0` stored into `f32` memory).
fn convert_like(old: &Value, v: Value) -> Value {
    match (old.scalar(), &v) {
        (Some(t), Value::Nat(_) | Value::I32(_) | Value::F64(_) | Value::U64(_)) if v.scalar() != Some(t) => v.cast(t),
        _ => v,
    }
}

/// Arithmetic with Rust semantics (wrapping integers, IEEE floats); `Nat` adopts the other side.
fn binary(op: BinOp, a: Value, b: Value) -> Option<Value> {
    use Value::*;
    macro_rules! int {
        ($x:expr, $y:expr, $ctor:ident) => {
            match op {
                BinOp::Add => $ctor($x.wrapping_add($y)),
                BinOp::Sub => $ctor($x.wrapping_sub($y)),
                BinOp::Mul => $ctor($x.wrapping_mul($y)),
                BinOp::Div => $ctor($x.checked_div($y)?),
                BinOp::Rem => $ctor($x.checked_rem($y)?),
                BinOp::BitAnd => $ctor($x & $y),
                BinOp::BitOr => $ctor($x | $y),
                BinOp::BitXor => $ctor($x ^ $y),
                BinOp::Shl => $ctor($x.wrapping_shl($y as u32)),
                BinOp::Shr => $ctor($x.wrapping_shr($y as u32)),
                BinOp::Eq => Bool($x == $y),
                BinOp::Ne => Bool($x != $y),
                BinOp::Lt => Bool($x < $y),
                BinOp::Le => Bool($x <= $y),
                BinOp::Gt => Bool($x > $y),
                BinOp::Ge => Bool($x >= $y),
                BinOp::And | BinOp::Or => return None,
            }
        };
    }
    macro_rules! float {
        ($x:expr, $y:expr, $ctor:ident) => {
            match op {
                BinOp::Add => $ctor($x + $y),
                BinOp::Sub => $ctor($x - $y),
                BinOp::Mul => $ctor($x * $y),
                BinOp::Div => $ctor($x / $y),
                BinOp::Rem => $ctor($x % $y),
                BinOp::Eq => Bool($x == $y),
                BinOp::Ne => Bool($x != $y),
                BinOp::Lt => Bool($x < $y),
                BinOp::Le => Bool($x <= $y),
                BinOp::Gt => Bool($x > $y),
                BinOp::Ge => Bool($x >= $y),
                _ => return None,
            }
        };
    }
    // Both sides of one type (the most frequent case): no conversion and no copy.
    match (&a, &b) {
        (I32(x), I32(y)) => return Some(int!(*x, *y, I32)),
        (U32(x), U32(y)) => return Some(int!(*x, *y, U32)),
        (I64(x), I64(y)) => return Some(int!(*x, *y, I64)),
        (U64(x), U64(y)) => return Some(int!(*x, *y, U64)),
        (F32(x), F32(y)) => return Some(float!(*x, *y, F32)),
        (F64(x), F64(y)) => return Some(float!(*x, *y, F64)),
        _ => {}
    }
    let (a, b) = match (&a, &b) {
        (Nat(_), x) if x.scalar().is_some() => (a.cast(x.scalar()?), b),
        (x, Nat(_)) if x.scalar().is_some() => (a.clone(), b.cast(x.scalar()?)),
        _ => (a, b),
    };
    Some(match (a, b) {
        (I32(x), I32(y)) => int!(x, y, I32),
        (I64(x), I64(y)) => int!(x, y, I64),
        (U32(x), U32(y)) => int!(x, y, U32),
        (U64(x), U64(y)) => int!(x, y, U64),
        (Nat(x), Nat(y)) => int!(x, y, Nat),
        (F32(x), F32(y)) => float!(x, y, F32),
        (F64(x), F64(y)) => float!(x, y, F64),
        (Bool(x), Bool(y)) => match op {
            BinOp::And => Bool(x && y),
            BinOp::Or => Bool(x || y),
            BinOp::Eq => Bool(x == y),
            BinOp::Ne => Bool(x != y),
            BinOp::BitAnd => Bool(x & y),
            BinOp::BitOr => Bool(x | y),
            BinOp::BitXor => Bool(x ^ y),
            _ => return None,
        },
        (F64(x), F32(y)) => float!(x as f32, y, F32),
        (F32(x), F64(y)) => float!(x, y as f32, F32),
        _ => return None,
    })
}

/// Where a thread stopped: the barrier op, the values of the loop counters around it, its span,
/// and whether it is a warp barrier. A struct with a fixed layout: as a tuple, its reordered
/// fields were copied at odd offsets, and reading them back stalled.
#[derive(Clone)]
#[repr(C)]
struct Stop {
    pc: usize,
    instance: Vec<u64>,
    span: Span,
    warp: bool,
}

/// A thread region as a linear program, so a thread can stop at a barrier and resume.
enum Op<'a> {
    Stmt(&'a Stmt),
    JumpIfNot(&'a Expr, usize, Span),
    Jump(usize),
    ForInit(ir::LocalId, &'a IExpr),
    ForTest(ir::LocalId, &'a IExpr, usize, Span),
    ForNext(ir::LocalId, usize),
    /// A barrier, with the counters of the `for` loops around it: together with their values
    /// they identify the dynamic barrier a thread waits at.
    Barrier(bool, Span, Vec<ir::LocalId>),
}

fn compile(body: &[Stmt]) -> Vec<Op<'_>> {
    let mut ops = Vec::new();
    emit(body, &mut ops, &mut Vec::new());
    ops
}

fn emit<'a>(body: &'a [Stmt], ops: &mut Vec<Op<'a>>, loops: &mut Vec<ir::LocalId>) {
    for s in body {
        match s {
            Stmt::If { cond, then, els, span } => {
                let jif = ops.len();
                ops.push(Op::Jump(0));
                emit(then, ops, loops);
                let jend = ops.len();
                ops.push(Op::Jump(0));
                let else_at = ops.len();
                emit(els, ops, loops);
                let end = ops.len();
                ops[jif] = Op::JumpIfNot(cond, else_at, *span);
                ops[jend] = Op::Jump(end);
            }
            Stmt::While { cond, body, span } => {
                let top = ops.len();
                ops.push(Op::Jump(0));
                emit(body, ops, loops);
                ops.push(Op::Jump(top));
                let end = ops.len();
                ops[top] = Op::JumpIfNot(cond, end, *span);
            }
            Stmt::For { counter, lo, hi, body, span } => {
                ops.push(Op::ForInit(*counter, lo));
                let test = ops.len();
                ops.push(Op::Jump(0));
                loops.push(*counter);
                emit(body, ops, loops);
                loops.pop();
                ops.push(Op::ForNext(*counter, test));
                let exit = ops.len();
                ops[test] = Op::ForTest(*counter, hi, exit, *span);
            }
            Stmt::Sync { warp, span } => ops.push(Op::Barrier(*warp, *span, loops.clone())),
            Stmt::Threads { body, .. } => emit(body, ops, loops),
            other => ops.push(Op::Stmt(other)),
        }
    }
}

/// Whether two threads stopped at the same dynamic barrier (or both ran to the end).
fn same_stop(a: &Option<Stop>, b: &Option<Stop>) -> bool {
    match (a, b) {
        (None, None) => true,
        // Element by element: the loop counters are few (often none), and a `memcmp` call per
        // thread and barrier dominated barrier-heavy CUDA-C kernels.
        (Some(x), Some(y)) => {
            x.pc == y.pc
                && x.instance.len() == y.instance.len()
                && x.instance.iter().zip(&y.instance).all(|(a, b)| a == b)
        }
        _ => false,
    }
}

/// The type of a natural number, for places whose type is not known.
static NAT: ir::Ty = ir::Ty::Nat;

/// [`ir::Function::place_ty`], without copying the type.
fn place_ty<'a>(func: &'a ir::Function, p: &Place) -> &'a ir::Ty {
    let mut t: &ir::Ty = func.locals.get(p.root).map_or(&NAT, |l| &l.ty);
    for step in &p.path {
        t = match (step, t) {
            (PathStep::Deref, ir::Ty::Ref(x, _) | ir::Ty::Owned(x, _)) => x,
            (PathStep::Field(i), ir::Ty::Tuple(ts)) => ts.get(*i as usize).unwrap_or(&NAT),
            (PathStep::Elem(_), arr @ ir::Ty::Array { .. }) => ir::leaf(arr),
            (_, other) => other,
        };
    }
    t
}

/// The level of a local, for diagnostics.
pub fn local_level(f: &ir::Function, l: usize) -> Level {
    f.locals.get(l).map_or(Level::Host, |x| x.level)
}

/// An access through a null pointer (CUDA-C's `NULL`): out of bounds of every allocation.
fn null_deref(span: Span) -> Box<Diagnostic> {
    fail(codes::RUN_OUT_OF_BOUNDS, "access through a null pointer", span, "this access")
}

/// A launch shape a GPU refuses (`cudaErrorInvalidConfiguration`: the kernel does not run at
/// all, and a program that does not check `cudaGetLastError` goes on with what it did not
/// compute): a block of more than 1024 threads or beyond (1024, 1024, 64), a grid beyond
/// (2^31 - 1, 65535, 65535). Strata programs are held to the same limits by the checker (E0703,
/// E0704, the sm_80 profile); CUDA-C launches are sized at run time, so `sim` checks them here
/// rather than run a kernel a GPU would not. (A zero-sized launch runs nothing here as there.)
fn launch_limits(g: [u64; 3], b: [u64; 3], span: Span) -> R<()> {
    const BLOCK_DIM: [u64; 3] = [1024, 1024, 64];
    const GRID_DIM: [u64; 3] = [(1 << 31) - 1, 65535, 65535];
    let shape = |d: [u64; 3]| format!("({}, {}, {})", d[0], d[1], d[2]);
    let threads = b[0].saturating_mul(b[1]).saturating_mul(b[2]);
    if threads > 1024 || (0..3).any(|i| b[i] > BLOCK_DIM[i]) {
        return Err(fail(
            codes::BLOCK_TOO_LARGE,
            format!(
                "a block of {} ({threads} threads): a GPU allows at most 1024 threads per block and (1024, 1024, 64) per dimension, and refuses the launch",
                shape(b)
            ),
            span,
            "launched here",
        ));
    }
    if (0..3).any(|i| g[i] > GRID_DIM[i]) {
        return Err(fail(
            codes::GRID_TOO_LARGE,
            format!(
                "a grid of {}: a GPU allows at most (2147483647, 65535, 65535) blocks, and refuses the launch",
                shape(g)
            ),
            span,
            "launched here",
        ));
    }
    Ok(())
}

/// A variable read before anything was assigned to it (C's `int x; printf("%d", x);`): its value
/// is indeterminate, and using it is undefined.
pub(crate) fn uninit_variable() -> Fail {
    fail(codes::RUN_UNINIT, "read of an uninitialised variable", Span::DUMMY, "nothing was assigned to it before")
}
