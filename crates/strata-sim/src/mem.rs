//! The memory budget of the `sim` device.
//!
//! Every large allocation of the simulator (arrays of the program, by value or in a buffer, and
//! the shadow state of the race detector) is *charged* against a budget before it is made, and
//! released when it is dropped. A request that does not fit the budget, or that the allocator
//! refuses (`try_reserve`), becomes an [`Oom`], which the machine reports as E0903 "out of memory"
//! at the allocation. Both are needed: with Linux's overcommit a 20 GB `Vec` is granted at once
//! and the OOM killer strikes later, when the pages are touched, so the allocator alone would
//! never refuse.
//!
//! The budget is `STRATA_SIM_MEMORY` bytes when that variable is set (a number, optionally
//! followed by `K`, `M`, `G` or `T` for binary multiples), else half the memory the system has
//! available when the run starts (`MemAvailable` in `/proc/meminfo`), else
//! [`FALLBACK_BUDGET`]. The accounts are per thread: one run of the simulator uses one thread.

use std::cell::Cell;

/// The budget where the available memory cannot be read.
pub const FALLBACK_BUDGET: u64 = 4 << 30;

/// The environment variable that sets the budget, in bytes.
pub const BUDGET_VAR: &str = "STRATA_SIM_MEMORY";

thread_local! {
    static USED: Cell<u64> = const { Cell::new(0) };
    static BUDGET: Cell<u64> = const { Cell::new(u64::MAX) };
}

/// An allocation that does not fit: the number of bytes it asked for.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Oom {
    pub bytes: u128,
}

impl Oom {
    /// `count` items of `size` bytes each (computed without overflow).
    pub fn of(count: u128, size: usize) -> Oom {
        Oom { bytes: count.saturating_mul(size as u128) }
    }
}

/// Takes `bytes` from the budget, or fails without taking anything.
pub fn charge(bytes: u64) -> Result<(), Oom> {
    let used = USED.with(Cell::get);
    match used.checked_add(bytes) {
        Some(total) if total <= BUDGET.with(Cell::get) => {
            USED.with(|u| u.set(total));
            Ok(())
        }
        _ => Err(Oom { bytes: u128::from(bytes) }),
    }
}

/// Takes `bytes` even beyond the budget (for copies that cannot fail, such as `Clone`); the
/// next checked charge then fails.
pub fn charge_anyway(bytes: u64) {
    USED.with(|u| u.set(u.get().saturating_add(bytes)));
}

/// Gives `bytes` back.
pub fn release(bytes: u64) {
    USED.with(|u| u.set(u.get().saturating_sub(bytes)));
}

/// The bytes charged now.
pub fn used() -> u64 {
    USED.with(Cell::get)
}

/// Whether the charges exceed the budget (after [`charge_anyway`]).
pub fn over_budget() -> bool {
    USED.with(Cell::get) > BUDGET.with(Cell::get)
}

/// Sets this thread's budget for the duration of a run; the previous accounts come back when it
/// is dropped.
pub struct Session {
    budget: u64,
    used: u64,
}

impl Session {
    pub fn start(budget: u64) -> Session {
        Session { budget: BUDGET.with(|b| b.replace(budget)), used: USED.with(|u| u.replace(0)) }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        BUDGET.with(|b| b.set(self.budget));
        USED.with(|u| u.set(self.used));
    }
}

/// Bytes charged for memory the simulator holds outside arrays (the threads of a block, the order
/// of a launch's blocks), given back when dropped.
pub struct Hold(u64);

impl Hold {
    /// Charges `bytes`, or fails without charging.
    pub fn charge(bytes: u64) -> Result<Hold, Oom> {
        charge(bytes)?;
        Ok(Hold(bytes))
    }

    /// Takes over `bytes` charged already (by [`reserve`]).
    pub fn adopt(bytes: u64) -> Hold {
        Hold(bytes)
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        release(self.0);
    }
}

/// The budget of a run: `STRATA_SIM_MEMORY`, or a fraction of the available memory. An error
/// names a value of the variable that is not a size.
pub fn budget_from_env() -> Result<u64, String> {
    match std::env::var(BUDGET_VAR) {
        Ok(text) => parse_size(&text).ok_or(text),
        Err(_) => Ok(default_budget()),
    }
}

/// Half of `MemAvailable` (the simulator shares the machine), else [`FALLBACK_BUDGET`].
pub fn default_budget() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| mem_available(&text))
        .map_or(FALLBACK_BUDGET, |avail| avail / 2)
}

/// `MemAvailable` of a `/proc/meminfo` text, in bytes.
fn mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let mut words = line.split_whitespace().skip(1);
    let n: u64 = words.next()?.parse().ok()?;
    let unit = match words.next() {
        Some("kB") => 1024,
        None => 1,
        Some(_) => return None,
    };
    n.checked_mul(unit)
}

/// `123`, `64K`, `512M`, `8G`, `1T` (binary multiples; a trailing `B` or `iB` is allowed).
pub fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let t = t.strip_suffix("iB").or_else(|| t.strip_suffix('B')).unwrap_or(t);
    let (digits, shift) = match t.char_indices().last()? {
        (i, 'k' | 'K') => (&t[..i], 10),
        (i, 'm' | 'M') => (&t[..i], 20),
        (i, 'g' | 'G') => (&t[..i], 30),
        (i, 't' | 'T') => (&t[..i], 40),
        _ => (t, 0),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<u64>().ok()?.checked_mul(1u64 << shift)
}

/// A vector of `n` copies of `x`, charged and allocated fallibly.
pub fn try_vec<T: Clone>(n: u64, x: T) -> Result<Vec<T>, Oom> {
    let mut v = Vec::new();
    reserve(&mut v, n)?;
    v.resize(n as usize, x);
    Ok(v)
}

/// Makes room for `additional` more items in `v` (exactly), charging the growth. The caller owns
/// the charge from then on (it is `v.capacity() * size_of::<T>()` in all).
pub fn reserve<T>(v: &mut Vec<T>, additional: u64) -> Result<(), Oom> {
    let size = std::mem::size_of::<T>();
    let free = (v.capacity() - v.len()) as u64;
    if additional <= free {
        return Ok(());
    }
    let fail = || Oom::of(u128::from(additional), size);
    let Ok(add) = usize::try_from(additional) else { return Err(fail()) };
    let grow = u64::try_from((additional - free) as u128 * size as u128).map_err(|_| fail())?;
    charge(grow).map_err(|_| fail())?;
    let before = v.capacity();
    if v.try_reserve_exact(add).is_err() {
        release(grow);
        return Err(fail());
    }
    // The allocator may give more than asked: account for what was given.
    let given = ((v.capacity() - before) * size) as u64;
    if given > grow {
        charge_anyway(given - grow);
    } else {
        release(grow - given);
    }
    Ok(())
}

/// Room for one more item, growing geometrically (for vectors that are pushed to).
pub fn reserve_one<T>(v: &mut Vec<T>) -> Result<(), Oom> {
    if v.len() < v.capacity() {
        return Ok(());
    }
    reserve(v, (v.capacity() as u64).max(4))
}

/// The charge of `v`'s allocation.
pub fn bytes_of<T>(v: &Vec<T>) -> u64 {
    (v.capacity() * std::mem::size_of::<T>()) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("123"), Some(123));
        assert_eq!(parse_size(" 64K "), Some(64 << 10));
        assert_eq!(parse_size("512MiB"), Some(512 << 20));
        assert_eq!(parse_size("8G"), Some(8 << 30));
        assert_eq!(parse_size("2TB"), Some(2 << 40));
        for bad in ["", "G", "-1", "1.5G", "12X", "abc", "99999999999999999999", "20000000T"] {
            assert_eq!(parse_size(bad), None, "{bad}");
        }
    }

    #[test]
    fn meminfo_is_read() {
        let text = "MemTotal:       16000000 kB\nMemFree:  100 kB\nMemAvailable:    8000000 kB\n";
        assert_eq!(mem_available(text), Some(8_000_000 * 1024));
        assert_eq!(mem_available("MemTotal: 1 kB\n"), None);
    }

    #[test]
    fn the_budget_is_kept() {
        let _s = Session::start(1500);
        let v = try_vec(100u64, 0u32).unwrap();
        assert_eq!(used(), bytes_of(&v));
        assert_eq!(try_vec(1200u64, 0u8), Err(Oom { bytes: 1200 }));
        assert_eq!(try_vec(u64::MAX, 0u64), Err(Oom { bytes: u128::from(u64::MAX) * 8 }));
        release(bytes_of(&v));
        assert_eq!(used(), 0);
        let mut w: Vec<u64> = Vec::new();
        for i in 0..100 {
            reserve_one(&mut w).unwrap();
            w.push(i);
        }
        assert_eq!(used(), bytes_of(&w));
    }
}
