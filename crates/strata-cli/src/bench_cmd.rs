//! `strata bench FILE…`: runs each program's `main` several times on a device and reports the
//! time of every kernel (median, minimum, maximum and spread over all its launches). Only the
//! launches are timed: checking, lowering, the C compiler (cached) and host code are not.

use crate::{compile_main, fail, Device, Format, EXIT_USAGE};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use strata_cli::{Error, Pipeline};

pub struct BenchOptions {
    pub device: Device,
    pub defines: Vec<(String, u64)>,
    pub warmup: usize,
    pub runs: usize,
    pub json: Option<PathBuf>,
    pub svg: Option<PathBuf>,
    /// The sim device's options; its `args` (the programs' arguments, after `--`) are given to
    /// the programs on every device.
    pub sim: strata_sim::Options,
}

/// The launches of one kernel of one program.
struct KernelTimes {
    file: String,
    kernel: String,
    secs: Vec<f64>,
}

pub fn run(files: &[PathBuf], opts: &BenchOptions) -> u8 {
    if opts.runs == 0 {
        eprintln!("error: `--runs` must be at least 1");
        return EXIT_USAGE;
    }
    // An output that cannot be written is found now, not after every program has run.
    for (flag, path) in [("--json", &opts.json), ("--svg", &opts.svg)] {
        if let Some(path) = path {
            if let Err(e) = writable(path) {
                eprintln!("error: `{flag} {}`: {e}", path.display());
                return EXIT_USAGE;
            }
        }
    }
    let mut results: Vec<KernelTimes> = Vec::new();
    let progress = std::io::stderr().is_terminal();
    for file in files {
        let mut pipeline = Pipeline::new(opts.defines.clone(), strata_check::TargetProfile::default_profile());
        let (id, program) = match compile_main(&mut pipeline, file, Format::Human) {
            Ok(lowered) => (lowered.file, lowered.program),
            Err(code) => return code,
        };
        let sources = pipeline.sources();
        // Built once, outside the timed runs.
        let exe = match opts.device {
            Device::Cpu => match pipeline.build_cpu(&program) {
                Ok(exe) => Some(exe),
                Err(e) => return fail(e, sources, Format::Human),
            },
            Device::Sim => None,
        };
        let total = opts.warmup + opts.runs;
        for i in 0..total {
            if progress {
                let bar: String = (0..20).map(|k| if k * total < 20 * (i + 1) { '#' } else { '.' }).collect();
                eprint!("\r{} [{bar}] run {}/{total}", file.display(), i + 1);
                let _ = std::io::stderr().flush();
            }
            let mut sink = std::io::sink();
            let times = match &exe {
                Some(exe) => {
                    let run =
                        strata_cpu::RunOptions { args: opts.sim.args.clone(), ..strata_cpu::RunOptions::default() };
                    strata_cpu::execute_timed_with(exe, id, &mut sink, &run)
                }
                None => strata_sim::run(&program, &opts.sim, &mut sink).map(|s| s.launch_times),
            };
            let times = match times {
                Ok(t) => t,
                Err(d) => {
                    if progress {
                        eprintln!();
                    }
                    return fail(Error::Diagnostics(vec![*d]), sources, Format::Human);
                }
            };
            if i < opts.warmup {
                continue;
            }
            for (kernel, secs) in times {
                let name = file.display().to_string();
                match results.iter_mut().find(|r| r.file == name && r.kernel == kernel) {
                    Some(r) => r.secs.push(secs),
                    None => results.push(KernelTimes { file: name, kernel, secs: vec![secs] }),
                }
            }
        }
        if progress {
            eprintln!();
        }
    }
    let device = match opts.device {
        Device::Cpu => "cpu",
        Device::Sim => "sim",
    };
    outln!("device {device}, {} run(s) after {} warm-up run(s); times per launch", opts.runs, opts.warmup);
    outln!(
        "{:<40} {:<20} {:>8} {:>12} {:>12} {:>12} {:>8}",
        "file",
        "kernel",
        "launches",
        "median ms",
        "min ms",
        "max ms",
        "spread"
    );
    let mut spread_out = Vec::new();
    for r in &results {
        let Stats { median, min, max } = stats(&r.secs);
        let spread = spread_percent(&r.secs);
        spread_out.extend(spread_warning(r));
        outln!(
            "{:<40} {:<20} {:>8} {:>12.4} {:>12.4} {:>12.4} {:>7.1}%",
            r.file,
            r.kernel,
            r.secs.len(),
            median * 1e3,
            min * 1e3,
            max * 1e3,
            spread
        );
    }
    let json = json_report(device, opts.runs, opts.warmup, &results);
    if results.is_empty() {
        outln!("(no kernel launches)");
    }
    for line in &spread_out {
        eprintln!("{line}");
    }
    if !spread_out.is_empty() {
        eprintln!(
            "  = note: such a median is unreliable: the machine may be busy, or more `--runs` and \
             `--warmup` are needed (a kernel launched with different sizes also spreads)"
        );
    }
    if let Some(path) = &opts.svg {
        if let Err(e) = chart(path, device, &results) {
            eprintln!("error: cannot draw `{}`: {e}", path.display());
            return EXIT_USAGE;
        }
    }
    if let Some(path) = &opts.json {
        if let Err(e) = std::fs::write(path, json) {
            eprintln!("error: cannot write `{}`: {e}", path.display());
            return EXIT_USAGE;
        }
    }
    0
}

/// A kernel whose times spread over more than this percentage of the median is warned about.
const MAX_SPREAD_PERCENT: f64 = 20.0;

struct Stats {
    median: f64,
    min: f64,
    max: f64,
}

/// How far the samples spread: (max - min) / median, in percent.
fn spread_percent(samples: &[f64]) -> f64 {
    let Stats { median, min, max } = stats(samples);
    if median > 0.0 {
        (max - min) / median * 100.0
    } else {
        0.0
    }
}

/// The warning for a kernel whose times spread over more than [`MAX_SPREAD_PERCENT`].
fn spread_warning(r: &KernelTimes) -> Option<String> {
    let spread = spread_percent(&r.secs);
    (spread > MAX_SPREAD_PERCENT).then(|| {
        format!(
            "warning: the times of `{}` ({}) spread over {spread:.0}% of their median (max - min above {MAX_SPREAD_PERCENT}%)",
            r.kernel, r.file
        )
    })
}

/// The results as JSON: per kernel its statistics and every sample, in the order the launches
/// ran (warm-up runs left out).
fn json_report(device: &str, runs: usize, warmup: usize, results: &[KernelTimes]) -> String {
    let mut json = format!("{{\"device\": \"{device}\", \"runs\": {runs}, \"warmup\": {warmup}, \"kernels\": [");
    for (i, r) in results.iter().enumerate() {
        let Stats { median, min, max } = stats(&r.secs);
        let samples: Vec<String> = r.secs.iter().map(|s| format!("{s:e}")).collect();
        json.push_str(&format!(
            "{}\n  {{\"file\": \"{}\", \"kernel\": \"{}\", \"launches\": {}, \"median_s\": {median:e}, \"min_s\": {min:e}, \"max_s\": {max:e}, \"samples_s\": [{}]}}",
            if i == 0 { "" } else { "," },
            json_escape(&r.file),
            json_escape(&r.kernel),
            r.secs.len(),
            samples.join(", ")
        ));
    }
    json.push_str("\n]}\n");
    json
}

/// The median, minimum and maximum of samples kept in run order.
fn stats(samples: &[f64]) -> Stats {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let median = if n % 2 == 1 { sorted[n / 2] } else { (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0 };
    Stats { median, min: sorted[0], max: sorted[n - 1] }
}

/// Can `path` be written? Its directory must exist and take a new file, and `path` must not be a
/// directory. Checked by creating (and removing) a file next to it.
fn writable(path: &std::path::Path) -> Result<(), String> {
    if path.is_dir() {
        return Err("is a directory".into());
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    if !dir.is_dir() {
        return Err(format!("the directory `{}` does not exist", dir.display()));
    }
    let probe = dir.join(format!(".strata-bench-probe-{}", std::process::id()));
    match std::fs::OpenOptions::new().write(true).create_new(true).open(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(format!("cannot write in `{}`: {e}", dir.display())),
    }
}

/// A bar chart of the median time per launch of every kernel, with its min–max range.
fn chart(path: &std::path::Path, device: &str, results: &[KernelTimes]) -> Result<(), Box<dyn std::error::Error>> {
    use plotters::prelude::*;
    let stats: Vec<(String, f64, f64, f64)> = results
        .iter()
        .map(|r| {
            let Stats { median, min, max } = stats(&r.secs);
            let file =
                std::path::Path::new(&r.file).file_stem().map_or(r.file.clone(), |s| s.to_string_lossy().into_owned());
            (format!("{file}:{}", r.kernel), median * 1e3, min * 1e3, max * 1e3)
        })
        .collect();
    let top = stats.iter().map(|s| s.3).fold(0.0, f64::max).max(1e-6) * 1.1;
    let width = 160 + 90 * stats.len().max(1) as u32;
    let root = SVGBackend::new(path, (width, 480)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut ctx = ChartBuilder::on(&root)
        .caption(format!("median kernel time per launch on {device} (ms), min–max range"), ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(60)
        .y_label_area_size(70)
        // A segmented `0..k` has the k + 1 slots `0..=k`: one per kernel is `0..n - 1`.
        .build_cartesian_2d((0..stats.len().saturating_sub(1)).into_segmented(), 0.0..top)?;
    let names: Vec<String> = stats.iter().map(|s| s.0.clone()).collect();
    ctx.configure_mesh()
        .disable_x_mesh()
        .y_desc("ms")
        .x_labels(stats.len().max(1))
        .x_label_formatter(&|x| match x {
            SegmentValue::CenterOf(i) => names.get(*i).cloned().unwrap_or_default(),
            _ => String::new(),
        })
        .draw()?;
    ctx.draw_series(stats.iter().enumerate().map(|(i, s)| {
        let mut bar =
            Rectangle::new([(SegmentValue::Exact(i), 0.0), (SegmentValue::Exact(i + 1), s.1)], BLUE.mix(0.6).filled());
        bar.set_margin(0, 0, 12, 12);
        bar
    }))?;
    ctx.draw_series(stats.iter().enumerate().map(|(i, s)| {
        PathElement::new(vec![(SegmentValue::CenterOf(i), s.2), (SegmentValue::CenterOf(i), s.3)], BLACK)
    }))?;
    root.present()?;
    Ok(())
}

fn json_escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(secs: &[f64]) -> KernelTimes {
        KernelTimes { file: "p.strata".into(), kernel: "k".into(), secs: secs.to_vec() }
    }

    #[test]
    fn json_keeps_the_samples_in_run_order() {
        let json = json_report("cpu", 4, 1, &[kernel(&[3.0, 1.0, 4.0, 2.0])]);
        assert!(json.contains("\"samples_s\": [3e0, 1e0, 4e0, 2e0]"), "{json}");
        assert!(json.contains("\"median_s\": 2.5e0, \"min_s\": 1e0, \"max_s\": 4e0"), "{json}");
    }

    #[test]
    fn a_spread_above_20_percent_of_the_median_is_warned_about() {
        assert_eq!(spread_warning(&kernel(&[1.0, 1.1, 1.05])), None);
        let w = spread_warning(&kernel(&[1.0, 1.5, 1.1])).unwrap();
        assert!(w.starts_with("warning: the times of `k` (p.strata) spread over 45%"), "{w}");
    }

    #[test]
    fn the_chart_has_one_slot_per_kernel_and_says_what_the_bars_show() {
        let path = std::env::temp_dir().join(format!("strata-bench-unit-{}.svg", std::process::id()));
        chart(&path, "sim", &[kernel(&[1e-3, 2e-3]), KernelTimes { kernel: "other".into(), ..kernel(&[3e-3]) }])
            .unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        assert!(svg.contains("median kernel time per launch on sim (ms), min–max range"), "{svg}");
        // One label under each bar, and no empty slot (an empty label) after the last.
        assert!(svg.contains("p:k") && svg.contains("p:other"), "{svg}");
        assert!(!svg.contains(">\n\n</text>"), "an empty x-axis slot: {svg}");
    }

    #[test]
    fn an_output_in_a_missing_directory_or_on_a_directory_is_refused() {
        assert!(writable(std::path::Path::new("/nonexistent-strata-dir/x.json")).is_err());
        assert!(writable(&std::env::temp_dir()).is_err());
        assert!(writable(&std::env::temp_dir().join("strata-bench-unit-ok.json")).is_ok());
    }
}
