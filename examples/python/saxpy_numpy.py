#!/usr/bin/env python3
"""Strata kernels called from Python with NumPy arrays, through ctypes (docs/libraries.md).

Builds the kernel library examples/lib/saxpy.strata for the cpu device (`strata emit --target c`,
then the system C compiler into a shared library), loads it with ctypes, runs its three kernels
on NumPy arrays and checks every result against NumPy. Prints `ok` and exits with 0 when all
agree.

    python3 examples/python/saxpy_numpy.py            # `strata` from $STRATA, target/release or the PATH

The wrappers below keep the library's contract (docs/libraries.md, "The contract"): each array
has the kernel's element type, is C-contiguous and has exactly the length the kernel's signature
states, and an output is writable and overlaps no input. Those are checked here in Python, before
the call; the `where` clauses of the kernels are checked by the launch functions themselves,
which return EINVAL (and run nothing) when one fails.
"""

import ctypes
import errno
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = ROOT / "examples" / "lib" / "saxpy.strata"


def strata_command():
    if os.environ.get("STRATA"):
        return os.environ["STRATA"]
    built = ROOT / "target" / "release" / "strata"
    if built.exists():
        return str(built)
    found = shutil.which("strata")
    if found is None:
        sys.exit("saxpy_numpy: no `strata`: build it (cargo build --release -p strata-cli) or set STRATA")
    return found


def build_library(workdir):
    """`strata emit --target c` and the C compiler: the path of the shared library."""
    source, header, shared = workdir / "saxpy.c", workdir / "saxpy.h", workdir / "libsaxpy.so"
    subprocess.run(
        [strata_command(), "emit", "--target", "c", "-o", str(source), "--header", str(header), str(LIBRARY)],
        check=True,
    )
    cc = os.environ.get("CC", "cc")
    # The flags of docs/libraries.md (results as `strata run` gives them), and -fPIC -shared for
    # ctypes. OpenMP runs a launch's blocks on all cores; without it they run on the calling thread.
    flags = ["-O2", "-fwrapv", "-ffp-contract=off", "-fPIC", "-shared"]
    for openmp in (["-fopenmp"], []):
        done = subprocess.run([cc, *flags, *openmp, str(source), "-o", str(shared), "-lm"], capture_output=True)
        if done.returncode == 0:
            return shared
    sys.exit("saxpy_numpy: the C compiler failed:\n" + done.stderr.decode(errors="replace"))


class Saxpy:
    """The launch functions of saxpy.strata, with their contracts checked on NumPy arrays."""

    def __init__(self, path):
        lib = ctypes.CDLL(str(path))
        u64, f32, f32p, i32p, f64p = (
            ctypes.c_uint64,
            ctypes.c_float,
            ctypes.POINTER(ctypes.c_float),
            ctypes.POINTER(ctypes.c_int32),
            ctypes.POINTER(ctypes.c_double),
        )
        # int saxpy_launch(uint64_t n, float a, const float *x, float *y);
        lib.saxpy_launch.argtypes = [u64, f32, f32p, f32p]
        # int block_sums_launch(uint64_t nb, const int32_t *input, int32_t *sums);
        lib.block_sums_launch.argtypes = [u64, i32p, i32p]
        # int transpose_launch(uint64_t n, const double *input, double *output);
        lib.transpose_launch.argtypes = [u64, f64p, f64p]
        for f in (lib.saxpy_launch, lib.block_sums_launch, lib.transpose_launch):
            f.restype = ctypes.c_int
        self.lib = lib

    @staticmethod
    def pointer(array, dtype, shape, ctype, written=False):
        if not isinstance(array, np.ndarray) or array.dtype != dtype or array.shape != shape:
            got = getattr(array, "dtype", type(array).__name__), getattr(array, "shape", None)
            raise ValueError(f"expected a {np.dtype(dtype)} array of shape {shape}, got {got}")
        if not array.flags.c_contiguous or (written and not array.flags.writeable):
            raise ValueError("arrays must be C-contiguous (and writable when the kernel writes them)")
        return array.ctypes.data_as(ctypes.POINTER(ctype))

    @staticmethod
    def check(status, kernel):
        if status != 0:
            raise ValueError(f"{kernel}: the launch refused its sizes ({errno.errorcode.get(status, status)})")

    def saxpy(self, a, x, y):
        """y = a * x + y (in place); len(x) == len(y), a multiple of 256."""
        n = len(x)
        if np.shares_memory(x, y):
            raise ValueError("saxpy: `y` is written and must not overlap `x`")
        px = self.pointer(x, np.float32, (n,), ctypes.c_float)
        py = self.pointer(y, np.float32, (n,), ctypes.c_float, written=True)
        self.check(self.lib.saxpy_launch(n, a, px, py), "saxpy")

    def block_sums(self, values):
        """The sum of each block of 256 int32 values."""
        nb = len(values) // 256
        sums = np.zeros(nb, dtype=np.int32)
        pin = self.pointer(values, np.int32, (nb * 256,), ctypes.c_int32)
        self.check(self.lib.block_sums_launch(nb, pin, self.pointer(sums, np.int32, (nb,), ctypes.c_int32, True)),
                   "block_sums")
        return sums

    def transpose(self, matrix):
        """The transpose of an n x n float64 matrix, n a multiple of 32."""
        n = matrix.shape[0]
        out = np.empty((n, n), dtype=np.float64)
        pin = self.pointer(matrix, np.float64, (n, n), ctypes.c_double)
        self.check(self.lib.transpose_launch(n, pin, self.pointer(out, np.float64, (n, n), ctypes.c_double, True)),
                   "transpose")
        return out


def main():
    rng = np.random.default_rng(2026)
    with tempfile.TemporaryDirectory(prefix="strata-python-") as tmp:
        k = Saxpy(build_library(Path(tmp)))

        # saxpy on float32: with -ffp-contract=off the C rounds a * x, then the sum, as NumPy does.
        n = 1 << 16
        a = np.float32(2.5)
        x = rng.standard_normal(n, dtype=np.float32)
        y = rng.standard_normal(n, dtype=np.float32)
        expected = a * x + y
        k.saxpy(a, x, y)
        assert np.array_equal(y, expected), "saxpy differs from NumPy"
        print(f"saxpy: {n} elements equal to NumPy's a * x + y")

        # A shared-memory reduction per block of 256 (int32, wrapping as NumPy's int32 sum does).
        values = rng.integers(-1000, 1000, size=64 * 256, dtype=np.int32)
        sums = k.block_sums(values)
        assert np.array_equal(sums, values.reshape(64, 256).sum(axis=1, dtype=np.int32)), "block_sums differs"
        print(f"block_sums: {len(sums)} block sums equal to NumPy's")

        # A tiled transpose through shared memory (float64, n x n).
        m = rng.standard_normal((256, 256))
        assert np.array_equal(k.transpose(m), m.T), "transpose differs from NumPy"
        print("transpose: 256 x 256 equal to NumPy's m.T")

        # What the contract refuses: a `where` clause (n % 256 == 0) checked by the launch function
        # (EINVAL, y untouched), and a mis-typed or mis-sized array checked by the wrapper.
        x_odd = np.ones(1000, dtype=np.float32)
        y_odd = np.zeros(1000, dtype=np.float32)
        refused = []
        for bad in (lambda: k.saxpy(a, x_odd, y_odd),
                    lambda: k.saxpy(a, x.astype(np.float64), y),
                    lambda: k.saxpy(a, x[: n // 2], y),
                    lambda: k.saxpy(a, y, y)):
            try:
                bad()
            except ValueError as e:
                refused.append(str(e))
        assert len(refused) == 4 and "EINVAL" in refused[0], refused
        assert not y_odd.any(), "a refused launch ran nothing"
        print("refused: " + "; ".join(refused))
    print("ok")


if __name__ == "__main__":
    main()
