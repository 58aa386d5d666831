//! Range analysis of index arithmetic: which [`IExpr`]s may be emitted in signed 32-bit C.
//!
//! Index arithmetic is natural-number arithmetic, emitted by default as `uint64_t`. Signed 32-bit
//! arithmetic is cheaper on a GPU (one register per value, and signed overflow being undefined
//! lets nvcc fold `(a + c) * s` into base + constant offsets), but it is only equal to the 64-bit
//! result where nothing overflows or goes negative. [`Env::range`] proves that by interval
//! arithmetic: it gives an interval for an expression only if *every* sub-expression's value lies
//! in `0..=I32_MAX`, for every value the leaves can take. Everything it cannot bound (size
//! parameters without a `where` bound, run-time `Value`s, a subtraction that may go negative, a division by a possible
//! zero) makes the whole expression stay 64-bit.

use std::collections::HashMap;
use strata_ir::ir::{DimName, FnKind, Function, IExpr, LocalId};

/// The largest value of a signed 32-bit integer.
pub(crate) const I32_MAX: u64 = (1 << 31) - 1;

/// The closed interval `lo..=hi` of natural numbers.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Interval {
    pub(crate) lo: u64,
    pub(crate) hi: u64,
}

impl Interval {
    pub(crate) fn new(lo: u64, hi: u64) -> Interval {
        Interval { lo, hi }
    }

    /// The values `0..self.hi` of a coordinate whose extent lies in `self` (`0..=0` for an empty
    /// extent, where no coordinate value exists and any claim holds).
    fn below(self) -> Interval {
        Interval::new(0, self.hi.saturating_sub(1))
    }
}

fn dim(d: DimName) -> usize {
    match d {
        DimName::X => 0,
        DimName::Y => 1,
        DimName::Z => 2,
    }
}

/// What is known about the leaves of index expressions in one function.
#[derive(Clone, Debug, Default)]
pub(crate) struct Env {
    /// The extent of the grid (`gridDim`) per dimension x, y, z; `None` if unknown.
    pub(crate) grid: [Option<Interval>; 3],
    /// The extent of a block (`blockDim`) per dimension.
    pub(crate) block: [Option<Interval>; 3],
    /// The values each `for` counter in scope takes.
    pub(crate) counters: HashMap<LocalId, Interval>,
    /// The values of the size parameters the function's `where` clauses bound
    /// ([`Function::nat_max`]).
    pub(crate) params: HashMap<String, Interval>,
}

impl Env {
    /// The environment at the start of `f`. A kernel's launch shape bounds its coordinates where
    /// the shape is constant; otherwise, on CUDA (`cuda_limits`), the hardware limits of a launch
    /// do (a launch beyond them fails, so the kernel never runs with such coordinates). The C of
    /// the cpu device has no such limits: there only constant shapes bound anything.
    pub(crate) fn for_function(f: &Function, cuda_limits: bool) -> Env {
        let limits_grid = [I32_MAX, 65535, 65535];
        let limits_block = [1024, 1024, 64];
        let params = f.nat_max.iter().map(|(n, max)| (n.clone(), Interval::new(0, *max))).collect();
        let mut env = Env { params, ..Env::default() };
        let consts = env.clone();
        let shape = match &f.kind {
            FnKind::Kernel { grid, block, .. } => Some((grid, block)),
            FnKind::Device => None,
            // Host code has no coordinates.
            FnKind::Host => return env,
        };
        for d in 0..3 {
            let (g, b) = match shape {
                Some((grid, block)) => (consts.range(&grid[d]), consts.range(&block[d])),
                None => (None, None),
            };
            env.grid[d] = g.or_else(|| cuda_limits.then(|| Interval::new(1, limits_grid[d])));
            env.block[d] = b.or_else(|| cuda_limits.then(|| Interval::new(1, limits_block[d])));
        }
        env
    }

    /// The values of `e` if every intermediate value of its evaluation provably lies in
    /// `0..=I32_MAX`; `None` otherwise.
    pub(crate) fn range(&self, e: &IExpr) -> Option<Interval> {
        self.range_within(e, I32_MAX)
    }

    /// Whether `e` provably evaluates without any intermediate value leaving `0..=u64::MAX`
    /// (no wrap-around in 64-bit unsigned arithmetic).
    pub(crate) fn fits_u64(&self, e: &IExpr) -> bool {
        self.range_within(e, u64::MAX).is_some()
    }

    /// The values of `e` if every intermediate value provably lies in `0..=limit`.
    fn range_within(&self, e: &IExpr, limit: u64) -> Option<Interval> {
        let two = |a: &IExpr, b: &IExpr| Some((self.range_within(a, limit)?, self.range_within(b, limit)?));
        let checked = |lo: u128, hi: u128| -> Option<Interval> {
            (hi <= limit as u128).then(|| Interval::new(lo as u64, hi as u64))
        };
        let r = match e {
            IExpr::Const(c) => Interval::new(*c, *c),
            IExpr::Counter(l) => *self.counters.get(l)?,
            IExpr::ThreadIdx(d) => self.block[dim(*d)]?.below(),
            IExpr::BlockIdx(d) => self.grid[dim(*d)]?.below(),
            IExpr::BlockDim(d) => self.block[dim(*d)]?,
            IExpr::GridDim(d) => self.grid[dim(*d)]?,
            IExpr::Param(p) => *self.params.get(p)?,
            IExpr::Value(_) => return None,
            IExpr::Add(a, b) => {
                let (a, b) = two(a, b)?;
                checked(a.lo as u128 + b.lo as u128, a.hi as u128 + b.hi as u128)?
            }
            IExpr::Sub(a, b) => {
                let (a, b) = two(a, b)?;
                // The smallest result must not be negative.
                if a.lo < b.hi {
                    return None;
                }
                Interval::new(a.lo - b.hi, a.hi - b.lo)
            }
            IExpr::Mul(a, b) => {
                let (a, b) = two(a, b)?;
                checked(a.lo as u128 * b.lo as u128, a.hi as u128 * b.hi as u128)?
            }
            IExpr::Div(a, b) => {
                let (a, b) = two(a, b)?;
                if b.lo == 0 {
                    return None;
                }
                Interval::new(a.lo / b.hi, a.hi / b.lo)
            }
            IExpr::Rem(a, b) => {
                let (a, b) = two(a, b)?;
                if b.lo == 0 {
                    return None;
                }
                if a.hi < b.lo {
                    a
                } else {
                    Interval::new(0, a.hi.min(b.hi - 1))
                }
            }
            // Only powers of two, emitted as a shift.
            IExpr::Pow(a, b) if matches!(**a, IExpr::Const(2)) => {
                let b = self.range_within(b, limit)?;
                if b.hi >= 64 {
                    return None;
                }
                checked(1u128 << b.lo, 1u128 << b.hi)?
            }
            IExpr::Pow(..) => return None,
        };
        (r.lo <= r.hi && r.hi <= limit).then_some(r)
    }

    /// The values of the counter of `for counter in lo..hi` if the loop can run in 32 bits: both
    /// bounds are provable, so the counter (which stops at `hi`) never exceeds `I32_MAX`.
    pub(crate) fn loop_range(&self, lo: &IExpr, hi: &IExpr) -> Option<Interval> {
        let (lo, hi) = (self.range(lo)?, self.range(hi)?);
        // The body runs only for lo.lo <= counter < hi.hi; if that is empty, it never runs.
        Some(if lo.lo < hi.hi { Interval::new(lo.lo, hi.hi - 1) } else { Interval::new(0, 0) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_ir::ir::Expr;

    fn c(v: u64) -> IExpr {
        IExpr::Const(v)
    }
    fn add(a: IExpr, b: IExpr) -> IExpr {
        IExpr::Add(Box::new(a), Box::new(b))
    }
    fn sub(a: IExpr, b: IExpr) -> IExpr {
        IExpr::Sub(Box::new(a), Box::new(b))
    }
    fn mul(a: IExpr, b: IExpr) -> IExpr {
        IExpr::Mul(Box::new(a), Box::new(b))
    }
    fn div(a: IExpr, b: IExpr) -> IExpr {
        IExpr::Div(Box::new(a), Box::new(b))
    }
    fn rem(a: IExpr, b: IExpr) -> IExpr {
        IExpr::Rem(Box::new(a), Box::new(b))
    }
    fn pow2(e: IExpr) -> IExpr {
        IExpr::Pow(Box::new(c(2)), Box::new(e))
    }
    fn tx() -> IExpr {
        IExpr::ThreadIdx(DimName::X)
    }
    fn bx() -> IExpr {
        IExpr::BlockIdx(DimName::X)
    }

    /// A kernel launched with 64 x 1 x 1 blocks of 256 x 1 x 1 threads, counter 0 in 0..4.
    fn env() -> Env {
        let one = Some(Interval::new(1, 1));
        let mut e = Env {
            grid: [Some(Interval::new(64, 64)), one, one],
            block: [Some(Interval::new(256, 256)), one, one],
            ..Env::default()
        };
        e.counters.insert(0, Interval::new(0, 3));
        e
    }

    #[test]
    fn coordinates_and_counters() {
        let e = env();
        assert_eq!(e.range(&tx()), Some(Interval::new(0, 255)));
        assert_eq!(e.range(&bx()), Some(Interval::new(0, 63)));
        assert_eq!(e.range(&IExpr::BlockDim(DimName::X)), Some(Interval::new(256, 256)));
        // bx * 256 + tx + counter * 16384
        let idx = add(add(mul(bx(), c(256)), tx()), mul(IExpr::Counter(0), c(16384)));
        assert_eq!(e.range(&idx), Some(Interval::new(0, 63 * 256 + 255 + 3 * 16384)));
        // A counter not in scope is unknown.
        assert_eq!(e.range(&IExpr::Counter(1)), None);
    }

    #[test]
    fn refuses_unbounded_leaves() {
        let e = env();
        assert_eq!(e.range(&IExpr::Param("n".into())), None);
        assert_eq!(e.range(&add(tx(), IExpr::Param("n".into()))), None);
        let v = IExpr::Value(Box::new(Expr::Nat(c(1))));
        assert_eq!(e.range(&v), None);
        // Coordinates of an unknown launch shape.
        assert_eq!(Env::default().range(&tx()), None);
    }

    #[test]
    fn where_bounds_bound_parameters() {
        // `where n <= 2^20`: `bx * 256 + tx < n` stays in 32 bits, `n * 4096` does not.
        let mut e = env();
        e.params.insert("n".into(), Interval::new(0, 1 << 20));
        let n = || IExpr::Param("n".into());
        assert_eq!(e.range(&add(n(), tx())), Some(Interval::new(0, (1 << 20) + 255)));
        assert_eq!(e.range(&mul(n(), c(2048))), None);
        assert_eq!(e.range(&mul(n(), c(2047))), Some(Interval::new(0, 2047 << 20)));
        assert_eq!(e.range(&IExpr::Param("m".into())), None);
    }

    #[test]
    fn boundary_of_i32() {
        let e = env();
        assert_eq!(e.range(&c(I32_MAX)), Some(Interval::new(I32_MAX, I32_MAX)));
        assert_eq!(e.range(&c(I32_MAX + 1)), None);
        assert_eq!(e.range(&add(c(I32_MAX - 255), tx())), Some(Interval::new(I32_MAX - 255, I32_MAX)));
        assert_eq!(e.range(&add(c(I32_MAX - 254), tx())), None);
    }

    #[test]
    fn refuses_overflowing_intermediate_product() {
        let e = env();
        // (tx * 2^24) / 2^24 is at most 255, but the product reaches 255 * 2^24 > 2^31 - 1.
        let big = mul(tx(), c(1 << 24));
        assert_eq!(e.range(&div(big.clone(), c(1 << 24))), None);
        assert_eq!(e.range(&rem(big, c(7))), None);
        // The same with a smaller factor fits.
        assert_eq!(e.range(&div(mul(tx(), c(1 << 23)), c(1 << 23))), Some(Interval::new(0, 255)));
        // A product of two large constants that overflows even u32.
        assert_eq!(e.range(&mul(c(1 << 20), c(1 << 20))), None);
    }

    #[test]
    fn subtraction_must_stay_non_negative() {
        let e = env();
        // 255 - tx >= 0 always; 254 - tx may be negative.
        assert_eq!(e.range(&sub(c(255), tx())), Some(Interval::new(0, 255)));
        assert_eq!(e.range(&sub(c(254), tx())), None);
        // A negative intermediate even though the final value is not: (2 - counter) + 5.
        assert_eq!(e.range(&add(sub(c(2), IExpr::Counter(0)), c(5))), None);
        // (8 - counter) with counter in 0..=3 is 5..=8.
        assert_eq!(e.range(&sub(c(8), IExpr::Counter(0))), Some(Interval::new(5, 8)));
    }

    #[test]
    fn division_remainder_and_powers() {
        let e = env();
        assert_eq!(e.range(&div(c(256), pow2(IExpr::Counter(0)))), Some(Interval::new(32, 256)));
        assert_eq!(e.range(&rem(tx(), c(32))), Some(Interval::new(0, 31)));
        assert_eq!(e.range(&rem(c(5), add(tx(), c(6)))), Some(Interval::new(5, 5)));
        // Division or remainder by a value that may be zero.
        assert_eq!(e.range(&div(c(256), tx())), None);
        assert_eq!(e.range(&rem(c(256), tx())), None);
        // 2^30 fits, 2^31 does not; other bases are refused.
        assert_eq!(e.range(&pow2(c(30))), Some(Interval::new(1 << 30, 1 << 30)));
        assert_eq!(e.range(&pow2(c(31))), None);
        assert_eq!(e.range(&IExpr::Pow(Box::new(c(3)), Box::new(c(2)))), None);
        // 2^counter - 1 is at least 0.
        assert_eq!(e.range(&sub(pow2(IExpr::Counter(0)), c(1))), Some(Interval::new(0, 7)));
    }

    #[test]
    fn loops() {
        let e = env();
        assert_eq!(e.loop_range(&c(0), &c(4)), Some(Interval::new(0, 3)));
        assert_eq!(e.loop_range(&tx(), &c(I32_MAX)), Some(Interval::new(0, I32_MAX - 1)));
        // The counter would reach hi = 2^31 after the last iteration.
        assert_eq!(e.loop_range(&c(0), &c(I32_MAX + 1)), None);
        assert_eq!(e.loop_range(&c(0), &IExpr::Param("n".into())), None);
        // An empty loop: the body never runs.
        assert_eq!(e.loop_range(&c(5), &c(5)), Some(Interval::new(0, 0)));
    }

    #[test]
    fn launch_shapes() {
        use strata_diag::Span;
        use strata_ir::ir::Ty;
        let kernel = |grid: [IExpr; 3], block: [IExpr; 3]| Function {
            name: "k".into(),
            kind: FnKind::Kernel { grid, block, shared: Vec::new(), ordered: false },
            nat_params: vec!["n".into()],
            nat_max: Default::default(),
            params: Vec::new(),
            locals: Vec::new(),
            body: Vec::new(),
            ret: Ty::Tuple(Vec::new()),
            span: Span::DUMMY,
            shrd_params: Vec::new(),
        };
        let n = || IExpr::Param("n".into());
        let f = kernel([div(c(2048), c(32)), c(1), c(1)], [c(32), c(8), c(1)]);
        let e = Env::for_function(&f, false);
        assert_eq!(e.range(&bx()), Some(Interval::new(0, 63)));
        assert_eq!(e.range(&IExpr::ThreadIdx(DimName::Y)), Some(Interval::new(0, 7)));
        // A run-time shape: unbounded in C, the hardware limits on CUDA.
        let f = kernel([n(), n(), c(1)], [n(), c(1), c(1)]);
        assert_eq!(Env::for_function(&f, false).range(&bx()), None);
        let cuda = Env::for_function(&f, true);
        assert_eq!(cuda.range(&bx()), Some(Interval::new(0, I32_MAX - 1)));
        assert_eq!(cuda.range(&tx()), Some(Interval::new(0, 1023)));
        assert_eq!(cuda.range(&IExpr::BlockIdx(DimName::Y)), Some(Interval::new(0, 65534)));
        // blockIdx.x * blockDim.x may exceed 2^31 - 1 under the limits alone.
        assert_eq!(cuda.range(&mul(bx(), IExpr::BlockDim(DimName::X))), None);
    }
}
