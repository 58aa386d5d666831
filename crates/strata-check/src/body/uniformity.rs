//! Uniformity (I4 of docs/soundness.md): how far values and control flow may differ between
//! threads (uniform, block, warp, thread), and the rule that barriers, collectives and calls of
//! block or warp functions are reached by every thread of their block or warp.

use super::*;

/// How far a value (or a point of control flow) may differ between the threads of a kernel:
/// the finest level of the hierarchy whose members may disagree on it. `Block` values agree
/// within each block (they may differ between blocks), `Warp` values within each warp, `Thread`
/// values may differ between any two threads. `sync(block)` needs control flow that is at most
/// `Block`-varying, `sync(warp)` and warp collectives at most `Warp`-varying.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Uni {
    #[default]
    Uniform,
    Block,
    Warp,
    Thread,
}

impl Uni {
    /// What a value computed by a resource of this level may vary by.
    pub(super) fn of_level(l: Level) -> Uni {
        match l {
            Level::Cpu | Level::Grid | Level::Any => Uni::Uniform,
            Level::Blocks | Level::Block => Uni::Block,
            Level::Warps | Level::Warp => Uni::Warp,
            Level::Threads | Level::Thread | Level::Lanes => Uni::Thread,
        }
    }

    /// The level a barrier of a resource of level `l` needs its control flow to be uniform at.
    pub(super) fn barrier(l: Level) -> Uni {
        match l {
            Level::Warp => Uni::Warp,
            _ => Uni::Block,
        }
    }

    /// The resource a value of this uniformity depends on, for diagnostics.
    pub(super) fn noun(self) -> &'static str {
        match self {
            Uni::Uniform => "grid",
            Uni::Block => "block",
            Uni::Warp => "warp",
            Uni::Thread => "thread",
        }
    }
}

impl FnCx<'_> {
    /// How far the value read from a place may differ between threads: as far as its variable's
    /// value, the resource that declared it (unless the variable's value is tracked, see
    /// `Var::tracked`), and every selection on the way (a `[[warp]]` selection reads one part per
    /// warp) allow.
    pub(super) fn read_uni(&self, info: &PlaceInfo) -> Uni {
        let v = &self.vars[info.place.root];
        let declared = if v.tracked { Uni::Uniform } else { Uni::of_level(v.level) };
        let mut uni = v.varies.max(declared).max(info.via_uni);
        for s in &info.place.steps {
            uni = uni.max(match s {
                PStep::Select(e, _, _) => e.shape().map_or(Uni::Thread, |s| Uni::of_level(s.level)),
                PStep::Index(None) => Uni::Thread,
                _ => Uni::Uniform,
            });
        }
        uni
    }

    /// How far the threads that reach the current point may differ: the largest [`Uni`] of the
    /// enclosing varying conditions and `split` arms.
    /// How far the threads executing the current resource may differ from those that do not run
    /// it at all: a resource restricted to a range of a collection (`block.threads[0..16]_X`) is
    /// executed by only some threads of the enclosing one.
    pub(super) fn range_uni(&self) -> Uni {
        let mut collection = Uni::Uniform;
        let mut uni = Uni::Uniform;
        for s in &self.current.steps {
            match s {
                Step::Blocks => collection = Uni::Block,
                Step::Warps => collection = Uni::Warp,
                Step::Threads | Step::Lanes | Step::ToThreads => collection = Uni::Thread,
                Step::Range(..) => uni = uni.max(collection),
                Step::Forall(_) => {}
            }
        }
        uni
    }

    /// How many `split` arms enclose the current point.
    pub(super) fn arm_count(&self) -> usize {
        self.frames.iter().filter(|f| matches!(f, Frame::Arm { .. })).count()
    }

    pub(super) fn context_uni(&self) -> Uni {
        self.frames
            .iter()
            .map(|f| match f {
                Frame::Cond { uni, .. } | Frame::Arm { uni, .. } => *uni,
                Frame::Sched(_) => Uni::Uniform,
            })
            .max()
            .unwrap_or(Uni::Uniform)
            .max(self.jump_uni())
    }

    /// A write of a value that varies by `value` into a variable's own memory (not memory behind
    /// a reference, which every thread sees alike after a barrier): the variable varies at least
    /// as much as the value and the control flow that writes it, whether the whole variable or
    /// one element or field is written.
    pub(super) fn note_local_write(&mut self, info: &PlaceInfo, value: Uni) {
        if !self.on_gpu() || !info.is_own_memory() {
            return;
        }
        let uni = value.max(self.context_uni()).max(Uni::of_level(self.level()));
        let v = &mut self.vars[info.place.root];
        v.varies = v.varies.max(uni);
    }

    /// Types `e` and tells how far its value may differ between threads.
    pub(super) fn expr_uni(&mut self, e: &ast::Expr, expected: Option<&Ty>) -> (Ty, Uni) {
        let saved = std::mem::take(&mut self.varies);
        let t = self.expr(e, expected);
        let uni = self.varies;
        self.varies = saved.max(uni);
        (t, uni)
    }

    /// Why not every thread of a resource may reach the current point, where they must agree at
    /// `need` (`Block` for a block barrier, `Warp` for a warp's): a `return` some of them may have
    /// taken, a `split` at or below the resource (its frame is at `start`), or a condition, here
    /// or around the resource, that may differ between them. The span and label to show.
    /// `thread` names a single thread in the labels ("lane" among the lanes of a warp).
    pub(super) fn divergence(&self, start: usize, need: Uni, thread: &str) -> Option<(Span, String)> {
        let noun = |u: Uni| if u == Uni::Thread { thread } else { u.noun() };
        if let Some((r, uni)) = self.divergent_return.filter(|(_, u)| *u > need) {
            return Some((r, format!("some {}s may have returned here", noun(uni))));
        }
        if let Some(found) = self.jump_divergence(need, |u| noun(u).to_string()) {
            return Some(found);
        }
        for (i, f) in self.frames.iter().enumerate().rev() {
            match f {
                Frame::Arm { span, what, uni, .. } if i >= start || *uni > need => {
                    return Some((*span, format!("`{what}` is split here")));
                }
                Frame::Cond { span, uni } if *uni > need => {
                    return Some((*span, format!("this condition depends on the executing {}", noun(*uni))));
                }
                _ => {}
            }
        }
        None
    }

    /// A function executed by a whole block or warp (which may synchronise it) must be called by
    /// every thread of the block or warp executing this code, as a `sync` would need.
    pub(super) fn check_whole_resource_call(&mut self, need: Uni, span: Span, path: &str) {
        if self.in_unsafe() {
            return;
        }
        let start = self
            .frames
            .iter()
            .rposition(|f| matches!(f, Frame::Sched(b) if self.binders[*b].exec == self.current))
            .map_or(0, |i| i + 1);
        if let Some((at, why)) = self.divergence(start, need, "thread") {
            let noun = need.noun();
            self.report(
                Diagnostic::error(
                    codes::BARRIER_NOT_ALLOWED,
                    "barrier not allowed here",
                    span,
                    format!("`{path}` is executed by a whole {noun}, but not every thread of the {noun} calls it here"),
                )
                .with_label(at, why)
                .with_note(format!(
                    "a `gpu.{noun}` function may synchronise its {noun}: call it where every thread of the {noun} does"
                )),
            );
        }
    }

    /// Types a condition and returns how far it may differ between threads (always `Uniform`
    /// on the host).
    pub(super) fn cond(&mut self, c: &ast::Expr) -> Uni {
        let (t, uni) = self.expr_uni(c, Some(&Ty::BOOL));
        if t != Ty::BOOL && !t.is_error() {
            self.mismatch(c.span, &Ty::BOOL, &t);
        }
        if self.on_gpu() {
            uni
        } else {
            Uni::Uniform
        }
    }

    /// The result of a `gpu.block` (`gpu.warp`) function is one value for its whole block (warp):
    /// the caller may synchronise under a condition on it. A result that may differ between the
    /// threads (a flag set in one arm of a `split`, a value read through `[[t]]`) is refused (I4).
    pub(super) fn check_result_uniform(&mut self, last_is_return: bool, tail_span: Span) {
        let need = match self.sig.root {
            Root::Block { .. } => Uni::Block,
            Root::Warp => Uni::Warp,
            _ => return,
        };
        if self.sig.ret == Ty::UNIT || self.in_unsafe() {
            return;
        }
        let tail = if last_is_return { Uni::Uniform } else { self.result_uni };
        let returned = self.divergent_return.map_or(Uni::Uniform, |(_, u)| u);
        if tail.max(self.returned_uni).max(returned) > need {
            let noun = need.noun();
            self.report(
                Diagnostic::error(
                    codes::BARRIER_NOT_ALLOWED,
                    "barrier not allowed here",
                    tail_span,
                    format!("the result may differ between the threads of the {noun}"),
                )
                .with_note(format!(
                    "a `gpu.{noun}` function's result is one value for the whole {noun} (its caller may synchronise on a condition on it); return a value that is the same for every thread of the {noun}, e.g. one read from shared memory after a barrier"
                )),
            );
        }
    }

    /// A warp collective needs every lane of one warp: a lane of a `sched` over a warp, with no
    /// `split` or lane-dependent condition between the warp and the call.
    pub(super) fn check_collective(&mut self, path: &str, span: Span) {
        if self.in_unsafe() || self.level() != Level::Thread {
            return; // the call's execution resource is checked (and reported) separately
        }
        let warp_frame = self.frames.iter().rposition(|f| match f {
            Frame::Sched(b) => self.binders[*b].exec.shape().is_ok_and(|s| s.level == Level::Warp),
            _ => false,
        });
        let warp_is_fn = matches!(self.sig.root, Root::Warp);
        let Some(start) = warp_frame.map(|i| i + 1).or(if warp_is_fn { Some(0) } else { None }) else {
            self.error(
                codes::COLLECTIVE_NOT_ALLOWED,
                span,
                "collective operation not allowed here",
                format!("`{path}` must be executed by the lanes of a warp: schedule over `block.to_warps`, then over the warp's lanes"),
            );
            return;
        };
        // Only a range of lanes splits a warp; a range of warps (`split(X) block.warps`) keeps
        // whole warps together.
        let lanes_from = self.current.steps.iter().rposition(|s| *s == Step::Lanes).unwrap_or(0);
        if self.current.steps[lanes_from..].iter().any(|s| matches!(s, Step::Range(..))) {
            self.report(Diagnostic::error(
                codes::COLLECTIVE_NOT_ALLOWED,
                "collective operation not allowed here",
                span,
                format!("`{path}` is executed by only part of the warp (a sub-range of its lanes)"),
            ));
            return;
        }
        if let Some((at, why)) = self.divergence(start, Uni::Warp, "lane") {
            self.report(
                Diagnostic::error(
                    codes::COLLECTIVE_NOT_ALLOWED,
                    "collective operation not allowed here",
                    span,
                    format!("`{path}` not performed by all lanes of the warp"),
                )
                .with_label(at, why),
            );
        }
    }
}
