//! Place expressions in normal form, and the access environment of the extended borrow checker.
//!
//! A [`Place`] is a root variable and the [`PStep`]s that lead from it to the accessed memory,
//! with every reference alias substituted (so `arr[[thread]]` where `arr = &uniq a.group::<32>[[block]]`
//! becomes `a.group::<32>[[block]][[thread]]`). Selections record the *canonical execution
//! resource* they distribute over, so two accesses can be compared step by step.

use crate::exec::{Exec, Root, Step};
use crate::nat::{Facts, Nat, Truth};
use strata_diag::Span;
use strata_syntax::ast::DimName;

/// A basic view applied to an array (named views are expanded into these).
#[derive(Clone, Debug, PartialEq)]
pub struct ViewApp {
    pub name: &'static str,
    pub nats: Vec<Nat>,
    pub args: Vec<Vec<ViewApp>>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum PStep {
    Deref,
    Field(u32),
    /// A static index, or `None` for a run-time index (only inside `unsafe`).
    Index(Option<Nat>),
    /// `[[e]]`: the canonical resource `e`, whether it is a single thread, and the dimensions it
    /// distributed in order (`sched(Y, X)` and `sched(X, Y)` map threads to elements differently).
    Select(Exec, bool, Vec<strata_syntax::ast::DimName>),
    View(ViewApp),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Place {
    /// Index of the root variable in the function's variable table.
    pub root: usize,
    pub steps: Vec<PStep>,
}

/// One access remembered until a barrier releases it (the paper's access environment A).
#[derive(Clone, Debug)]
pub struct Access {
    pub place: Place,
    pub write: bool,
    pub span: Span,
    /// After `sync(block)`, a record is cut back to the block's own selection: it then stands for
    /// "this block touched its part", which no later access of the same block conflicts with.
    pub truncated: bool,
    /// A conflict with this access was reported: later ones against it are the same mistake.
    pub reported: bool,
    /// For memory declared for each of some resources (`[grid.blocks.forall(X)] tmp`): the one
    /// whose memory this is, as scheduled where the access is made (a block of a `split` arm).
    pub instance: Option<Exec>,
}

/// Replaces the nat variable `name` by `to` everywhere in an access: its place and the ranges of
/// the resource whose memory it touched.
pub fn rename_access_nat(access: &mut Access, name: &str, to: &Nat) {
    rename_nat(&mut access.place, name, to);
    if let Some(e) = &mut access.instance {
        rename_exec_nat(e, name, to);
    }
}

fn rename_one(n: &mut Nat, name: &str, to: &Nat) {
    if n.mentions(name) {
        if let Ok(r) = n.subst(name, to) {
            *n = r;
        }
    }
}

fn rename_exec_nat(e: &mut Exec, name: &str, to: &Nat) {
    for s in &mut e.steps {
        if let Step::Range(a, b, _) = s {
            rename_one(a, name, to);
            rename_one(b, name, to);
        }
    }
}

/// Every nat variable `place` mentions (indices, view sizes, ranges of selecting resources).
pub fn place_nat_vars(place: &Place) -> std::collections::BTreeSet<std::rc::Rc<str>> {
    fn views(apps: &[ViewApp], out: &mut std::collections::BTreeSet<std::rc::Rc<str>>) {
        for a in apps {
            a.nats.iter().for_each(|n| out.extend(n.vars()));
            for chain in &a.args {
                views(chain, out);
            }
        }
    }
    let mut out = std::collections::BTreeSet::new();
    for step in &place.steps {
        match step {
            PStep::Index(Some(n)) => out.extend(n.vars()),
            PStep::View(v) => views(std::slice::from_ref(v), &mut out),
            PStep::Select(e, _, _) => {
                for s in &e.steps {
                    if let Step::Range(a, b, _) = s {
                        out.extend(a.vars());
                        out.extend(b.vars());
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// Replaces the nat variable `name` by `to` everywhere in `place` (indices, view sizes, ranges).
pub fn rename_nat(place: &mut Place, name: &str, to: &Nat) {
    let ren = |n: &mut Nat| rename_one(n, name, to);
    fn views(apps: &mut [ViewApp], ren: &dyn Fn(&mut Nat)) {
        for a in apps {
            a.nats.iter_mut().for_each(ren);
            for chain in &mut a.args {
                views(chain, ren);
            }
        }
    }
    for step in &mut place.steps {
        match step {
            PStep::Index(Some(n)) => ren(n),
            PStep::View(v) => views(std::slice::from_mut(v), &ren),
            PStep::Select(e, _, _) => rename_exec_nat(e, name, to),
            _ => {}
        }
    }
}

/// Decides whether a new access conflicts with a remembered one.
///
/// Two accesses are apart when, walking their common prefix, a selection narrows both to the same
/// single thread (each thread touches only its own part), or the record was released to the block
/// that makes the new access, or the first differing steps are provably disjoint. Otherwise, if
/// either is a write, they conflict.
pub fn conflicts(place: &Place, write: bool, instance: Option<&Exec>, rec: &Access, facts: &Facts) -> bool {
    if !write && !rec.write {
        return false;
    }
    if place.root != rec.place.root {
        return false;
    }
    if let (Some(x), Some(y)) = (instance, rec.instance.as_ref()) {
        if distinct_instances(x, y, facts) {
            return false;
        }
    }
    // Both comparisons are sound; the accesses conflict only if neither tells them apart (the
    // written steps show `take_left`/`take_right` halves apart, the normal form shows the same
    // thread through a `split` arm and through the whole collection).
    let writes = (write, rec.write);
    steps_conflict(&place.steps, &rec.place.steps, writes, rec.truncated, facts)
        && steps_conflict(
            &normalized(&place.steps, facts),
            &normalized(&rec.place.steps, facts),
            writes,
            rec.truncated,
            facts,
        )
}

/// The step-by-step comparison of [`conflicts`] (one of the accesses is a write; `writes` says
/// which).
///
/// Every step maps a part of memory to a sub-part, and distinct values of the same step give
/// disjoint sub-parts (views are bijections, a selection gives each resource its own part). So two
/// indices `[x]` and `[y]` at the same position are either the same element (`x = y`) or disjoint
/// ones: when the facts do not decide which, the walk goes on as if they were equal, because if
/// they differ the accesses are apart anyway. A later selection by single threads then still
/// separates them (`v.group::<G>[c][[t]]` in two iterations of `c`: the same element only for
/// `c = c'` and the same thread). A reference read from two possibly different elements may
/// point anywhere, so a dereference after such indices stops the walk.
fn steps_conflict(a: &[PStep], r: &[PStep], writes: (bool, bool), truncated: bool, facts: &Facts) -> bool {
    let mut indices_may_differ = false;
    for i in 0..a.len().min(r.len()) {
        if a[i] == r[i] {
            match a[i] {
                PStep::Select(_, true, _) => return false,
                PStep::Deref if indices_may_differ => return true,
                _ => {}
            }
            if truncated && i + 1 == r.len() {
                return false;
            }
            continue;
        }
        if let (PStep::Index(Some(x)), PStep::Index(Some(y))) = (&a[i], &r[i]) {
            if facts.equal(x, y) == Truth::Disproven {
                return false;
            }
            indices_may_differ = true;
            continue;
        }
        return !disjoint(&a[i], &r[i], facts) && !take_ranges_apart(&a[i..], &r[i..], facts);
    }
    // One place is a prefix of the other. An access through a reference stored at the shorter
    // place only reads that reference: it meets the shorter access only if that one writes it.
    let n = a.len().min(r.len());
    match (a.get(n), r.get(n)) {
        (Some(PStep::Deref), None) => writes.1,
        (None, Some(PStep::Deref)) => writes.0,
        _ => true,
    }
}

/// Resources that are provably never the same one: equal but for a range of the same dimension at
/// the same position, the two ranges apart (the blocks of the two arms of `split(X) grid.blocks`).
/// Memory declared for each of them is then not the same memory.
fn distinct_instances(x: &Exec, y: &Exec, facts: &Facts) -> bool {
    if x.root != y.root || x.steps.len() != y.steps.len() {
        return false;
    }
    let mut apart = false;
    for (s, t) in x.steps.iter().zip(&y.steps) {
        match (s, t) {
            (Step::Range(a, b, d), Step::Range(c, e, f)) if d == f => {
                if facts.le(b, c) == Truth::Proven || facts.le(e, a) == Truth::Proven {
                    apart = true;
                } else if facts.equal(a, c) != Truth::Proven || facts.equal(b, e) != Truth::Proven {
                    return false;
                }
            }
            _ if s == t => {}
            _ => return false,
        }
    }
    apart && x.without_ranges().is_some() && y.without_ranges().is_some()
}

/// The steps of a place written so that a selection by a resource of a sub-range of a collection
/// reads as the selection by the same resource of the whole collection where both pick the same
/// element. A selection picks by the resource's index in its own collection; a resource of a range
/// `[a..b]_d` (an arm of `split`) is the same resource as the one with index `a + i` of the
/// collection the range is taken from, so, innermost range first:
///
/// * a range starting at 0 is dropped: the index is the same in the bigger collection;
/// * `take_right::<k>` followed by a selection by the resources of `[k..n]_d` (along `d` first)
///   is the selection by the resources of the collection: element `k + i` either way;
/// * `take_left::<k>` followed by a selection is dropped: its element `i` is the array's element
///   `i` (the selection's resources number at most `k`);
///
/// so `a.take_left::<k>[[t]]` in the arm `lo` of `split(X) block.threads at k` is `a[[t]]` of the
/// whole block's thread `t`, and `a.take_left::<16>.take_right::<8>[[t]]` in the arm `[8..16]` of
/// a split of `[0..16]` is `a[[t]]` too. A selection by a resource whose enclosing resources were
/// ranges (a thread of a block of an arm of `split(X) grid.blocks`) picks by the resource's index
/// in its own collection, which the outer ranges do not change: they are dropped; the earlier steps
/// of the place say which outer resource.
///
/// Everything else is kept as it is. Each rewrite keeps the element every resource picks, so
/// equal normal forms with a single-thread selection still mean "each thread its own element".
fn normalized(steps: &[PStep], facts: &Facts) -> Vec<PStep> {
    let mut out: Vec<PStep> = Vec::with_capacity(steps.len());
    for step in steps {
        let PStep::Select(e, single, order) = step else {
            out.push(step.clone());
            continue;
        };
        if let Some(split) = to_threads_as_block_and_thread(e, *single) {
            out.extend(split);
            continue;
        }
        let mut e = e.clone();
        loop {
            let range = innermost_range(&e);
            if let Some(PStep::View(v)) = out.last() {
                if v.nats.len() == 1 && v.args.is_empty() {
                    if v.name == "take_left" {
                        out.pop();
                        continue;
                    }
                    if let (true, Some((j, a, d))) = (v.name == "take_right", &range) {
                        if order.first() == Some(d) && facts.equal(a, &v.nats[0]) == Truth::Proven {
                            if let Some(whole) = e.without_ranges_at(|i| i == *j) {
                                out.pop();
                                e = whole;
                                continue;
                            }
                        }
                    }
                }
            }
            if let Some((j, a, _)) = &range {
                if facts.equal(a, &Nat::lit(0)) == Truth::Proven {
                    if let Some(whole) = e.without_ranges_at(|i| i == *j) {
                        e = whole;
                        continue;
                    }
                }
            }
            break;
        }
        let outer = e.last_collection_start();
        let stripped = e.without_ranges_at(|j| j < outer).unwrap_or(e);
        out.push(PStep::Select(stripped, *single, order.clone()));
    }
    out
}

/// A selection by a thread of `grid.to_threads` (1-D grid and blocks of `nt` threads) picks element
/// `b * nt + t` for thread `t` of block `b`: exactly what `group::<nt>[[block]][[thread]]` picks
/// with the block and thread of `sched(X) block in grid.blocks`, `sched(X) t in block.threads`.
/// Written that way, the same thread reaching the same element through either form is seen as
/// one thread (its own element), not two.
fn to_threads_as_block_and_thread(e: &Exec, single: bool) -> Option<Vec<PStep>> {
    let Root::Grid { blocks, threads } = &e.root else { return None };
    let x = DimName::X;
    if !single || blocks.len() != 1 || threads.len() != 1 || blocks[0].0 != x || threads[0].0 != x {
        return None;
    }
    if e.steps != [Step::ToThreads, Step::Forall(x)] {
        return None;
    }
    let block = Exec { name: e.name.clone(), root: e.root.clone(), steps: vec![Step::Blocks, Step::Forall(x)] };
    let thread = Exec {
        name: e.name.clone(),
        root: e.root.clone(),
        steps: vec![Step::Blocks, Step::Forall(x), Step::Threads, Step::Forall(x)],
    };
    Some(vec![
        PStep::View(ViewApp { name: "group", nats: vec![threads[0].1.clone()], args: Vec::new() }),
        PStep::Select(block, false, vec![x]),
        PStep::Select(thread, true, vec![x]),
    ])
}

/// The innermost range of the collection a resource belongs to: its position in the resource's
/// steps, its start and its dimension.
fn innermost_range(e: &Exec) -> Option<(usize, Nat, DimName)> {
    let start = e.last_collection_start();
    e.steps[start..].iter().enumerate().rev().find_map(|(i, s)| match s {
        Step::Range(a, _, d) => Some((start + i, a.clone(), *d)),
        _ => None,
    })
}

/// The part of an array a run of `take_left`/`take_right` views at the start of `steps` selects:
/// its offset and, if known, its end (`take_left::<k>` keeps `k` elements from the current
/// offset, `take_right::<k>` drops `k`).
fn take_range(steps: &[PStep]) -> Option<(Nat, Option<Nat>)> {
    let mut off = Nat::lit(0);
    let mut end: Option<Nat> = None;
    let mut any = false;
    for s in steps {
        let PStep::View(v) = s else { break };
        match (v.name, v.nats.first()) {
            ("take_left", Some(k)) => end = Some(off.add(k).ok()?),
            ("take_right", Some(k)) => off = off.add(k).ok()?,
            _ => break,
        }
        any = true;
    }
    any.then_some((off, end))
}

/// Two runs of `take_left`/`take_right` that select parts proven apart (the tree-reduction shape
/// `take_left::<s>` against `take_left::<2s>.take_right::<s>`).
pub(crate) fn take_ranges_apart(a: &[PStep], b: &[PStep], facts: &Facts) -> bool {
    let (Some((oa, ea)), Some((ob, eb))) = (take_range(a), take_range(b)) else { return false };
    ea.is_some_and(|e| facts.le(&e, &ob) == Truth::Proven) || eb.is_some_and(|e| facts.le(&e, &oa) == Truth::Proven)
}

/// Steps that provably select non-overlapping memory.
pub(crate) fn disjoint(a: &PStep, b: &PStep, facts: &Facts) -> bool {
    match (a, b) {
        (PStep::Field(x), PStep::Field(y)) => x != y,
        // Indices the facts prove different (`i` and `i + 2`, or `i` and `j` with their loop
        // ranges apart).
        (PStep::Index(Some(x)), PStep::Index(Some(y))) => facts.equal(x, y) == Truth::Disproven,
        (PStep::View(x), PStep::View(y)) => disjoint_views(x, y, facts),
        (PStep::Index(Some(i)), PStep::View(v)) | (PStep::View(v), PStep::Index(Some(i))) => {
            index_outside_view(i, v, facts)
        }
        _ => false,
    }
}

/// An element `i` that a `take_left::<k>` (elements `[0, k)`) or `take_right::<k>` (elements
/// `[k, n)`) of the same array provably does not contain.
fn index_outside_view(i: &Nat, v: &ViewApp, facts: &Facts) -> bool {
    match (v.name, v.nats.as_slice()) {
        ("take_left", [k]) => facts.le(k, i) == Truth::Proven,
        ("take_right", [k]) => facts.lt(i, k) == Truth::Proven,
        _ => false,
    }
}

/// Views that provably select non-overlapping parts of the same array: `take_left::<a>` and
/// `take_right::<b>` with a <= b, and `map(c)`, `map(d)` whose chains are disjoint at their first
/// difference (`group::<2k>.map(take_left::<k>)` and `….map(take_right::<k>)`).
fn disjoint_views(x: &ViewApp, y: &ViewApp, facts: &Facts) -> bool {
    let split = |l: &ViewApp, r: &ViewApp| {
        l.name == "take_left"
            && r.name == "take_right"
            && l.nats.len() == 1
            && r.nats.len() == 1
            && facts.le(&l.nats[0], &r.nats[0]) == Truth::Proven
    };
    if split(x, y) || split(y, x) {
        return true;
    }
    if x.name == "map" && y.name == "map" {
        if let (Some(a), Some(b)) = (x.args.first(), y.args.first()) {
            if let Some(i) = (0..a.len().min(b.len())).find(|&i| a[i] != b[i]) {
                return disjoint_views(&a[i], &b[i], facts);
            }
        }
    }
    false
}
