//! C's `rand()` as glibc computes it (`random()`, the additive feedback generator of degree 31
//! seeded by `srand`), so that a CUDA-C program's host data is what a real run on Linux gets.
//! The C runtime's `strata_rand` (crates/strata-emit/src/runtime.h) is the same algorithm.

use std::collections::VecDeque;

pub(crate) struct CRand {
    /// The last 34 values of the sequence, oldest first.
    q: VecDeque<u32>,
}

impl CRand {
    pub(crate) fn new(seed: u32) -> CRand {
        let mut r = vec![0i32; 344];
        r[0] = if seed == 0 { 1 } else { seed as i32 };
        for i in 1..31 {
            // 16807 * r[i - 1] % (2^31 - 1), as glibc computes it (Schrage's method).
            let w = i64::from(r[i - 1]);
            let (hi, lo) = (w / 127_773, w % 127_773);
            let mut w = 16_807 * lo - 2_836 * hi;
            if w < 0 {
                w += 2_147_483_647;
            }
            r[i] = w as i32;
        }
        for i in 31..34 {
            r[i] = r[i - 31];
        }
        for i in 34..344 {
            r[i] = (r[i - 31] as u32).wrapping_add(r[i - 3] as u32) as i32;
        }
        CRand { q: r[310..].iter().map(|&x| x as u32).collect() }
    }

    /// The next `rand()`.
    pub(crate) fn next(&mut self) -> i32 {
        let v = self.q[3].wrapping_add(self.q[31]);
        self.q.pop_front();
        self.q.push_back(v);
        (v >> 1) as i32
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn glibc_sequences() {
        // glibc 2.x: `rand()` after no `srand` (seed 1), and after `srand(42)`.
        let mut r = super::CRand::new(1);
        assert_eq!([r.next(), r.next(), r.next()], [1_804_289_383, 846_930_886, 1_681_692_777]);
        let mut r = super::CRand::new(42);
        assert_eq!(r.next(), 71_876_166);
        // A seed past `i32::MAX` (negative as glibc's `int32_t` state), and 0 (taken as 1).
        let mut r = super::CRand::new(4_000_000_000);
        assert_eq!([r.next(), r.next()], [1_111_130_805, 1_380_198_982]);
        assert_eq!(super::CRand::new(0).next(), 1_804_289_383);
    }
}
