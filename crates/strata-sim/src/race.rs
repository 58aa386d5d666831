//! The race detector's shadow memory: for each element of GPU memory touched during a launch,
//! the last write and the reads since, compactly.
//!
//! A logged access is its *stamp* (a number for its block and block epoch, counted up through the
//! launch: blocks run one after another, so the stamps of the current block are those from its
//! first on), its thread in the block, its warp epoch and its source position. Accesses are stored
//! packed in 32 bits: a *context* number for (stamp, warp epoch, position), interned in a table of
//! 12 bytes a context, and the thread, in as many bits as the launch's block size needs. A shadow
//! cell is 8 bytes: the last write and the first read since, the read's lowest bit saying whether
//! more reads are kept in a side table (a hash map by element, up to four more). Cells are
//! allocated in pages of [`PAGE`] elements on the first access to a page, and everything is
//! dropped at the end of the launch. Every allocation is charged to the memory budget: the cells,
//! the side table, the contexts and a table of the block of each stamp (4 bytes per block epoch).
//! Contexts are few (one per block epoch, position and warp epoch that occurs, shared by the
//! threads of a warp or block); a launch with more than fit in the bits the thread leaves
//! ([`Full`]) is refused rather than checked wrongly.
//!
//! **Which reads are kept.** A write races with the *first* read, in the order they happened,
//! that is concurrent with it; a read is kept only if it can be that read for some later write.
//! Blocks run one after another and a block's epochs and warp epochs only grow, so:
//! a read by an earlier block than the first read's is concurrent with every later write
//! (nothing after it matters); reads from an older epoch of the first read's block are
//! concurrent only with other blocks' writes, like the first read itself; within the current
//! epoch, once reads from two warps are kept every write is concurrent with one of them; within
//! one warp, two reads by different threads at the current warp epoch cover every thread, and a
//! read at an older warp epoch is covered by an earlier read of its warp. So at most four reads
//! besides the first are ever needed, and the detector reports exactly what a full log of every
//! read would (`tests::agrees_with_a_full_log` checks this on random access sequences).

use crate::mem::{self, Oom};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use strata_diag::Span;

/// Elements per page of shadow cells.
pub const PAGE: usize = 1024;

/// What orders an access: its block and thread (linear numbers), the barriers its block had
/// passed, and the warp barriers its warp had passed.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Seg {
    pub block: u32,
    pub thread: u32,
    pub epoch: u32,
    pub wepoch: u32,
    /// The `__threadfence()`s the thread had executed (in its block).
    pub fgen: u32,
}

#[cfg(test)]
impl Seg {
    /// Nothing orders `self` and `other`: different blocks, or different threads of one block
    /// between the same barriers (of the block, and of the warp when both are in one warp).
    pub fn concurrent(&self, other: &Seg) -> bool {
        if self.block != other.block {
            return true;
        }
        if self.thread == other.thread || self.epoch != other.epoch {
            return false;
        }
        let same_warp = self.thread / 32 == other.thread / 32;
        !(same_warp && self.wepoch != other.wepoch)
    }
}

/// A logged access, unpacked (`stamp == 0`: none).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
struct Ent {
    /// The block and block epoch.
    stamp: u32,
    thread: u32,
    wepoch: u32,
    span: u32,
    fgen: u32,
}

impl Ent {
    fn warp(&self) -> u32 {
        self.thread / 32
    }
}

/// A release: an atomic by `thread` of `block` after its `fgen`-th `__threadfence()`, at
/// `stamp`. It publishes the block's accesses of its earlier epochs (stamps from `block_start`),
/// ordered before the fence by barriers, and the thread's own before the fence; a later atomic
/// on the same element acquires it: the acquiring thread's later accesses, and after the next
/// barrier its block's, are ordered after those (CUDA's fence-and-flag pattern, the last block of
/// a reduction reading the other blocks' results).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Rel {
    block: u32,
    block_start: u32,
    stamp: u32,
    thread: u32,
    fgen: u32,
}

impl Rel {
    fn publishes(&self, e: &Ent) -> bool {
        (e.stamp >= self.block_start && e.stamp < self.stamp)
            || (e.stamp == self.stamp && e.thread == self.thread && e.fgen < self.fgen)
    }

    /// Everything `other` publishes, `self` does too.
    fn covers(&self, other: &Rel) -> bool {
        self.block == other.block
            && (self.stamp > other.stamp
                || (self.stamp == other.stamp && self.thread == other.thread && self.fgen >= other.fgen))
    }
}

/// Releases kept at most (beyond, new ones are dropped: accesses they would order are reported).
const MAX_RELEASES: usize = 1 << 16;

/// Adds `r` to `rs` unless one there covers it, dropping those it covers; whether it was added.
fn add_release(rs: &mut Vec<Rel>, r: Rel) -> bool {
    if rs.iter().any(|x| x.covers(&r)) {
        return false;
    }
    rs.retain(|x| !r.covers(x));
    rs.push(r);
    true
}

/// The current access, as the log compares others with it.
#[derive(Copy, Clone)]
struct Now<'a> {
    ent: Ent,
    /// The first stamp of the current block.
    block_start: u32,
    /// The releases the current access is ordered after: its block's, and its thread's.
    acq_block: &'a [Rel],
    acq_mine: &'a [Rel],
}

impl Now<'_> {
    /// Nothing orders `e` and the current access (see [`Seg::concurrent`]).
    fn concurrent(&self, e: &Ent) -> bool {
        if e.stamp == 0 {
            return false;
        }
        if e.stamp < self.block_start {
            // Another block: concurrent unless a release acquired since publishes it.
            return !self.published(e);
        }
        if e.thread == self.ent.thread || e.stamp != self.ent.stamp {
            return false;
        }
        // A warp barrier between them, or a release of the other thread acquired since.
        let warp_ordered = e.warp() == self.ent.warp() && e.wepoch != self.ent.wepoch;
        !warp_ordered && !self.published(e)
    }

    fn published(&self, e: &Ent) -> bool {
        if self.acq_block.is_empty() && self.acq_mine.is_empty() {
            return false;
        }
        self.acq_block.iter().chain(self.acq_mine).any(|r| r.publishes(e))
    }

    /// The same block and epoch as the current access.
    fn same_interval(&self, e: &Ent) -> bool {
        e.stamp == self.ent.stamp
    }

    fn same_block(&self, e: &Ent) -> bool {
        e.stamp >= self.block_start
    }
}

/// What a context number stands for.
#[derive(Copy, Clone, Debug, Default)]
struct Ctx {
    stamp: u32,
    wepoch: u32,
    span: u32,
    fgen: u32,
}

/// The reads kept after the first (packed).
#[derive(Copy, Clone, Debug, Default)]
struct More {
    n: u32,
    e: [u32; 4],
}

/// The bit of a cell's read half that says more reads are kept.
const MORE: u32 = 1;

/// An earlier access that races with the current one: its block and thread (linear numbers),
/// position, and whether it wrote.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    pub block: u32,
    pub thread: u32,
    pub span: Span,
    pub write: bool,
}

/// Why an access could not be logged.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Fail {
    Oom(Oom),
    /// More contexts than a packed access can name (the limit).
    Full(u32),
}

impl From<Oom> for Fail {
    fn from(e: Oom) -> Fail {
        Fail::Oom(e)
    }
}

/// A fast hash of small integer keys (the default SipHash dominated the log's lookups).
#[derive(Default)]
struct Mix(u64);

impl Hasher for Mix {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(u64::from(*b));
        }
    }
    fn write_u32(&mut self, x: u32) {
        self.write_u64(u64::from(x));
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }
}

type Fast = BuildHasherDefault<Mix>;

/// Bytes charged per slot of the side table (its entry and hashbrown's control byte).
const MORE_SLOT: u64 = (std::mem::size_of::<(usize, More)>() + 1) as u64;

/// The shadow of one buffer: its pages of cells and its side table of reads.
#[derive(Default)]
struct Shadow {
    pages: Vec<Option<Box<[u64]>>>,
    more: HashMap<usize, More, Fast>,
    /// Bytes charged for the pages and the side table.
    charged: u64,
}

/// How an access is logged in a shadow.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Mode {
    Read,
    Write,
    /// Checked as a write would be, without being logged.
    Check,
}

#[derive(Default)]
pub struct Races {
    shadows: HashMap<usize, Shadow, Fast>,
    /// The atomic accesses, logged as reads of a shadow of their own: atomics never race with
    /// each other, but each races with a plain access that nothing orders with it, as a write
    /// would (checked against the plain shadow without being logged there).
    atomics: HashMap<usize, Shadow, Fast>,
    /// The block of each stamp (index 0 is unused).
    stamp_block: Vec<u32>,
    /// The current stamp's block and epoch.
    current: Option<(u32, u32)>,
    block_start: u32,
    /// Context 0 is unused (a packed 0 is no access).
    ctxs: Vec<Ctx>,
    /// The contexts of the current stamp, by warp epoch and position.
    ctx_ids: HashMap<(u32, u32, u32), u32, Fast>,
    /// The last context made or found: its stamp, warp epoch, position and number.
    last_ctx: (u32, u32, u32, Span, u32),
    /// The releases made at each element (buffer, element) by an atomic ([`Rel`]).
    releases: HashMap<(usize, usize), Vec<Rel>, Fast>,
    releases_kept: usize,
    /// Releases acquired in the current block epoch, by thread; and by the block in its earlier
    /// epochs (a barrier passes a thread's acquisitions on to the whole block).
    acq_thread: HashMap<u32, Vec<Rel>, Fast>,
    acq_block: Vec<Rel>,
    spans: Vec<Span>,
    span_ids: HashMap<Span, u32>,
    span_cache: Vec<(Span, u32)>,
    /// Bits below the context in a packed access: the thread's and the [`MORE`] bit.
    shift: u32,
    /// Bytes charged to the budget.
    charged: u64,
}

impl Drop for Races {
    fn drop(&mut self) {
        mem::release(self.charged);
    }
}

/// Room for one more item in `v`, charged.
fn grow<T>(v: &mut Vec<T>, charged: &mut u64) -> Result<(), Oom> {
    let before = mem::bytes_of(v);
    mem::reserve_one(v)?;
    *charged += mem::bytes_of(v) - before;
    Ok(())
}

impl Races {
    pub fn new() -> Races {
        Races::default()
    }

    /// Forgets everything (the end of a launch).
    pub fn clear(&mut self) {
        mem::release(self.charged);
        *self = Races::default();
    }

    /// Starts a launch whose blocks have `threads` threads.
    pub fn begin(&mut self, threads: u64) {
        self.clear();
        let bits = 64 - threads.saturating_sub(1).leading_zeros();
        self.shift = bits.min(31) + 1;
    }

    /// Bytes held now.
    #[cfg(test)]
    pub fn bytes(&self) -> u64 {
        self.charged
    }

    /// Forgets the accesses to buffer `buf` (shared memory at the end of its block).
    pub fn forget(&mut self, buf: usize) {
        for sh in [self.shadows.remove(&buf), self.atomics.remove(&buf)].into_iter().flatten() {
            self.charged -= sh.charged;
            mem::release(sh.charged);
        }
    }

    /// The stamp of an access by `me` (a new one when its block or epoch is not the last one's).
    fn stamp(&mut self, me: Seg) -> Result<u32, Oom> {
        if self.current != Some((me.block, me.epoch)) {
            if self.stamp_block.is_empty() {
                grow(&mut self.stamp_block, &mut self.charged)?;
                self.stamp_block.push(u32::MAX);
            }
            grow(&mut self.stamp_block, &mut self.charged)?;
            self.stamp_block.push(me.block);
            let stamp = (self.stamp_block.len() - 1) as u32;
            if self.current.is_none_or(|(b, _)| b != me.block) {
                self.block_start = stamp;
                self.acq_thread.clear();
                self.acq_block.clear();
            } else {
                for r in std::mem::take(&mut self.acq_thread).into_values().flatten() {
                    add_release(&mut self.acq_block, r);
                }
            }
            self.current = Some((me.block, me.epoch));
            self.ctx_ids.clear();
        }
        Ok((self.stamp_block.len() - 1) as u32)
    }

    fn span_id(&mut self, span: Span) -> u32 {
        if self.span_cache.is_empty() {
            self.span_cache = vec![(Span::DUMMY, u32::MAX); 64];
        }
        let slot = (span.lo ^ span.hi.rotate_left(7) ^ span.file.0) as usize % 64;
        let (s, id) = self.span_cache[slot];
        if s == span && id != u32::MAX {
            return id;
        }
        let id = match self.span_ids.get(&span) {
            Some(&id) => id,
            None => {
                // Spans are positions in the program text: few, and not charged.
                self.spans.push(span);
                let id = (self.spans.len() - 1) as u32;
                self.span_ids.insert(span, id);
                id
            }
        };
        self.span_cache[slot] = (span, id);
        id
    }

    /// The packed form of an access by `thread` at warp epoch `wepoch` and `span`, in the current
    /// stamp (its context is made on first use).
    fn pack(&mut self, stamp: u32, thread: u32, wepoch: u32, fgen: u32, span: Span) -> Result<u32, Fail> {
        let (s, w, g, sp, id) = self.last_ctx;
        let ctx = if id != 0 && s == stamp && w == wepoch && g == fgen && sp == span {
            id
        } else {
            let span_id = self.span_id(span);
            let id = match self.ctx_ids.get(&(wepoch, span_id, fgen)) {
                Some(&id) => id,
                None => {
                    if self.ctxs.is_empty() {
                        grow(&mut self.ctxs, &mut self.charged)?;
                        self.ctxs.push(Ctx::default());
                    }
                    let id = self.ctxs.len() as u32;
                    let limit = 1u32 << (32 - self.shift);
                    if id >= limit {
                        return Err(Fail::Full(limit - 1));
                    }
                    grow(&mut self.ctxs, &mut self.charged)?;
                    self.ctxs.push(Ctx { stamp, wepoch, span: span_id, fgen });
                    // Few per stamp (warp epochs times positions), dropped with the stamp.
                    self.ctx_ids.insert((wepoch, span_id, fgen), id);
                    id
                }
            };
            self.last_ctx = (stamp, wepoch, fgen, span, id);
            id
        };
        if self.shift < 32 && thread >> (self.shift - 1) != 0 {
            return Err(Fail::Full(0)); // a thread beyond the block size given to `begin`
        }
        Ok(ctx << self.shift | thread << 1)
    }

    /// Logs a plain access by `me` at `span` to element `off` of buffer `buf` (of `len`
    /// elements); returns the earlier access it races with, if any (a plain one, or an atomic
    /// one, reported as a write).
    pub fn access(
        &mut self,
        buf: usize,
        len: usize,
        off: usize,
        me: Seg,
        span: Span,
        write: bool,
    ) -> Result<Option<Conflict>, Fail> {
        let mode = if write { Mode::Write } else { Mode::Read };
        if let Some(c) = self.log_in(false, buf, len, off, me, span, mode)? {
            return Ok(Some(c));
        }
        if self.atomics.is_empty() {
            return Ok(None);
        }
        let found = self.log_in(true, buf, len, off, me, span, Mode::Check)?;
        Ok(found.map(|c| Conflict { write: true, ..c }))
    }

    /// Logs an atomic access (`atomicAdd`, …): it races with an earlier plain access that
    /// nothing orders with it, and with later ones ([`Races::access`]), never with atomics.
    pub fn atomic(
        &mut self,
        buf: usize,
        len: usize,
        off: usize,
        me: Seg,
        span: Span,
    ) -> Result<Option<Conflict>, Fail> {
        if let Some(c) = self.log_in(false, buf, len, off, me, span, Mode::Check)? {
            return Ok(Some(c));
        }
        self.log_in(true, buf, len, off, me, span, Mode::Read)?;
        self.sync(buf, off, me)?;
        Ok(None)
    }

    /// The atomic by `me` at element `off` of `buf` acquires the releases of other blocks made
    /// there, and is a release itself after a `__threadfence()` of its thread ([`Rel`]).
    fn sync(&mut self, buf: usize, off: usize, me: Seg) -> Result<(), Fail> {
        let stamp = self.stamp(me)?;
        let key = (buf, off);
        if let Some(rs) = self.releases.get(&key) {
            // Another block's release, or another thread's of this block (a lock between
            // threads of one block: the barriers order the rest).
            for r in rs.iter().filter(|r| r.block != me.block || (r.thread != me.thread && r.stamp == stamp)) {
                add_release(self.acq_thread.entry(me.thread).or_default(), *r);
            }
        }
        if me.fgen > 0 && self.releases_kept < MAX_RELEASES {
            let r = Rel { block: me.block, block_start: self.block_start, stamp, thread: me.thread, fgen: me.fgen };
            if add_release(self.releases.entry(key).or_default(), r) {
                self.releases_kept += 1;
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn log_in(
        &mut self,
        atomic: bool,
        buf: usize,
        len: usize,
        off: usize,
        me: Seg,
        span: Span,
        mode: Mode,
    ) -> Result<Option<Conflict>, Fail> {
        let write = mode != Mode::Read;
        if mode == Mode::Check {
            // Nothing logged in the shadow yet: nothing to race with (and nothing to allocate).
            let map = if atomic { &self.atomics } else { &self.shadows };
            match map.get(&buf) {
                Some(sh) if sh.pages.get(off / PAGE).is_some_and(|p| p.is_some()) => {}
                _ => return Ok(None),
            }
        }
        if self.shift == 0 {
            self.begin(1 << 10);
        }
        let stamp = self.stamp(me)?;
        let packed = self.pack(stamp, me.thread, me.wepoch, me.fgen, span)?;
        // The releases the access is ordered after: the block's, and its thread's own.
        let Races {
            shadows,
            atomics,
            stamp_block,
            ctxs,
            spans,
            charged,
            shift,
            block_start,
            acq_block,
            acq_thread,
            ..
        } = self;
        // (No lookup per access where nothing was acquired: the common case, without atomics.)
        let acq_mine =
            if acq_thread.is_empty() { &[][..] } else { acq_thread.get(&me.thread).map_or(&[][..], |v| &v[..]) };
        let shadows = if atomic { atomics } else { shadows };
        let (shift, tmask) = (*shift, (1u32 << (*shift - 1)) - 1);
        let unpack = |p: u32| -> Ent {
            if p >> shift == 0 {
                return Ent::default();
            }
            let c = ctxs[(p >> shift) as usize];
            Ent { stamp: c.stamp, thread: (p >> 1) & tmask, wepoch: c.wepoch, span: c.span, fgen: c.fgen }
        };
        let now = Now { ent: unpack(packed), block_start: *block_start, acq_block, acq_mine };
        let sh = match shadows.get_mut(&buf) {
            Some(sh) => sh,
            None => {
                let pages = mem::try_vec(len.div_ceil(PAGE) as u64, None)?;
                let bytes = mem::bytes_of(&pages);
                *charged += bytes;
                shadows.entry(buf).or_insert(Shadow { pages, more: HashMap::default(), charged: bytes })
            }
        };
        let Shadow { pages, more, charged: sh_charged } = sh;
        let page = match &mut pages[off / PAGE] {
            Some(p) => p,
            empty => {
                let cells = mem::try_vec(PAGE as u64, 0u64)?;
                *charged += mem::bytes_of(&cells);
                *sh_charged += mem::bytes_of(&cells);
                empty.insert(cells.into_boxed_slice())
            }
        };
        let cell = &mut page[off % PAGE];
        let (wrote, read) = (*cell as u32, (*cell >> 32) as u32);
        let first = read & !MORE;
        let had_more = read & MORE != 0;
        let found = |p: u32, write: bool| {
            let e = unpack(p);
            now.concurrent(&e).then(|| Conflict {
                block: stamp_block[e.stamp as usize],
                thread: e.thread,
                span: spans[e.span as usize],
                write,
            })
        };
        if let Some(c) = found(wrote, true) {
            return Ok(Some(c));
        }
        let old = if had_more { more.get(&off).copied().unwrap_or_default() } else { More::default() };
        if write {
            for p in std::iter::once(first).chain(old.e[..old.n as usize].iter().copied()) {
                if let Some(c) = found(p, false) {
                    return Ok(Some(c));
                }
            }
            if mode == Mode::Check {
                return Ok(None);
            }
            *cell = u64::from(packed);
            if had_more {
                more.remove(&off);
            }
            return Ok(None);
        }
        // A read: keep it if it can be the first read a later write races with.
        let me = now.ent;
        let same =
            |a: &Ent, b: &Ent| a.stamp == b.stamp && a.thread == b.thread && a.wepoch == b.wepoch && a.fgen == b.fgen;
        if first == 0 {
            *cell = u64::from(wrote) | u64::from(packed) << 32;
            return Ok(None);
        }
        let first_ent = unpack(first);
        if same(&first_ent, &me) || !now.same_block(&first_ent) {
            return Ok(None);
        }
        if old.e[..old.n as usize].iter().any(|p| same(&unpack(*p), &me)) {
            return Ok(None);
        }
        // The reads of the current epoch, in order (the first read too, if it is one of them).
        let mut current = [Ent::default(); 5];
        let mut n = 0;
        if now.same_interval(&first_ent) {
            current[0] = first_ent;
            n = 1;
        }
        let mut kept = More::default();
        for p in &old.e[..old.n as usize] {
            let e = unpack(*p);
            let stale_in_my_warp =
                e.warp() == me.warp() && e.wepoch < me.wepoch && current[..n].iter().any(|c| c.warp() == me.warp());
            if now.same_interval(&e) && !stale_in_my_warp {
                current[n] = e;
                n += 1;
                kept.e[kept.n as usize] = *p;
                kept.n += 1;
            }
        }
        let current = &current[..n];
        let two_warps = current.iter().any(|c| c.warp() != current[0].warp());
        let covered = if two_warps {
            true
        } else if current.first().is_some_and(|c| c.warp() == me.warp()) {
            // Two threads at my warp epoch.
            let mut at_mine = current.iter().filter(|c| c.wepoch == me.wepoch);
            at_mine.next().is_some_and(|a| at_mine.any(|b| b.thread != a.thread))
        } else {
            false
        };
        if !covered {
            debug_assert!(kept.n < 4, "at most four reads besides the first are needed");
            if (kept.n as usize) < kept.e.len() {
                kept.e[kept.n as usize] = packed;
                kept.n += 1;
            }
        }
        match (had_more, kept.n) {
            (false, 0) => {}
            (true, 0) => {
                more.remove(&off);
                *cell = u64::from(wrote) | u64::from(first) << 32;
            }
            (true, _) => {
                // Rewritten only when it changed: most reads leave it as it was.
                if kept.n != old.n || kept.e != old.e {
                    more.insert(off, kept);
                }
            }
            (false, _) => {
                if more.len() == more.capacity() {
                    // Room for more entries, charged (the table's slots and control bytes).
                    let want = more.capacity().max(16);
                    let fail = Oom::of(want as u128, MORE_SLOT as usize);
                    mem::charge(want as u64 * MORE_SLOT).map_err(|_| fail)?;
                    mem::release(want as u64 * MORE_SLOT);
                    let before = more.capacity() as u64 * MORE_SLOT;
                    more.try_reserve(want).map_err(|_| fail)?;
                    let added = more.capacity() as u64 * MORE_SLOT - before;
                    mem::charge_anyway(added);
                    *charged += added;
                    *sh_charged += added;
                }
                more.insert(off, kept);
                *cell = u64::from(wrote) | u64::from(first | MORE) << 32;
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_diag::FileId;

    type Logged = (Seg, Span);

    /// The reference: the last write and every read since, in order, and every atomic access.
    #[derive(Default)]
    struct Full {
        cells: HashMap<usize, (Option<Logged>, Vec<Logged>)>,
        atomics: HashMap<usize, Vec<Logged>>,
    }

    impl Full {
        fn access(&mut self, off: usize, me: Seg, span: Span, write: bool) -> Option<Conflict> {
            if let Some(c) = self.plain(off, me, span, write) {
                return Some(c);
            }
            let atomics = self.atomics.entry(off).or_default();
            let (s, sp) = atomics.iter().find(|(s, _)| s.concurrent(&me))?;
            Some(Conflict { block: s.block, thread: s.thread, span: *sp, write: true })
        }

        /// An atomic: checked as a plain write is, without replacing it; never against atomics.
        fn atomic(&mut self, off: usize, me: Seg, span: Span) -> Option<Conflict> {
            let (w, reads) = self.cells.entry(off).or_default();
            if let Some((s, sp)) = w.filter(|(s, _)| s.concurrent(&me)) {
                return Some(Conflict { block: s.block, thread: s.thread, span: sp, write: true });
            }
            if let Some((s, sp)) = reads.iter().find(|(s, _)| s.concurrent(&me)) {
                return Some(Conflict { block: s.block, thread: s.thread, span: *sp, write: false });
            }
            let atomics = self.atomics.entry(off).or_default();
            if !atomics.iter().any(|(s, _)| *s == me) {
                atomics.push((me, span));
            }
            None
        }

        fn plain(&mut self, off: usize, me: Seg, span: Span, write: bool) -> Option<Conflict> {
            let (w, reads) = self.cells.entry(off).or_default();
            if let Some((s, sp)) = w.filter(|(s, _)| s.concurrent(&me)) {
                return Some(Conflict { block: s.block, thread: s.thread, span: sp, write: true });
            }
            if write {
                if let Some((s, sp)) = reads.iter().find(|(s, _)| s.concurrent(&me)) {
                    return Some(Conflict { block: s.block, thread: s.thread, span: *sp, write: false });
                }
                *w = Some((me, span));
                reads.clear();
            } else if !reads.iter().any(|(s, _)| *s == me) {
                reads.push((me, span));
            }
            None
        }
    }

    fn splitmix(s: &mut u64) -> u64 {
        crate::splitmix64(s)
    }

    /// Random launches (blocks in turn, threads interleaved, block and warp barriers, reads and
    /// writes of a few elements): the compact log reports exactly what the full one does.
    #[test]
    fn agrees_with_a_full_log() {
        let _s = mem::Session::start(u64::MAX);
        for seed in 0..(std::env::var("RACE_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(3000u64)) {
            let mut rng = seed;
            let mut races = Races::new();
            let mut full = Full::default();
            let blocks = 1 + splitmix(&mut rng) % 3;
            let threads = 1 + splitmix(&mut rng) % 70;
            races.begin(threads);
            let elems = 1 + (splitmix(&mut rng) % 4) as usize;
            let write_odds = 1 + splitmix(&mut rng) % 6;
            // Some launches make some accesses atomic.
            let atomic_odds = if seed % 3 == 0 { 0 } else { 2 + splitmix(&mut rng) % 6 };
            'launch: for block in 0..blocks as u32 {
                let mut epoch = 0;
                let mut wepochs = [0u32; 3];
                for _ in 0..splitmix(&mut rng) % 150 {
                    let r = splitmix(&mut rng);
                    match r % 20 {
                        0 => epoch += 1,
                        1 | 2 => wepochs[(r / 20 % 3) as usize] += 1,
                        _ => {
                            let thread = ((r >> 8) % threads) as u32;
                            let me = Seg { block, thread, epoch, wepoch: wepochs[thread as usize / 32], fgen: 0 };
                            let off = (r >> 20) as usize % elems;
                            let span = Span { file: FileId(0), lo: (r >> 30) as u32 % 5, hi: 9 };
                            let write = (r >> 40).is_multiple_of(write_odds);
                            let (a, b) = if atomic_odds != 0 && (r >> 48).is_multiple_of(atomic_odds) {
                                (races.atomic(0, elems, off, me, span).unwrap(), full.atomic(off, me, span))
                            } else {
                                (
                                    races.access(0, elems, off, me, span, write).unwrap(),
                                    full.access(off, me, span, write),
                                )
                            };
                            assert_eq!(a, b, "seed {seed}");
                            if a.is_some() {
                                break 'launch;
                            }
                        }
                    }
                }
            }
        }
    }

    /// A fence and an atomic publish the thread's earlier writes to the thread whose later
    /// atomic on the same element acquires them, and after its next barrier to its block; not
    /// to other threads before that, and not writes after the fence.
    #[test]
    fn a_fence_and_an_atomic_publish_earlier_writes() {
        let _s = mem::Session::start(u64::MAX);
        let mut races = Races::new();
        races.begin(64);
        let at = |block, thread, epoch, fgen| Seg { block, thread, epoch, wepoch: 0, fgen };
        let sp = Span::DUMMY;
        // Block 0, thread 0: writes element 0 of buffer 0, fences, adds to the counter (buffer
        // 1), then writes element 1.
        assert_eq!(races.access(0, 4, 0, at(0, 0, 0, 0), sp, true), Ok(None));
        assert_eq!(races.atomic(1, 1, 0, at(0, 0, 0, 1), sp), Ok(None));
        assert_eq!(races.access(0, 4, 1, at(0, 0, 0, 1), sp, true), Ok(None));
        // Block 1: thread 3 reads element 0 before any acquire: a race.
        assert!(races.access(0, 4, 0, at(1, 3, 0, 0), sp, false).unwrap().is_some());
        let mut races2 = Races::new();
        races2.begin(64);
        assert_eq!(races2.access(0, 4, 0, at(0, 0, 0, 0), sp, true), Ok(None));
        assert_eq!(races2.atomic(1, 1, 0, at(0, 0, 0, 1), sp), Ok(None));
        assert_eq!(races2.access(0, 4, 1, at(0, 0, 0, 1), sp, true), Ok(None));
        // Block 1, thread 0 acquires: it may read element 0, not element 1 (written after).
        assert_eq!(races2.atomic(1, 1, 0, at(1, 0, 0, 0), sp), Ok(None));
        assert_eq!(races2.access(0, 4, 0, at(1, 0, 0, 0), sp, false), Ok(None));
        assert!(races2.access(0, 4, 1, at(1, 0, 0, 0), sp, false).unwrap().is_some());
        // Another thread of the acquiring block: ordered only after the block's next barrier.
        for (epoch, ordered) in [(0, false), (1, true)] {
            let mut races = Races::new();
            races.begin(64);
            assert_eq!(races.access(0, 4, 0, at(0, 0, 0, 0), sp, true), Ok(None));
            assert_eq!(races.atomic(1, 1, 0, at(0, 0, 0, 1), sp), Ok(None));
            assert_eq!(races.atomic(1, 1, 0, at(1, 0, 0, 0), sp), Ok(None));
            let r = races.access(0, 4, 0, at(1, 5, epoch, 0), sp, false).unwrap();
            assert_eq!(r.is_none(), ordered, "epoch {epoch}");
        }
    }

    /// A launch with more contexts than the packed form can name is refused, not checked wrongly.
    #[test]
    fn too_many_contexts_are_refused() {
        let _s = mem::Session::start(u64::MAX);
        let mut races = Races::new();
        // 2^30 threads a block leave one bit of context: one context besides the unused 0.
        races.begin(1 << 30);
        let me = |epoch| Seg { block: 0, thread: 5, epoch, wepoch: 0, fgen: 0 };
        assert_eq!(races.access(0, 8, 1, me(0), Span::DUMMY, true), Ok(None));
        assert_eq!(races.access(0, 8, 1, me(1), Span::DUMMY, true), Err(Fail::Full(1)));
    }

    #[test]
    fn a_cell_is_small_and_charged() {
        let _s = mem::Session::start(u64::MAX);
        let mut races = Races::new();
        let me = Seg { block: 0, thread: 1, epoch: 0, wepoch: 0, fgen: 0 };
        races.access(3, 5000, 4321, me, Span::DUMMY, true).unwrap();
        assert_eq!(mem::used(), races.bytes());
        assert!(races.bytes() >= (PAGE * 8) as u64);
        races.forget(3);
        races.clear();
        assert_eq!(mem::used(), 0);
    }
}
