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
mod builtins;
mod cfmt;
mod crand;
pub mod finding;
mod intfns;
mod launch;
mod libm;
pub mod mem;
mod memory;
mod npy;
mod places;
mod race;
mod region;
mod scalar;
mod spin;
mod stream_exec;
mod streams;
mod value;

pub use arr::Arr;
pub use finding::{Access, AccessKind, Finding};
pub use value::Value;

use mem::Oom;
use race::{Races, Seg};
use region::Stop;

use std::collections::HashMap;
use std::io::Write;
use strata_diag::{codes, Code, Diagnostic, Span};
use strata_ir::ir::{self, BinOp, Builtin, Expr, FnKind, IExpr, Level, Lit, PathStep, Place, Stmt};

/// The label of E0903 at an index that the checker left to be checked when it runs (a run-time
/// index, docs/language.md "Run-time indices"): the one bounds error the checker does not rule
/// out in safe code, which the soundness tests tell apart by it.
pub const RUN_TIME_INDEX_LABEL: &str = "this index, checked when it runs";

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
    /// This activation's number, unique in the run ([`spin`]).
    act: u64,
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
        started: std::time::Instant::now(),
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
        kernel_prints: Default::default(),
        stderr: err,
        rand: None,
        exited: None,
        mem_version: 0,
        activations: 0,
        spins: Default::default(),
    };
    let mut frame = Frame {
        func: entry,
        locals: vec![Value::Uninit; program.functions[entry].locals.len()],
        nats: HashMap::new(),
        act: 0,
    };
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
    /// When the run began: the origin of `now_ms()` ([`Builtin::NowMs`]).
    started: std::time::Instant,
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
    /// What each GPU thread of the running launch printed, by (block, thread, to the standard
    /// error) ([`Machine::printer`]).
    kernel_prints: std::collections::BTreeMap<(u32, u32, bool), Vec<u8>>,
    stderr: &'o mut dyn Write,
    /// C's `rand()` state ([`Builtin::Rand`]).
    rand: Option<crand::CRand>,
    /// The status of the program's `exit(status)` ([`ir::Builtin::Exit`]), once called: the
    /// error that unwinds the run from there is not one.
    exited: Option<u8>,
    /// Counts changes of memory (a write, a copy, a buffer made or freed): the spin check's
    /// witness that nothing changed ([`spin`]).
    mem_version: u64,
    /// Function activations begun (each [`Frame`]'s `act`).
    activations: u64,
    spins: spin::Spins,
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
                        self.mem_version += 1;
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
            Stmt::For { counter, lo, hi, body, exit, .. } => {
                let lo = self.iexpr(lo, f, who)?;
                let hi = self.iexpr(hi, f, who)?;
                for i in lo..hi {
                    if exit.is_some_and(|flag| f.locals[flag] == Value::Bool(true)) {
                        break;
                    }
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
                        self.mem_version += 1;
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
            Expr::Unary(..) | Expr::Binary(..) | Expr::Checked(..) | Expr::Cast(..) => {
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
                self.activations += 1;
                let mut frame = Frame {
                    func: *func,
                    locals: vec![Value::Uninit; callee.locals.len()],
                    nats: HashMap::new(),
                    act: self.activations,
                };
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
}

/// The splitmix64 generator: the defined source of `fill_random` on every device.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
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
        Value::I8(x) => Value::I8(x),
        Value::U8(x) => Value::U8(x),
        Value::I16(x) => Value::I16(x),
        Value::U16(x) => Value::U16(x),
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
        (I8(x), I8(y)) => return Some(int!(*x, *y, I8)),
        (U8(x), U8(y)) => return Some(int!(*x, *y, U8)),
        (I16(x), I16(y)) => return Some(int!(*x, *y, I16)),
        (U16(x), U16(y)) => return Some(int!(*x, *y, U16)),
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

/// A variable read before anything was assigned to it (C's `int x; printf("%d", x);`): its value
/// is indeterminate, and using it is undefined.
pub(crate) fn uninit_variable() -> Fail {
    fail(codes::RUN_UNINIT, "read of an uninitialised variable", Span::DUMMY, "nothing was assigned to it before")
}
