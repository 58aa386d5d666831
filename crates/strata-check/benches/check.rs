//! Checker benchmark: `cargo bench -p strata-check --bench check`.
//!
//! (a) Checking time must not depend on loop trip counts or array sizes: the same kernel is checked
//!     with a `for` loop of 8 and of 100 000 000 iterations, and with arrays of 2^10 and 2^30
//!     elements, and the ratios of the median times are printed (they should be about 1).
//! (b) Throughput: a generated program of realistic kernels and host code (at least 20 000 lines,
//!     all well-typed: the benchmark fails if the checker reports anything) is checked several
//!     times; lines per second are reported for the check alone and for parse + check.
//!
//! Plain `std::time`; every figure is the minimum and the median of several repetitions.

use std::hint::black_box;
use std::time::{Duration, Instant};
use strata_diag::FileId;

const PROGRAM: FileId = FileId(0);
const PRELUDE: FileId = FileId(1);

/// Runs `f` `reps` times and returns the sorted durations.
fn time<T>(reps: usize, mut f: impl FnMut() -> T) -> Vec<Duration> {
    let mut out = Vec::with_capacity(reps);
    for _ in 0..reps {
        let start = Instant::now();
        black_box(f());
        out.push(start.elapsed());
    }
    out.sort();
    out
}

fn min(d: &[Duration]) -> Duration {
    d[0]
}

fn median(d: &[Duration]) -> Duration {
    d[d.len() / 2]
}

fn parse(src: &str) -> strata_syntax::ast::Module {
    let parsed = strata_syntax::parse(PROGRAM, src);
    assert!(parsed.diagnostics.is_empty(), "benchmark program does not parse: {:?}", parsed.diagnostics);
    parsed.module
}

/// Checks `src` and fails unless it is well-typed.
fn assert_well_typed(name: &str, src: &str) {
    let diags = strata_check::check_module(&parse(src), PRELUDE, &[]);
    if !diags.is_empty() {
        let lines: Vec<&str> = src.lines().collect();
        for d in diags.iter().take(5) {
            let line = src[..d.primary.span.lo as usize].matches('\n').count();
            eprintln!("{name}: {} {} at line {}: {}", d.code, d.message, line + 1, lines.get(line).unwrap_or(&""));
        }
        panic!("{name}: the benchmark program is not well-typed ({} diagnostics)", diags.len());
    }
}

// ------------------------------------------------------------------------------------------------
// (a) Independence of trip counts and sizes

/// A kernel over `size` elements whose threads run a loop of `iters` iterations, and the host
/// code that launches it.
fn sized_kernel(iters: u64, size: u64) -> String {
    let blocks = size / 256;
    format!(
        "fn iterate(v: &uniq gpu.global [f32; {size}], w: &shrd gpu.global [f32; {size}],
           [grid.blocks.forall(X)] tmp: &uniq gpu.shared [f32; 256]
) -[grid: gpu.grid<X<{blocks}>, X<256>>]-> () {{
    sched(X) block in grid.blocks {{
        sched(X) thread in block.threads {{
            tmp[[thread]] = w.group::<256>[[block]][[thread]];
        }}
        for k in 0..{iters} {{
            sync(block);
            sched(X) thread in block.threads {{
                let mut acc = tmp[[thread]];
                for j in 0..{iters} {{
                    acc = acc * 0.5 + 1.0;
                }}
                v.group::<256>[[block]][[thread]] = acc + v.group::<256>[[block]][[thread]];
            }}
            sync(block);
            sched(X) thread in block.threads {{
                tmp[[thread]] = tmp[[thread]] + 1.0;
            }}
        }}
    }}
}}

fn main() -[t: cpu.thread]-> () {{
    let h = CpuHeap::new([1.0f32; {size}]);
    let mut d = GpuGlobal::alloc_copy(&h);
    let e = GpuGlobal::alloc_copy(&h);
    for r in 0..{iters} {{
        iterate::<<<X<{blocks}>, X<256>>>(&uniq d, &shrd e);
    }}
    let mut back = CpuHeap::new([0.0f32; {size}]);
    copy_mem_to_host(&d, &uniq back);
}}
"
    )
}

fn independence() {
    println!("(a) checking time against trip counts and array sizes (check only, parse excluded)");
    let variants = [
        ("loop 8, array 2^10", 8, 1 << 10),
        ("loop 100000000, array 2^10", 100_000_000, 1 << 10),
        ("loop 8, array 2^30", 8, 1 << 30),
        ("loop 100000000, array 2^30", 100_000_000, 1 << 30),
    ];
    let mut medians = Vec::new();
    for (name, iters, size) in variants {
        let src = sized_kernel(iters, size);
        assert_well_typed(name, &src);
        let module = parse(&src);
        // Warm up, then measure.
        time(20, || strata_check::check_module(&module, PRELUDE, &[]));
        let t = time(300, || strata_check::check_module(&module, PRELUDE, &[]));
        println!("    {name:<28} min {:>9.1?}  median {:>9.1?}", min(&t), median(&t));
        medians.push(median(&t));
    }
    let ratio = |a: Duration, b: Duration| b.as_secs_f64() / a.as_secs_f64();
    println!(
        "    ratio 100000000 / 8 iterations: {:.2} (array 2^10), {:.2} (array 2^30)",
        ratio(medians[0], medians[1]),
        ratio(medians[2], medians[3])
    );
    println!(
        "    ratio 2^30 / 2^10 elements:     {:.2} (loop 8), {:.2} (loop 100000000)",
        ratio(medians[0], medians[2]),
        ratio(medians[1], medians[3])
    );
}

// ------------------------------------------------------------------------------------------------
// (b) Throughput on a large program

/// One unit of the generated program: six kernels in the styles of the paper and the corpus
/// (element-wise maps, a block-wide tree reduction, an upsweep scan, a stencil with a split
/// boundary, tiled transposition through shared memory, a generic kernel with a `where` clause)
/// and the host code that allocates, launches and copies back. `__I__` is replaced by a suffix.
const UNIT: &str = r#"
// ---- unit __I__ ----------------------------------------------------------------------------
fn square_all__I__(v: &uniq gpu.global [f32; 1024]) -[grid: gpu.grid<X<8>, X<128>>]-> () {
    sched(X) thread in grid.to_threads {
        v[[thread]] = v[[thread]] * v[[thread]];
    }
}

fn halve_all__I__(v: &uniq gpu.global [f32; 1024]) -[grid: gpu.grid<X<32>, X<32>>]-> () {
    sched(X) block in grid.blocks {
        sched(X) thread in block.threads {
            v.group::<32>[[block]][[thread]] = v.group::<32>[[block]][[thread]] / 2.0;
        }
    }
}

fn reduce__I__(input: &shrd gpu.global [f32; 1024], output: &uniq gpu.global [f32; 4],
          [grid.blocks.forall(X)] tmp: &uniq gpu.shared [f32; 256]
) -[grid: gpu.grid<X<4>, X<256>>]-> () {
    sched(X) block in grid.blocks {
        sched(X) thread in block.threads {
            tmp[[thread]] = input.group::<256>[[block]][[thread]];
        }
        for k in 0..8 {
            sync(block);
            split(X) block.threads at 128 / 2^k {
                active => {
                    sched(X) thread in active {
                        let pair = &uniq tmp.group::<2^(k+1)>[[thread]].group::<2^k>;
                        pair[0][0] = pair[0][0] + pair[1][0];
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

fn upsweep__I__(input: &shrd gpu.global [i32; 64], output: &uniq gpu.global [i32; 64],
           [grid.blocks.forall(X)] tmp: &uniq gpu.shared [i32; 16]
) -[grid: gpu.grid<X<4>, X<8>>]-> () {
    sched(X) block in grid.blocks {
        sched(X) thread in block.threads {
            let src = &shrd input.group::<16>[[block]].group::<2>[[thread]];
            let dst = &uniq tmp.group::<2>[[thread]];
            dst[0] = src[0];
            dst[1] = src[1];
        }
        for k in 0..4 {
            sync(block);
            split(X) block.threads at 8 / 2^k {
                active => {
                    sched(X) thread in active {
                        let halves = &uniq tmp.group::<2^(k+1)>[[thread]].group::<2^k>.map(reverse);
                        halves[1][0] = halves[0][0] + halves[1][0];
                    }
                },
                inactive => { }
            }
        }
        sync(block);
        sched(X) thread in block.threads {
            let src = &shrd tmp.group::<2>[[thread]];
            let dst = &uniq output.group::<16>[[block]].group::<2>[[thread]];
            dst[0] = src[0];
            dst[1] = src[1];
        }
    }
}

fn diff__I__(input: &shrd gpu.global [f32; 1024], out: &uniq gpu.global [f32; 1024],
        [grid.blocks.forall(X)] tmp: &uniq gpu.shared [f32; 256]
) -[grid: gpu.grid<X<4>, X<256>>]-> () {
    sched(X) block in grid.blocks {
        sched(X) thread in block.threads {
            tmp[[thread]] = input.group::<256>[[block]][[thread]];
        }
        sync(block);
        let o = &uniq out.group::<256>[[block]];
        split(X) block.threads at 255 {
            inner => {
                sched(X) thread in inner {
                    o.take_left::<255>[[thread]] = tmp.take_right::<1>[[thread]] - tmp.take_left::<255>[[thread]];
                }
            },
            last => {
                sched(X) thread in last {
                    o.take_right::<255>[[thread]] = 0.0;
                }
            }
        }
    }
}

fn transpose__I__(input: &shrd gpu.global [[f32; 256]; 256], output: &uniq gpu.global [[f32; 256]; 256],
             [grid.blocks.forall(X).forall(Y)] tmp: &uniq gpu.shared [[f32; 32]; 32]
) -[grid: gpu.grid<XY<8, 8>, XY<32, 8>>]-> () {
    sched(Y, X) block in grid.blocks {
        sched(Y, X) thread in block.threads {
            for i in 0..4 {
                tmp.group_by_row::<32, 4>[[thread]][i] =
                    input.group_by_tile::<32, 32>[[block]].group_by_row::<32, 4>[[thread]][i];
            }
        }
        sync(block);
        sched(Y, X) thread in block.threads {
            for i in 0..4 {
                output.group_by_tile::<32, 32>.transpose[[block]].group_by_row::<32, 4>[[thread]][i] =
                    tmp.transpose.group_by_row::<32, 4>[[thread]][i];
            }
        }
    }
}

fn scale__I__<n: nat>(v: &uniq gpu.global [f32; n]) -[grid: gpu.grid<X<n / 32>, X<32>>]-> ()
where n % 32 == 0
{
    sched(X) block in grid.blocks {
        sched(X) thread in block.threads {
            v.group::<32>[[block]][[thread]] = v.group::<32>[[block]][[thread]] * 3.0;
        }
    }
}

fn host__I__() -[t: cpu.thread]-> () {
    let mut h = CpuHeap::new([3.0f32; 1024]);
    let mut d = GpuGlobal::alloc_copy(&h);
    square_all__I__::<<<X<8>, X<128>>>(&uniq d);
    halve_all__I__::<<<X<32>, X<32>>>(&uniq d);
    copy_mem_to_host(&d, &uniq h);
    let input = GpuGlobal::alloc_copy(&h);
    let zeros = CpuHeap::new([0.0f32; 4]);
    let mut sums = GpuGlobal::alloc_copy(&zeros);
    reduce__I__::<<<X<4>, X<256>>>(&shrd input, &uniq sums);
    let mut out = GpuGlobal::alloc_copy(&h);
    diff__I__::<<<X<4>, X<256>>>(&shrd input, &uniq out);
    let hm = CpuHeap::new([[1.0f32; 256]; 256]);
    let m = GpuGlobal::alloc_copy(&hm);
    let mut mt = GpuGlobal::alloc_copy(&hm);
    transpose__I__::<<<XY<8, 8>, XY<32, 8>>>(&shrd m, &uniq mt);
    let hs = CpuHeap::new([1i32; 64]);
    let s = GpuGlobal::alloc_copy(&hs);
    let mut so = GpuGlobal::alloc_copy(&hs);
    upsweep__I__::<<<X<4>, X<8>>>(&shrd s, &uniq so);
    let hv = CpuHeap::new([1.0f32; 2048]);
    let mut dv = GpuGlobal::alloc_copy(&hv);
    scale__I__::<2048>::<<<X<64>, X<32>>>(&uniq dv);
    let fresh = CpuHeap::new([0.0f32; 1024]);
    copy_mem_to_gpu(&uniq d, &fresh);
}
"#;

fn large_program(min_lines: usize) -> (String, usize) {
    let mut src = String::from("// Generated by crates/strata-check/benches/check.rs\n");
    let mut units = 0;
    while src.lines().count() < min_lines {
        src.push_str(&UNIT.replace("__I__", &format!("_{units}")));
        units += 1;
    }
    (src, units)
}

fn throughput() {
    let (src, units) = large_program(20_000);
    let lines = src.lines().count();
    println!("(b) throughput: {lines} lines, {units} units of 7 kernels and 1 host function, {} bytes", src.len());
    assert_well_typed("large program", &src);
    let module = parse(&src);
    let check = time(7, || strata_check::check_module(&module, PRELUDE, &[]));
    let both = time(7, || strata_check::check_module(&parse(&src), PRELUDE, &[]));
    let per_sec = |d: Duration| lines as f64 / d.as_secs_f64();
    println!(
        "    check only:    min {:>9.1?}  median {:>9.1?}  ({:.0} lines/s at the median)",
        min(&check),
        median(&check),
        per_sec(median(&check))
    );
    println!(
        "    parse + check: min {:>9.1?}  median {:>9.1?}  ({:.0} lines/s at the median)",
        min(&both),
        median(&both),
        per_sec(median(&both))
    );
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` runs this once as a smoke test.
    if std::env::args().any(|a| a == "--bench") {
        independence();
        throughput();
    } else {
        assert_well_typed("sized kernel", &sized_kernel(8, 1 << 10));
        assert_well_typed("unit", &UNIT.replace("__I__", "_0"));
        println!("check benchmark: programs are well-typed (run `cargo bench` for figures)");
    }
}
