//! Waits that can never end (E0914).
//!
//! A GPU thread on `sim` runs alone from one barrier to the next, and the blocks of a launch run
//! one after another, so nothing else changes memory while a thread spins on an atomic. If the
//! thread comes back to the same atomic operation (the same IR node, not merely the same source
//! position: inlined code and macro expansions repeat positions) in the same function activation
//! with the same locals, and no memory changed since it was last there, it is in a cycle that
//! nothing on `sim` can break: every later pass repeats the same steps. That is reported at once, rather than after
//! the step limit, as the deadlock it is on the `cpu` device too (a block's threads run one after
//! another there as well, and a block never waits for one that starts after it). The check is
//! exact: it needs the whole state of the thread to repeat, so a loop that counts, or reads memory
//! that changed, is never reported.

use crate::value::Value;
use crate::{coords, fail, Fail, Frame, Machine, Who, R};
use std::hash::{Hash, Hasher};
use strata_diag::{codes, Span};

/// A visit of an atomic operation that changed nothing ([`Machine::spin_check`]).
pub(crate) struct Visit {
    act: u64,
    /// The operation's IR node (the address of its arguments, unique while the program runs).
    node: usize,
    locals: u64,
}

/// What the spin check remembers: the thread whose visits these are, the memory version they
/// saw, and the visits themselves (at most [`VISITS`]).
#[derive(Default)]
pub(crate) struct Spins {
    thread: (u32, u32),
    version: u64,
    visits: Vec<Visit>,
}

/// Visits kept at once; a loop with more atomic operations than this in one pass is found by the
/// step limit instead.
const VISITS: usize = 64;

impl Machine<'_, '_> {
    /// Called after the atomic operation `node` (at `span`) of thread `who` that left memory as
    /// it was.
    pub(crate) fn spin_check(&mut self, node: usize, span: Span, f: &Frame, who: Who) -> R<()> {
        let thread = (who.block_lin, who.thread_lin);
        let s = &mut self.spins;
        if s.thread != thread || s.version != self.mem_version || s.visits.len() >= VISITS {
            s.thread = thread;
            s.version = self.mem_version;
            s.visits.clear();
        }
        let locals = hash_locals(&f.locals);
        if s.visits.iter().any(|v| v.act == f.act && v.node == node && v.locals == locals) {
            return Err(deadlock(span, who));
        }
        s.visits.push(Visit { act: f.act, node, locals });
        Ok(())
    }
}

fn deadlock(span: Span, who: Who) -> Fail {
    Box::new(
        fail(
            codes::RUN_DEADLOCK,
            format!(
                "thread {} of block {} waits for a value that no thread can change: a deadlock",
                coords(who.thread),
                coords(who.block)
            ),
            span,
            "it comes back here with nothing changed",
        )
        .with_note(
            "a block may wait only for blocks that started before it (a lower index in a kernel on a \
         `gpu.ordered_grid`), never for itself, its own threads or a later block",
        ),
    )
}

fn hash_locals(locals: &[Value]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for v in locals {
        hash_value(v, &mut h);
    }
    h.finish()
}

fn hash_value(v: &Value, h: &mut impl Hasher) {
    std::mem::discriminant(v).hash(h);
    match v {
        Value::Bool(b) => b.hash(h),
        Value::I8(x) => x.hash(h),
        Value::U8(x) => x.hash(h),
        Value::I16(x) => x.hash(h),
        Value::U16(x) => x.hash(h),
        Value::I32(x) => x.hash(h),
        Value::I64(x) => x.hash(h),
        Value::U32(x) => x.hash(h),
        Value::U64(x) | Value::Nat(x) => x.hash(h),
        Value::F32(x) => x.to_bits().hash(h),
        Value::F64(x) => x.to_bits().hash(h),
        Value::Tuple(vs) => vs.iter().for_each(|v| hash_value(v, h)),
        Value::Array(a) => a.iter().for_each(|v| hash_value(&v, h)),
        Value::Ref { buf, off } => (buf, off).hash(h),
        Value::Owned { buf } | Value::Boxed { buf } | Value::Stream(buf) | Value::Event(buf) => buf.hash(h),
        Value::Str(s) => s.hash(h),
        Value::Unit | Value::Uninit | Value::Null => {}
    }
}
