//! Every access to a buffer, with its checks: the memory space of the code touching it, bounds, use
//! after free, uninitialised reads, and the race log (plain and atomic) with its reports.

use super::*;

impl Machine<'_, '_> {
    pub(crate) fn check_space(&self, buf: usize, want: Space, who: Who, span: Span, what: &str) -> R<()> {
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

    pub(crate) fn access_checks(&self, buf: usize, off: u64, who: Who, span: Span) -> R<()> {
        self.access_checks_inner(buf, off, who, span).map_err(|mut d| {
            if who.gpu {
                d.primary.message =
                    format!("{} by thread {} of block {}", d.primary.message, coords(who.thread), coords(who.block));
            }
            d
        })
    }

    /// [`Self::access_checks`], noting the access of a GPU thread that fails them.
    pub(crate) fn checked_access(&mut self, buf: usize, off: u64, who: Who, span: Span, write: bool) -> R<()> {
        let r = self.access_checks(buf, off, who, span);
        if r.is_err() && who.gpu {
            self.note_accesses(buf, off, &[(self.acc(who, span), write)]);
        }
        r
    }

    /// Records the accesses of GPU threads behind an error about element `off` of `buf`
    /// ([`Finding`]), unless an earlier error was recorded.
    pub(crate) fn note_accesses(&mut self, buf: usize, off: u64, accs: &[(Acc, bool)]) {
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
    pub(crate) fn note_divergence(
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
    pub(crate) fn note_thread(&mut self, span: Span, who: Who, kind: AccessKind) {
        if self.finding.is_none() && who.gpu {
            let accesses = vec![Access { span, block: who.block, thread: who.thread, kind }];
            self.finding = Some(Finding { buffer: None, space: None, index: None, field: None, accesses });
        }
    }

    pub(crate) fn access_checks_inner(&self, buf: usize, off: u64, who: Who, span: Span) -> R<()> {
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

    pub(crate) fn read_raw(&mut self, buf: usize, off: u64, who: Who, span: Span, atomic: bool) -> R<Value> {
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

    pub(crate) fn write_raw(&mut self, buf: usize, off: u64, v: Value, who: Who, span: Span, atomic: bool) -> R<()> {
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
        // An atomic that leaves the element as it was (a load, a failed compare-and-swap) changes
        // nothing a spinning thread could wait for ([`crate::spin`]).
        if !atomic || self.buffers[buf].data.get(off as usize) != v {
            self.mem_version += 1;
        }
        self.buffers[buf].data.set(off as usize, v).map_err(|e| oom(e, span, &format!("`{}`", self.buffers[buf].name)))
    }

    /// The race check of an access against asynchronous work in flight (`streams.rs`): a GPU
    /// thread's of the op running, or the host's against the work it has not waited for.
    #[inline]
    pub(crate) fn stream_access(
        &mut self,
        buf: usize,
        off: u64,
        who: Who,
        span: Span,
        write: bool,
        atomic: bool,
    ) -> R<()> {
        if who.gpu {
            if !atomic && self.opts.check_races && self.streams.recording() {
                self.stream_gpu_access(buf, off, who, span, write)?;
            }
        } else if self.opts.check_races && self.streams.has_live() {
            self.stream_host_access(buf, off, off + 1, write, span)?;
        }
        Ok(())
    }

    pub(crate) fn acc(&self, who: Who, span: Span) -> Acc {
        let (epoch, wepoch) = self
            .launch
            .as_ref()
            .map_or((0, 0), |l| (l.epoch, l.warp_epochs.get(&(who.thread_lin / 32)).copied().unwrap_or(0)));
        Acc { block: who.block_lin, thread: who.thread_lin, epoch, wepoch, span }
    }

    pub(crate) fn uninit_error(&self, buf: usize, off: u64, acc: &Acc) -> Fail {
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
    pub(crate) fn settle_uninit(&mut self) -> R<()> {
        for (buf, off, acc) in std::mem::take(&mut self.pending_uninit) {
            if !self.buffers[buf].data.is_init(off as usize) {
                self.note_accesses(buf, off, &[(acc, false)]);
                return Err(self.uninit_error(buf, off, &acc));
            }
        }
        Ok(())
    }

    pub(crate) fn log(&mut self, buf: usize, off: u64, who: Who, span: Span, write: bool) -> R<()> {
        self.log_kind(buf, off, who, span, write, false)
    }

    /// Logs an atomic access: it races with plain accesses nothing orders with it, not with
    /// other atomics (reported as a write).
    pub(crate) fn log_atomic(&mut self, buf: usize, off: u64, who: Who, span: Span) -> R<()> {
        self.log_kind(buf, off, who, span, true, true)
    }

    pub(crate) fn log_kind(&mut self, buf: usize, off: u64, who: Who, span: Span, write: bool, atomic: bool) -> R<()> {
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

    pub(crate) fn race(
        &self,
        buf: usize,
        off: u64,
        now: Acc,
        now_write: bool,
        before: Acc,
        before_write: bool,
    ) -> Diagnostic {
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
