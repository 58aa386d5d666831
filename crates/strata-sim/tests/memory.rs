//! The memory budget of the `sim` device: every allocation path fails with E0903 "out of memory"
//! at the allocation when the budget is exceeded, the race detector's shadow state counts, and
//! freed memory goes back to the budget. (The corpus files `tests/corpus/run/sim_oom_*.strata`
//! cover sizes no machine has; these tests set small budgets instead.)

use strata_diag::{Diagnostic, FileId, SourceMap};

/// Checks and lowers `text` (which must be accepted).
fn compile(text: &str, defines: &[(String, u64)]) -> (SourceMap, strata_ir::ir::Program) {
    let mut sources = SourceMap::new();
    let id = sources.add("test.strata", text.to_string());
    let prelude_id: FileId = sources.add("<prelude>", strata_check::program::PRELUDE);
    let parsed = strata_syntax::parse(id, sources.source(id));
    assert!(!strata_diag::has_errors(&parsed.diagnostics), "syntax errors");
    let checked = strata_check::check_program(&parsed.module, prelude_id, defines);
    if strata_diag::has_errors(&checked.diagnostics) {
        panic!("rejected:\n{}", strata_diag::render_plain(&checked.diagnostics, &sources));
    }
    let prelude = strata_check::program::parse_prelude(prelude_id);
    let env = strata_check::program_env(&parsed.module, &prelude, defines);
    match strata_ir::lower(&parsed.module, &env, &checked.types) {
        Ok(p) => (sources, p),
        Err(d) => panic!("not lowered:\n{}", strata_diag::render_plain(&d, &sources)),
    }
}

/// Runs `text` with `-D N=n` under a budget of `budget` bytes: its output, or its error.
fn run(text: &str, n: u64, budget: u64, races: bool) -> Result<String, (Box<Diagnostic>, String)> {
    let (sources, program) = compile(text, &[("N".to_string(), n)]);
    let opts = strata_sim::Options { check_races: races, ..strata_sim::Options::default() };
    let mut out = Vec::new();
    match strata_sim::run_with_budget(&program, &opts, &mut out, budget) {
        Ok(_) => Ok(String::from_utf8(out).unwrap()),
        Err(d) => {
            let text = strata_diag::render_plain(std::slice::from_ref(&*d), &sources);
            Err((d, text))
        }
    }
}

/// The source text `d`'s primary span covers.
fn spanned<'a>(text: &'a str, d: &Diagnostic) -> &'a str {
    &text[d.primary.span.lo as usize..d.primary.span.hi as usize]
}

fn assert_oom(text: &str, result: Result<String, (Box<Diagnostic>, String)>, at: &str, what: &str) {
    let (d, rendered) = match result {
        Ok(out) => panic!("expected out of memory, the program printed {out:?}"),
        Err(e) => e,
    };
    assert_eq!(d.code.as_str(), "E0903", "{rendered}");
    assert!(d.message.starts_with("out of memory: "), "{rendered}");
    assert!(d.message.contains(" bytes requested for ") && d.message.contains(what), "{rendered}");
    assert_eq!(spanned(text, &d), at, "{rendered}");
}

/// A host array, its GPU copy, a kernel that doubles every element, and the copy back.
const DOUBLE: &str = r#"
const N: nat = 1024;
fn double(v: &uniq gpu.global [f32; N]) -[grid: gpu.grid<X<N / 256>, X<256>>]-> () {
    sched(X) thread in grid.to_threads {
        v[[thread]] = v[[thread]] * 2.0f32;
    }
}
fn main() -[t: cpu.thread]-> () {
    let mut h = CpuHeap::new([1.5f32; N]);
    let mut d = GpuGlobal::alloc_copy(&shrd h);
    double::<<<X<N / 256>, X<256>>>>(&uniq d);
    copy_mem_to_host(&shrd d, &uniq h);
    println(h[N - 1]);
}
"#;

const MIB: u64 = 1 << 20;

#[test]
fn the_program_runs_within_a_budget_that_fits() {
    assert_eq!(run(DOUBLE, 1 << 16, 64 * MIB, true).unwrap(), "3\n");
}

#[test]
fn a_host_array_beyond_the_budget_fails_at_its_allocation() {
    let r = run(DOUBLE, 1 << 18, MIB / 2, true);
    assert_oom(DOUBLE, r, "CpuHeap::new([1.5f32; N])", "1048576 bytes requested for an array");
}

#[test]
fn a_gpu_copy_beyond_the_budget_fails_at_its_allocation() {
    // 1 MiB on the host fits in 1.5 MiB; the copy does not.
    let r = run(DOUBLE, 1 << 18, 3 * MIB / 2, true);
    assert_oom(DOUBLE, r, "GpuGlobal::alloc_copy(&shrd h)", "a GPU copy of `h`");
}

#[test]
fn the_race_detectors_shadow_state_counts() {
    // Host array and GPU copy (2 MiB) fit in 4 MiB, but not with the race detector's record of
    // every element the kernel touches; without race checks the same run fits.
    let r = run(DOUBLE, 1 << 18, 4 * MIB, true);
    assert_oom(DOUBLE, r, "v[[thread]]", "the race detector's record of `d`");
    assert_eq!(run(DOUBLE, 1 << 18, 4 * MIB, false).unwrap(), "3\n");
}

#[test]
fn freed_memory_returns_to_the_budget() {
    // Each iteration's GPU copy is freed at the end of the iteration: 100 copies of 4 MiB run in
    // a budget of 12 MiB.
    let text = r#"
const N: nat = 1024;
fn main() -[t: cpu.thread]-> () {
    let h = CpuHeap::new([2.0f32; N]);
    for i in 0..100 {
        let d = GpuGlobal::alloc_copy(&shrd h);
    }
    println(h[0]);
}
"#;
    assert_eq!(run(text, 1 << 20, 12 * MIB, true).unwrap(), "2\n");
    assert_oom(text, run(text, 1 << 20, 6 * MIB, true), "GpuGlobal::alloc_copy(&shrd h)", "GPU copy");
}

/// Every block gets `N` f32 of shared memory.
const SHARED: &str = r#"
const N: nat = 256;
fn k(out: &uniq gpu.global [f32; 64 * 32],
     [grid.blocks.forall(X)] tmp: &uniq gpu.shared [f32; N]) -[grid: gpu.grid<X<64>, X<32>>]-> () {
    sched(X) block in grid.blocks {
        sched(X) thread in block.threads {
            tmp.take_left::<32>[[thread]] = 1.0f32;
        }
    }
}
fn main() -[t: cpu.thread]-> () {
    let h = CpuHeap::new([0.0f32; 64 * 32]);
    let mut d = GpuGlobal::alloc_copy(&shrd h);
    k::<<<X<64>, X<32>>>>(&uniq d);
    println(h[0]);
}
"#;

#[test]
fn shared_memory_is_charged_per_block_and_released_after_it() {
    // 64 blocks of 128 KiB shared memory (within sm_80's limit) run in 1 MiB: each block's is
    // released when it ends. One block's does not fit in 64 KiB.
    assert_eq!(run(SHARED, 1 << 15, MIB, true).unwrap(), "0\n");
    assert_oom(SHARED, run(SHARED, 1 << 15, 64 << 10, true), "k::<<<X<64>, X<32>>>>(&uniq d)", "shared memory `tmp`");
}

#[test]
fn per_thread_arrays_are_charged() {
    let text = r#"
const N: nat = 16;
fn k(out: &uniq gpu.global [f32; 32]) -[grid: gpu.grid<X<1>, X<32>>]-> () {
    sched(X) block in grid.blocks {
        sched(X) thread in block.threads {
            let mut scratch = [1.0f32; N];
            scratch[3] = 2.0f32;
            out.group::<32>[[block]][[thread]] = scratch[3];
        }
    }
}
fn main() -[t: cpu.thread]-> () {
    let mut h = CpuHeap::new([0.0f32; 32]);
    let mut d = GpuGlobal::alloc_copy(&shrd h);
    k::<<<X<1>, X<32>>>>(&uniq d);
    copy_mem_to_host(&shrd d, &uniq h);
    println(h[31]);
}
"#;
    assert_eq!(run(text, 1 << 16, 32 * MIB, true).unwrap(), "2\n");
    // Each thread's array fits (and is under the 512 KiB a GPU thread's local memory holds,
    // E0301 otherwise), but not all of them.
    let r = run(text, 100_000, 8 * MIB, true);
    assert_oom(text, r, "let mut scratch = [1.0f32; N];", "an array");
}

/// `run` reads the budget from `STRATA_SIM_MEMORY`: this test runs itself again in a child
/// process with the variable set.
#[test]
fn the_budget_comes_from_the_environment() {
    const CHILD: &str = "STRATA_SIM_MEMORY_TEST_CHILD";
    if std::env::var_os(CHILD).is_some() {
        let (_, program) = compile(DOUBLE, &[("N".to_string(), 1 << 18)]);
        let r = strata_sim::run(&program, &strata_sim::Options::default(), &mut Vec::new());
        match (std::env::var(CHILD).unwrap().as_str(), r) {
            ("small", Err(d)) => assert!(d.message.starts_with("out of memory: 1048576 bytes"), "{}", d.message),
            ("large", Ok(_)) => {}
            ("bad", Err(d)) => {
                assert_eq!(d.code.as_str(), "E0903");
                assert_eq!(d.message, "`STRATA_SIM_MEMORY` is not a memory size: `lots`");
            }
            (case, r) => panic!("{case}: {:?}", r.map(|_| ())),
        }
        return;
    }
    for (case, value) in [("small", "512K"), ("large", "64M"), ("bad", "lots")] {
        let status = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "the_budget_comes_from_the_environment", "--nocapture"])
            .env(CHILD, case)
            .env("STRATA_SIM_MEMORY", value)
            .status()
            .unwrap();
        assert!(status.success(), "STRATA_SIM_MEMORY={value}");
    }
}
