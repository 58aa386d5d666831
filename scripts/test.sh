#!/usr/bin/env bash
# The project's test command (see README.md; .ci/run calls exactly this).
# Runs, in order and stopping at the first failure:
#   1. cargo fmt --all -- --check                        (formatting)
#   2. cargo clippy --workspace --all-targets -- -D warnings   (lints, warnings are errors)
#   3. scripts/setup-nvcc.sh                             (NVIDIA's nvcc from PyPI into .venv; idempotent)
#   4. scripts/setup-python.sh                          (NumPy into .venv for examples/python; idempotent)
#   5. cargo test --workspace --profile ci               (unit, corpus and doc tests, optimised with
#      overflow checks and debug assertions on: see [profile.ci] in Cargo.toml; with
#      STRATA_REQUIRE_NVCC=1 the cuda_compile test must find nvcc and compile every program's CUDA,
#      with STRATA_REQUIRE_NUMPY=1 the python_ctypes test must find NumPy)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

step() {
    printf '\n==> %s\n' "$*"
}

step "cargo fmt --all -- --check"
cargo fmt --all -- --check

step "cargo clippy --workspace --all-targets -- -D warnings"
cargo clippy --workspace --all-targets -- -D warnings

step "scripts/setup-nvcc.sh"
NVCC=$(scripts/setup-nvcc.sh | tail -1)
export NVCC STRATA_REQUIRE_NVCC=1

step "scripts/setup-python.sh"
STRATA_PYTHON=$(scripts/setup-python.sh | tail -1)
export STRATA_PYTHON STRATA_REQUIRE_NUMPY=1

step "cargo test --workspace --profile ci"
cargo test --workspace --profile ci

printf '\n==> all checks passed\n'
