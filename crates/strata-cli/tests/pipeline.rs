//! The pipeline library (`strata_cli::Pipeline`) driven directly, as a language server or a build
//! integration would: the same phases and diagnostics as the `strata` command, nothing printed.

use std::path::Path;
use strata_check::TargetProfile;
use strata_cli::{Device, Error, Pipeline, RunOptions};

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn pipeline(defines: &[(&str, u64)]) -> Pipeline {
    let defines = defines.iter().map(|(n, v)| (n.to_string(), *v)).collect();
    Pipeline::new(defines, TargetProfile::default_profile())
}

#[test]
fn an_example_loads_checks_lowers_and_runs_on_sim() {
    let mut p = pipeline(&[]);
    let id = p.load(&root().join("examples/array_sum.strata")).unwrap();
    assert!(p.check(&[id]).unwrap().is_empty());
    let lowered = p.lower(id).unwrap();
    p.require_main(&lowered.program, lowered.file).unwrap();
    let opts = RunOptions { device: Device::Sim, sim: strata_sim::Options::default(), time_limit: None };
    let mut out = Vec::new();
    p.run(&lowered.program, lowered.file, &opts, &mut out).unwrap();
    let expected = std::process::Command::new(env!("CARGO_BIN_EXE_strata"))
        .current_dir(root())
        .args(["run", "--device", "sim", "examples/array_sum.strata"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out), String::from_utf8_lossy(&expected.stdout));
}

#[test]
fn errors_come_back_as_data_with_the_commands_exit_status() {
    // A buffer that is not a file: syntax errors, as diagnostics with spans into it.
    let mut p = pipeline(&[]);
    let id = p.add_source("buffer.strata", "fn main() -[t: cpu.thread]-> () {\n    let = ;\n}\n");
    let diags = p.check(&[id]).unwrap();
    assert!(strata_diag::has_errors(&diags) && diags.iter().all(|d| d.primary.span.file == id));
    let Err(e @ Error::Diagnostics(_)) = p.lower(id) else { panic!("lowered a program with syntax errors") };
    assert_eq!(e.exit_status(), 1);
    // A checker error, then a `-D` naming no constant: a usage error, exit status 2.
    let id = p.add_source("unknown.strata", "fn main() -[t: cpu.thread]-> () {\n    println(missing);\n}\n");
    let Err(Error::Diagnostics(d)) = p.lower(id) else { panic!("accepted an unknown name") };
    assert_eq!(d[0].code.as_str(), "E0101");
    let mut p = pipeline(&[("NN", 4)]);
    let id = p.load(&root().join("examples/array_sum.strata")).unwrap();
    let Err(e @ Error::Usage(_)) = p.lower(id) else { panic!("accepted -D NN") };
    assert_eq!(e.exit_status(), 2);
    assert!(matches!(&e, Error::Usage(m) if m.contains("did you mean `N`?")), "{e:?}");
    // A file that is not there; a program without `main`.
    assert!(matches!(p.load(Path::new("/nonexistent.strata")), Err(Error::Usage(m)) if m.contains("cannot read")));
    let mut p = pipeline(&[]);
    let id = p.add_source("lib.strata", "fn helper(x: i32) -[t: cpu.thread]-> i32 { x + 1 }\n");
    let lowered = p.lower(id).unwrap();
    let Err(Error::Diagnostics(d)) = p.require_main(&lowered.program, id) else { panic!("no main accepted") };
    assert_eq!(d[0].code.as_str(), "E0106");
}
