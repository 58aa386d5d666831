//! `cargo bench -p strata-cli --bench cpu [-- --small]`: the benchmark of issue 5, the `cpu`
//! device against hand-written C with OpenMP and the machine's STREAM bandwidth. The work is in
//! `scripts/bench-cpu.sh` (which builds the release `strata`, the C baselines, runs both and
//! prints the table of docs/benchmarks.md); this target makes it reachable through `cargo bench`.

use std::process::{exit, Command};

fn main() {
    // cargo passes `--bench` to every bench target; only `--small` means something here.
    let small = std::env::args().skip(1).any(|a| a == "--small");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/bench-cpu.sh");
    let mut cmd = Command::new("bash");
    cmd.arg(script);
    if small {
        cmd.arg("--small");
    }
    match cmd.status() {
        Ok(status) if status.success() => {}
        Ok(status) => {
            eprintln!("bench-cpu.sh failed: {status}");
            exit(1);
        }
        Err(e) => {
            eprintln!("cannot run bash {script}: {e}");
            exit(1);
        }
    }
}
