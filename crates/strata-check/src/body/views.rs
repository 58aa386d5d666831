//! Views: applying built-in and named views to array types, with their size conditions.

use super::*;

impl FnCx<'_> {
    /// Applies a view to an array type; returns the new type and the basic views it expands to.
    pub(super) fn apply_view(
        &mut self,
        ty: &Ty,
        v: &ast::ViewRef,
        env: &HashMap<String, Nat>,
    ) -> Option<(Ty, Vec<ViewApp>)> {
        let mut nats = Vec::new();
        for n in &v.nat_args {
            nats.push(self.view_nat(n, env)?);
        }
        for (n, arg) in nats.iter().zip(&v.nat_args) {
            if self.facts.le(&Nat::lit(0), n) != Truth::Proven {
                self.error(
                    codes::SIZE_NOT_PROVEN,
                    arg.span,
                    "size argument may be negative",
                    format!("cannot prove `{n} >= 0`"),
                );
                return None;
            }
        }
        let name = v.name.name.as_str();
        let basic: Option<&'static str> = match name {
            "group" | "grp" => Some("group"),
            "take_left" => Some("take_left"),
            "take_right" => Some("take_right"),
            "transpose" | "transp" => Some("transpose"),
            "reverse" | "rev" => Some("reverse"),
            "join" => Some("join"),
            "map" => Some("map"),
            "to_view" => Some("to_view"),
            _ => None,
        };
        let Some(basic) = basic else {
            return self.apply_named_view(ty, v, nats);
        };
        let want_nats = usize::from(matches!(basic, "group" | "take_left" | "take_right"));
        if nats.len() != want_nats
            || (basic == "map") != (v.view_args.len() == 1)
            || (basic != "map" && !v.view_args.is_empty())
        {
            self.error(
                codes::GENERIC_ARG_COUNT,
                v.span,
                format!("wrong arguments for view `{name}`"),
                match basic {
                    "group" | "take_left" | "take_right" => format!("write `{name}::<n>`"),
                    "map" => "write `map(view)`".into(),
                    _ => format!("`{name}` takes no arguments"),
                },
            );
            return None;
        }
        let Some((elem, len)) = ty.as_array().map(|(t, n)| (t.clone(), n.clone())) else {
            self.not_an_array(ty, v.span, "viewed");
            return None;
        };
        let mut args = Vec::new();
        let out = match basic {
            "group" => {
                let k = &nats[0];
                let divides =
                    self.facts.divides(k, &len) == Truth::Proven || crate::pow2::divides(&self.facts, k, &len);
                let positive = self.facts.le(&Nat::lit(1), k) == Truth::Proven || crate::pow2::positive(&self.facts, k);
                if !positive {
                    self.error(
                        codes::SIZE_NOT_PROVEN,
                        v.span,
                        "group size must be at least 1",
                        format!("cannot prove `{k} >= 1`"),
                    );
                    return None;
                }
                if !divides {
                    let d = Diagnostic::error(
                        codes::SIZE_NOT_PROVEN,
                        "group size must divide the array length",
                        v.span,
                        format!("cannot prove that {k} divides {len}"),
                    );
                    // Only a symbolic length can be checked: a constant one simply does not divide.
                    let d = if len.vars().is_empty() {
                        d
                    } else {
                        d.with_note(format!(
                            "help: check it first (`if {len} % {k} == 0 {{ … }}`), or require it with a `where` clause"
                        ))
                    };
                    self.report(d);
                    return None;
                }
                let groups = crate::pow2::simplify(&len.div(k).ok()?, &self.facts);
                Ty::ViewArray(Box::new(Ty::ViewArray(Box::new(elem), k.clone())), groups)
            }
            "take_left" | "take_right" => {
                let k = &nats[0];
                let truth = self.facts.le(k, &len);
                if truth != Truth::Proven {
                    let d = self.take_out_of_bounds(
                        truth,
                        (k, &len),
                        v.span,
                        format!("`{basic}::<{k}>` takes {k} elements of an array of {len}"),
                        format!("`{basic}::<{k}>` {{}} the array's length {len}"),
                    );
                    self.report(d.with_note(
                        "help: keep the position within the length: tighten the loop range (`for i in 0..n` makes \
                         `take_left::<i + 1>` at most `n`), state the bound with `where`, or cut the array with \
                         `group::<k>` where `k` divides its length",
                    ));
                    return None;
                }
                let n = if basic == "take_left" { k.clone() } else { len.sub(k).ok()? };
                Ty::ViewArray(Box::new(elem), n)
            }
            "transpose" => {
                let Some((inner, m)) = elem.as_array().map(|(t, n)| (t.clone(), n.clone())) else {
                    self.error(
                        codes::NOT_AN_ARRAY,
                        v.span,
                        "`transpose` needs a two-dimensional array",
                        format!("the elements are `{elem}`"),
                    );
                    return None;
                };
                Ty::ViewArray(Box::new(Ty::ViewArray(Box::new(inner), len)), m)
            }
            "join" => {
                // [[T; m]; n] seen as [T; n * m], row by row (the inverse of `group::<m>`).
                let Some((inner, m)) = elem.as_array().map(|(t, n)| (t.clone(), n.clone())) else {
                    self.error(
                        codes::NOT_AN_ARRAY,
                        v.span,
                        "`join` needs a two-dimensional array",
                        format!("the elements are `{elem}`"),
                    );
                    return None;
                };
                let joined = crate::pow2::simplify(&len.mul(&m).ok()?, &self.facts);
                Ty::ViewArray(Box::new(inner), joined)
            }
            "reverse" | "to_view" => Ty::ViewArray(Box::new(elem), len),
            _ => {
                let mut t = elem;
                let mut chain = Vec::new();
                for inner in &v.view_args[0] {
                    let (nt, apps) = self.apply_view(&t, inner, env)?;
                    t = nt;
                    chain.extend(apps);
                }
                args.push(chain);
                Ty::ViewArray(Box::new(t), len)
            }
        };
        Some((out, vec![ViewApp { name: basic, nats, args }]))
    }

    pub(super) fn apply_named_view(&mut self, ty: &Ty, v: &ast::ViewRef, nats: Vec<Nat>) -> Option<(Ty, Vec<ViewApp>)> {
        if self.view_depth >= 32 {
            self.error(
                codes::UNKNOWN_VIEW,
                v.span,
                format!("view `{}` expands without end", v.name.name),
                "a view defined in terms of itself",
            );
            return None;
        }
        let Some(def) = self.prog.views.get(&v.name.name).cloned() else {
            self.error(codes::UNKNOWN_VIEW, v.name.span, format!("unknown view `{}`", v.name.name), "not a view");
            return None;
        };
        if def.generics.len() != nats.len() || !v.view_args.is_empty() {
            self.error(
                codes::GENERIC_ARG_COUNT,
                v.span,
                format!(
                    "view `{}` takes {} size argument(s) but {} were given",
                    v.name.name,
                    def.generics.len(),
                    nats.len()
                ),
                "wrong number of arguments",
            );
            return None;
        }
        let env: HashMap<String, Nat> = def.generics.iter().cloned().zip(nats).collect();
        let mut t = ty.clone();
        let mut apps = Vec::new();
        self.view_depth += 1;
        let result = self.expand_view(&mut t, &mut apps, &def.body, v, &env);
        self.view_depth -= 1;
        result?;
        Some((t, apps))
    }

    pub(super) fn expand_view(
        &mut self,
        t: &mut Ty,
        apps: &mut Vec<ViewApp>,
        body: &[ast::ViewRef],
        v: &ast::ViewRef,
        env: &HashMap<String, Nat>,
    ) -> Option<()> {
        for step in body {
            // Errors inside a named view are reported at its use.
            let mark = self.diags.len();
            let r = self.apply_view(t, step, env);
            for d in &mut self.diags[mark..] {
                d.primary.span = v.span;
            }
            if r.is_none() && self.diags.len() == mark {
                self.error(
                    codes::SIZE_NOT_PROVEN,
                    v.span,
                    format!("invalid view `{}`", v.name.name),
                    "a size in its definition is invalid here",
                );
            }
            let (nt, a) = r?;
            *t = nt;
            apps.extend(a);
        }
        Some(())
    }

    /// A view's size argument: view parameters first, then the function's sizes.
    pub(super) fn view_nat(&mut self, n: &ast::Nat, env: &HashMap<String, Nat>) -> Option<Nat> {
        if env.is_empty() {
            return self.lower_nat(n);
        }
        // The parameters are read as their values, so each operation is checked for the
        // values at this use under this function's facts.
        let mut lower = Lower {
            consts: &self.prog.consts,
            generics: env.keys().map(|k| (k.clone(), Kind::Nat)).collect(),
            default_mem: Mem::GpuGlobal,
            diags: &mut self.diags,
            facts: Some(&self.facts),
            env: Some(env),
        };
        lower.nat_checked(n)
    }
}
