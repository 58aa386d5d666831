//! `x++`, `x--`, `++x`, `--x` used as values (`a[i++]`, `int j = i++;`, `*p++`).
//!
//! The update is a statement in [`FnState::pre`], before the statement that uses the value (C
//! leaves an expression that also reads `x` elsewhere undefined, so the order inside one
//! expression does not matter): `x++` saves the old value in a temporary first and is that
//! temporary; `++x` is `x` after the update. Where the expression is evaluated only sometimes
//! (`c && a[i++]`, `?:`, a loop condition), its `pre` goes with it ([`control`]).

use super::*;
use crate::ptr::PtrE;

impl Lx {
    /// Whether update expression `n` is prefix (`++x`) and whether it decrements.
    fn update_parts<'t>(&self, n: Node<'t>, src: &Src) -> R<(Node<'t>, bool, bool)> {
        let arg = self.child(n, "argument", src)?;
        let op = self.text(self.child(n, "operator", src)?, src);
        let prefix = n.child(0).is_some_and(|c| c.id() != arg.id());
        Ok((arg, prefix, op == "--"))
    }

    /// A pointer variable updated as a value (`p++` in `*p++`): the pointer it gives.
    pub(crate) fn update_pointer(&mut self, n: Node, src: &Src) -> R<Option<PtrE>> {
        let (arg, prefix, minus) = self.update_parts(n, src)?;
        let Some(Var { local, ty: CTy::Ptr(t) }) =
            (arg.kind() == "identifier").then(|| self.lookup(self.text(arg, src))).flatten()
        else {
            return Ok(None);
        };
        self.no_split_pointer(t, arg, src)?;
        let span = self.span(n, src);
        let step = self.ptr_step(local, t, int(1, ScalarTy::I64), minus, span);
        if prefix {
            self.f.pre.push(step);
            return Ok(Some(PtrE::at(local, t)));
        }
        // The old pointer, as a reference to its first element (the variable may own its buffer).
        let mem = match &self.f.locals[local].ty {
            Ty::Owned(_, m) | Ty::Ref(_, m) => *m,
            _ => Mem::Cpu,
        };
        let level = self.level();
        let old = self.new_local("p++ value", self.elem_ptr(t, mem, false), level);
        let here = PtrE { off: Some(int(0, ScalarTy::I64)), ..PtrE::at(local, t) };
        self.f.pre.push(Stmt::Let { local: old, init: Some(self.ptr_value(here, span)), span });
        self.f.pre.push(step);
        Ok(Some(PtrE::at(old, t)))
    }

    /// `x++` and friends of a number, as a value.
    pub(crate) fn update_value(&mut self, n: Node, src: &Src) -> R<(Expr, CTy)> {
        let (arg, prefix, minus) = self.update_parts(n, src)?;
        if let Some(p) = self.update_pointer(n, src)? {
            let t = p.elem;
            return Ok((self.ptr_value(p, self.span(n, src)), CTy::Ptr(t)));
        }
        let span = self.span(n, src);
        let (place, t) = self.place(arg, src)?;
        let update = Stmt::Store { place: place.clone(), value: step(Expr::Load(place.clone()), t, minus) };
        if prefix {
            self.f.pre.push(update);
            return Ok((Expr::Load(place), CTy::S(t)));
        }
        let level = self.level();
        let old = self.new_local("x++ value", Ty::Scalar(t.ir()), level);
        self.f.pre.push(Stmt::Let { local: old, init: Some(Expr::Load(place)), span });
        self.f.pre.push(update);
        Ok((Expr::Load(Place::local(old, span)), CTy::S(t)))
    }
}
