//! `break` and `continue` (docs/language.md, "`break` and `continue`"). A jump leaves the
//! innermost enclosing `for` or `while` loop of the same resource (it may not leave a `sched` or
//! a `split` arm entered inside the loop: E0107, as outside any loop). What it changes:
//!
//! * accesses (I3): the accesses recorded when a `break` runs are still recorded after the loop
//!   (the rest of the body, a barrier included, did not run on that path); those recorded at a
//!   `continue` meet the next iteration and, after the last one, the code after the loop;
//! * uniformity (I4): a jump under a condition that varies per thread (warp) makes the rest of
//!   the loop body run under that condition, like a divergent `return` does for the rest of a
//!   function: a barrier, collective or block/warp call after it in the body is E0403 (E0405),
//!   and so is every write's value (`note_local_write`). A `break` does so for every later
//!   iteration as well, from the top of the body (only the threads still in the loop run it):
//!   the body's second pass keeps it. A `continue` only for the rest of its own iteration.
//!   After the loop every thread has left it: the code there is not restricted.
//! * streams (host): work pending at a jump is still pending after the loop.

use super::*;

/// An enclosing loop, for its jumps.
pub(super) struct LoopJumps {
    /// `self.frames.len()` where the loop's body starts: a jump may not leave a `sched` or a
    /// `split` arm entered after it.
    frames: usize,
    /// The accesses and pending stream work at each `break` of this loop.
    breaks: Vec<(Vec<Access>, Vec<StreamLoan>)>,
    /// The same at each `continue` of the current pass.
    conts: Vec<(Vec<Access>, Vec<StreamLoan>)>,
    /// The first `break` under a varying condition, with its level (kept across passes).
    divergent_break: Option<(Span, Uni)>,
    /// The same for `continue`, in the current pass only.
    divergent_continue: Option<(Span, Uni)>,
    /// The loop's `while` condition is being checked: a jump there is E0107 (as in Rust, whose
    /// E0590 refuses it too), since it would leave the loop before its body was entered.
    in_condition: bool,
}

impl FnCx<'_> {
    /// Enters a loop's body (before its first pass).
    pub(super) fn enter_loop(&mut self) {
        self.loops.push(LoopJumps {
            frames: self.frames.len(),
            breaks: Vec::new(),
            conts: Vec::new(),
            divergent_break: None,
            divergent_continue: None,
            in_condition: false,
        });
    }

    /// Marks the checking of the innermost loop's `while` condition as begun or over.
    pub(super) fn loop_condition(&mut self, inside: bool) {
        if let Some(l) = self.loops.last_mut() {
            l.in_condition = inside;
        }
    }

    /// Starts a pass over the loop's body: the `continue`s of the previous pass are behind.
    pub(super) fn loop_pass_start(&mut self) {
        if let Some(l) = self.loops.last_mut() {
            l.conts.clear();
            l.divergent_continue = None;
        }
    }

    /// Ends a pass over the body: the paths that took a `continue` join the end of the body.
    pub(super) fn loop_pass_end(&mut self) {
        let Some(l) = self.loops.last_mut() else { return };
        let conts = std::mem::take(&mut l.conts);
        if conts.is_empty() {
            return;
        }
        let mut paths = vec![std::mem::take(&mut self.accesses)];
        for (a, p) in conts {
            paths.push(a);
            union_pending(&mut self.pending, p);
        }
        self.merge_accesses(paths);
    }

    /// Leaves the loop (after its last pass): the paths that took a `break` join the code after
    /// it.
    pub(super) fn exit_loop(&mut self) {
        let Some(l) = self.loops.pop() else { return };
        if l.breaks.is_empty() {
            return;
        }
        let mut paths = vec![std::mem::take(&mut self.accesses)];
        for (a, p) in l.breaks {
            paths.push(a);
            union_pending(&mut self.pending, p);
        }
        self.merge_accesses(paths);
    }

    /// `break` (`is_break`) or `continue` at `span`.
    pub(super) fn jump(&mut self, is_break: bool, span: Span) -> Ty {
        let word = if is_break { "break" } else { "continue" };
        let Some(l) = self.loops.last() else {
            self.error(
                codes::JUMP_OUTSIDE_LOOP,
                span,
                format!("`{word}` outside of a loop"),
                format!("`{word}` only stands inside the body of a `for` or `while` loop"),
            );
            return Ty::UNIT;
        };
        if l.in_condition {
            self.error(
                codes::JUMP_OUTSIDE_LOOP,
                span,
                format!("`{word}` in the condition of a `while` loop"),
                format!("`{word}` only stands inside the loop's body; compute the condition into a variable and test it there"),
            );
            return Ty::UNIT;
        }
        let crossed = self.frames[l.frames.min(self.frames.len())..]
            .iter()
            .any(|f| matches!(f, Frame::Sched(_) | Frame::Arm { .. }));
        if crossed {
            self.error(
                codes::JUMP_OUTSIDE_LOOP,
                span,
                format!("`{word}` cannot leave a `sched` or a `split` arm"),
                format!(
                    "the loop is run by the resource outside the `sched` or `split`; `{word}` only leaves a loop of the code it stands in (put the loop inside the `sched`, or compute a flag and test it in the loop's own code)"
                ),
            );
            return Ty::UNIT;
        }
        let uni = self.context_uni().max(self.range_uni());
        let (accesses, pending) = (self.accesses.clone(), self.pending.clone());
        let on_gpu = self.on_gpu();
        let Some(l) = self.loops.last_mut() else { return Ty::UNIT };
        let slot = if is_break { &mut l.divergent_break } else { &mut l.divergent_continue };
        if on_gpu && uni > Uni::Uniform && !matches!(slot, Some((_, u)) if *u >= uni) {
            *slot = Some((span, uni));
        }
        if is_break {
            l.breaks.push((accesses, pending));
        } else {
            l.conts.push((accesses, pending));
        }
        Ty::UNIT
    }

    /// The most varying jump that restricts the current point: one taken under a condition of
    /// that level in an enclosing loop (see the module's comment).
    pub(super) fn jump_uni(&self) -> Uni {
        self.loops
            .iter()
            .flat_map(|l| [l.divergent_break, l.divergent_continue])
            .flatten()
            .map(|(_, u)| u)
            .max()
            .unwrap_or_default()
    }

    /// [`FnCx::divergence`]'s part for jumps: a jump more varying than `need` before this point
    /// in an enclosing loop, with the label to show at it.
    pub(super) fn jump_divergence(&self, need: Uni, noun: impl Fn(Uni) -> String) -> Option<(Span, String)> {
        self.loops.iter().rev().find_map(|l| {
            let b = l.divergent_break.filter(|(_, u)| *u > need).map(|(s, u)| (s, u, "left the loop"));
            let c = l
                .divergent_continue
                .filter(|(_, u)| *u > need)
                .map(|(s, u)| (s, u, "skipped the rest of this iteration"));
            b.or(c).map(|(s, u, what)| (s, format!("some {}s may have {what} here", noun(u))))
        })
    }
}
