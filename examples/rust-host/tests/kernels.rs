//! The kernels of `examples/lib/saxpy.strata`, run on the cpu device from Rust, against plain
//! Rust; and the errors a mis-sized call gets instead of undefined behaviour.

use strata_host::Error;
use strata_rust_host::saxpy;

#[test]
fn saxpy_matches_rust() {
    // One block, a few, and 256 blocks (run on all cores: build.rs asks for OpenMP).
    for n in [256, 1024, 65536] {
        let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
        let mut y: Vec<f32> = (0..n).map(|i| (n - i) as f32).collect();
        let want: Vec<f32> = x.iter().zip(&y).map(|(x, y)| 2.5 * x + y).collect();
        saxpy::saxpy(2.5, &x, &mut y).unwrap();
        assert_eq!(y, want, "n = {n}");
    }
}

#[test]
fn array_sum_matches_rust() {
    let input: Vec<i32> = (0..8 * 256).map(|i| (i * 7919) % 1000 - 500).collect();
    let mut sums = vec![0; 8];
    saxpy::block_sums(&input, &mut sums).unwrap();
    let want: Vec<i32> = input.chunks(256).map(|c| c.iter().sum()).collect();
    assert_eq!(sums, want);
    assert_eq!(strata_rust_host::sum(&input).unwrap(), input.iter().sum::<i32>());
}

#[test]
fn transpose_matches_rust() {
    let n = 64;
    let input: Vec<f64> = (0..n * n).map(|i| i as f64).collect();
    let mut output = vec![0.0; n * n];
    saxpy::transpose(&input, &mut output).unwrap();
    for i in 0..n {
        for j in 0..n {
            assert_eq!(output[i * n + j], input[j * n + i], "at ({i}, {j})");
        }
    }
}

#[test]
fn empty_arrays_run_nothing() {
    saxpy::saxpy(1.0, &[], &mut []).unwrap();
    saxpy::block_sums(&[], &mut []).unwrap();
    saxpy::transpose(&[], &mut []).unwrap();
}

#[test]
fn mis_sized_slices_are_errors() {
    let x = vec![1.0f32; 512];
    let mut y = vec![0.0f32; 256];
    let e = saxpy::saxpy(1.0, &x, &mut y).unwrap_err();
    assert!(
        matches!(e, Error::Length { kernel: "saxpy", param: "y", expected_len: Some(512), actual: 256, .. }),
        "{e:?}"
    );
    assert_eq!(e.to_string(), "kernel `saxpy`: `y` has 256 elements, but the kernel's signature needs n = 512");
    assert_eq!(y, vec![0.0; 256], "nothing ran");

    // `block_sums` takes `nb * 256` inputs: 300 is no multiple of 256.
    let e = saxpy::block_sums(&[0; 300], &mut [0; 1]).unwrap_err();
    assert!(matches!(e, Error::Size { size: "nb", param: "input", actual: 300, .. }), "{e:?}");
    // 512 inputs are 2 blocks: 3 sums are one too many.
    let e = saxpy::block_sums(&[0; 512], &mut [0; 3]).unwrap_err();
    assert!(matches!(e, Error::Length { param: "sums", expected_len: Some(2), actual: 3, .. }), "{e:?}");

    // `transpose` takes an n x n matrix: 10 elements are no square.
    let e = saxpy::transpose(&[0.0; 10], &mut [0.0; 10]).unwrap_err();
    assert!(matches!(e, Error::Size { kernel: "transpose", size: "n", .. }), "{e:?}");
    let e = saxpy::transpose(&[0.0; 32 * 32], &mut [0.0; 64 * 64]).unwrap_err();
    assert!(matches!(e, Error::Length { param: "output", expected_len: Some(1024), .. }), "{e:?}");
}

#[test]
fn violated_where_clauses_are_errors() {
    // saxpy requires `n % 256 == 0`.
    let x = vec![1.0f32; 1000];
    let mut y = vec![0.0f32; 1000];
    let e = saxpy::saxpy(1.0, &x, &mut y).unwrap_err();
    assert_eq!(e, Error::Requirement { kernel: "saxpy", clause: "n % 256 == 0", sizes: "n = 1000".to_string() });
    assert_eq!(e.to_string(), "kernel `saxpy`: its requirement `where n % 256 == 0` does not hold for n = 1000");
    assert!(y.iter().all(|&v| v == 0.0), "nothing ran");
    // transpose requires `n % 32 == 0`: a 40 x 40 matrix is refused.
    let e = saxpy::transpose(&[0.0; 1600], &mut [0.0; 1600]).unwrap_err();
    assert!(matches!(e, Error::Requirement { clause: "n % 32 == 0", .. }), "{e:?}");
}

#[test]
fn sizes_derived_from_two_slices() {
    use strata_rust_host::array_sum;
    // `sum<nb, nt>`: `output` gives nb = 4, then `input` (nb * nt) gives nt = 64.
    let input: Vec<i32> = (0..4 * 64).map(|i| i % 13).collect();
    let mut output = vec![0; 4];
    array_sum::sum(&input, &mut output).unwrap();
    let want: Vec<i32> = input.chunks(64).map(|c| c.iter().sum()).collect();
    assert_eq!(output, want);
    // 250 inputs are no multiple of 4 blocks.
    let e = array_sum::sum(&input[..250], &mut output).unwrap_err();
    assert!(matches!(e, Error::Size { size: "nt", param: "input", actual: 250, .. }), "{e:?}");
    // `where nt >= 1`: no inputs for 4 blocks is nt = 0.
    let e = array_sum::sum(&[], &mut output).unwrap_err();
    assert!(matches!(e, Error::Requirement { clause: "nt >= 1", .. }), "{e:?}");
    assert_eq!(e.to_string(), "kernel `sum`: its requirement `where nt >= 1` does not hold for nb = 4, nt = 0");
}

#[test]
fn explicit_size_argument() {
    use strata_rust_host::obsidian_red_large::red;
    // `red<nb, lnt, seq>` sums blocks of 2^lnt * seq elements with 2^lnt threads each; `lnt` is
    // passed, `nb` comes from `output` and `seq` from `input`.
    let (nb, lnt, seq) = (3, 4, 5);
    let input: Vec<u32> = (0..nb * (1 << lnt) * seq).map(|i| (i % 7) as u32).collect();
    let mut output = vec![0; nb];
    red(lnt as u64, &input, &mut output).unwrap();
    let want: Vec<u32> = input.chunks((1 << lnt) * seq).map(|c| c.iter().sum()).collect();
    assert_eq!(output, want);
    // `where lnt >= 1`.
    let e = red(0, &input, &mut output).unwrap_err();
    assert!(matches!(e, Error::Requirement { kernel: "red", clause: "lnt >= 1", .. }), "{e:?}");
    // 2^lnt overflows 64 bits: refused, not wrapped.
    let e = red(64, &input, &mut output).unwrap_err();
    assert!(matches!(e, Error::Size { size: "seq", .. } | Error::Length { expected_len: None, .. }), "{e:?}");
}

#[test]
fn a_scalar_reference_is_a_rust_reference() {
    use strata_rust_host::offset::offset;
    let by = 1.5f32;
    let mut x: Vec<f32> = (0..128).map(|i| i as f32).collect();
    offset(&by, &mut x).unwrap();
    assert!(x.iter().enumerate().all(|(i, &v)| v == i as f32 + 1.5));
    let e = offset(&by, &mut x[..100]).unwrap_err();
    assert!(matches!(e, Error::Requirement { clause: "n % 64 == 0", .. }), "{e:?}");
}
