//! `strata check FILE.cu` (docs/cuda-c.md): findings in CUDA terms under several schedules, the
//! JSON form, kernel-only mode (command-line launch and GPUVerify headers), and that every
//! reported finding is reproduced by the command it names.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn strata(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_strata")).current_dir(root()).args(args).output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn json(args: &[&str]) -> (i32, Value) {
    let out = strata(args);
    let doc = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out.stdout)));
    (out.status.code().unwrap_or(-1), doc)
}

#[test]
fn figure_1_is_clean_under_every_schedule() {
    let out = strata(&["check", "tests/cuda_c/fig1.cu"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "");
    assert_eq!(
        text(&out.stdout),
        "tests/cuda_c/fig1.cu: clean under 5 schedules (the default order and random seeds 1-4)\n"
    );
}

#[test]
fn the_race_of_figure_1_in_cuda_terms() {
    let out = strata(&["check", "tests/cuda_c/fig1_race.cu"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    // One finding, though the schedules meet the race from both of its sides.
    assert_eq!(err.matches("error[E0901]").count(), 1, "{err}");
    for want in [
        "error[E0901]: data race on `shared[1]` (gpu.shared)",
        "┌─ tests/cuda_c/fig1_race.cu:12:5",
        "write by blockIdx (0, 0, 0) / threadIdx (1, 0, 0)",
        "17 │       shared[0] += shared[i];",
        "read by blockIdx (0, 0, 0) / threadIdx (0, 0, 0)",
        "= variable `shared`, index 1 in `gpu.shared`",
        "= shown by the default schedule: `strata run tests/cuda_c/fig1_race.cu` reproduces it",
    ] {
        assert!(err.contains(want), "missing {want:?} in\n{err}");
    }
    assert_eq!(
        text(&out.stdout),
        "tests/cuda_c/fig1_race.cu: 1 finding under 5 schedules (the default order and random seeds 1-4)\n"
    );
    let short = text(&strata(&["check", "--format", "short", "tests/cuda_c/fig1_deadlock.cu"]).stderr);
    assert_eq!(
        short,
        "tests/cuda_c/fig1_deadlock.cu:12:5: error[E0902]: barrier divergence: not every thread reaches this barrier: \
         barrier reached by blockIdx (0, 0, 0) / threadIdx (0, 0, 0); barrier reached by blockIdx (0, 0, 0) / \
         threadIdx (4, 0, 0) at tests/cuda_c/fig1_deadlock.cu:15:3 [default schedule]\n"
    );
}

#[test]
fn json_findings_for_tools() {
    let (code, doc) = json(&[
        "check",
        "--format",
        "json",
        "tests/cuda_c/fig1_race.cu",
        "tests/cuda_c/fig1.cu",
        "tests/cuda_c/unsupported_atomic.cu",
    ]);
    assert_eq!(code, 1);
    assert_eq!(doc["version"], 1);
    let files = doc["files"].as_array().unwrap();
    assert_eq!(files.len(), 3);
    assert_eq!(files[1]["file"], "tests/cuda_c/fig1.cu");
    assert_eq!(files[1]["findings"], 0);
    assert_eq!(files[0]["schedules"], serde_json::json!([null, 1, 2, 3, 4]));
    let f = &doc["findings"].as_array().unwrap();
    assert_eq!(f.len(), 2);
    let race = &f[0];
    assert_eq!(race["kind"], "data-race");
    assert_eq!(race["code"], "E0901");
    assert_eq!(race["message"], "data race on `shared[1]` (gpu.shared)");
    assert_eq!(
        race["locations"],
        serde_json::json!([
            {"file": "tests/cuda_c/fig1_race.cu", "line": 12, "col": 5},
            {"file": "tests/cuda_c/fig1_race.cu", "line": 17, "col": 20}
        ])
    );
    assert_eq!(
        race["threads"],
        serde_json::json!([
            {"blockIdx": [0, 0, 0], "threadIdx": [1, 0, 0], "access": "write"},
            {"blockIdx": [0, 0, 0], "threadIdx": [0, 0, 0], "access": "read"}
        ])
    );
    assert_eq!(
        (&race["variable"], &race["index"], &race["space"]),
        (&"shared".into(), &1.into(), &"gpu.shared".into())
    );
    assert_eq!(race["seed"], Value::Null);
    assert_eq!(race["default_schedule"], true);
    assert_eq!(race["reproduce"], "strata run tests/cuda_c/fig1_race.cu");
    // A file outside the subset is a finding of kind `unsupported`, found before anything ran.
    let refused = &f[1];
    assert_eq!((&refused["kind"], &refused["code"]), (&"unsupported".into(), &"E0801".into()));
    assert_eq!(refused["locations"][0]["line"], 4);
    assert_eq!(refused["threads"], serde_json::json!([]));
    assert_eq!((&refused["seed"], &refused["reproduce"]), (&Value::Null, &Value::Null));
    assert_eq!(race["field"], Value::Null);
    // Clean: exit 0 and an empty findings array.
    let (code, doc) = json(&["check", "--format", "json", "tests/cuda_c/fig1.cu"]);
    assert_eq!((code, doc["findings"].as_array().unwrap().len()), (0, 0));
}

#[test]
fn a_race_on_a_struct_field_names_the_element_and_the_field() {
    let (code, doc) = json(&["check", "--format", "json", "tests/cuda_c/corpus/x_struct_field_race.cu"]);
    assert_eq!(code, 1);
    let race = &doc["findings"][0];
    assert_eq!(race["message"], "data race on `cells[0]` field 1 (gpu.global)");
    assert_eq!(
        (&race["variable"], &race["index"], &race["field"], &race["space"]),
        (&"cells".into(), &0.into(), &1.into(), &"gpu.global".into())
    );
}

#[test]
fn every_finding_is_reproduced_by_the_command_it_names() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("tests/cuda_c/corpus"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "cu"))
        .collect();
    files.sort();
    let mut seen_seed = false;
    for f in files {
        let rel = f.strip_prefix(root()).unwrap().to_str().unwrap().to_string();
        let (_, doc) = json(&["check", "--format", "json", &rel]);
        for finding in doc["findings"].as_array().unwrap() {
            let cmd = finding["reproduce"].as_str().unwrap();
            seen_seed |= !finding["seed"].is_null();
            let args: Vec<&str> = cmd.split_whitespace().skip(1).collect();
            let mut args: Vec<&str> = args.clone();
            args.insert(1, "--format");
            args.insert(2, "short");
            let out = strata(&args);
            // The program's own failure status (E0908 "the program exited with status N"): the
            // run ends with that status and prints only what the program prints.
            let message = finding["message"].as_str().unwrap();
            if let Some(status) = message.strip_prefix("the program exited with status ") {
                assert_eq!(out.status.code().map(|c| c.to_string()).as_deref(), Some(status), "{cmd}");
                continue;
            }
            assert_eq!(out.status.code(), Some(1), "{cmd}");
            let loc = &finding["locations"][0];
            let want = format!(
                "{}:{}:{}: error[{}]",
                loc["file"].as_str().unwrap(),
                loc["line"],
                loc["col"],
                finding["code"].as_str().unwrap()
            );
            assert!(text(&out.stderr).starts_with(&want), "{cmd}: expected {want}, got {}", text(&out.stderr));
        }
    }
    assert!(seen_seed, "some finding of the corpus shows only under a random schedule");
}

#[test]
fn kernel_only_mode_from_the_command_line() {
    let k = "tests/cuda_c/corpus/k_shared_reverse.cu";
    // The header says 64 threads; a block of 128 overruns the kernel's 64-element shared array.
    let out = strata(&["check", "--format", "short", k, "--grid", "1", "--block", "128", "--buffer-len", "4K"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.starts_with(&format!("{k}:7:5: error[E0903]")), "{err}");
    // In the header's launch it is clean, with larger buffers and every schedule.
    let out = strata(&["check", k, "--buffer-len", "1M", "--schedules", "2"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!(
            "{k} (kernel `reverse`, grid (2, 1, 1), block (64, 1, 1), buffers of 1048576 elements): clean under 3 \
             schedules (the default order and random seeds 1-2)\n"
        )
    );
    // Scalar parameters: `--arg` sets them (n = 0: no thread works, so no race).
    let racy = "tests/cuda_c/corpus/x_stencil_in_place.cu";
    assert_eq!(strata(&["check", racy]).status.code(), Some(1));
    assert_eq!(strata(&["check", racy, "--arg", "n=0"]).status.code(), Some(0));
}

#[test]
fn kernel_only_mode_for_a_file_without_main() {
    let dir = std::env::temp_dir().join(format!("strata-cuda-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("kernels.cu");
    std::fs::write(
        &file,
        "__global__ void good(int *a, int n) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) {\n        a[i] = 2 * a[i];\n    }\n}\n\
         __global__ void bad(int *a) {\n    a[blockIdx.x] = threadIdx.x;\n}\n",
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["check", "--format", "short", f];
        args.extend_from_slice(extra);
        strata(&args)
    };
    let out = run(&["--kernel", "good", "--grid", "4", "--block", "256", "--buffer-len", "1M"]);
    assert_eq!((out.status.code(), text(&out.stderr)), (Some(0), String::new()));
    let out = run(&["--kernel", "bad", "--grid", "2,2", "--block", "8,2"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("8:5: error[E0901]: data race on `a[0]` (gpu.global)"), "{}", text(&out.stderr));
    // Usage errors: exit 2 and a message that says what to do.
    for (extra, says) in [
        (&[][..], "needs `--grid G --block B`"),
        (&["--grid", "4", "--block", "32"][..], "choose a kernel with `--kernel NAME`: `good`, `bad`"),
        (&["--kernel", "nope", "--grid", "4", "--block", "32"][..], "the file has no kernel `nope`"),
        (&["--kernel", "bad", "--grid", "4", "--block", "32", "--arg", "n=1"][..], "kernel `bad` has no parameter `n`"),
        (
            &["--kernel", "good", "--grid", "4", "--block", "32", "--arg", "n=x"][..],
            "not a value of the parameter's type",
        ),
        (&["--kernel", "good", "--grid", "0", "--block", "32"][..], "at least 1"),
        (&["--kernel", "good", "--grid", "4", "--block", "32", "--buffer-len", "1Q"][..], "not a count"),
    ] {
        let out = run(extra);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains(says), "{extra:?}: {}", text(&out.stderr));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn check_options_are_for_cuda_c_files() {
    let out = strata(&["check", "--kernel", "k", "examples/array_sum.strata"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("are for CUDA-C (`.cu`) files"));
    let out = strata(&["check", "--format", "json", "examples/array_sum.strata"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("`--format json` is for CUDA-C"));
}
