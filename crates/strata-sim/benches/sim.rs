//! Simulator benchmark: how fast `sim` runs checked programs, with and without race detection.
//!
//! Each program is parsed, checked and lowered once (not timed); then `strata_sim::run` is timed
//! over several runs and the median reported, with the thread steps of one run
//! (`Stats::thread_steps`) and thread steps per second. Run with
//! `cargo bench -p strata-sim --bench sim` (`STRATA_SIM_BENCH_RUNS=n` changes the number of runs).

use std::time::{Duration, Instant};
use strata_diag::{FileId, SourceMap};

/// Block-wide tree reduction with sequential addressing: 8 blocks of 256 threads sum 2048
/// elements into 8 partial sums, which the host adds up.
const REDUCTION: &str = r#"
const NB: nat = 8;
fn reduce(input: &shrd gpu.global [i32; 2048], output: &uniq gpu.global [i32; NB],
          [grid.blocks.forall(X)] tmp: &uniq gpu.shared [i32; 256]
) -[grid: gpu.grid<X<NB>, X<256>>]-> () {
    sched(X) block in grid.blocks {
        sched(X) thread in block.threads {
            tmp[[thread]] = input.group::<256>[[block]][[thread]];
        }
        for k in 0..8 {
            sync(block);
            split(X) block.threads at 128 / 2^k {
                active => {
                    sched(X) thread in active {
                        let pair = &uniq tmp.take_left::<256 / 2^k>.group::<128 / 2^k>.transpose[[thread]];
                        pair[0] = pair[0] + pair[1];
                    }
                },
                inactive => { }
            }
        }
        sync(block);
        split(X) block.threads at 1 {
            first => {
                sched(X) thread in first {
                    output.group::<1>[[block]][[thread]] = tmp.take_left::<1>[[thread]];
                }
            },
            rest => { }
        }
    }
}

fn main() -[t: cpu.thread]-> () {
    let mut host = CpuHeap::new([0; 2048]);
    for i in 0..2048 {
        host[i] = (i % 10) as i32;
    }
    let dev_in = GpuGlobal::alloc_copy(&shrd host);
    let mut partial = CpuHeap::new([0; NB]);
    let mut dev_out = GpuGlobal::alloc_copy(&shrd partial);
    reduce::<<<X<NB>, X<256>>>>(&shrd dev_in, &uniq dev_out);
    copy_mem_to_host(&shrd dev_out, &uniq partial);
    let mut sum = 0;
    for b in 0..NB {
        sum = sum + partial[b];
    }
    println(sum);
}
"#;

struct Case {
    name: &'static str,
    text: String,
    defines: Vec<(String, u64)>,
}

fn compile(case: &Case) -> strata_ir::ir::Program {
    let mut sources = SourceMap::new();
    let id = sources.add(case.name, case.text.clone());
    let prelude_id: FileId = sources.add("<prelude>", strata_check::program::PRELUDE);
    let parsed = strata_syntax::parse(id, sources.source(id));
    assert!(!strata_diag::has_errors(&parsed.diagnostics), "{}: syntax errors", case.name);
    let checked = strata_check::check_program(&parsed.module, prelude_id, &case.defines);
    if strata_diag::has_errors(&checked.diagnostics) {
        panic!("{}: rejected:\n{}", case.name, strata_diag::render_plain(&checked.diagnostics, &sources));
    }
    let prelude = strata_check::program::parse_prelude(prelude_id);
    let env = strata_check::program_env(&parsed.module, &prelude, &case.defines);
    match strata_ir::lower(&parsed.module, &env, &checked.types) {
        Ok(p) => p,
        Err(d) => panic!("{}: not lowered:\n{}", case.name, strata_diag::render_plain(&d, &sources)),
    }
}

fn example(name: &'static str, file: &str, defines: &[(&str, u64)]) -> Case {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples").join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Case { name, text, defines: defines.iter().map(|(n, v)| (n.to_string(), *v)).collect() }
}

fn main() {
    let runs: usize = std::env::var("STRATA_SIM_BENCH_RUNS").ok().and_then(|s| s.parse().ok()).unwrap_or(7);
    let cases = [
        example("array_sum N=1024 NBLOCKS=2", "array_sum.strata", &[("N", 1024), ("NBLOCKS", 2)]),
        example("transpose N=256", "transpose.strata", &[("N", 256)]),
        Case { name: "reduction 8x256", text: REDUCTION.to_string(), defines: Vec::new() },
    ];
    println!(
        "{:<28} {:>6} {:>12} {:>12} {:>16} {:>8}",
        "program", "races", "median", "thread steps", "steps/s", "output"
    );
    for case in &cases {
        let program = compile(case);
        for check_races in [true, false] {
            let opts = strata_sim::Options { check_races, ..strata_sim::Options::default() };
            let mut times: Vec<Duration> = Vec::new();
            let mut steps = 0;
            let mut output = Vec::new();
            for _ in 0..runs {
                output.clear();
                let start = Instant::now();
                let stats = strata_sim::run(&program, &opts, &mut output)
                    .unwrap_or_else(|d| panic!("{}: run failed: {} {}", case.name, d.code.as_str(), d.message));
                times.push(start.elapsed());
                steps = stats.thread_steps;
            }
            times.sort();
            let median = times[times.len() / 2];
            let text = String::from_utf8_lossy(&output);
            let last = text.lines().last().unwrap_or("").to_string();
            let shown = if last.len() > 24 { format!("{}…", &last[..24]) } else { last };
            println!(
                "{:<28} {:>6} {:>9.3} ms {:>12} {:>16.0} {:>8}",
                case.name,
                if check_races { "on" } else { "off" },
                median.as_secs_f64() * 1e3,
                steps,
                steps as f64 / median.as_secs_f64(),
                shown
            );
        }
    }
}
