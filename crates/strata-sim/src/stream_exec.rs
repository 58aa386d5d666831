//! The machine's side of streams and events: issuing work, running it when the host needs it,
//! and the race checks of accesses against work in flight (the model is in `streams.rs`).

use super::*;
use streams::{Conflict, OpInfo};

/// Asynchronous work, evaluated where it was issued.
pub(crate) enum Work {
    Launch(usize, LaunchWork),
    /// `n` elements from `src` at `soff` to `dst` at `doff`.
    Copy {
        dst: usize,
        doff: u64,
        src: usize,
        soff: u64,
        n: u64,
    },
    /// An event record: orders, does nothing.
    Nothing,
}

/// Whether host statement `s` only issues asynchronous work or computes without memory (so the
/// work pending may stay pending across it, and run in an order the schedule picks): a launch on
/// a stream, a stream builtin, or a local's value from locals, none of which reads memory that
/// pending work might write (`boxed`: whether a local lives in a buffer, where work may write it).
pub(crate) fn only_issues(s: &Stmt, boxed: &dyn Fn(usize) -> bool) -> bool {
    let kind_ok = match s {
        Stmt::Launch { stream, .. } => stream.is_some(),
        Stmt::Eval(Expr::Builtin(b, _, _)) => issue_builtin(*b),
        Stmt::Let { init: Some(_), .. } => true,
        Stmt::Store { place, .. } => place.path.is_empty() && !boxed(place.root),
        _ => false,
    };
    if !kind_ok {
        return false;
    }
    let mut plain = true;
    s.visit_exprs(&mut |e| match e {
        Expr::Load(p) if !p.path.is_empty() || boxed(p.root) => plain = false,
        Expr::Call { .. } => plain = false,
        Expr::Builtin(b, _, _) if !issue_builtin(*b) => plain = false,
        _ => {}
    });
    plain
}

/// The stream builtins that issue or order work without making the host wait.
fn issue_builtin(b: Builtin) -> bool {
    matches!(
        b,
        Builtin::StreamNew
            | Builtin::EventNew
            | Builtin::CopyAsync
            | Builtin::EventRecord
            | Builtin::StreamWaitEvent
            | Builtin::StreamDestroy
            | Builtin::EventDestroy
    )
}

fn rw(write: bool) -> &'static str {
    if write {
        "write"
    } else {
        "read"
    }
}

impl Machine<'_, '_> {
    fn stream_of(&self, v: &Value, span: Span) -> R<usize> {
        match v {
            Value::Stream(s) if self.streams.is_stream(*s) => Ok(*s),
            Value::Unit => Ok(0),
            Value::Uninit => Err(fail(codes::RUN_UNINIT, "use of a stream that was never created", span, "here")),
            _ => Err(fail(codes::UNSUPPORTED, "this value as a stream", span, "not a stream")),
        }
    }

    fn event_of(&self, v: &Value, span: Span) -> R<usize> {
        match v {
            Value::Event(e) if self.streams.is_event(*e) => Ok(*e),
            // `Unit`: an element of an array of events that was never created.
            Value::Uninit | Value::Unit => {
                Err(fail(codes::RUN_UNINIT, "use of an event that was never created", span, "here"))
            }
            _ => Err(fail(codes::UNSUPPORTED, "this value as an event", span, "not an event")),
        }
    }

    /// A launch on the stream `stream` (a value).
    pub(crate) fn issue_launch(&mut self, kernel: usize, work: LaunchWork, stream: Value, span: Span) -> R<()> {
        let s = self.stream_of(&stream, span)?;
        if s == 0 {
            self.flush_streams()?;
            self.streams.default_op();
            return self.run_launch(kernel, work, span);
        }
        let what = format!("kernel `{}`", self.program.functions[kernel].name);
        if self.streams.issue(s, what, span, Work::Launch(kernel, work)) {
            self.flush_streams()?;
        }
        Ok(())
    }

    /// Runs all pending work, each op once its predecessors ran, in issue order or (with a random
    /// schedule) in an order the schedule picks.
    pub(crate) fn flush_streams(&mut self) -> R<()> {
        loop {
            let random = self.opts.random_seed.is_some();
            let mut rng = self.rng;
            let next =
                self.streams.take_ready(&mut |n| if random { (splitmix64(&mut rng) % n as u64) as usize } else { 0 });
            self.rng = rng;
            let Some(p) = next else { break };
            self.streams.begin(p.info.clone());
            let r = match p.work {
                Work::Launch(k, w) => self.run_launch(k, w, p.info.span),
                Work::Copy { dst, doff, src, soff, n } => self.run_copy(dst, doff, src, soff, n, p.info.span),
                Work::Nothing => Ok(()),
            };
            self.streams.end();
            r?;
        }
        self.streams.retire();
        Ok(())
    }

    /// The host waits for everything (a synchronous copy, `cudaFree`, `DeviceSync`).
    pub(crate) fn device_sync(&mut self) -> R<()> {
        if self.streams.active {
            self.flush_streams()?;
            self.streams.sync_device();
        }
        Ok(())
    }

    fn run_copy(&mut self, dst: usize, doff: u64, src: usize, soff: u64, n: u64, span: Span) -> R<()> {
        for (b, what) in [(src, "copied from"), (dst, "copied to")] {
            if self.buffers[b].freed {
                let msg = format!("use of `{}` after it was freed", self.buffers[b].name);
                return Err(fail(codes::RUN_USE_AFTER_FREE, msg, span, format!("{what} by this asynchronous copy")));
            }
        }
        for (b, off, write) in [(src, soff, false), (dst, doff, true)] {
            if !self.opts.check_races {
                break;
            }
            let len = self.buffers[b].data.len() as u64;
            let host = self.buffers[b].space == Space::Cpu;
            let found = self
                .streams
                .access(b, len, off..off + n, write, span, host)
                .map_err(|e| oom(e, span, "the record of an asynchronous copy"))?;
            if let Some(c) = found {
                let now = self.streams.current_info().map_or_else(String::new, OpInfo::describe);
                self.note_element(b, c.index);
                return Err(self.stream_race(b, c, span, format!("{} by {now}", rw(write)), false));
            }
        }
        self.copy_range(src, soff as usize, dst, doff as usize, n as usize).map_err(|e| oom(e, span, "a copy"))
    }

    /// Copies `n` elements between buffers (or within one).
    pub(crate) fn copy_range(&mut self, src: usize, so: usize, dst: usize, doff: usize, n: usize) -> Result<(), Oom> {
        self.mem_version += 1;
        if src == dst {
            let part = self.buffers[src].data.slice(so, so + n)?;
            self.buffers[dst].data.copy_from(doff, &part, 0, n)
        } else {
            let (a, b) = if src < dst {
                let (l, r) = self.buffers.split_at_mut(dst);
                (&l[src], &mut r[0])
            } else {
                let (l, r) = self.buffers.split_at_mut(src);
                (&r[0], &mut l[dst])
            };
            b.data.copy_from(doff, &a.data, so, n)
        }
    }

    /// An access of a GPU thread of the op running now to element `off` of a global buffer.
    pub(crate) fn stream_gpu_access(&mut self, buf: usize, off: u64, who: Who, span: Span, write: bool) -> R<()> {
        if self.buffers[buf].space != Space::Global {
            return Ok(());
        }
        let len = self.buffers[buf].data.len() as u64;
        let found = self.streams.access(buf, len, off..off + 1, write, span, false).map_err(|e| {
            let what = format!("the stream race record of `{}`", self.buffers[buf].name);
            oom(e, span, &what)
        })?;
        if let Some(c) = found {
            let now = self.streams.current_info().map_or_else(String::new, |i| i.describe());
            let label =
                format!("{} by thread {} of block {} of {now}", rw(write), coords(who.thread), coords(who.block));
            self.note_accesses(buf, c.index, &[(self.acc(who, span), write)]);
            return Err(self.stream_race(buf, c, span, label, false));
        }
        Ok(())
    }

    /// An access of the host to elements `lo..hi` of `buf`, checked against the work it has not
    /// waited for.
    pub(crate) fn stream_host_access(&mut self, buf: usize, lo: u64, hi: u64, write: bool, span: Span) -> R<()> {
        if !self.opts.check_races {
            return Ok(());
        }
        if let Some(c) = self.streams.host_access(buf, lo, hi, write) {
            let what = format!("{} by the host", rw(write));
            self.note_element(buf, c.index);
            return Err(self.stream_race(buf, c, span, what, true));
        }
        Ok(())
    }

    /// `free` of a host buffer is a write of all of it; `cudaFree` waits for all work first, as
    /// CUDA's does.
    pub(crate) fn stream_free(&mut self, buf: usize, span: Span) -> R<()> {
        if !self.streams.active {
            return Ok(());
        }
        if self.buffers[buf].space == Space::Cpu {
            self.flush_streams()?;
            let len = self.buffers[buf].data.len() as u64;
            self.stream_host_access(buf, 0, len, true, span)
        } else {
            self.device_sync()
        }
    }

    /// Records the element of a race whose sides are not GPU threads ([`Finding`] without
    /// accesses: the diagnostic's labels say who they are).
    fn note_element(&mut self, buf: usize, index: u64) {
        if self.finding.is_none() {
            let b = &self.buffers[buf];
            let (buffer, space) = (Some(b.name.clone()), Some(b.space.name()));
            self.finding = Some(Finding { buffer, space, index: Some(index), field: None, accesses: Vec::new() });
        }
    }

    /// The race of an access (`label` at `span`) with the work `c` found; `host`: the access is
    /// the host's.
    fn stream_race(&self, buf: usize, c: Conflict, span: Span, label: String, host: bool) -> Fail {
        let b = &self.buffers[buf];
        let other = c.other.describe();
        let why = if host {
            format!(
                "the host did not wait for {other} before this access: synchronise the stream \
                 (`cudaStreamSynchronize`), or an event recorded after the work (`cudaEventSynchronize`), first"
            )
        } else {
            "nothing orders the two: work on different streams runs concurrently unless a synchronisation \
             lies between them (`cudaStreamSynchronize` or `cudaEventSynchronize` before the second is issued, \
             `cudaStreamWaitEvent` on an event recorded after the first, `cudaDeviceSynchronize`)"
                .to_string()
        };
        let d = Diagnostic::error(
            codes::RUN_DATA_RACE,
            format!("data race on `{}[{}]` ({})", b.name, c.index, b.space.name()),
            span,
            label,
        )
        .with_label(c.other_span, format!("{} by {other}", rw(c.other_write)))
        .with_note(why);
        Box::new(d)
    }

    /// The builtins of streams and events, on evaluated arguments.
    pub(crate) fn stream_builtin(&mut self, b: Builtin, vs: &[Value], span: Span) -> R<Value> {
        let arg = |i: usize| vs.get(i).cloned().unwrap_or(Value::Unit);
        match b {
            Builtin::StreamNew => return Ok(Value::Stream(self.streams.new_stream())),
            Builtin::EventNew => return Ok(Value::Event(self.streams.new_event())),
            Builtin::StreamSync => {
                let s = self.stream_of(&arg(0), span)?;
                self.flush_streams()?;
                self.streams.sync_stream(s);
            }
            Builtin::DeviceSync => self.device_sync()?,
            Builtin::StreamDestroy => {
                self.stream_of(&arg(0), span)?;
            }
            Builtin::EventDestroy => {
                self.event_of(&arg(0), span)?;
            }
            Builtin::EventRecord => {
                let (e, s) = (self.event_of(&arg(0), span)?, self.stream_of(&arg(1), span)?);
                self.streams.record(e, s, span, Work::Nothing);
            }
            Builtin::EventSync => {
                let e = self.event_of(&arg(0), span)?;
                self.flush_streams()?;
                self.streams.sync_event(e);
            }
            Builtin::StreamWaitEvent => {
                let (s, e) = (self.stream_of(&arg(0), span)?, self.event_of(&arg(1), span)?);
                self.streams.wait_event(s, e);
            }
            Builtin::CopyAsync => {
                let (dst, doff) = self.pointer(&arg(0), span)?;
                let (src, soff) = self.pointer(&arg(1), span)?;
                // `n` elements of a buffer of structs are `n * stride` values (one per field).
                let n = arg(2).as_u64().unwrap_or(u64::MAX).saturating_mul(self.buffers[src].stride.max(1));
                let s = self.stream_of(&arg(3), span)?;
                for (buf, off, what) in [(src, soff, "source"), (dst, doff, "destination")] {
                    let b = &self.buffers[buf];
                    if b.freed {
                        let msg = format!("use of `{}` after it was freed", b.name);
                        return Err(fail(codes::RUN_USE_AFTER_FREE, msg, span, format!("the {what} of this copy")));
                    }
                    if !matches!(b.space, Space::Cpu | Space::Global) {
                        let msg = format!("an asynchronous copy with `{}` in `{}`", b.name, b.space.name());
                        return Err(fail(codes::RUN_MEMORY_SPACE, msg, span, format!("the {what} of this copy")));
                    }
                    let len = b.data.len() as u64;
                    if off.checked_add(n).is_none_or(|end| end > len) {
                        let msg = format!(
                            "out of bounds: the copy of {n} elements at {off} of `{}`, which has {len} elements",
                            b.name
                        );
                        return Err(fail(codes::RUN_OUT_OF_BOUNDS, msg, span, format!("the {what} of this copy")));
                    }
                }
                let what = "the asynchronous copy".to_string();
                if self.streams.issue(s, what, span, Work::Copy { dst, doff, src, soff, n }) || s == 0 {
                    // A default-stream copy waits for all earlier work; nothing is gained by
                    // keeping it pending.
                    self.flush_streams()?;
                }
            }
            _ => return Err(fail(codes::UNSUPPORTED, "this builtin here", span, "")),
        }
        Ok(Value::Unit)
    }
}
