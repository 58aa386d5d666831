//! Reads at run-time indices in safe code (docs/language.md, "Run-time indices") on the devices
//! the corpus test does not cover: the cpu device's C and the CUDA stop an out-of-range read with
//! the access's source position and a non-zero exit status, the check is one compare
//! (`strata_index`) that is dropped where the index is provably in range, and the CUDA of the
//! failing program compiles with nvcc (where `$NVCC` or `.venv/bin/nvcc` exists; the corpus
//! programs that run are compiled by `tests/cuda_compile.rs`).

use std::path::PathBuf;
use std::process::{Command, Output};

mod common;
use common::{cc, nvcc, root};

const OUT_OF_RANGE: &str = "tests/corpus/run/rt_read_out_of_range_gather.strata";
const LOOKUP: &str = "tests/corpus/run/rt_read_shared_lookup_after_sync.strata";

fn strata(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_strata")).current_dir(root()).args(args).output().unwrap()
}

fn emit(target: &str, file: &str) -> String {
    let out = strata(&["emit", "--target", target, file]);
    assert!(out.status.success(), "strata emit {target} {file}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn work_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("strata-checked-reads-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The emitted use of a checked run-time index (the runtime header only defines `strata_index`).
const CHECKED: &str = "strata_index((uint64_t)(int64_t)(";

#[test]
fn out_of_range_read_traps_on_the_cpu_device_with_its_position() {
    // Through `strata run`: the diagnostic rendered at the access.
    let run = strata(&["run", "--device", "cpu", OUT_OF_RANGE]);
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{err}");
    assert!(err.contains("error[E0903]: index out of bounds"), "{err}");
    assert!(err.contains("rt_read_out_of_range_gather.strata:9:20"), "{err}");
    // The C built by hand: `file:line:col: error[E0903]` on stderr, exit status 1, nothing printed.
    let dir = work_dir("cpu");
    let src = dir.join("gather.c");
    let exe = dir.join("gather");
    std::fs::write(&src, emit("c", OUT_OF_RANGE)).unwrap();
    let built = Command::new(cc()).args(["-O2", "-fopenmp", "-o"]).arg(&exe).arg(&src).arg("-lm").output().unwrap();
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
    let out = Command::new(&exe).env_remove("STRATA_ERRORS").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!("{OUT_OF_RANGE}:9:20: error[E0903]: index out of bounds\n")
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_check_is_one_compare_and_dropped_where_the_index_is_in_range() {
    for target in ["c", "cuda"] {
        let code = emit(target, OUT_OF_RANGE);
        // `src[idx[t]]`: the run-time index checked once, against the length 8, at line 9, with
        // no separate test for a negative index (`strata_idx`).
        assert!(code.contains(&format!("src[{CHECKED}")), "{target}: {code}");
        assert!(code.contains("UINT64_C(8), STRATA_AT(9, 20,"), "{target}: {code}");
        assert!(!code.contains("strata_idx((int64_t)("), "{target}: {code}");
        // `lut[k % 16u32]` needs no check, `lut[k / 4u32]` does (and so on the host for `tab`).
        let code = emit(target, LOOKUP);
        assert_eq!(code.matches(CHECKED).count(), 2, "{target}: {code}");
        for array in ["lut", "tab"] {
            assert!(code.contains(&format!("{array}[{CHECKED}strata_div_u32(")), "{target}: {code}");
            assert!(code.contains(&format!("{array}[((uint64_t)(strata_rem_u32(")), "{target}: {code}");
        }
    }
}

#[test]
fn cuda_of_a_checked_read_compiles_with_nvcc() {
    let Some(nvcc) = nvcc() else {
        assert!(
            std::env::var("STRATA_REQUIRE_NVCC").as_deref() != Ok("1"),
            "STRATA_REQUIRE_NVCC=1 but nvcc was not found: run scripts/setup-nvcc.sh"
        );
        eprintln!("checked_reads: nvcc not found ($NVCC or .venv/bin/nvcc) — skipped");
        return;
    };
    let dir = work_dir("nvcc");
    let cu = dir.join("gather.cu");
    std::fs::write(&cu, emit("cuda", OUT_OF_RANGE)).unwrap();
    let out = Command::new(nvcc)
        .args(["-Werror", "all-warnings", "-gencode", "arch=compute_80,code=sm_80"])
        .args(["-gencode", "arch=compute_90,code=sm_90", "-c", "-o"])
        .arg(dir.join("gather.o"))
        .arg(&cu)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}
