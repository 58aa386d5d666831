//! Program arguments and `.npy` files end to end, through the `strata` binary on both devices:
//! inputs of every element type, of one and two dimensions and of lengths 0, 1 and 1000, written
//! here with the `npyz` crate; a program computes on them and writes its results; the results are
//! read back with `npyz` and compared with the same computation in Rust, and the files written by
//! `sim` and `cpu` must be byte for byte the same (and have numpy's header). Every error of E0912
//! is asserted on both devices: exit status 1, the code, the file's name in the message.

use std::path::{Path, PathBuf};
mod common;

use npyz::WriterBuilder;
use std::process::{Command, Output};

fn strata() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_strata"));
    c.current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."));
    c.env("NO_COLOR", "1");
    c
}

/// A fresh directory for one test's files.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("strata-npy-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `program` (written to `dir`) on `device` with compiler arguments `defines` and program
/// arguments `args`.
fn run(dir: &Path, program: &str, device: &str, defines: &[String], args: &[&Path]) -> Output {
    let src = dir.join("prog.strata");
    std::fs::write(&src, program).unwrap();
    strata()
        .args(["run", "--format", "short", "--device", device])
        .args(defines)
        .arg(&src)
        .arg("--")
        .args(args)
        .output()
        .unwrap()
}

fn write_npy<T: npyz::AutoSerialize + Copy>(path: &Path, shape: &[u64], data: &[T]) {
    let mut out = Vec::new();
    {
        let mut w = npyz::WriteOptions::<T>::new().default_dtype().shape(shape).writer(&mut out).begin_nd().unwrap();
        w.extend(data.iter().copied()).unwrap();
        w.finish().unwrap();
    }
    std::fs::write(path, out).unwrap();
}

fn read_npy<T: npyz::Deserialize>(path: &Path) -> (Vec<u64>, Vec<T>) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let npy = npyz::NpyFile::new(&bytes[..]).unwrap();
    assert_eq!(npy.order(), npyz::Order::C);
    let shape = npy.shape().to_vec();
    (shape, npy.into_vec().unwrap())
}

/// The header numpy 2.4.6's `np.save` writes for this type string and shape (format 1.0, the
/// dictionary padded with spaces to 128 bytes with a final newline), as it was captured from
/// numpy: `{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }`.
fn numpy_header(descr: &str, shape: &str) -> Vec<u8> {
    let dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    let mut h = b"\x93NUMPY\x01\x00\x76\x00".to_vec();
    h.extend_from_slice(dict.as_bytes());
    h.resize(127, b' ');
    h.push(b'\n');
    h
}

/// One element type: its Strata name, how the program computes `y` from `x`, and the same in Rust.
trait Elem: npyz::AutoSerialize + npyz::Deserialize + Copy + PartialEq + std::fmt::Debug {
    const NAME: &'static str;
    const ZERO: &'static str;
    /// `y[i] = f(x[i])` in Strata, with `v` for `x[i]`.
    const F: &'static str;
    fn f(v: Self) -> Self;
    /// Input element `k`.
    fn input(k: u64) -> Self;
}

macro_rules! elem {
    ($t:ty, $name:expr, $zero:expr, $f:expr, |$v:ident| $rust:expr, |$k:ident| $input:expr) => {
        impl Elem for $t {
            const NAME: &'static str = $name;
            const ZERO: &'static str = $zero;
            const F: &'static str = $f;
            fn f($v: Self) -> Self {
                $rust
            }
            fn input($k: u64) -> Self {
                $input
            }
        }
    };
}

elem!(bool, "bool", "false", "!v", |v| !v, |k| k.is_multiple_of(3));
elem!(i32, "i32", "0", "3 * v - 7", |v| 3 * v - 7, |k| k as i32 - 500);
elem!(i64, "i64", "0i64", "v * 5i64 - 3000000000000i64", |v| v * 5 - 3_000_000_000_000, |k| (k as i64 - 400)
    * 1_000_000_007);
elem!(u32, "u32", "0u32", "v * 2u32 + 1u32", |v| v * 2 + 1, |k| k as u32 * 7 + 4_000_000);
elem!(u64, "u64", "0u64", "v / 3u64 + 1u64", |v| v / 3 + 1, |k| k * 0x1_0000_0001 + 17);
elem!(f32, "f32", "0.0f32", "v * 0.5f32 - 1.25f32", |v| v * 0.5 - 1.25, |k| k as f32 * 0.37 - 100.0);
elem!(f64, "f64", "0.0", "v * v - 0.1", |v| v * v - 0.1, |k| (k as f64).sqrt() - 3.0);
elem!(u8, "u8", "0u8", "v / 2u8 + 3u8", |v| v / 2 + 3, |k| (k * 7 % 256) as u8);
elem!(i8, "i8", "0i8", "v / 3i8 - 1i8", |v| v / 3 - 1, |k| (k * 7 % 256) as u8 as i8);
elem!(u16, "u16", "0u16", "v / 2u16 + 7u16", |v| v / 2 + 7, |k| (k * 977 % 65536) as u16);
elem!(i16, "i16", "0i16", "v / 2i16 - 5i16", |v| v / 2 - 5, |k| (k * 977 % 65536) as u16 as i16);

/// The program for one element type: `y = f(x)` of a vector (argument 0 → 2) and the transpose of
/// `f` of an N x M matrix (argument 1 → 3), which also goes through GPU memory and back; the
/// vector itself is written again unchanged (argument 4). The sizes are constants (`-D N=…`), or
/// with `run_time` sizes bound at run time from the files (`let N: nat = npy_len(0);`).
fn program<T: Elem>(run_time: bool) -> String {
    let (t, zero, f) = (T::NAME, T::ZERO, T::F.replace('v', "x[i]"));
    let fm = T::F.replace('v', "back[i][j]");
    let (consts, lets) = if run_time {
        ("", "    let N: nat = npy_len(0);\n    let M: nat = npy_dim(1, 1);\n")
    } else {
        ("const N: nat = 1;\nconst M: nat = 1;\n\n", "")
    };
    format!(
        "{consts}fn main() -[t: cpu.thread]-> () {{
{lets}    let x: [{t}; N] @ cpu.mem = load_npy(0);
    let m = load_npy::<[[{t}; M]; N]>(1);
    assert(npy_len(0) == N as u64);
    assert(npy_dim(1, 0) == N as u64);
    assert(npy_dim(1, 1) == M as u64);
    let mut y = CpuHeap::new([{zero}; N]);
    for i in 0..N {{
        y[i] = {f};
    }}
    save_npy(2, &shrd y);
    let d = GpuGlobal::alloc_copy(&shrd m);
    let mut back = CpuHeap::new([[{zero}; M]; N]);
    copy_mem_to_host(&shrd d, &uniq back);
    let mut tr = CpuHeap::new([[{zero}; N]; M]);
    for i in 0..N {{
        for j in 0..M {{
            tr[j][i] = {fm};
        }}
    }}
    save_npy(3, &shrd tr);
    save_npy(4, &shrd x);
}}
"
    )
}

/// Every length of the test for one element type, on both devices.
fn round_trip<T: Elem>() {
    let dir = scratch(T::NAME);
    let sizes = [(0u64, 3u64), (1, 1), (1000, 3), (7, 0)];
    let runs = sizes.iter().map(|&s| (s, false)).chain(sizes.iter().map(|&s| (s, true)));
    for ((n, m), run_time) in runs {
        let src = program::<T>(run_time);
        let x: Vec<T> = (0..n).map(T::input).collect();
        let mat: Vec<T> = (0..n * m).map(|k| T::input(k * 13 % 1001)).collect();
        let (xin, min) = (dir.join("x.npy"), dir.join("m.npy"));
        write_npy(&xin, &[n], &x);
        write_npy(&min, &[n, m], &mat);
        let defines = if run_time {
            Vec::new()
        } else {
            vec!["-D".to_string(), format!("N={n}"), "-D".to_string(), format!("M={m}")]
        };
        let mut written: Vec<Vec<Vec<u8>>> = Vec::new();
        for device in ["sim", "cpu"] {
            let outs: Vec<PathBuf> = (0..3).map(|k| dir.join(format!("{device}-out{k}.npy"))).collect();
            let args = [xin.as_path(), min.as_path(), &outs[0], &outs[1], &outs[2]];
            let out = run(&dir, &src, device, &defines, &args);
            let what = format!("{} ({n}, {m}) on {device}, sizes at run time: {run_time}", T::NAME);
            assert!(out.status.success(), "{what}: {}", String::from_utf8_lossy(&out.stderr));
            // y = f(x)
            let (shape, y) = read_npy::<T>(&outs[0]);
            assert_eq!(shape, vec![n], "{what}");
            assert_eq!(y, x.iter().map(|&v| T::f(v)).collect::<Vec<_>>(), "{what}");
            // tr = transpose(f(m)): tr[j][i] = f(m[i][j]), C order.
            let (shape, tr) = read_npy::<T>(&outs[1]);
            assert_eq!(shape, vec![m, n], "{what}");
            let mut want = Vec::new();
            for j in 0..m {
                for i in 0..n {
                    want.push(T::f(mat[(i * m + j) as usize]));
                }
            }
            assert_eq!(tr, want, "{what}");
            // x unchanged.
            let (shape, same) = read_npy::<T>(&outs[2]);
            assert_eq!((shape, same), (vec![n], x.clone()), "{what}");
            written.push(outs.iter().map(|p| std::fs::read(p).unwrap()).collect());
        }
        assert_eq!(written[0], written[1], "{} ({n}, {m}): sim and cpu wrote different files", T::NAME);
        // numpy's header: 128 bytes (for every shape of one or two dimensions that fits u64).
        let descr = match T::NAME {
            "bool" => "|b1",
            "i8" => "|i1",
            "u8" => "|u1",
            "i16" => "<i2",
            "u16" => "<u2",
            "i32" => "<i4",
            "i64" => "<i8",
            "u32" => "<u4",
            "u64" => "<u8",
            "f32" => "<f4",
            _ => "<f8",
        };
        assert_eq!(written[0][0][..128], numpy_header(descr, &format!("({n},)"))[..], "{}", T::NAME);
        assert_eq!(written[0][1][..128], numpy_header(descr, &format!("({m}, {n})"))[..], "{}", T::NAME);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bool_files_round_trip_on_both_devices() {
    round_trip::<bool>();
}

#[test]
fn i32_files_round_trip_on_both_devices() {
    round_trip::<i32>();
}

#[test]
fn i64_files_round_trip_on_both_devices() {
    round_trip::<i64>();
}

#[test]
fn u32_files_round_trip_on_both_devices() {
    round_trip::<u32>();
}

#[test]
fn u64_files_round_trip_on_both_devices() {
    round_trip::<u64>();
}

#[test]
fn f32_files_round_trip_on_both_devices() {
    round_trip::<f32>();
}

#[test]
fn f64_files_round_trip_on_both_devices() {
    round_trip::<f64>();
}

#[test]
fn small_int_files_round_trip_on_both_devices() {
    round_trip::<u8>();
    round_trip::<i8>();
    round_trip::<u16>();
    round_trip::<i16>();
}

#[test]
fn the_header_is_numpys_byte_for_byte() {
    // The 128 bytes numpy 2.4.6 wrote for np.save(p, np.zeros((2, 3), np.int32)), as captured.
    let mut numpy = b"\x93NUMPY\x01\x00\x76\x00{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }".to_vec();
    numpy.resize(127, b' ');
    numpy.push(b'\n');
    let dir = scratch("header");
    let out = dir.join("z.npy");
    let src =
        "fn main() -[t: cpu.thread]-> () {\n    let z = CpuHeap::new([[0; 3]; 2]);\n    save_npy(0, &shrd z);\n}\n";
    for device in ["sim", "cpu"] {
        let o = run(&dir, src, device, &[], &[&out]);
        assert!(o.status.success(), "{device}: {}", String::from_utf8_lossy(&o.stderr));
        let bytes = std::fs::read(&out).unwrap();
        assert_eq!(bytes.len(), 128 + 24, "{device}");
        assert_eq!(bytes[..128], numpy[..], "{device}: {}", String::from_utf8_lossy(&bytes[..128]));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn arguments_are_numbers_on_both_devices() {
    let dir = scratch("args");
    let src = "fn main() -[t: cpu.thread]-> () {\n    println(arg_count());\n    println(arg_u64(0));\n    println(arg_f64(1));\n    println(arg_f64(2));\n    println(arg_f64(3));\n}\n";
    for device in ["sim", "cpu"] {
        let args: Vec<PathBuf> = ["18446744073709551615", "-2.5e-3", "0.1", "-inf"].iter().map(PathBuf::from).collect();
        let refs: Vec<&Path> = args.iter().map(PathBuf::as_path).collect();
        let o = run(&dir, src, device, &[], &refs);
        assert!(o.status.success(), "{device}: {}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(String::from_utf8_lossy(&o.stdout), "4\n18446744073709551615\n-0.0025\n0.1\n-inf\n", "{device}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A program that fails with E0912: exit status 1, the code at the call's line, and `words` in
/// the message, the same message on both devices.
fn assert_error(dir: &Path, src: &str, args: &[&Path], line: usize, words: &[&str]) {
    let mut messages = Vec::new();
    for device in ["sim", "cpu"] {
        let o = run(dir, src, device, &[], args);
        let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(o.status.code(), Some(1), "{device}: {stderr}");
        let first = stderr.lines().next().unwrap_or_default().to_string();
        assert!(first.contains(&format!("prog.strata:{line}:")), "{device}: {first}");
        assert!(first.contains("error[E0912]"), "{device}: {first}");
        for w in words {
            assert!(first.contains(w), "{device}: `{w}` not in {first}");
        }
        messages.push(first.split("error[E0912]: ").nth(1).unwrap_or_default().to_string());
    }
    assert_eq!(messages[0], messages[1], "sim and cpu say different things");
}

#[test]
fn every_file_and_argument_error_is_e0912_on_both_devices() {
    let dir = scratch("errors");
    let good = dir.join("good.npy");
    write_npy(&good, &[5], &[1.0f32, 2.0, 3.0, 4.0, 5.0]);
    let file = |name: &str, bytes: &[u8]| {
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    };
    let good_bytes = std::fs::read(&good).unwrap();
    let header_with = |dict: &str, version: u8| {
        let mut h = vec![0x93, b'N', b'U', b'M', b'P', b'Y', version, 0];
        let pad = if version == 1 { 10 } else { 12 };
        let mut text = dict.to_string();
        while !(pad + text.len() + 1).is_multiple_of(64) {
            text.push(' ');
        }
        text.push('\n');
        if version == 1 {
            h.extend_from_slice(&(text.len() as u16).to_le_bytes());
        } else {
            h.extend_from_slice(&(text.len() as u32).to_le_bytes());
        }
        h.extend_from_slice(text.as_bytes());
        h
    };
    let with_data = |mut h: Vec<u8>, n: usize| {
        h.extend(std::iter::repeat_n(0u8, n));
        h
    };
    let load = "fn main() -[t: cpu.thread]-> () {\n    let x: [f32; 5] @ cpu.mem = load_npy(0);\n    println(x);\n}\n";
    let f64s = dir.join("f64.npy");
    write_npy(&f64s, &[5], &[1.0f64; 5]);
    let cases: Vec<(PathBuf, Vec<&str>)> = vec![
        (dir.join("missing.npy"), vec!["cannot read", "missing.npy", "No such file or directory"]),
        (dir.clone(), vec!["cannot read", "Is a directory"]),
        (file("text.npy", b"not an npy file at all"), vec!["text.npy", "does not start with the .npy magic string"]),
        (file("tiny.npy", b"\x93NUMPY"), vec!["tiny.npy", "header is cut short"]),
        (file("v4.npy", &with_data(header_with("{}", 4), 0)), vec!["v4.npy", "format version 4.0"]),
        (
            file("nodict.npy", &with_data(header_with("[1, 2]", 1), 20)),
            vec!["nodict.npy", "not a dictionary of `descr`, `fortran_order` and `shape`"],
        ),
        (
            file("nokey.npy", &with_data(header_with("{'descr': '<f4', 'shape': (5,), }", 1), 20)),
            vec!["nokey.npy", "not a dictionary"],
        ),
        (
            file(
                "huge.npy",
                &with_data(
                    header_with("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", 1),
                    20,
                ),
            ),
            vec!["huge.npy", "not a dictionary"],
        ),
        (f64s.clone(), vec!["f64.npy", "holds <f8 (f64) but the program reads f32"]),
        (
            file("c8.npy", &with_data(header_with("{'descr': '<c8', 'fortran_order': False, 'shape': (5,), }", 1), 40)),
            vec!["c8.npy", "holds <c8 but the program reads f32"],
        ),
        (
            file("be.npy", &with_data(header_with("{'descr': '>f4', 'fortran_order': False, 'shape': (5,), }", 1), 20)),
            vec!["be.npy", "big-endian data (>f4)"],
        ),
        (
            file(
                "fortran.npy",
                &with_data(header_with("{'descr': '<f4', 'fortran_order': True, 'shape': (5,), }", 1), 20),
            ),
            vec!["fortran.npy", "Fortran order"],
        ),
        (
            file(
                "rank.npy",
                &with_data(header_with("{'descr': '<f4', 'fortran_order': False, 'shape': (5, 1), }", 2), 20),
            ),
            vec!["rank.npy", "holds an array of shape (5, 1) but the program reads one of shape (5,)"],
        ),
        (
            file(
                "shape.npy",
                &with_data(header_with("{\"descr\": '<f4', \"shape\": (6,), \"fortran_order\": False}", 3), 24),
            ),
            vec!["shape.npy", "holds an array of shape (6,) but the program reads one of shape (5,)"],
        ),
        (
            file("short.npy", &good_bytes[..good_bytes.len() - 1]),
            vec!["short.npy", "is cut short", "needs 20 bytes of data, it has 19"],
        ),
        (
            file("long.npy", &with_data(good_bytes.clone(), 4)),
            vec!["long.npy", "is longer than its header says", "it has 24"],
        ),
    ];
    for (path, words) in &cases {
        assert_error(&dir, load, &[path], 2, words);
    }
    // Headers outside the grammar both devices share (sim's `npy::Dict`, the runtime's
    // `strata_npy_dict`), though some are Python literals numpy could read.
    for (k, dict) in [
        "{}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (5), }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': [5], }",
        "{'descr': '<f4', 'fortran_order': false, 'shape': (5,), }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (05,), }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (18446744073709551616,), }",
        "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (5,), }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (5,), 'extra': 1}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (5,),, }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (5,), } x",
        "{'descr': '<f\\x34', 'fortran_order': False, 'shape': (5,), }",
        "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (5,), }",
        "{'descr': '<f4',\n 'fortran_order': False, 'shape': (5,), }",
    ]
    .iter()
    .enumerate()
    {
        let path = file(&format!("grammar{k}.npy"), &with_data(header_with(dict, 1), 20));
        assert_error(&dir, load, &[&path], 2, &["not a dictionary of `descr`, `fortran_order` and `shape`"]);
    }
    // Values and arguments.
    let bools =
        file("bools.npy", &with_data(header_with("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", 1), 0));
    let mut b = std::fs::read(&bools).unwrap();
    b.extend_from_slice(&[1, 0, 7]);
    std::fs::write(&bools, b).unwrap();
    let src = "fn main() -[t: cpu.thread]-> () {\n    println(load_npy::<[bool; 3]>(0));\n}\n";
    assert_error(&dir, src, &[&bools], 2, &["bools.npy", "a bool that is neither 0 nor 1 (element 2)"]);
    let src = "fn main() -[t: cpu.thread]-> () {\n    println(npy_len(0));\n    println(arg_u64(1));\n}\n";
    assert_error(&dir, src, &[&good], 3, &["the program has 1 argument; argument 1 is missing"]);
    assert_error(&dir, src, &[&good, Path::new("-3")], 3, &["argument 1 is `-3`, which is not a u64"]);
    assert_error(
        &dir,
        src,
        &[&good, Path::new("18446744073709551616")],
        3,
        &["`18446744073709551616`, which is not a u64"],
    );
    let src = "fn main() -[t: cpu.thread]-> () {\n    println(arg_f64(0));\n}\n";
    assert_error(&dir, src, &[Path::new("0x10")], 2, &["argument 0 is `0x10`, which is not a number"]);
    assert_error(&dir, src, &[Path::new(" 1")], 2, &["argument 0 is ` 1`, which is not a number"]);
    assert_error(&dir, src, &[], 2, &["the program has 0 arguments; argument 0 is missing"]);
    let src = "fn main() -[t: cpu.thread]-> () {\n    println(npy_dim(0, 1));\n}\n";
    assert_error(&dir, src, &[&good], 2, &["good.npy", "has 1 dimension (shape (5,)); axis 1 does not exist"]);
    // Writing.
    let src =
        "fn main() -[t: cpu.thread]-> () {\n    let z = CpuHeap::new([1.5f32; 4]);\n    save_npy(0, &shrd z);\n}\n";
    let nowhere = dir.join("no/such/dir/out.npy");
    assert_error(&dir, src, &[&nowhere], 3, &["cannot write", "out.npy", "No such file or directory"]);
    assert_error(&dir, src, &[&dir], 3, &["cannot write", "Is a directory"]);
    if Path::new("/dev/full").exists() {
        assert_error(&dir, src, &[Path::new("/dev/full")], 3, &["cannot write `/dev/full`: No space left on device"]);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_file_of_the_wrong_type_or_rank_is_a_run_time_error_with_exit_status_1() {
    // Rendered as a diagnostic with the call's source line, on both devices.
    let dir = scratch("render");
    let x = dir.join("x.npy");
    write_npy(&x, &[2, 3], &[1i64, 2, 3, 4, 5, 6]);
    for (ty, words) in [
        ("[[i32; 3]; 2]", "holds <i8 (i64) but the program reads i32"),
        ("[i64; 6]", "holds an array of shape (2, 3) but the program reads one of shape (6,)"),
    ] {
        let src = format!(
            "fn main() -[t: cpu.thread]-> () {{\n    let v: {ty} @ cpu.mem = load_npy(0);\n    println(v);\n}}\n"
        );
        std::fs::write(dir.join("prog.strata"), &src).unwrap();
        for device in ["sim", "cpu"] {
            let o = strata()
                .args(["run", "--device", device])
                .arg(dir.join("prog.strata"))
                .arg("--")
                .arg(&x)
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "{device}: {stderr}");
            assert!(stderr.starts_with("error[E0912]: "), "{device}: {stderr}");
            assert!(stderr.contains(words) && stderr.contains("x.npy"), "{device}: {stderr}");
            assert!(stderr.contains("load_npy(0)") && stderr.contains("prog.strata:2:"), "{device}: {stderr}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn headers_of_other_writers_and_versions_are_read_on_both_devices() {
    // Any key order, double quotes, tabs, no trailing comma, a one-element tuple with a space
    // (npyz writes `(5, )`), and versions 2.0 and 3.0 (a 4-byte header length).
    let dir = scratch("versions");
    let data: Vec<u8> = [1.0f32, -2.0, 0.5].iter().flat_map(|x| x.to_le_bytes()).collect();
    let src = "fn main() -[t: cpu.thread]-> () {\n    let x: [f32; 3] @ cpu.mem = load_npy(0);\n    println(x);\n}\n";
    for (version, dict) in [
        (1u8, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"),
        (1, "{\"shape\": (3, ),\t\"descr\": \"<f4\", \"fortran_order\": False}"),
        (2, "{'fortran_order': False, 'descr': '<f4', 'shape': (3,)}"),
        (3, "{ 'descr' : '<f4' , 'fortran_order' : False , 'shape' : ( 3 , ) , }"),
    ] {
        let mut file = vec![0x93, b'N', b'U', b'M', b'P', b'Y', version, 0];
        let before = if version == 1 { 10 } else { 12 };
        let mut text = dict.to_string();
        while !(before + text.len() + 1).is_multiple_of(64) {
            text.push(' ');
        }
        text.push('\n');
        if version == 1 {
            file.extend_from_slice(&(text.len() as u16).to_le_bytes());
        } else {
            file.extend_from_slice(&(text.len() as u32).to_le_bytes());
        }
        file.extend_from_slice(text.as_bytes());
        file.extend_from_slice(&data);
        let path = dir.join("x.npy");
        std::fs::write(&path, &file).unwrap();
        for device in ["sim", "cpu"] {
            let o = run(&dir, src, device, &[], &[&path]);
            assert!(o.status.success(), "{device} {dict}: {}", String::from_utf8_lossy(&o.stderr));
            assert_eq!(String::from_utf8_lossy(&o.stdout), "[1, -2, 0.5]\n", "{device} {dict}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Whether `nvidia-smi` lists a GPU.
fn gpu_present() -> bool {
    Command::new("nvidia-smi").arg("-L").output().is_ok_and(|o| o.status.success() && !o.stdout.is_empty())
}

#[test]
fn a_cuda_executable_takes_the_program_arguments_on_its_command_line() {
    let Some(nvcc) = common::nvcc() else {
        assert!(
            std::env::var("STRATA_REQUIRE_NVCC").as_deref() != Ok("1"),
            "STRATA_REQUIRE_NVCC=1 but nvcc was not found: run scripts/setup-nvcc.sh"
        );
        eprintln!("npy: nvcc not found ($NVCC or .venv/bin/nvcc); run scripts/setup-nvcc.sh — CUDA test skipped");
        return;
    };
    let dir = scratch("cuda");
    let src = dir.join("prog.strata");
    std::fs::write(
        &src,
        "fn add<n: nat>(v: &uniq gpu.global [f32; n], x: f32) -[grid: gpu.grid<X<1>, X<n>>]-> () {
    sched(X) thread in grid.to_threads {
        v[[thread]] = v[[thread]] + x;
    }
}

fn main() -[t: cpu.thread]-> () {
    let h: [f32; 5] @ cpu.mem = load_npy(0);
    let mut d = GpuGlobal::alloc_copy(&shrd h);
    add::<<<X<1>, X<5>>>>(&uniq d, arg_f64(1) as f32);
    let mut out = CpuHeap::new([0.0f32; 5]);
    copy_mem_to_host(&shrd d, &uniq out);
    save_npy(2, &shrd out);
    println(out);
}
",
    )
    .unwrap();
    let exe = dir.join("prog");
    let built =
        strata().env("NVCC", &nvcc).args(["build", "--target", "cuda", "-o"]).arg(&exe).arg(&src).output().unwrap();
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
    // The arguments are read (and refused) before any CUDA call, with or without a GPU.
    let missing = dir.join("missing.npy");
    let o = Command::new(&exe).arg(&missing).arg("1").arg("out.npy").output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    let want = format!(":8:33: error[E0912]: cannot read `{}`: No such file or directory", missing.display());
    assert!(stderr.starts_with(&src.display().to_string()) && stderr.contains(&want), "{stderr}");
    let o = Command::new(&exe).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("the program has 0 arguments; argument 0 is missing"));
    if !gpu_present() {
        eprintln!("npy: no GPU (nvidia-smi -L) — the CUDA run itself skipped");
        let _ = std::fs::remove_dir_all(&dir);
        return;
    }
    // On a GPU: the same file as the sim device writes.
    let x = dir.join("x.npy");
    write_npy(&x, &[5], &[1.5f32, -2.0, 0.25, 1e30, 3.0]);
    let (cuda_out, sim_out) = (dir.join("cuda.npy"), dir.join("sim.npy"));
    let o = Command::new(&exe).arg(&x).arg("0.5").arg(&cuda_out).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s = strata()
        .args(["run", "--device", "sim"])
        .arg(&src)
        .arg("--")
        .arg(&x)
        .arg("0.5")
        .arg(&sim_out)
        .output()
        .unwrap();
    assert!(s.status.success(), "{}", String::from_utf8_lossy(&s.stderr));
    assert_eq!(o.stdout, s.stdout);
    assert_eq!(std::fs::read(&cuda_out).unwrap(), std::fs::read(&sim_out).unwrap());
    let (_, y) = read_npy::<f32>(&cuda_out);
    assert_eq!(y, vec![2.0, -1.5, 0.75, 1e30, 3.5]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bench_passes_the_program_arguments_on_both_devices() {
    let dir = scratch("bench");
    let x = dir.join("x.npy");
    write_npy(&x, &[4], &[1u32, 2, 3, 4]);
    let src = dir.join("prog.strata");
    std::fs::write(
        &src,
        "fn inc(v: &uniq gpu.global [u32; 4]) -[grid: gpu.grid<X<1>, X<4>>]-> () {
    sched(X) thread in grid.to_threads {
        v[[thread]] = v[[thread]] + 1u32;
    }
}

fn main() -[t: cpu.thread]-> () {
    let h: [u32; 4] @ cpu.mem = load_npy(0);
    let mut d = GpuGlobal::alloc_copy(&shrd h);
    inc::<<<X<1>, X<4>>>>(&uniq d);
}
",
    )
    .unwrap();
    for device in ["sim", "cpu"] {
        let o =
            strata().args(["bench", "--runs", "1", "--device", device]).arg(&src).arg("--").arg(&x).output().unwrap();
        assert!(o.status.success(), "{device}: {}", String::from_utf8_lossy(&o.stderr));
        assert!(String::from_utf8_lossy(&o.stdout).contains(" inc "), "{device}");
        let o = strata().args(["bench", "--runs", "1", "--device", device]).arg(&src).output().unwrap();
        assert_eq!(o.status.code(), Some(1), "{device}");
        assert!(String::from_utf8_lossy(&o.stderr).contains("E0912"), "{device}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
