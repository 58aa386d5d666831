//! Place expressions in normal form, and the access environment of the extended borrow checker.
//!
//! A [`Place`] is a root variable and the [`PStep`]s that lead from it to the accessed memory,
//! with every reference alias substituted (so `arr[[thread]]` where `arr = &uniq a.group::<32>[[block]]`
//! becomes `a.group::<32>[[block]][[thread]]`). Selections record the *canonical execution
//! resource* they distribute over, so two accesses can be compared step by step.

use crate::exec::Exec;
use crate::nat::{Facts, Nat, Truth};
use strata_diag::Span;

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
}

/// Replaces the nat variable `name` by `to` everywhere in `place` (indices, view sizes, ranges).
pub fn rename_nat(place: &mut Place, name: &str, to: &Nat) {
    let ren = |n: &mut Nat| {
        if n.mentions(name) {
            if let Ok(r) = n.subst(name, to) {
                *n = r;
            }
        }
    };
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
            PStep::Select(e, _, _) => {
                for s in &mut e.steps {
                    if let crate::exec::Step::Range(a, b, _) = s {
                        ren(a);
                        ren(b);
                    }
                }
            }
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
pub fn conflicts(place: &Place, write: bool, rec: &Access, facts: &Facts) -> bool {
    if !write && !rec.write {
        return false;
    }
    if place.root != rec.place.root {
        return false;
    }
    let (a, r) = (&place.steps, &rec.place.steps);
    for i in 0..a.len().min(r.len()) {
        if a[i] == r[i] {
            if matches!(a[i], PStep::Select(_, true, _)) {
                return false;
            }
            if rec.truncated && i + 1 == r.len() {
                return false;
            }
            continue;
        }
        return !disjoint(&a[i], &r[i], facts);
    }
    true
}

/// Steps that provably select non-overlapping memory.
fn disjoint(a: &PStep, b: &PStep, facts: &Facts) -> bool {
    match (a, b) {
        (PStep::Field(x), PStep::Field(y)) => x != y,
        // Constant indices only: a loop variable names a different element in every iteration.
        (PStep::Index(Some(x)), PStep::Index(Some(y))) => match (x.as_const(), y.as_const()) {
            (Some(x), Some(y)) => x != y,
            _ => false,
        },
        (PStep::View(x), PStep::View(y)) => disjoint_views(x, y, facts),
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
