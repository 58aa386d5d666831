//! `--arch` and the target profile on the command line: every command that checks a program
//! (`check`, `run` on both devices, `emit`, `build`) holds it to the limits of the selected GPU
//! architecture (sm_80 by default), and an unknown architecture is a usage error.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn strata() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_strata"));
    c.current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."));
    c
}

/// Writes `src` to a fresh file in the temporary directory.
fn program(name: &str, src: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("strata-profile-{}-{name}.strata", std::process::id()));
    std::fs::write(&path, src).unwrap();
    path
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A program whose only kernel runs blocks of 2048 threads: runnable on `cpu` and `sim`, but not
/// on any GPU.
const TOO_MANY_THREADS: &str = "\
fn fill(v: &uniq gpu.global [f32; 2048]) -[grid: gpu.grid<X<1>, X<2048>>]-> () {
    sched(X) t in grid.to_threads {
        v[[t]] = 1.0;
    }
}

fn main() -[t: cpu.thread]-> () {
    let h = CpuHeap::new([0.0f32; 2048]);
    let mut d = GpuGlobal::alloc_copy(&shrd h);
    fill::<<<X<1>, X<2048>>>>(&uniq d);
    println(\"filled\");
}
";

/// 96 KiB of dynamic shared memory per block: within sm_80's 163 KiB, above sm_75's 64 KiB.
const SHARED_96K: &str = "\
fn stage(v: &uniq gpu.global [f32; 24576],
         [grid.blocks.forall(X)] s: &uniq gpu.shared [f32; 24576])
    -[grid: gpu.grid<X<1>, X<1024>>]-> () {
    sched(X) block in grid.blocks {
        sched(X) t in block.threads {
            for i in 0..24 {
                s.group::<24>[[t]][i] = v.group::<24>[[t]][i];
            }
        }
    }
}

fn main() -[t: cpu.thread]-> () {
    let h = CpuHeap::new([1.0f32; 24576]);
    let mut d = GpuGlobal::alloc_copy(&shrd h);
    stage::<<<X<1>, X<1024>>>>(&uniq d);
    println(\"staged\");
}
";

#[test]
fn an_unknown_architecture_is_a_usage_error_listing_the_known_ones() {
    let file = program("unknown-arch", SHARED_96K);
    let out_exe = std::env::temp_dir().join(format!("strata-profile-{}-exe", std::process::id()));
    let commands: Vec<Vec<&std::ffi::OsStr>> = vec![
        vec!["check".as_ref(), "--arch".as_ref(), "sm_99".as_ref(), file.as_os_str()],
        vec![
            "run".as_ref(),
            "--device".as_ref(),
            "sim".as_ref(),
            "--arch".as_ref(),
            "sm_99".as_ref(),
            file.as_os_str(),
        ],
        vec!["emit".as_ref(), "--target".as_ref(), "cuda".as_ref(), "--arch=sm_99".as_ref(), file.as_os_str()],
        vec![
            "build".as_ref(),
            "--target".as_ref(),
            "cuda".as_ref(),
            "--arch".as_ref(),
            "sm_99".as_ref(),
            "-o".as_ref(),
            out_exe.as_os_str(),
            file.as_os_str(),
        ],
    ];
    for args in commands {
        let out = strata().args(&args).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("unknown GPU architecture `sm_99`"), "{args:?}: {err}");
        for known in ["sm_70", "sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_100"] {
            assert!(err.contains(known), "{args:?}: {known} not listed in {err}");
        }
    }
    let _ = std::fs::remove_file(file);
}

#[test]
fn run_holds_programs_to_the_gpu_limits_on_every_device() {
    let file = program("too-many-threads", TOO_MANY_THREADS);
    for device in ["cpu", "sim"] {
        let out = strata().args(["run", "--device", device, "--format", "short"]).arg(&file).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{device}: {err}");
        assert!(
            err.contains("error[E0703]: this block has 2048 threads; sm_80 allows at most 1024 per block"),
            "{err}"
        );
        assert!(!String::from_utf8_lossy(&out.stdout).contains("filled"), "{device} ran the program");
    }
    let out = strata().args(["emit", "--target", "c"]).arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("E0703"), "{}", stderr(&out));
    let _ = std::fs::remove_file(file);
}

#[test]
fn arch_selects_the_shared_memory_maximum_for_check_run_emit_and_build() {
    let file = program("shared-96k", SHARED_96K);
    // sm_80 (the default, and explicitly) and sm_90 accept 96 KiB; sm_75 allows 64 KiB.
    for arch in [None, Some("sm_80"), Some("sm_90")] {
        let mut c = strata();
        c.arg("check");
        if let Some(a) = arch {
            c.args(["--arch", a]);
        }
        let out = c.arg(&file).output().unwrap();
        assert!(out.status.success(), "{arch:?}: {}", stderr(&out));
    }
    let out = strata().args(["check", "--format", "short", "--arch", "sm_75"]).arg(&file).output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("error[E0707]: `stage` needs 96 KiB (98304 bytes) of shared memory per block; sm_75 allows at most 64 KiB (65536 bytes)"),
        "{err}"
    );
    for device in ["sim", "cpu"] {
        let out = strata().args(["run", "--device", device, "--arch", "sm_75"]).arg(&file).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{device}: {}", stderr(&out));
        assert!(stderr(&out).contains("E0707"), "{}", stderr(&out));
        let out = strata().args(["run", "--device", device, "--arch", "sm_80"]).arg(&file).output().unwrap();
        assert!(out.status.success(), "{device}: {}", stderr(&out));
        assert_eq!(String::from_utf8_lossy(&out.stdout), "staged\n");
    }
    let out = strata().args(["emit", "--target", "cuda", "--arch", "sm_75"]).arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("E0707"), "{}", stderr(&out));
    // `build` checks before it looks for nvcc: the answer does not depend on whether it is there.
    let exe = std::env::temp_dir().join(format!("strata-profile-{}-96k", std::process::id()));
    let out =
        strata().args(["build", "--target", "cuda", "--arch", "sm_75", "-o"]).arg(&exe).arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("E0707"), "{}", stderr(&out));
    assert!(!exe.exists());
    let _ = std::fs::remove_file(file);
}
