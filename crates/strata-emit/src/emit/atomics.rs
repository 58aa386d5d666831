//! The device-wide atomics of the prelude (`atomic_<op>_at_<t>`, IR `Builtin::AtomicAt`): the
//! element's address with its index checked (`strata_index`, a trap on every device), passed to a
//! helper made on first use. On CUDA the helpers call the hardware's `atomicAdd`, `atomicCAS`, …
//! (64-bit forms through `unsigned long long`), and a compare-and-swap loop on the element's bits
//! where CUDA has no such function (float min/max, 64-bit float exchange). In C they use GCC's
//! `__atomic` builtins, and the compare-and-swap loop of `AtomicRmw` for min/max and float
//! arithmetic. Every operation is relaxed except `load_acquire` and `store_release`.

use super::*;

impl Emitter<'_> {
    /// `AtomicAt(op, t)` with its arguments: atoms, index, values, length.
    pub(super) fn atomic_at(
        &self,
        cx: &Cx,
        op: AtomicAtOp,
        t: ScalarTy,
        args: &[Expr],
        span: Span,
    ) -> Result<String, E> {
        let arg = |i: usize| -> Result<String, E> {
            match args.get(i) {
                Some(a) => self.expr(cx, a),
                None => Err(unsupported(span, "an atomic operation without all its arguments")),
            }
        };
        let len = arg(2 + op.values())?;
        let below = match (args.get(1), args.get(2 + op.values())) {
            (Some(i), Some(Expr::Nat(n))) => self.value_below(cx, i, n),
            _ => false,
        };
        let elem = if below {
            format!("&({})[(uint64_t)({})]", arg(0)?, arg(1)?)
        } else {
            format!("&({})[strata_index((uint64_t)({}), (uint64_t)({len}), {})]", arg(0)?, arg(1)?, self.at(span))
        };
        let mut call = vec![elem];
        for i in 0..op.values() {
            call.push(format!("({})({})", scalar_c(t), arg(2 + i)?));
        }
        let name = if self.cuda { self.atomic_at_cuda(op, t)? } else { self.atomic_at_c(op, t, span)? };
        Ok(format!("{name}({})", call.join(", ")))
    }

    /// Adds a helper definition under `name` unless it is there.
    fn add_helper(&self, name: &str, def: impl FnOnce() -> String) {
        if !self.helpers.borrow().iter().any(|(n, _)| n == name) {
            let def = def();
            self.helpers.borrow_mut().push((name.to_string(), def));
        }
    }

    /// The C helper of `AtomicAt(op, t)` on the cpu device.
    fn atomic_at_c(&self, op: AtomicAtOp, t: ScalarTy, span: Span) -> Result<String, E> {
        let ct = scalar_c(t);
        let name = format!("strata_at_{}_{}", op_name(op), scalar_suffix(t));
        let float = matches!(t, ScalarTy::F32 | ScalarTy::F64);
        let body = match op {
            AtomicAtOp::Load => format!("{ct} r;\n    __atomic_load(p, &r, __ATOMIC_RELAXED);\n    return r;"),
            AtomicAtOp::Store => "__atomic_store(p, &v, __ATOMIC_RELAXED);".to_string(),
            AtomicAtOp::LoadAcquire => format!("{ct} r;\n    __atomic_load(p, &r, __ATOMIC_ACQUIRE);\n    return r;"),
            AtomicAtOp::StoreRelease => "__atomic_store(p, &v, __ATOMIC_RELEASE);".to_string(),
            AtomicAtOp::Rmw(AtomicOp::Exch) => {
                format!("{ct} r;\n    __atomic_exchange(p, &v, &r, __ATOMIC_RELAXED);\n    return r;")
            }
            AtomicAtOp::Rmw(AtomicOp::Cas) if !float => {
                "__atomic_compare_exchange_n(p, &v, w, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);\n    return v;"
                    .to_string()
            }
            AtomicAtOp::Rmw(o @ (AtomicOp::Add | AtomicOp::Sub | AtomicOp::And | AtomicOp::Or | AtomicOp::Xor))
                if !float =>
            {
                let f = format!("{o:?}").to_lowercase();
                format!("return __atomic_fetch_{f}(p, v, __ATOMIC_RELAXED);")
            }
            // Min, max and float arithmetic: `AtomicRmw`'s compare-and-swap loop.
            AtomicAtOp::Rmw(o) => return self.atomic_helper(o, t, span),
        };
        let (ret, params) = match op {
            AtomicAtOp::Load | AtomicAtOp::LoadAcquire => (ct, format!("{ct} *p")),
            AtomicAtOp::Store | AtomicAtOp::StoreRelease => ("void", format!("{ct} *p, {ct} v")),
            AtomicAtOp::Rmw(AtomicOp::Cas) => (ct, format!("{ct} *p, {ct} v, {ct} w")),
            AtomicAtOp::Rmw(_) => (ct, format!("{ct} *p, {ct} v")),
        };
        self.add_helper(&name, || format!("static inline {ret} {name}({params}) {{\n    {body}\n}}\n\n"));
        Ok(name)
    }

    /// The CUDA helper of `AtomicAt(op, t)`.
    fn atomic_at_cuda(&self, op: AtomicAtOp, t: ScalarTy) -> Result<String, E> {
        let ct = scalar_c(t);
        let name = format!("strata_at_{}_{}", op_name(op), scalar_suffix(t));
        let wide = matches!(t, ScalarTy::I64 | ScalarTy::U64 | ScalarTy::F64);
        let float = matches!(t, ScalarTy::F32 | ScalarTy::F64);
        // The type CUDA's integer atomics take for this width and signedness.
        let native = match t {
            ScalarTy::F32 | ScalarTy::F64 => ct,
            ScalarTy::I32 => "int",
            ScalarTy::U32 => "unsigned int",
            ScalarTy::I64 if matches!(op, AtomicAtOp::Rmw(AtomicOp::Min | AtomicOp::Max)) => "long long",
            _ if wide => "unsigned long long",
            _ => ct,
        };
        let call = |f: &str, v: &str| format!("return ({ct}){f}(({native} *)p, ({native})({v}));");
        let body = match op {
            // PTX treats `volatile` accesses of an aligned word as relaxed atomic ones.
            AtomicAtOp::Load => format!("return *(volatile {ct} *)p;"),
            AtomicAtOp::Store => format!("*(volatile {ct} *)p = v;"),
            // A fence after the load (before the store) orders it as acquire (release) at device
            // scope, as `cuda::atomic_ref`'s orderings do; `__threadfence()` is a stronger fence.
            AtomicAtOp::LoadAcquire => format!("{ct} r = *(volatile {ct} *)p;\n    __threadfence();\n    return r;"),
            AtomicAtOp::StoreRelease => format!("__threadfence();\n    *(volatile {ct} *)p = v;"),
            AtomicAtOp::Rmw(AtomicOp::Add) => call("atomicAdd", "v"),
            // `atomicSub` only exists for 32-bit integers; `o - v` is `o + (-v)` (wrapping).
            AtomicAtOp::Rmw(AtomicOp::Sub) if wide || float => {
                call("atomicAdd", if float { "-v" } else { "0ull - (unsigned long long)v" })
            }
            AtomicAtOp::Rmw(AtomicOp::Sub) => call("atomicSub", "v"),
            AtomicAtOp::Rmw(AtomicOp::And) => call("atomicAnd", "v"),
            AtomicAtOp::Rmw(AtomicOp::Or) => call("atomicOr", "v"),
            AtomicAtOp::Rmw(AtomicOp::Xor) => call("atomicXor", "v"),
            AtomicAtOp::Rmw(AtomicOp::Min) if !float => call("atomicMin", "v"),
            AtomicAtOp::Rmw(AtomicOp::Max) if !float => call("atomicMax", "v"),
            AtomicAtOp::Rmw(AtomicOp::Exch) if t != ScalarTy::F64 => call("atomicExch", "v"),
            AtomicAtOp::Rmw(AtomicOp::Cas) => {
                format!("return ({ct})atomicCAS(({native} *)p, ({native})v, ({native})w);")
            }
            // Float min/max and 64-bit float exchange: a compare-and-swap loop on the bits.
            AtomicAtOp::Rmw(o) => {
                let new = match o {
                    AtomicOp::Min => "v < o ? v : o",
                    AtomicOp::Max => "v > o ? v : o",
                    _ => "v",
                };
                let (bits, to_f, to_b) = if wide {
                    (
                        "unsigned long long",
                        "__longlong_as_double((long long)want)",
                        "(unsigned long long)__double_as_longlong(n)",
                    )
                } else {
                    ("unsigned int", "__uint_as_float(want)", "__float_as_uint(n)")
                };
                format!(
                    "{bits} *q = ({bits} *)p;\n    {bits} seen = *(volatile {bits} *)q, want;\n    {ct} o;\n    do {{\n        want = seen;\n        o = {to_f};\n        {ct} n = {new};\n        if ({to_b} == want) break;\n        seen = atomicCAS(q, want, {to_b});\n    }} while (seen != want);\n    return o;"
                )
            }
        };
        let (ret, params) = match op {
            AtomicAtOp::Load | AtomicAtOp::LoadAcquire => (ct, format!("{ct} *p")),
            AtomicAtOp::Store | AtomicAtOp::StoreRelease => ("void", format!("{ct} *p, {ct} v")),
            AtomicAtOp::Rmw(AtomicOp::Cas) => (ct, format!("{ct} *p, {ct} v, {ct} w")),
            AtomicAtOp::Rmw(_) => (ct, format!("{ct} *p, {ct} v")),
        };
        self.add_helper(&name, || format!("static __device__ inline {ret} {name}({params}) {{\n    {body}\n}}\n\n"));
        Ok(name)
    }
}

/// The operation's part of a helper's name (`fetch_max`, `compare_exchange`).
fn op_name(op: AtomicAtOp) -> &'static str {
    match op {
        AtomicAtOp::Load => "load",
        AtomicAtOp::Store => "store",
        AtomicAtOp::LoadAcquire => "load_acquire",
        AtomicAtOp::StoreRelease => "store_release",
        AtomicAtOp::Rmw(AtomicOp::Exch) => "exchange",
        AtomicAtOp::Rmw(AtomicOp::Cas) => "compare_exchange",
        AtomicAtOp::Rmw(AtomicOp::Add) => "fetch_add",
        AtomicAtOp::Rmw(AtomicOp::Sub) => "fetch_sub",
        AtomicAtOp::Rmw(AtomicOp::And) => "fetch_and",
        AtomicAtOp::Rmw(AtomicOp::Or) => "fetch_or",
        AtomicAtOp::Rmw(AtomicOp::Xor) => "fetch_xor",
        AtomicAtOp::Rmw(AtomicOp::Min) => "fetch_min",
        AtomicAtOp::Rmw(AtomicOp::Max) => "fetch_max",
    }
}
