//! The race detector's shadow memory: for each element of GPU memory touched during a launch,
//! the last write and the reads since, compactly.
//!
//! A logged access takes 16 bytes: its *stamp* (a number for its block and block epoch, counted
//! up through the launch: blocks run one after another, so the stamps of the current block are
//! those from its first on), its thread in the block, its warp epoch, and its source position
//! (interned). A shadow cell (36 bytes) holds the last write, the first read since and, where
//! needed, an index into a side table of up to four more reads. Cells are allocated in pages of
//! [`PAGE`] elements on the first access to a page, and everything is dropped at the end of the
//! launch. Every allocation is charged to the memory budget; besides the cells, only a table of
//! the block of each stamp grows (4 bytes per block epoch).
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

/// A logged access (`stamp == 0`: none).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
struct Ent {
    /// The block and block epoch.
    stamp: u32,
    thread: u32,
    wepoch: u32,
    span: u32,
}

impl Ent {
    fn warp(&self) -> u32 {
        self.thread / 32
    }
}

/// The current access, as the log compares others with it.
#[derive(Copy, Clone)]
struct Now {
    ent: Ent,
    /// The first stamp of the current block.
    block_start: u32,
}

impl Now {
    /// Nothing orders `e` and the current access (see [`Seg::concurrent`]).
    fn concurrent(&self, e: &Ent) -> bool {
        if e.stamp == 0 {
            return false;
        }
        if e.stamp < self.block_start {
            return true; // another block
        }
        if e.thread == self.ent.thread || e.stamp != self.ent.stamp {
            return false;
        }
        !(e.warp() == self.ent.warp() && e.wepoch != self.ent.wepoch)
    }

    /// The same block and epoch as the current access.
    fn same_interval(&self, e: &Ent) -> bool {
        e.stamp == self.ent.stamp
    }

    fn same_block(&self, e: &Ent) -> bool {
        e.stamp >= self.block_start
    }
}

/// The shadow state of one element.
#[derive(Copy, Clone, Debug, Default)]
struct Cell {
    write: Ent,
    first: Ent,
    /// 1 + index into `Races::more`, or 0.
    more: u32,
}

/// The reads kept after the first.
#[derive(Copy, Clone, Debug, Default)]
struct More {
    n: u32,
    e: [Ent; 4],
}

/// An earlier access that races with the current one: its block and thread (linear numbers),
/// position, and whether it wrote.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    pub block: u32,
    pub thread: u32,
    pub span: Span,
    pub write: bool,
}

#[derive(Default)]
pub struct Races {
    pages: HashMap<usize, Vec<Option<Box<[Cell]>>>>,
    /// The block of each stamp (index 0 is unused).
    stamp_block: Vec<u32>,
    /// The current stamp's block and epoch.
    current: Option<(u32, u32)>,
    block_start: u32,
    spans: Vec<Span>,
    span_ids: HashMap<Span, u32>,
    span_cache: Vec<(Span, u32)>,
    more: Vec<More>,
    free_more: Vec<u32>,
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

    /// Bytes held now.
    #[cfg(test)]
    pub fn bytes(&self) -> u64 {
        self.charged
    }

    /// Forgets the accesses to buffer `buf` (shared memory at the end of its block).
    pub fn forget(&mut self, buf: usize) {
        if let Some(pages) = self.pages.remove(&buf) {
            let cells = pages.iter().flatten().count() * PAGE * std::mem::size_of::<Cell>();
            let bytes = cells as u64 + mem::bytes_of(&pages);
            self.charged -= bytes;
            mem::release(bytes);
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
            }
            self.current = Some((me.block, me.epoch));
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

    /// Logs an access by `me` at `span` to element `off` of buffer `buf` (of `len` elements);
    /// returns the earlier access it races with, if any.
    pub fn access(
        &mut self,
        buf: usize,
        len: usize,
        off: usize,
        me: Seg,
        span: Span,
        write: bool,
    ) -> Result<Option<Conflict>, Oom> {
        let stamp = self.stamp(me)?;
        let span = self.span_id(span);
        let now = Now { ent: Ent { stamp, thread: me.thread, wepoch: me.wepoch, span }, block_start: self.block_start };
        let Races { pages, stamp_block, spans, more, free_more, charged, .. } = self;
        let pages = match pages.get_mut(&buf) {
            Some(p) => p,
            None => {
                let p = mem::try_vec(len.div_ceil(PAGE) as u64, None)?;
                *charged += mem::bytes_of(&p);
                pages.entry(buf).or_insert(p)
            }
        };
        let page = match &mut pages[off / PAGE] {
            Some(p) => p,
            empty => {
                let cells = mem::try_vec(PAGE as u64, Cell::default())?;
                *charged += mem::bytes_of(&cells);
                empty.insert(cells.into_boxed_slice())
            }
        };
        let cell = &mut page[off % PAGE];
        let found = |e: Ent, write: bool| {
            now.concurrent(&e).then(|| Conflict {
                block: stamp_block[e.stamp as usize],
                thread: e.thread,
                span: spans[e.span as usize],
                write,
            })
        };
        if let Some(c) = found(cell.write, true) {
            return Ok(Some(c));
        }
        let extra = |cell: &Cell, more: &Vec<More>| match cell.more {
            0 => More::default(),
            i => more[i as usize - 1],
        };
        if write {
            let kept = extra(cell, more);
            for e in std::iter::once(cell.first).chain(kept.e[..kept.n as usize].iter().copied()) {
                if let Some(c) = found(e, false) {
                    return Ok(Some(c));
                }
            }
            cell.write = now.ent;
            cell.first = Ent::default();
            if cell.more != 0 {
                free_more.push(cell.more - 1);
                cell.more = 0;
            }
            return Ok(None);
        }
        // A read: keep it if it can be the first read a later write races with.
        let me = now.ent;
        let same = |a: &Ent, b: &Ent| a.stamp == b.stamp && a.thread == b.thread && a.wepoch == b.wepoch;
        if cell.first.stamp == 0 {
            cell.first = me;
            return Ok(None);
        }
        if same(&cell.first, &me) || !now.same_block(&cell.first) {
            return Ok(None);
        }
        let mut kept = extra(cell, more);
        if kept.e[..kept.n as usize].iter().any(|e| same(e, &me)) {
            return Ok(None);
        }
        // The reads of the current epoch, in order (the first read too, if it is one of them).
        let mut current = [Ent::default(); 5];
        let mut n = 0;
        if now.same_interval(&cell.first) {
            current[0] = cell.first;
            n = 1;
        }
        let mut pruned = More::default();
        for e in &kept.e[..kept.n as usize] {
            let stale_in_my_warp =
                e.warp() == me.warp() && e.wepoch < me.wepoch && current[..n].iter().any(|c| c.warp() == me.warp());
            if now.same_interval(e) && !stale_in_my_warp {
                current[n] = *e;
                n += 1;
                pruned.e[pruned.n as usize] = *e;
                pruned.n += 1;
            }
        }
        kept = pruned;
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
                kept.e[kept.n as usize] = me;
                kept.n += 1;
            }
        }
        match (cell.more, kept.n) {
            (0, 0) => {}
            (i, 0) => {
                free_more.push(i - 1);
                cell.more = 0;
            }
            (0, _) => {
                let i = match free_more.pop() {
                    Some(i) => i,
                    None => {
                        grow(more, charged)?;
                        more.push(More::default());
                        (more.len() - 1) as u32
                    }
                };
                more[i as usize] = kept;
                cell.more = i + 1;
            }
            (i, _) => more[i as usize - 1] = kept,
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_diag::FileId;

    type Logged = (Seg, Span);

    /// The reference: the last write and every read since, in order.
    #[derive(Default)]
    struct Full {
        cells: HashMap<usize, (Option<Logged>, Vec<Logged>)>,
    }

    impl Full {
        fn access(&mut self, off: usize, me: Seg, span: Span, write: bool) -> Option<Conflict> {
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
            let elems = 1 + (splitmix(&mut rng) % 4) as usize;
            let write_odds = 1 + splitmix(&mut rng) % 6;
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
                            let me = Seg { block, thread, epoch, wepoch: wepochs[thread as usize / 32] };
                            let off = (r >> 20) as usize % elems;
                            let span = Span { file: FileId(0), lo: (r >> 30) as u32 % 5, hi: 9 };
                            let write = (r >> 40).is_multiple_of(write_odds);
                            let a = races.access(0, elems, off, me, span, write).unwrap();
                            let b = full.access(off, me, span, write);
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

    #[test]
    fn a_cell_is_small_and_charged() {
        assert_eq!(std::mem::size_of::<Cell>(), 36);
        let _s = mem::Session::start(u64::MAX);
        let mut races = Races::new();
        let me = Seg { block: 0, thread: 1, epoch: 0, wepoch: 0 };
        races.access(3, 5000, 4321, me, Span::DUMMY, true).unwrap();
        assert_eq!(mem::used(), races.bytes());
        assert!(races.bytes() >= (PAGE * 36) as u64);
        races.forget(3);
        races.clear();
        assert_eq!(mem::used(), 0);
    }
}
