#!/usr/bin/env bash
# Checks that the tools Strata needs are installed. Safe to run any number of times: it only
# inspects the machine and changes nothing.
#
# Needed today:
#   cargo  - builds the compiler (Rust 1.80 or newer, see Cargo.toml)
#   cc     - the system C compiler; the cpu device compiles the generated C with it
#   python3 (with venv) - scripts/setup-nvcc.sh installs NVIDIA's nvcc from PyPI into .venv,
#                         scripts/setup-python.sh NumPy (for examples/python)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

missing=0

need() {
    local tool="$1" hint="$2"
    if command -v "$tool" >/dev/null 2>&1; then
        printf '%-6s %s\n' "$tool" "$("$tool" --version 2>&1 | head -n 1)"
    else
        printf '%-6s MISSING: %s\n' "$tool" "$hint" >&2
        missing=1
    fi
}

need cargo "install Rust from https://rustup.rs"
need cc "install a C compiler (e.g. gcc or clang) and make it available as \`cc\`"

need python3 "install Python 3 with the venv module (e.g. apt-get install python3-venv)"
# nvcc and NumPy are installed by scripts/setup-nvcc.sh and scripts/setup-python.sh (the test
# command runs both), not here.

if [ "$missing" -ne 0 ]; then
    echo "setup: some required tools are missing (see above)" >&2
    exit 1
fi
echo "setup: ok"
