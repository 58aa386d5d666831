//! Streams and events on `sim`: which asynchronous work is ordered, and the races between work
//! that is not.
//!
//! **Happens-before.** Every piece of work issued on a stream (a kernel launch, an asynchronous
//! copy, an event record) is an *op* `(stream, seq)`, the `seq`-th op of its stream, with a vector
//! clock over the streams: `clock[t]` is how many ops of stream `t` are ordered before it. An op
//! is ordered after the previous op of its stream, after everything the host had waited for when
//! it issued the op (the host's own clock), and after the work of events its stream waits for
//! (`StreamWaitEvent`). The default stream (0) is CUDA's legacy default stream: its ops are
//! ordered after every stream's earlier ops, and every stream's later ops after them. The host
//! waits with `StreamSync`, `EventSync` and `DeviceSync` (and the synchronous copies, which are
//! default-stream work it waits for): its clock joins the stream's, the event's or all.
//!
//! **Execution.** Issued ops are kept pending and run, in an order the schedule chooses among
//! those whose predecessors have run (issue order without `--schedule random`), when the host
//! does anything but issue more work: so output that depends on the order differs between seeds,
//! as on a GPU. A default-stream launch, ordered after all earlier work, runs at once.
//!
//! **Races.** While an op runs, its accesses to global and host memory are summarised per
//! buffer, kind and source position (a bitset of elements, or a range for a copy) and checked
//! against the summaries of the ops that ran before and are not ordered before it; the host's
//! accesses are checked against the ops it has not waited for. Two accesses of which one is a
//! write and that are not so ordered are a data race (E0901). Host accesses need no record: work
//! issued later is ordered after them. An op is retired (its summary dropped) once every op that
//! can still be issued is ordered after it — and the host too where it touched host memory — so
//! memory stays bounded by the work in flight. Atomics are not recorded, as within a launch.

use crate::mem::{self, Oom};
use std::collections::HashMap;
use strata_diag::Span;

/// How many ops of each stream are ordered before a point (missing entries are 0).
pub(crate) type Clock = Vec<u64>;

fn join(a: &mut Clock, b: &Clock) {
    if a.len() < b.len() {
        a.resize(b.len(), 0);
    }
    for (x, y) in a.iter_mut().zip(b) {
        *x = (*x).max(*y);
    }
}

fn covers(c: &Clock, stream: usize, seq: u64) -> bool {
    c.get(stream).copied().unwrap_or(0) >= seq
}

/// Which elements of a buffer an op touched.
enum Elems {
    Range(u64, u64),
    /// One bit per element, and the charge of the words against the memory budget.
    Bits {
        words: Vec<u64>,
        _hold: mem::Hold,
    },
}

impl Elems {
    fn contains(&self, i: u64) -> bool {
        match self {
            Elems::Range(lo, hi) => (*lo..*hi).contains(&i),
            Elems::Bits { words: w, .. } => w.get((i / 64) as usize).is_some_and(|x| x >> (i % 64) & 1 == 1),
        }
    }

    /// The first element in both `self` and `lo..hi`.
    fn first_in(&self, lo: u64, hi: u64) -> Option<u64> {
        match self {
            Elems::Range(a, b) => {
                let (l, h) = (lo.max(*a), hi.min(*b));
                (l < h).then_some(l)
            }
            Elems::Bits { .. } => (lo..hi).find(|&i| self.contains(i)),
        }
    }
}

/// What one op did to one buffer at one source position.
struct Touch {
    buf: usize,
    write: bool,
    span: Span,
    elems: Elems,
}

/// Who an op is, for reports.
#[derive(Clone, Debug)]
pub(crate) struct OpInfo {
    pub stream: usize,
    pub seq: u64,
    pub clock: Clock,
    /// `kernel `k`` or `the asynchronous copy`.
    pub what: String,
    pub span: Span,
}

impl OpInfo {
    /// `` `k` on stream 1 ``.
    pub fn describe(&self) -> String {
        format!("{} on {}", self.what, stream_name(self.stream))
    }
}

/// `the default stream`, `stream 2` (numbered from 1 in creation order).
pub(crate) fn stream_name(s: usize) -> String {
    if s == 0 {
        "the default stream".to_string()
    } else {
        format!("stream {s}")
    }
}

/// An op that ran and may still race with later work.
struct Live {
    info: OpInfo,
    touches: Vec<Touch>,
    host_mem: bool,
}

/// The op running now: its accesses so far, and where to look for races.
struct Current {
    info: OpInfo,
    touches: HashMap<(usize, bool, Span), usize>,
    list: Vec<Touch>,
    host_mem: bool,
    /// For each buffer: the touches (live op, touch) of concurrent ops on it.
    others: HashMap<usize, Vec<(usize, usize)>>,
    /// The key and index of the touch recorded last (a kernel's threads repeat the same ones).
    last: Option<((usize, bool, Span), usize)>,
}

/// A race found: the other side's op and access.
pub(crate) struct Conflict {
    pub other: OpInfo,
    pub other_span: Span,
    pub other_write: bool,
    pub index: u64,
}

/// Work issued and not yet run.
pub(crate) struct Pending<W> {
    pub info: OpInfo,
    pub work: W,
}

/// The state of the streams and events of a run.
pub(crate) struct Streams<W> {
    /// Whether the program made a stream, event or asynchronous copy: only then is default-stream
    /// work recorded and ordered (a program without any runs as before).
    pub active: bool,
    /// Per stream (0: default): the clock of its latest op (and the events it waits for).
    clocks: Vec<Clock>,
    issued: Vec<u64>,
    done: Vec<u64>,
    host: Clock,
    /// Per event: the clock of the work it marks, once recorded.
    events: Vec<Option<Clock>>,
    pending: Vec<Pending<W>>,
    live: Vec<Live>,
    current: Option<Current>,
}

/// Ops kept pending before the host runs them anyway (bounds the memory of a long issue loop).
const MAX_PENDING: usize = 256;

impl<W> Streams<W> {
    pub fn new() -> Self {
        Streams {
            active: false,
            clocks: vec![Vec::new()],
            issued: vec![0],
            done: vec![0],
            host: Vec::new(),
            events: Vec::new(),
            pending: Vec::new(),
            live: Vec::new(),
            current: None,
        }
    }

    pub fn new_stream(&mut self) -> usize {
        self.active = true;
        self.clocks.push(Vec::new());
        self.issued.push(0);
        self.done.push(0);
        self.clocks.len() - 1
    }

    pub fn new_event(&mut self) -> usize {
        self.active = true;
        self.events.push(None);
        self.events.len() - 1
    }

    pub fn is_stream(&self, s: usize) -> bool {
        s < self.clocks.len()
    }

    pub fn is_event(&self, e: usize) -> bool {
        e < self.events.len()
    }

    /// The clock of a new op on `stream`, which becomes the stream's.
    fn next_op(&mut self, stream: usize) -> (u64, Clock) {
        self.issued[stream] += 1;
        let seq = self.issued[stream];
        let mut c = self.clocks[stream].clone();
        join(&mut c, &self.host);
        if stream == 0 {
            for t in 1..self.clocks.len() {
                let ct = self.clocks[t].clone();
                join(&mut c, &ct);
            }
        } else {
            let c0 = self.clocks[0].clone();
            join(&mut c, &c0);
        }
        if c.len() <= stream {
            c.resize(stream + 1, 0);
        }
        c[stream] = seq;
        self.clocks[stream] = c.clone();
        (seq, c)
    }

    /// Issues `work` on `stream`; `true`: the host should run the pending work now.
    pub fn issue(&mut self, stream: usize, what: String, span: Span, work: W) -> bool {
        self.active = true;
        let (seq, clock) = self.next_op(stream);
        self.pending.push(Pending { info: OpInfo { stream, seq, clock, what, span }, work });
        self.pending.len() >= MAX_PENDING
    }

    /// A default-stream op that runs at once, after all earlier work (the caller ran the pending
    /// work first): nothing later can race with it except the host, which never touches GPU
    /// memory, so it is not recorded.
    pub fn default_op(&mut self) {
        let (seq, _) = self.next_op(0);
        self.done[0] = seq;
    }

    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// The next pending op to run: one whose predecessors have all run, chosen by `pick` among
    /// the candidates (given their number).
    pub fn take_ready(&mut self, pick: &mut dyn FnMut(usize) -> usize) -> Option<Pending<W>> {
        let ready: Vec<usize> =
            (0..self.pending.len())
                .filter(|&i| {
                    let o = &self.pending[i].info;
                    o.clock.iter().enumerate().all(|(t, &n)| {
                        if t == o.stream {
                            self.done[t] + 1 == n
                        } else {
                            self.done[t] >= n
                        }
                    })
                })
                .collect();
        if ready.is_empty() {
            return None;
        }
        let k = if ready.len() == 1 { 0 } else { pick(ready.len()).min(ready.len() - 1) };
        Some(self.pending.remove(ready[k]))
    }

    /// Starts running `info`: later accesses are recorded for it and checked against the live ops
    /// it is not ordered after.
    pub fn begin(&mut self, info: OpInfo) {
        let mut others: HashMap<usize, Vec<(usize, usize)>> = HashMap::new();
        for (i, l) in self.live.iter().enumerate() {
            if covers(&info.clock, l.info.stream, l.info.seq) {
                continue;
            }
            for (k, t) in l.touches.iter().enumerate() {
                others.entry(t.buf).or_default().push((i, k));
            }
        }
        self.current =
            Some(Current { info, touches: HashMap::new(), list: Vec::new(), host_mem: false, others, last: None });
    }

    /// Whether an op is running (its accesses are to be recorded).
    pub fn recording(&self) -> bool {
        self.current.is_some()
    }

    /// The op running now.
    pub fn current_info(&self) -> Option<&OpInfo> {
        self.current.as_ref().map(|c| &c.info)
    }

    /// Records an access of the running op to `elems` of `buf` (of `len` elements) at
    /// `span`; a conflicting access of a concurrent op is returned.
    pub fn access(
        &mut self,
        buf: usize,
        len: u64,
        elems: std::ops::Range<u64>,
        write: bool,
        span: Span,
        host_mem: bool,
    ) -> Result<Option<Conflict>, Oom> {
        let (lo, hi) = (elems.start, elems.end);
        let Some(cur) = self.current.as_mut() else { return Ok(None) };
        let others = if cur.others.is_empty() { None } else { cur.others.get(&buf) };
        if let Some(list) = others {
            for &(i, k) in list {
                let t = &self.live[i].touches[k];
                if !(write || t.write) {
                    continue;
                }
                if let Some(index) = t.elems.first_in(lo, hi) {
                    return Ok(Some(Conflict {
                        other: self.live[i].info.clone(),
                        other_span: t.span,
                        other_write: t.write,
                        index,
                    }));
                }
            }
        }
        cur.host_mem |= host_mem;
        if hi - lo > 1 {
            cur.list.push(Touch { buf, write, span, elems: Elems::Range(lo, hi) });
            return Ok(None);
        }
        let key = (buf, write, span);
        let k = match cur.last.filter(|(k, _)| *k == key).map(|(_, i)| i).or_else(|| cur.touches.get(&key).copied()) {
            Some(k) => k,
            None => {
                let words = len.div_ceil(64);
                let hold = mem::Hold::charge(words * 8)?;
                let w = mem::try_vec(words, 0u64).map_err(|_| Oom::of(words.into(), 8))?;
                cur.list.push(Touch { buf, write, span, elems: Elems::Bits { words: w, _hold: hold } });
                cur.touches.insert(key, cur.list.len() - 1);
                cur.list.len() - 1
            }
        };
        cur.last = Some((key, k));
        if let Elems::Bits { words: w, .. } = &mut cur.list[k].elems {
            if let Some(x) = w.get_mut((lo / 64) as usize) {
                *x |= 1 << (lo % 64);
            }
        }
        Ok(None)
    }

    /// The running op is done.
    pub fn end(&mut self) {
        if let Some(c) = self.current.take() {
            self.done[c.info.stream] = c.info.seq;
            if !c.list.is_empty() {
                self.live.push(Live { info: c.info, touches: c.list, host_mem: c.host_mem });
            }
        }
    }

    /// A host access to elements `lo..hi` of `buf`: the first op the host has not waited for
    /// that touched one of them in a conflicting way.
    pub fn host_access(&self, buf: usize, lo: u64, hi: u64, write: bool) -> Option<Conflict> {
        for l in &self.live {
            if covers(&self.host, l.info.stream, l.info.seq) {
                continue;
            }
            for t in &l.touches {
                if t.buf != buf || !(write || t.write) {
                    continue;
                }
                if let Some(index) = t.elems.first_in(lo, hi) {
                    return Some(Conflict { other: l.info.clone(), other_span: t.span, other_write: t.write, index });
                }
            }
        }
        None
    }

    pub fn has_live(&self) -> bool {
        !self.live.is_empty()
    }

    /// The host waits for the work issued on `stream` so far.
    pub fn sync_stream(&mut self, stream: usize) {
        let c = self.clocks[stream].clone();
        join(&mut self.host, &c);
        self.retire();
    }

    /// The host waits for all work issued so far.
    pub fn sync_device(&mut self) {
        for t in 0..self.clocks.len() {
            let c = self.clocks[t].clone();
            join(&mut self.host, &c);
        }
        self.retire();
    }

    /// `EventRecord(event, stream)`: the event marks the stream's work issued so far, as an op of
    /// the stream that does nothing (so that a default-stream record waits for every stream).
    pub fn record(&mut self, event: usize, stream: usize, span: Span, nothing: W) {
        self.active = true;
        let (seq, clock) = self.next_op(stream);
        self.events[event] = Some(clock.clone());
        let what = "the event record".to_string();
        self.pending.push(Pending { info: OpInfo { stream, seq, clock, what, span }, work: nothing });
    }

    /// The host waits for the work `event` marks (at once where it was never recorded).
    pub fn sync_event(&mut self, event: usize) {
        if let Some(c) = self.events[event].clone() {
            join(&mut self.host, &c);
        }
        self.retire();
    }

    /// `stream`'s later work waits for the work `event` marks now.
    pub fn wait_event(&mut self, stream: usize, event: usize) {
        if let Some(c) = self.events[event].clone() {
            join(&mut self.clocks[stream], &c);
        }
    }

    /// Drops the summaries of the ops every op that can still be issued is ordered after (and
    /// the host too, for those that touched host memory). Only with no pending work: pending ops
    /// are checked against the live ones when they run.
    pub fn retire(&mut self) {
        if !self.pending.is_empty() || self.current.is_some() {
            return;
        }
        let mut floor = self.host.clone();
        join(&mut floor, &self.clocks[0]);
        let host = &self.host;
        self.live.retain(|l| {
            let (s, k) = (l.info.stream, l.info.seq);
            !(covers(&floor, s, k) && (!l.host_mem || covers(host, s, k)))
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(s: &Streams<()>, i: usize) -> OpInfo {
        s.pending[i].info.clone()
    }

    #[test]
    fn same_stream_ordered_other_stream_not() {
        let mut s: Streams<()> = Streams::new();
        let (a, b) = (s.new_stream(), s.new_stream());
        s.issue(a, "k1".into(), Span::DUMMY, ());
        s.issue(a, "k2".into(), Span::DUMMY, ());
        s.issue(b, "k3".into(), Span::DUMMY, ());
        let (k1, k2, k3) = (info(&s, 0), info(&s, 1), info(&s, 2));
        assert!(covers(&k2.clock, k1.stream, k1.seq));
        assert!(!covers(&k3.clock, k1.stream, k1.seq));
        // Only k1 and k3 are ready at first; k2 after k1.
        let first = s.take_ready(&mut |_| 0).map(|p| p.info.what);
        assert_eq!(first.as_deref(), Some("k1"));
        s.done[a] = 1;
        let mut n = 0;
        s.take_ready(&mut |k| {
            n = k;
            0
        });
        assert_eq!(n, 2);
    }

    #[test]
    fn events_and_default_stream_order() {
        let mut s: Streams<()> = Streams::new();
        let (a, b) = (s.new_stream(), s.new_stream());
        let e = s.new_event();
        s.issue(a, "k1".into(), Span::DUMMY, ());
        s.record(e, a, Span::DUMMY, ());
        s.wait_event(b, e);
        s.issue(b, "k2".into(), Span::DUMMY, ());
        let (k1, k2) = (info(&s, 0), info(&s, 2));
        assert!(covers(&k2.clock, k1.stream, k1.seq));
        // A default-stream op waits for every stream; later work on any stream waits for it.
        s.issue(a, "k3".into(), Span::DUMMY, ());
        s.issue(0, "d".into(), Span::DUMMY, ());
        s.issue(b, "k4".into(), Span::DUMMY, ());
        let (k3, d, k4) = (info(&s, 3), info(&s, 4), info(&s, 5));
        assert!(covers(&d.clock, k3.stream, k3.seq) && covers(&d.clock, k2.stream, k2.seq));
        assert!(covers(&k4.clock, d.stream, d.seq) && covers(&k4.clock, k3.stream, k3.seq));
    }

    #[test]
    fn races_found_and_ops_retired() {
        let mut s: Streams<()> = Streams::new();
        let (a, b) = (s.new_stream(), s.new_stream());
        s.issue(a, "w".into(), Span::DUMMY, ());
        s.issue(b, "r".into(), Span::DUMMY, ());
        let w = s.take_ready(&mut |_| 0).map(|p| p.info);
        s.begin(w.unwrap_or_else(|| info(&s, 0)));
        assert!(s.access(7, 100, 5..6, true, Span::DUMMY, false).ok().flatten().is_none());
        s.end();
        let r = s.take_ready(&mut |_| 0).map(|p| p.info);
        s.begin(r.unwrap_or_else(|| info(&s, 0)));
        assert!(s.access(7, 100, 4..5, false, Span::DUMMY, false).ok().flatten().is_none());
        let c = s.access(7, 100, 5..6, false, Span::DUMMY, false).ok().flatten();
        assert_eq!(c.map(|c| (c.other.what, c.index)), Some(("w".to_string(), 5)));
        s.end();
        assert_eq!(s.live.len(), 2);
        s.sync_stream(a);
        assert_eq!(s.live.len(), 1, "the host waited for `w`, and work issued later follows the host");
        s.sync_device();
        assert!(s.live.is_empty());
    }
}
