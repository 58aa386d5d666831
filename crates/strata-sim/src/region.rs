//! Thread regions on `sim`: a region's statements compiled to a linear program ([`Op`]) so that
//! each thread can stop at a barrier and resume, the threads of a block run in rounds between
//! barriers (in order or shuffled), and the checks made where they stop (divergence, warps).

use super::*;

impl Machine<'_, '_> {
    /// Runs a thread region: every thread of `set` in this block, each stopping at barriers.
    pub(crate) fn region(&mut self, set: &ir::ThreadSet, body: &[Stmt], f: &mut Frame, who: Who) -> R<()> {
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
    pub(crate) fn run_thread(
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
                Op::ForTest(c, hi, exit, _, flag) => {
                    let i = f.locals[*c].as_u64().unwrap_or(0);
                    let stopped = flag.is_some_and(|l| f.locals[l] == Value::Bool(true));
                    *pc = if !stopped && i < self.iexpr(hi, f, who)? { *pc + 1 } else { *exit };
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
}

/// The source position of an op, where it has one.
pub(crate) fn op_span(op: &Op) -> Option<Span> {
    match op {
        Op::JumpIfNot(_, _, s) | Op::ForTest(_, _, _, s, _) | Op::Barrier(_, s, _) => Some(*s),
        Op::Stmt(Stmt::Store { place, .. }) => Some(place.span),
        Op::Stmt(Stmt::Let { span, .. } | Stmt::Launch { span, .. }) => Some(*span),
        _ => None,
    }
}

/// Where a thread stopped: the barrier op, the values of the loop counters around it, its span,
/// and whether it is a warp barrier. A struct with a fixed layout: as a tuple, its reordered
/// fields were copied at odd offsets, and reading them back stalled.
#[derive(Clone)]
#[repr(C)]
pub(crate) struct Stop {
    pc: usize,
    instance: Vec<u64>,
    pub(crate) span: Span,
    warp: bool,
}

/// A thread region as a linear program, so a thread can stop at a barrier and resume.
pub(crate) enum Op<'a> {
    Stmt(&'a Stmt),
    JumpIfNot(&'a Expr, usize, Span),
    Jump(usize),
    ForInit(ir::LocalId, &'a IExpr),
    /// The counter, its bound, where the loop exits, and its `break` flag, if any.
    ForTest(ir::LocalId, &'a IExpr, usize, Span, Option<ir::LocalId>),
    ForNext(ir::LocalId, usize),
    /// A barrier, with the counters of the `for` loops around it: together with their values
    /// they identify the dynamic barrier a thread waits at.
    Barrier(bool, Span, Vec<ir::LocalId>),
}

pub(crate) fn compile(body: &[Stmt]) -> Vec<Op<'_>> {
    let mut ops = Vec::new();
    emit(body, &mut ops, &mut Vec::new());
    ops
}

pub(crate) fn emit<'a>(body: &'a [Stmt], ops: &mut Vec<Op<'a>>, loops: &mut Vec<ir::LocalId>) {
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
            Stmt::For { counter, lo, hi, body, exit: flag, span } => {
                ops.push(Op::ForInit(*counter, lo));
                let test = ops.len();
                ops.push(Op::Jump(0));
                loops.push(*counter);
                emit(body, ops, loops);
                loops.pop();
                ops.push(Op::ForNext(*counter, test));
                let exit = ops.len();
                ops[test] = Op::ForTest(*counter, hi, exit, *span, *flag);
            }
            Stmt::Sync { warp, span } => ops.push(Op::Barrier(*warp, *span, loops.clone())),
            Stmt::Threads { body, .. } => emit(body, ops, loops),
            other => ops.push(Op::Stmt(other)),
        }
    }
}

/// Whether two threads stopped at the same dynamic barrier (or both ran to the end).
pub(crate) fn same_stop(a: &Option<Stop>, b: &Option<Stop>) -> bool {
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
