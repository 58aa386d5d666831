//! Summaries of `gpu.block` and `gpu.warp` functions for their callers (I3 of docs/soundness.md):
//! what a call leaves in the access environment.
//!
//! Without a summary a call is a use of everything its reference arguments reach, which stays in
//! the caller's environment until the caller's next barrier. A callee whose body has a barrier of
//! its whole resource at its top level (`sync(b)`, reached by every thread: the callee is checked
//! for that) orders everything it did before the last such barrier for the calling block or warp,
//! exactly as a barrier in the caller would; what it does after it is its *exit environment*,
//! the records left when its body ends. So the call acts as: its arguments' uses (checked against
//! the caller's records, as without a summary), a barrier of the calling resource, then the exit
//! records with the callee's parameters replaced by the arguments' loans, its resources by the
//! caller's and its sizes by the call's.

use super::*;
use crate::place::{place_nat_vars, rename_access_nat};

/// What a caller needs of a `gpu.block`/`gpu.warp` function's body (see the module comment).
#[derive(Clone, Debug)]
pub struct Summary {
    /// The records left at the end of the body on memory behind reference parameters (root: the
    /// parameter's index; first step: the dereference). None where the body has no top-level
    /// barrier (or has a `return`, `unsafe`, a parameter holding references): the call is then a
    /// use of everything its arguments reach.
    exit: Option<Vec<Access>>,
    /// The body leaves shared memory it declares itself (`let s: T @ gpu.shared;`, also in the
    /// functions it calls) in use at its end: accessed after its last barrier.
    own_shared: bool,
}

/// Summaries of the functions checked so far, by name.
pub type Summaries = HashMap<String, Summary>;

impl FnCx<'_> {
    /// The summary of the body just checked, if it has one: a `gpu.block` or `gpu.warp` function
    /// with a top-level barrier of its resource, no `return` and no `unsafe` (whose accesses are
    /// not recorded), whose parameters are references or hold none.
    pub(super) fn summary(&self, f: &ast::FnDecl) -> Option<Summary> {
        if !matches!(self.sig.root, Root::Block { .. } | Root::Warp) {
            return None;
        }
        let params = self.sig.params.len();
        let own_shared = self
            .accesses
            .iter()
            .any(|a| a.place.root >= params && matches!(self.vars[a.place.root].ty, Ty::At(_, Mem::GpuShared)));
        Some(Summary { exit: self.exit_records(f), own_shared })
    }

    fn exit_records(&self, f: &ast::FnDecl) -> Option<Vec<Access>> {
        let body = f.body.as_ref()?;
        let synced = body.stmts.iter().any(|s| match s {
            ast::Stmt::Expr { expr: ast::Expr { kind: ExprKind::Sync(target), .. }, .. } => match target {
                None => true,
                Some(t) => {
                    t.path.is_empty() && matches!(&t.base, ast::ExecBase::Var(id) if id.name == self.sig.exec_name)
                }
            },
            _ => false,
        });
        if !synced || body.any(&|e| matches!(e.kind, ExprKind::Return(_) | ExprKind::Unsafe(_))) {
            return None;
        }
        // Only references are mapped to their arguments' loans: a parameter holding references
        // another way (in a tuple) keeps the call a use of everything.
        if self.sig.params.iter().any(|p| !matches!(p.ty, Ty::Ref { .. }) && self.holds_ref(&p.ty)) {
            return None;
        }
        let params = self.sig.params.len();
        let exit = self
            .accesses
            .iter()
            .filter(|a| a.place.root < params && a.place.steps.first() == Some(&PStep::Deref))
            .cloned()
            .collect();
        Some(exit)
    }

    /// A callee that leaves its own shared memory in use at its end, called again from the same
    /// place (in a loop: one buffer per call site, as for memory declared in a loop body), would
    /// write that memory while the previous call's threads may still read it. The memory is a
    /// variable of this body, one per call site: the call's first accesses to it conflict with
    /// the previous call's last ones unless a barrier of the calling block released them; the
    /// call leaves a write of it. (Its exact accesses are the callee's; any two overlap.)
    pub(super) fn callee_shared_memory(&mut self, callee: &str, s: &Summary, span: Span, after: bool) {
        if !s.own_shared || self.in_unsafe() {
            return;
        }
        let id = match self.site_shared.get(&span) {
            Some(id) => *id,
            None => {
                let id = self.vars.len();
                self.vars.push(Var {
                    name: format!("the shared memory of `{callee}`"),
                    ty: Ty::At(Box::new(Ty::UNIT), Mem::GpuShared),
                    owner: Owner::Chain(self.chain().len()),
                    level: self.level(),
                    mutable: true,
                    moved: None,
                    loans: Vec::new(),
                    nat: None,
                    span,
                    depth: self.scopes.len(),
                    varies: Uni::Uniform,
                    tracked: false,
                    arms: 0,
                });
                self.site_shared.insert(span, id);
                id
            }
        };
        if !after {
            if let Some(prev) = self.accesses.iter().find(|a| a.place.root == id).map(|a| a.span) {
                self.report(
                    Diagnostic::error(
                        codes::CONFLICTING_ACCESS,
                        "conflicting memory access",
                        span,
                        format!("`{callee}` writes the shared memory it declares while an earlier call may still use it"),
                    )
                    .with_label(prev, "the earlier call (in a previous iteration) accesses it after its last barrier")
                    .with_note(format!(
                        "every call of `{callee}` from here uses one buffer: put a `sync` between the calls, or end `{callee}` with a barrier"
                    )),
                );
            }
            return;
        }
        self.accesses.push(Access {
            place: Place { root: id, steps: Vec::new() },
            write: true,
            span,
            truncated: false,
            reported: false,
            instance: None,
        });
    }

    /// After a call of a summarised function by the resource running this code: the barrier it
    /// contains, then its exit records in the caller's terms. `arg_loans[i]` are the loans of the
    /// `i`-th argument, `subst` the call's generic arguments.
    pub(super) fn apply_summary(
        &mut self,
        callee: &FnSig,
        s: &Summary,
        arg_loans: &[Vec<Alias>],
        subst: &Subst,
        span: Span,
    ) {
        let Some(exit) = &s.exit else { return };
        if self.in_unsafe() {
            return;
        }
        let Some(tb_id) = (0..self.binders.len())
            .rev()
            .find(|&i| self.binders[i].exec == self.current && self.binder_in_scope(&self.binders[i]))
        else {
            return;
        };
        let tb = self.binders[tb_id].clone();
        self.release(&tb, tb_id);
        let generics: HashSet<&str> =
            callee.generics.iter().filter(|(_, k)| *k == Kind::Nat).map(|(g, _)| g.as_str()).collect();
        self.fresh += 1;
        let tag = self.fresh;
        for rec in exit {
            let Some(loans) = arg_loans.get(rec.place.root) else { continue };
            let mut rec = rec.clone();
            // The callee's sizes: its generics become the call's arguments, anything else (a loop
            // variable of a finished loop) a name of its own, apart from every caller name. In two
            // steps, so that a value naming a caller variable is not renamed again.
            let vars = place_nat_vars(&rec.place);
            for v in &vars {
                rename_access_nat(&mut rec, v, &Nat::var(&format!("\u{4}{tag}\u{4}{v}")));
            }
            for v in &vars {
                let to = match subst.nats.get(&**v).filter(|_| generics.contains(&**v)) {
                    Some(n) => n.clone(),
                    None => Nat::var(&format!("{v}\u{5}{tag}")),
                };
                rename_access_nat(&mut rec, &format!("\u{4}{tag}\u{4}{v}"), &to);
            }
            let steps: Vec<PStep> = rec.place.steps[1..].iter().map(|st| self.callers_step(st)).collect();
            for l in loans {
                let mut place = l.place.clone();
                place.steps.extend(steps.iter().cloned());
                let instance = self.owner_instance(place.root);
                self.accesses.push(Access {
                    place,
                    write: rec.write,
                    span,
                    truncated: rec.truncated,
                    reported: false,
                    instance,
                });
            }
        }
    }

    /// A step of a callee's place in the caller's terms: a selection by one of the callee's
    /// resources selects by the same sub-resource of the resource running the call.
    fn callers_step(&self, st: &PStep) -> PStep {
        match st {
            PStep::Select(e, single, order) => {
                let mut x = self.current.clone();
                for step in &e.steps {
                    x = x.with(step.clone());
                }
                PStep::Select(x, *single, order.clone())
            }
            other => other.clone(),
        }
    }
}
