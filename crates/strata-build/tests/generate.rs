//! strata-build without a C compiler: what each file becomes, and every way a build fails, with
//! the message the build prints. (examples/rust-host compiles and runs the generated code.)

use std::path::{Path, PathBuf};
use strata_build::{Build, Error};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A fresh directory for this test's files.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("strata-build-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn generate(files: &[PathBuf]) -> Result<Vec<strata_build::Generated>, Error> {
    let mut b = Build::new();
    files.iter().for_each(|f| {
        b.file(f);
    });
    b.generate()
}

const SCALE: &str = "fn scale<n: nat>(
    a: f32,
    x: &uniq gpu.global [f32; n],
) -[grid: gpu.grid<X<n / 64>, X<64>>]-> () where n % 64 == 0 {
    sched(X) thread in grid.to_threads {
        x[[thread]] = a * x[[thread]];
    }
}
";

#[test]
fn signatures_map_ownership_and_sizes() {
    let g = generate(&[
        root().join("examples/lib/saxpy.strata"),
        root().join("examples/array_sum.strata"),
        root().join("examples/obsidian_red_large.strata"),
    ])
    .unwrap();
    let names: Vec<&str> = g.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(names, ["saxpy", "array_sum", "obsidian_red_large"]);
    let has = |i: usize, text: &str| assert!(g[i].rust.contains(text), "no `{text}` in:\n{}", g[i].rust);
    has(0, "pub fn saxpy(a: f32, x: &[f32], y: &mut [f32]) -> ::std::result::Result<(), ::strata_host::Error>");
    has(0, "pub fn block_sums(input: &[i32], sums: &mut [i32])");
    has(0, "pub fn transpose(input: &[f64], output: &mut [f64])");
    has(0, "__strata::exact_sqrt(__strata::len(input.len()))");
    has(0, "pub fn saxpy_launch(n: u64, a: f32, x: *const f32, y: *mut f32) -> ::std::os::raw::c_int;");
    // `sum<nb, nt>`: both sizes from the slices.
    has(1, "pub fn sum(input: &[i32], output: &mut [i32])");
    // `red<nb, lnt, seq>`: lnt is only a power's exponent, so it is an argument; seq then follows.
    has(2, "pub fn red(lnt: u64, input: &[u32], output: &mut [u32])");
    has(2, "/// - The size `seq` is taken from the length of `input`.");
    // The C library is what `strata emit --target c --lib` writes, its header included.
    assert!(g[0].c_header.contains("int saxpy_launch(uint64_t n, float a, const float *x, float *STRATA_RESTRICT y);"));
    assert!(g[1].c_source.contains("sum_launch("));
    assert!(g[1].c_source.contains("STRATA_ARRAY_SUM_H"), "the include guard is named after the file");
}

#[test]
fn checker_errors_fail_the_build_with_the_rendered_diagnostics() {
    let dir = scratch("checker");
    let bad = dir.join("racy.strata");
    // Every thread writes x[0]: a data race.
    std::fs::write(&bad, SCALE.replace("x[[thread]] = a * x[[thread]];", "x[0] = a;")).unwrap();
    let e = generate(std::slice::from_ref(&bad)).unwrap_err();
    let shown = e.to_string();
    assert!(matches!(e, Error::Program(_)), "{e:?}");
    assert!(shown.starts_with("error[E"), "{shown}");
    assert!(shown.contains(&format!("{}:6:9", bad.display())), "the snippet names the file and line:\n{shown}");
    // Cargo's summary line: the headline and its place.
    let summary = e.cargo_summary();
    assert!(summary.starts_with("cargo:warning=error[E"), "{summary}");
    assert!(summary.ends_with(&format!(" (at {}:6:9)", bad.display())), "{summary}");
    assert_eq!(summary.lines().count(), 1);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn syntax_errors_and_missing_files() {
    let dir = scratch("syntax");
    let bad = dir.join("broken.strata");
    std::fs::write(&bad, "fn k( {").unwrap();
    let e = generate(std::slice::from_ref(&bad)).unwrap_err();
    assert!(e.to_string().starts_with("error[E00"), "{e}");
    let missing = dir.join("missing.strata");
    let e = generate(std::slice::from_ref(&missing)).unwrap_err();
    assert!(matches!(e, Error::Usage(_)), "{e:?}");
    assert!(e.to_string().starts_with(&format!("error: cannot read `{}`", missing.display())), "{e}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_file_without_kernels_is_refused() {
    let dir = scratch("nokernel");
    let f = dir.join("empty.strata");
    std::fs::write(&f, "fn id(x: i32) -[t: gpu.thread]-> i32 {\n    x\n}\n").unwrap();
    let e = generate(std::slice::from_ref(&f)).unwrap_err();
    assert!(e.to_string().starts_with("error[E0806]: nothing to emit"), "{e}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn clashing_names_are_refused() {
    let dir = scratch("clash");
    // Two files named `saxpy`: one Rust module name.
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    let other = dir.join("sub/saxpy.strata");
    std::fs::write(&other, SCALE).unwrap();
    let e = generate(&[root().join("examples/lib/saxpy.strata"), other]).unwrap_err();
    assert_eq!(e.to_string(), "error: two Strata files are named `saxpy`: their Rust modules would clash; rename one");
    // Two kernels named `saxpy` in two files: one C symbol `saxpy_launch`.
    let twin = dir.join("twin.strata");
    std::fs::write(&twin, SCALE.replace("fn scale", "fn saxpy")).unwrap();
    let e = generate(&[root().join("examples/lib/saxpy.strata"), twin]).unwrap_err();
    assert!(e.to_string().contains("the kernel `saxpy` of"), "{e}");
    // A file name that is no Rust module name.
    let dashed = dir.join("my-kernels.strata");
    std::fs::write(&dashed, SCALE).unwrap();
    let e = generate(&[dashed]).unwrap_err();
    assert!(e.to_string().contains("the file's name must be letters, digits and `_`"), "{e}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn defines_set_constants_and_unknown_ones_are_refused() {
    let dir = scratch("defines");
    let f = dir.join("fixed.strata");
    let src =
        SCALE.replace("<n: nat>", "").replace("; n]", "; N]").replace("n / 64", "N / 64").replace("n % 64", "N % 64");
    std::fs::write(&f, format!("const N: nat = 128;\n{src}")).unwrap();
    let g = Build::new().file(&f).define("N", 256).generate().unwrap();
    // Without size parameters there is nothing to derive: the slice must have N elements.
    assert!(g[0].rust.contains("pub fn scale(a: f32, x: &mut [f32])"), "{}", g[0].rust);
    assert!(g[0].rust.contains("::std::option::Option::Some(256u64)"), "{}", g[0].rust);
    let e = Build::new().file(&f).define("M", 1).generate().unwrap_err();
    assert!(e.to_string().starts_with("error: `-D M=1`: the program defines no constant `M`"), "{e}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn outside_a_build_script_an_output_directory_is_needed() {
    if std::env::var_os("OUT_DIR").is_some() {
        return;
    }
    let e = Build::new().file(root().join("examples/lib/saxpy.strata")).try_compile().unwrap_err();
    assert!(e.to_string().contains("OUT_DIR is not set"), "{e}");
}

#[test]
fn scalar_references_and_rust_keywords() {
    let dir = scratch("keywords");
    let f = dir.join("shapes.strata");
    let src = "fn box<n: nat>(
    ref: &shrd gpu.global f32,
    x: &uniq gpu.global [f32; n],
) -[grid: gpu.grid<X<n / 64>, X<64>>]-> () where n % 64 == 0 {
    sched(X) thread in grid.to_threads {
        x[[thread]] = x[[thread]] + *ref;
    }
}
";
    std::fs::write(&f, src).unwrap();
    let g = generate(std::slice::from_ref(&f)).unwrap();
    let rust = &g[0].rust;
    assert!(rust.contains("pub fn box_(ref_: &f32, x: &mut [f32])"), "{rust}");
    assert!(rust.contains("pub fn box_launch(n: u64, ref_: *const f32, x: *mut f32)"), "{rust}");
    let _ = std::fs::remove_dir_all(dir);
}

/// The Rust declaration of a C parameter of a launch function (`const float *x` → `*const f32`).
fn rust_of_c(param: &str) -> String {
    let param = param.replace("STRATA_RESTRICT", "");
    let pointer = param.contains('*');
    let words: Vec<&str> = param.split(|c: char| c.is_whitespace() || c == '*').filter(|w| !w.is_empty()).collect();
    let constant = words.first() == Some(&"const");
    let scalar = match *words.iter().rev().nth(1).unwrap() {
        "uint64_t" => "u64",
        "int64_t" => "i64",
        "uint32_t" => "u32",
        "int32_t" => "i32",
        "uint16_t" => "u16",
        "int16_t" => "i16",
        "uint8_t" => "u8",
        "int8_t" => "i8",
        "float" => "f32",
        "double" => "f64",
        "bool" => "bool",
        other => panic!("unexpected C type `{other}` in `{param}`"),
    };
    match (pointer, constant) {
        (false, _) => scalar.to_string(),
        (true, true) => format!("*const {scalar}"),
        (true, false) => format!("*mut {scalar}"),
    }
}

/// Every example's kernels: the Rust module declares each launch function with the types of the C
/// header (the ABI), or the file is refused with a clear message (never a panic).
#[test]
fn every_example_declares_the_c_launch_functions() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("examples"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "strata"))
        .collect();
    files.push(root().join("examples/lib/saxpy.strata"));
    files.sort();
    let mut translated = 0;
    for f in &files {
        let g = match generate(std::slice::from_ref(f)) {
            Ok(mut g) => g.remove(0),
            Err(e) => {
                let shown = e.to_string();
                assert!(!shown.contains("internal error"), "{}: {shown}", f.display());
                continue;
            }
        };
        translated += 1;
        for line in g.c_header.lines().filter(|l| l.contains("_launch(") && l.ends_with(");")) {
            let (head, rest) = line.split_once('(').unwrap();
            let name = head.rsplit(' ').next().unwrap();
            let params: Vec<String> =
                rest.trim_end_matches(");").split(", ").filter(|p| *p != "void").map(rust_of_c).collect();
            let decl = g
                .rust
                .lines()
                .find(|l| l.contains(&format!("pub fn {name}(")))
                .unwrap_or_else(|| panic!("{}: no Rust declaration of `{name}` in\n{}", f.display(), g.rust));
            let types: Vec<&str> = decl
                .split_once('(')
                .unwrap()
                .1
                .split_once(") ->")
                .unwrap()
                .0
                .split(", ")
                .filter(|p| !p.is_empty())
                .map(|p| p.split_once(": ").unwrap().1)
                .collect();
            assert_eq!(types, params, "{}: `{name}`", f.display());
            assert!(decl.ends_with("-> ::std::os::raw::c_int;"), "{decl}");
        }
    }
    assert!(translated >= 10, "only {translated} examples translated");
}

#[test]
fn c_compiler_messages() {
    let missing = Error::CCompiler("ToolNotFound: failed to find tool \"gcc\"".into()).to_string();
    assert!(missing.starts_with("error: no C compiler to build the Strata kernels"), "{missing}");
    assert!(missing.contains("help: install GCC"), "{missing}");
    let failed = Error::CCompiler("command did not execute successfully".into()).to_string();
    assert!(failed.starts_with("error: the C compiler failed on the emitted Strata library"), "{failed}");
}
