//! Printing values from host code: scalars in the shortest form every device shares, arrays nested
//! as the program shaped them, tuples through generated helpers.

use super::*;

impl<'p> Emitter<'p> {
    /// Prints the array of dimensions `dims` (outermost first) that starts at pointer `e`, as
    /// nested lists (`strata_print_nested` of the runtime).
    pub(super) fn print_nested(&self, cx: &Cx, e: &Expr, dims: &[Expr], newline: bool) -> Result<String, E> {
        if let Some(fail) = self.prints_gpu_memory(cx, e) {
            return Ok(fail);
        }
        let v = self.expr(cx, e)?;
        let t = self.expr_ty(cx, e);
        let inner = match &t {
            Ty::Ref(x, _) | Ty::Owned(x, _) => (**x).clone(),
            other => other.clone(),
        };
        let kind = match leaf(&inner) {
            Ty::Scalar(s) if *s != ScalarTy::Unit => scalar_suffix(*s).to_ascii_uppercase(),
            Ty::Nat => "U64".to_string(),
            _ => return Err(unsupported(cx.f.span, "printing this value")),
        };
        let mut parts = vec![format!("STRATA_{kind}"), v, (newline as u8).to_string(), dims.len().to_string()];
        for d in dims {
            parts.push(format!("(uint64_t)({})", self.expr(cx, d)?));
        }
        Ok(format!("strata_print_nested({})", parts.join(", ")))
    }

    /// Host code that would read GPU memory to print `e` (what `sim` reports as E0905): the
    /// printer follows pointers, and host code must never index a device pointer.
    pub(super) fn prints_gpu_memory(&self, cx: &Cx, e: &Expr) -> Option<String> {
        // A kernel or device function prints GPU memory as CUDA's device `printf` does.
        if !matches!(cx.f.kind, FnKind::Host) {
            return None;
        }
        let place_gpu = matches!(e, Expr::Load(p) | Expr::Ref(p) if cx.f.place_mem(p).is_gpu());
        let pointee_gpu = matches!(self.expr_ty(cx, e), Ty::Ref(_, m) | Ty::Owned(_, m) if m.is_gpu());
        (place_gpu || pointee_gpu).then(|| {
            format!(
                "(strata_fail(905, {}, \"host code read GPU memory (print it after `copy_mem_to_host`)\"), 0)",
                self.at(cx.span)
            )
        })
    }

    pub(super) fn print(&self, cx: &Cx, e: &Expr, newline: bool) -> Result<String, E> {
        if let Expr::Lit(Lit::Str(text)) = e {
            let put = if newline { "strata_puts" } else { "strata_put" };
            return Ok(format!("{put}({})", c_string(text)));
        }
        if let Some(fail) = self.prints_gpu_memory(cx, e) {
            return Ok(fail);
        }
        let nl = if newline { "strata_putc('\\n')" } else { "0" };
        Ok(format!("({}, {nl})", self.print_expr(cx, e)?))
    }

    /// A C expression printing `e`; a tuple or array written out (`(a, b)`, `[a, b]`) is printed
    /// element by element (it need not have a C value).
    pub(super) fn print_expr(&self, cx: &Cx, e: &Expr) -> Result<String, E> {
        if let Expr::Tuple(xs) | Expr::ArrayList(xs) = e {
            let (open, close) = if matches!(e, Expr::Tuple(_)) { ('(', ')') } else { ('[', ']') };
            let mut parts = vec![format!("strata_putc('{open}')")];
            for (i, x) in xs.iter().enumerate() {
                if i > 0 {
                    parts.push("fputs(\", \", STRATA_OUT)".to_string());
                }
                parts.push(self.print_expr(cx, x)?);
            }
            parts.push(format!("strata_putc('{close}')"));
            return Ok(format!("({})", parts.join(", ")));
        }
        let v = self.expr(cx, e)?;
        self.print_value(cx, &v, &self.expr_ty(cx, e))
    }

    /// A C expression printing the value `v` of type `t` like `sim` does: a reference or owning
    /// pointer prints what it points to, an array its elements, a tuple its fields. Arrays and
    /// tuples are printed by helper functions ([`Emitter::show_helper`]), which get the lengths
    /// of the arrays in `t` as arguments.
    pub(super) fn print_value(&self, cx: &Cx, v: &str, t: &Ty) -> Result<String, E> {
        if let Some(f) = scalar_printer(t) {
            return Ok(format!("{f}({v})"));
        }
        if let Ty::Ref(x, _) | Ty::Owned(x, _) = t {
            if !matches!(**x, Ty::Array { .. }) {
                return self.print_value(cx, &format!("(*({v}))"), x);
            }
        }
        let name = self.show_helper(t, cx.span)?;
        let mut args = vec![v.to_string()];
        self.array_lengths(cx, t, &mut args)?;
        Ok(format!("{name}({})", args.join(", ")))
    }

    /// The lengths of the arrays in `t`, in the order the parameters of its printing helper take
    /// them.
    pub(super) fn array_lengths(&self, cx: &Cx, t: &Ty, out: &mut Vec<String>) -> Result<(), E> {
        match t {
            Ty::Ref(x, _) | Ty::Owned(x, _) if !matches!(**x, Ty::Array { .. }) => self.array_lengths(cx, x, out),
            Ty::Ref(x, _) | Ty::Owned(x, _) | Ty::Array { elem: x, .. } => {
                let arr = if matches!(t, Ty::Array { .. }) { t } else { &**x };
                out.push(self.flat_len(cx, arr)?);
                self.array_lengths(cx, leaf(arr), out)
            }
            Ty::Tuple(ts) => ts.iter().try_for_each(|x| self.array_lengths(cx, x, out)),
            Ty::Scalar(_) | Ty::Nat | Ty::Stream | Ty::Event => Ok(()),
        }
    }

    /// The name of a function that prints a value of the array or tuple type `t` (made on first
    /// use): `strata_show_` and the type's shape, e.g. `strata_show_Ad` for an array of `f64` or a
    /// reference to one, `strata_show_TdiE` for `(f64, i32)`. Its parameters: the value, then
    /// the lengths of the arrays in `t` ([`Emitter::array_lengths`]). Arrays print flat, element
    /// by element, as `sim` prints them.
    pub(super) fn show_helper(&self, t: &Ty, span: Span) -> Result<String, E> {
        let name = format!("strata_show_{}", shape_mangle(t, span)?);
        if self.helpers.borrow().iter().any(|(n, _)| *n == name) {
            return Ok(name);
        }
        // Parameters and body, with lengths `n0_`, `n1_`, … in order.
        let mut lens = 0usize;
        let mut body = String::new();
        match t {
            Ty::Tuple(ts) => {
                body.push_str("    strata_putc('(');\n");
                for (i, x) in ts.iter().enumerate() {
                    if i > 0 {
                        body.push_str("    fputs(\", \", STRATA_OUT);\n");
                    }
                    let call = self.show_call(x, &format!("v.f{i}"), &mut lens, span)?;
                    writeln!(body, "    {call};").ok();
                }
                body.push_str("    strata_putc(')');\n");
            }
            _ => {
                let n = lens;
                lens += 1;
                let elem = match t {
                    Ty::Ref(x, _) | Ty::Owned(x, _) | Ty::Array { elem: x, .. } => leaf(x),
                    _ => t,
                };
                let call = self.show_call(elem, "v[k_]", &mut lens, span)?;
                writeln!(body, "    strata_putc('[');").ok();
                writeln!(body, "    for (uint64_t k_ = 0; k_ < n{n}_; k_++) {{").ok();
                writeln!(body, "        if (k_) fputs(\", \", STRATA_OUT);").ok();
                writeln!(body, "        {call};").ok();
                writeln!(body, "    }}").ok();
                writeln!(body, "    strata_putc(']');").ok();
            }
        }
        let mut params = vec![format!("{} v", c_type(t, span)?)];
        params.extend((0..lens).map(|k| format!("uint64_t n{k}_")));
        let def = format!("STRATA_INLINE void {name}({}) {{\n{body}}}\n", params.join(", "));
        self.helpers.borrow_mut().push((name.clone(), def));
        Ok(name)
    }

    /// Inside a printing helper: the call printing `v` of type `t`, whose array lengths are the
    /// helper's parameters from `n<lens>_` on.
    pub(super) fn show_call(&self, t: &Ty, v: &str, lens: &mut usize, span: Span) -> Result<String, E> {
        if let Some(f) = scalar_printer(t) {
            return Ok(format!("{f}({v})"));
        }
        if let Ty::Ref(x, _) | Ty::Owned(x, _) = t {
            if !matches!(**x, Ty::Array { .. }) {
                return self.show_call(x, &format!("(*({v}))"), lens, span);
            }
        }
        let name = self.show_helper(t, span)?;
        let mut args = vec![v.to_string()];
        for _ in 0..Self::count_lengths(t) {
            args.push(format!("n{}_", *lens));
            *lens += 1;
        }
        Ok(format!("{name}({})", args.join(", ")))
    }

    /// The number of arrays in `t`, as [`Emitter::array_lengths`] lists them.
    pub(super) fn count_lengths(t: &Ty) -> usize {
        match t {
            Ty::Ref(x, _) | Ty::Owned(x, _) if !matches!(**x, Ty::Array { .. }) => Self::count_lengths(x),
            Ty::Ref(x, _) | Ty::Owned(x, _) | Ty::Array { elem: x, .. } => 1 + Self::count_lengths(leaf(x)),
            Ty::Tuple(ts) => ts.iter().map(Self::count_lengths).sum(),
            Ty::Scalar(_) | Ty::Nat | Ty::Stream | Ty::Event => 0,
        }
    }
}
