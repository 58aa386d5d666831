//! `strata bench`: behaviour only (which kernels are reported, how many launches, the JSON, the
//! exit status); the times themselves are never asserted.

use std::path::Path;
use std::process::Command;

fn strata() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_strata"));
    c.current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."));
    c
}

#[test]
fn bench_reports_every_launch_of_every_kernel_on_both_devices() {
    for device in ["cpu", "sim"] {
        let json = std::env::temp_dir().join(format!("strata-bench-{device}-{}.json", std::process::id()));
        let out = strata()
            .args(["bench", "--device", device, "--warmup", "1", "--runs", "2", "--json"])
            .arg(&json)
            .arg("examples/array_sum.strata")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{device}: {}", String::from_utf8_lossy(&out.stderr));
        // Figure 1 launches its kernel `sum` twice per run: 2 timed runs give 4 launches.
        let row = stdout.lines().find(|l| l.contains("array_sum.strata") && l.contains(" sum ")).unwrap_or_default();
        assert_eq!(row.split_whitespace().nth(2), Some("4"), "{device}: {stdout}");
        let text = std::fs::read_to_string(&json).unwrap();
        let _ = std::fs::remove_file(&json);
        assert!(text.contains(&format!("\"device\": \"{device}\"")), "{text}");
        assert!(text.contains("\"kernel\": \"sum\", \"launches\": 4"), "{text}");
        let samples = text.split("\"samples_s\": [").nth(1).and_then(|r| r.split(']').next()).unwrap_or_default();
        assert_eq!(samples.split(',').filter(|s| s.trim().parse::<f64>().is_ok_and(|t| t >= 0.0)).count(), 4, "{text}");
    }
}

#[test]
fn bench_draws_an_svg_chart_with_a_bar_per_kernel() {
    let svg = std::env::temp_dir().join(format!("strata-bench-{}.svg", std::process::id()));
    let out = strata()
        .args(["bench", "--device", "sim", "--runs", "1", "--svg"])
        .arg(&svg)
        .args(["examples/array_sum.strata", "examples/block_reduction.strata"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&svg).unwrap();
    let _ = std::fs::remove_file(&svg);
    assert!(text.starts_with("<svg"), "{text}");
    for label in ["array_sum:sum", "block_reduction:reduce"] {
        assert!(text.contains(label), "no label {label} in {text}");
    }
    // The background plus one bar per kernel.
    assert_eq!(text.matches("<rect").count(), 3, "{text}");
}

#[test]
fn bench_of_a_failing_program_reports_the_error_and_exits_1() {
    let out =
        strata().args(["bench", "--runs", "1", "tests/corpus/run/div_zero_on_host_average.strata"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("E0909"));
}

#[test]
fn bench_needs_at_least_one_run() {
    let out = strata().args(["bench", "--runs", "0", "examples/array_sum.strata"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}
