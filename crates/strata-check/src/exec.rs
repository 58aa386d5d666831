//! Execution resources (Fig. 1) in canonical form.
//!
//! A resource is the resource executing its function (the [`Root`]) followed by [`Step`]s such
//! as `.blocks`, `.forall(X)` or `[0..16]_X`. Two resources are the same exactly when their
//! canonical forms are equal: consecutive `forall`s are sorted, because scheduling `Y` then `X`
//! or `X` then `Y` yields the same single blocks. [`Exec::shape`] says what a resource is: a
//! grid, a collection of blocks or threads with the dimensions still to be scheduled, or one
//! block, warp or thread.

use crate::nat::{Nat, NatError};
use std::fmt;
use strata_syntax::ast::DimName;

/// The coordinates a resource scheduled by `sched` answers to as values (`thread.idx`,
/// `block.idx_y`, `t.global_idx`; docs/language.md "Coordinates").
pub const COORDINATES: &[&str] =
    &["idx", "idx_x", "idx_y", "idx_z", "global_idx", "global_idx_x", "global_idx_y", "global_idx_z"];

/// Sizes per dimension, sorted by dimension; a dimension that is not listed has size 1.
pub type Shape = Vec<(DimName, Nat)>;

#[derive(Clone, Debug, PartialEq)]
pub enum Root {
    CpuThread,
    Grid { blocks: Shape, threads: Shape },
    Block { threads: Shape },
    Warp,
    Thread,
    Any,
}

impl std::fmt::Display for Root {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Root::CpuThread => "cpu.thread",
            Root::Grid { .. } => "gpu.grid",
            Root::Block { .. } => "gpu.block",
            Root::Warp => "gpu.warp",
            Root::Thread => "gpu.thread",
            Root::Any => "Any",
        })
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    Blocks,
    Threads,
    Warps,
    Lanes,
    ToThreads,
    Forall(DimName),
    Range(Nat, Nat, DimName),
}

/// A canonical execution resource; `name` is only for messages.
#[derive(Clone, Debug)]
pub struct Exec {
    pub name: String,
    pub root: Root,
    pub steps: Vec<Step>,
}

impl PartialEq for Exec {
    fn eq(&self, other: &Self) -> bool {
        self.root == other.root && self.steps == other.steps
    }
}

/// What kind of resource an [`Exec`] denotes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Level {
    Cpu,
    Grid,
    /// A collection of blocks (some dimensions not yet scheduled).
    Blocks,
    Block,
    /// A collection of threads (of a block, or of the whole grid after `to_threads`).
    Threads,
    Thread,
    Warps,
    Warp,
    Lanes,
    Any,
}

impl Level {
    pub fn is_collection(self) -> bool {
        matches!(self, Level::Blocks | Level::Threads | Level::Warps | Level::Lanes)
    }

    pub fn describe(self) -> &'static str {
        match self {
            Level::Cpu => "`cpu.thread`",
            Level::Grid => "`gpu.Grid`",
            Level::Blocks => "a group of blocks",
            Level::Block => "`gpu.Block`",
            Level::Threads => "a group of threads",
            Level::Thread => "`gpu.Thread`",
            Level::Warps => "a group of warps",
            Level::Warp => "`gpu.Warp`",
            Level::Lanes => "the lanes of a warp",
            Level::Any => "any resource",
        }
    }
}

/// The result of [`Exec::shape`].
#[derive(Clone, Debug)]
pub struct ExecShape {
    pub level: Level,
    /// For a collection: the dimensions still to be scheduled, with their sizes.
    pub dims: Shape,
    /// The threads of one block, once known.
    pub block: Option<Shape>,
}

/// Why a resource expression does not denote a resource.
#[derive(Clone, Debug, PartialEq)]
pub enum ShapeError {
    /// `.step` cannot be applied to this kind of resource.
    Step(&'static str, Level),
    /// `forall(d)`/range on a dimension the collection does not have (or already scheduled).
    NoDim(DimName, Level),
    Nat(NatError),
}

impl fmt::Display for ShapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShapeError::Step(step, level) => write!(f, "`.{step}` cannot be applied to {}", level.describe()),
            ShapeError::NoDim(d, level) => {
                write!(f, "{} has no unscheduled dimension `{}`", level.describe(), d.letter())
            }
            ShapeError::Nat(e) => write!(f, "{e}"),
        }
    }
}

pub fn shape_size(shape: &Shape) -> Result<Nat, NatError> {
    let mut n = Nat::lit(1);
    for (_, s) in shape {
        n = n.mul(s)?;
    }
    Ok(n)
}

impl Exec {
    pub fn new(name: impl Into<String>, root: Root) -> Exec {
        Exec { name: name.into(), root, steps: Vec::new() }
    }

    /// This resource followed by `step`, kept canonical.
    pub fn with(&self, step: Step) -> Exec {
        let mut steps = self.steps.clone();
        steps.push(step);
        // Sort the trailing run of `forall`s: the order of full scheduling does not matter.
        let start = steps.iter().rposition(|s| !matches!(s, Step::Forall(_))).map_or(0, |i| i + 1);
        steps[start..].sort_by_key(|s| match s {
            Step::Forall(d) => *d,
            _ => DimName::X,
        });
        Exec { name: self.name.clone(), root: self.root.clone(), steps }
    }

    /// True if `self` is `other` or a sub-resource reached from it by further steps.
    pub fn within(&self, other: &Exec) -> bool {
        self.root == other.root
            && self.steps.len() >= other.steps.len()
            && self.steps[..other.steps.len()] == other.steps[..]
    }

    /// This resource with its `[a..b]_d` ranges removed, kept canonical: `grid.blocks[0..1]_X.forall(X)`
    /// becomes `grid.blocks.forall(X)`. Only ranges whose dimension a later `forall` of the same
    /// collection schedules are removed (each single resource keeps its index in the whole
    /// collection, so it *is* one resource of the result); `None` if some range is not scheduled
    /// that way (the resource is then part of a collection, not one of its members).
    pub fn without_ranges(&self) -> Option<Exec> {
        self.without_ranges_at(|_| true)
    }

    /// [`Exec::without_ranges`] for the ranges at the step positions that `at` accepts; the other
    /// steps are kept.
    pub fn without_ranges_at(&self, at: impl Fn(usize) -> bool) -> Option<Exec> {
        let mut out = Exec::new(self.name.clone(), self.root.clone());
        for (i, step) in self.steps.iter().enumerate() {
            match step {
                Step::Range(_, _, d) if at(i) => {
                    if !scheduled_later(&self.steps[i + 1..], *d) {
                        return None;
                    }
                }
                other => out = out.with(other.clone()),
            }
        }
        Some(out)
    }

    /// Where the innermost collection begins: the index after its last `.blocks`, `.threads`,
    /// `.warps`, `.lanes` or `.to_threads` step (0 if there is none).
    pub fn last_collection_start(&self) -> usize {
        self.steps.iter().rposition(is_collection_step).map_or(0, |i| i + 1)
    }

    /// True if every single resource `self` denotes is exactly one of the resources `owner`
    /// denotes: `self` is `owner`, or `owner` restricted by ranges that are then scheduled (a block
    /// of an arm of `split(X) grid.blocks` is one of `grid.blocks.forall(X)`). Memory declared for
    /// each `owner` then exists once for each resource of `self`.
    pub fn is_instance_of(&self, owner: &Exec) -> bool {
        if self == owner {
            return true;
        }
        !owner.steps.iter().any(|s| matches!(s, Step::Range(..))) && self.without_ranges().is_some_and(|e| e == *owner)
    }

    pub fn shape(&self) -> Result<ExecShape, ShapeError> {
        let mut sh = match &self.root {
            Root::CpuThread => ExecShape { level: Level::Cpu, dims: Vec::new(), block: None },
            Root::Grid { blocks, threads } => {
                ExecShape { level: Level::Grid, dims: blocks.clone(), block: Some(threads.clone()) }
            }
            Root::Block { threads } => {
                ExecShape { level: Level::Block, dims: Vec::new(), block: Some(threads.clone()) }
            }
            Root::Warp => ExecShape { level: Level::Warp, dims: Vec::new(), block: None },
            Root::Thread => ExecShape { level: Level::Thread, dims: Vec::new(), block: None },
            Root::Any => ExecShape { level: Level::Any, dims: Vec::new(), block: None },
        };
        let grid_blocks = match &self.root {
            Root::Grid { blocks, .. } => blocks.clone(),
            _ => Vec::new(),
        };
        for step in &self.steps {
            match step {
                Step::Blocks => {
                    if sh.level != Level::Grid {
                        return Err(ShapeError::Step("blocks", sh.level));
                    }
                    sh.level = Level::Blocks;
                    sh.dims = grid_blocks.clone();
                }
                Step::Threads => {
                    if sh.level != Level::Block {
                        return Err(ShapeError::Step("threads", sh.level));
                    }
                    sh.level = Level::Threads;
                    sh.dims = sh.block.clone().unwrap_or_default();
                }
                Step::ToThreads => {
                    if sh.level != Level::Grid {
                        return Err(ShapeError::Step("to_threads", sh.level));
                    }
                    // Flatten per dimension: the X threads of the grid are blocks.x * threads.x.
                    let threads = sh.block.clone().unwrap_or_default();
                    let mut dims = Vec::new();
                    for d in [DimName::X, DimName::Y, DimName::Z] {
                        let b = grid_blocks.iter().find(|(n, _)| *n == d).map(|(_, s)| s.clone());
                        let t = threads.iter().find(|(n, _)| *n == d).map(|(_, s)| s.clone());
                        match (b, t) {
                            (None, None) => {}
                            (b, t) => {
                                let b = b.unwrap_or_else(|| Nat::lit(1));
                                let t = t.unwrap_or_else(|| Nat::lit(1));
                                dims.push((d, b.mul(&t).map_err(ShapeError::Nat)?));
                            }
                        }
                    }
                    sh.level = Level::Threads;
                    sh.dims = dims;
                }
                Step::Warps => {
                    if sh.level != Level::Block {
                        return Err(ShapeError::Step("warps", sh.level));
                    }
                    let total = shape_size(&sh.block.clone().unwrap_or_default()).map_err(ShapeError::Nat)?;
                    sh.level = Level::Warps;
                    sh.dims = vec![(DimName::X, total.div(&Nat::lit(32)).map_err(ShapeError::Nat)?)];
                }
                Step::Lanes => {
                    if sh.level != Level::Warp {
                        return Err(ShapeError::Step("lanes", sh.level));
                    }
                    sh.level = Level::Lanes;
                    sh.dims = vec![(DimName::X, Nat::lit(32))];
                }
                Step::Forall(d) => {
                    if !sh.level.is_collection() {
                        return Err(ShapeError::Step("forall", sh.level));
                    }
                    let Some(pos) = sh.dims.iter().position(|(n, _)| n == d) else {
                        return Err(ShapeError::NoDim(*d, sh.level));
                    };
                    sh.dims.remove(pos);
                    if sh.dims.is_empty() {
                        sh.level = match sh.level {
                            Level::Blocks => Level::Block,
                            Level::Threads | Level::Lanes => Level::Thread,
                            _ => Level::Warp,
                        };
                    }
                }
                Step::Range(a, b, d) => {
                    if !sh.level.is_collection() {
                        return Err(ShapeError::Step("[..]", sh.level));
                    }
                    let Some(slot) = sh.dims.iter_mut().find(|(n, _)| n == d) else {
                        return Err(ShapeError::NoDim(*d, sh.level));
                    };
                    slot.1 = b.sub(a).map_err(ShapeError::Nat)?;
                }
            }
        }
        Ok(sh)
    }

    /// The collection `sched` distributes over when given `self`: a grid's blocks, a block's
    /// threads, a warp's lanes, or `self` if it already is a collection.
    pub fn sched_domain(&self) -> Result<Exec, ShapeError> {
        Ok(match self.shape()?.level {
            Level::Grid => self.with(Step::Blocks),
            Level::Block => self.with(Step::Threads),
            Level::Warp => self.with(Step::Lanes),
            _ => self.clone(),
        })
    }
}

/// Steps that begin a new collection of sub-resources.
fn is_collection_step(s: &Step) -> bool {
    matches!(s, Step::Blocks | Step::Threads | Step::Warps | Step::Lanes | Step::ToThreads)
}

/// Whether `forall(d)` follows in `rest` before the next collection begins.
fn scheduled_later(rest: &[Step], d: DimName) -> bool {
    rest.iter().take_while(|s| !is_collection_step(s)).any(|s| *s == Step::Forall(d))
}

impl Exec {
    /// The resource written out: `grid.blocks.forall(X)`.
    pub fn path_text(&self) -> String {
        let mut s = self.name.clone();
        for step in &self.steps {
            match step {
                Step::Blocks => s.push_str(".blocks"),
                Step::Threads => s.push_str(".threads"),
                Step::Warps => s.push_str(".warps"),
                Step::Lanes => s.push_str(".lanes"),
                Step::ToThreads => s.push_str(".to_threads"),
                Step::Forall(d) => s.push_str(&format!(".forall({})", d.letter())),
                Step::Range(a, b, d) => s.push_str(&format!("[{a}..{b}]_{}", d.letter())),
            }
        }
        s
    }
}

impl fmt::Display for Exec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}
