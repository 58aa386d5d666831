//! The `.npy` examples of issue 13 (`examples/npy/`: saxpy, the 3-point stencil, the block
//! reduction) on inputs of many lengths — 0, 1, 2, 3, lengths around the block size 256 and
//! lengths that are not multiples of it — written here with `npyz`. Each example runs on `sim`
//! and `cpu`; the two output files must be byte for byte the same, and equal to the same
//! computation done here in Rust (an independent reference: plain loops, no views, no blocks).
//! One executable serves every length on `cpu`: the cache holds a single program afterwards.

use npyz::WriterBuilder;
use std::path::{Path, PathBuf};
use std::process::Command;

const LENGTHS: [usize; 10] = [0, 1, 2, 3, 255, 256, 257, 1000, 1023, 4099];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("strata-npy-examples-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write_npy<T: npyz::AutoSerialize + Copy>(path: &Path, data: &[T]) {
    let mut out = Vec::new();
    {
        let shape = [data.len() as u64];
        let mut w = npyz::WriteOptions::<T>::new().default_dtype().shape(&shape).writer(&mut out).begin_nd().unwrap();
        w.extend(data.iter().copied()).unwrap();
        w.finish().unwrap();
    }
    std::fs::write(path, out).unwrap();
}

fn read_npy<T: npyz::Deserialize>(path: &Path) -> Vec<T> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    npyz::NpyFile::new(&bytes[..]).unwrap().into_vec().unwrap()
}

/// Runs `example` on `device` with the program arguments `args`; returns its standard output.
fn run(example: &str, device: &str, cache: &Path, args: &[String]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_strata"))
        .current_dir(root())
        .env("STRATA_CACHE_DIR", cache)
        .args(["run", "--device", device, &format!("examples/npy/{example}.strata"), "--"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{example} on {device} with {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Runs `example` on both devices, writing output `out_name` (`{device}` is replaced), and checks
/// that the two outputs are the same bytes; returns the output path of `cpu` and the stdout.
fn both_devices(example: &str, dir: &Path, cache: &Path, args: impl Fn(&Path) -> Vec<String>) -> (PathBuf, String) {
    let mut outs = Vec::new();
    let mut printed = Vec::new();
    for device in ["sim", "cpu"] {
        let out = dir.join(format!("out-{device}.npy"));
        printed.push(run(example, device, cache, &args(&out)));
        outs.push(out);
    }
    assert_eq!(printed[0], printed[1], "{example}: sim and cpu print differently");
    assert_eq!(
        std::fs::read(&outs[0]).unwrap(),
        std::fs::read(&outs[1]).unwrap(),
        "{example}: sim and cpu files differ"
    );
    (outs.pop().unwrap(), printed.pop().unwrap())
}

fn data_f32(n: usize, seed: u32) -> Vec<f32> {
    (0..n).map(|i| ((i as u32).wrapping_mul(2654435761).wrapping_add(seed) % 1000) as f32 / 8.0 - 60.0).collect()
}

fn executables(cache: &Path) -> usize {
    std::fs::read_dir(cache)
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    name.starts_with("prog-") && !name.contains('.')
                })
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn saxpy_matches_a_rust_reference_at_every_length() {
    let dir = scratch("saxpy");
    let cache = dir.join("cache");
    for n in LENGTHS {
        let (x, y) = (data_f32(n, 1), data_f32(n, 7));
        let (xp, yp) = (dir.join("x.npy"), dir.join("y.npy"));
        write_npy(&xp, &x);
        write_npy(&yp, &y);
        let (out, printed) = both_devices("saxpy", &dir, &cache, |out| {
            vec!["2.5".into(), xp.display().to_string(), yp.display().to_string(), out.display().to_string()]
        });
        assert_eq!(printed, format!("{n}\n"));
        let expected: Vec<f32> = x.iter().zip(&y).map(|(x, y)| 2.5f32 * x + y).collect();
        assert_eq!(read_npy::<f32>(&out), expected, "saxpy, n = {n}");
    }
    assert_eq!(executables(&cache), 1, "one compiled program serves every length");
}

#[test]
fn stencil_matches_a_rust_reference_at_every_length() {
    let dir = scratch("stencil");
    let cache = dir.join("cache");
    for n in LENGTHS {
        let x = data_f32(n, 3);
        let xp = dir.join("x.npy");
        write_npy(&xp, &x);
        let (out, printed) =
            both_devices("stencil", &dir, &cache, |out| vec![xp.display().to_string(), out.display().to_string()]);
        assert_eq!(printed, format!("{n}\n"));
        let expected: Vec<f32> =
            (0..n).map(|i| if i == 0 || i + 1 == n { x[i] } else { (x[i - 1] + x[i] + x[i + 1]) / 3.0 }).collect();
        assert_eq!(read_npy::<f32>(&out), expected, "stencil, n = {n}");
    }
    assert_eq!(executables(&cache), 1, "one compiled program serves every length");
}

#[test]
fn block_reduction_matches_a_rust_reference_at_every_length() {
    let dir = scratch("reduction");
    let cache = dir.join("cache");
    for n in LENGTHS {
        let x: Vec<i32> = (0..n as i32).map(|i| (i * 37 % 201) - 100).collect();
        let xp = dir.join("x.npy");
        write_npy(&xp, &x);
        let (out, printed) = both_devices("block_reduction", &dir, &cache, |out| {
            vec![xp.display().to_string(), out.display().to_string()]
        });
        let sums: Vec<i32> = x.chunks(256).map(|c| c.iter().sum()).collect();
        assert_eq!(read_npy::<i32>(&out), sums, "block sums, n = {n}");
        assert_eq!(printed, format!("{}\n", x.iter().sum::<i32>()));
    }
    assert_eq!(executables(&cache), 1, "one compiled program serves every length");
}

/// An input that is not a regular file (a pipe, a device such as `/dev/null`) is refused with the
/// same E0912 message on both devices: `.npy` inputs are read more than once (`npy_len`, then
/// `load_npy`).
#[test]
fn an_input_that_is_not_a_regular_file_is_refused_alike_on_both_devices() {
    let dir = scratch("not-regular");
    let mut messages = Vec::new();
    for device in ["sim", "cpu"] {
        let out = Command::new(env!("CARGO_BIN_EXE_strata"))
            .current_dir(root())
            .env("STRATA_CACHE_DIR", dir.join("cache"))
            .args(["run", "--format", "short", "--device", device, "examples/npy/stencil.strata", "--", "/dev/null"])
            .arg(dir.join("out.npy"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(err.contains("error[E0912]: cannot read `/dev/null`: not a regular file"), "{device}: {err}");
        messages.push(err);
    }
    assert_eq!(messages[0], messages[1]);
}
