#!/usr/bin/env bash
# Installs NumPy into the project's virtual environment `.venv` (created if missing, as
# scripts/setup-nvcc.sh does), for examples/python/ and its test (crates/strata-cli/tests/python_ctypes.rs).
# Idempotent and quick: when .venv's Python already imports NumPy it only checks. Prints the path
# of that Python on its last line.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV="$ROOT/.venv"
PY="$VENV/bin/python3"
if [[ -x "$PY" ]] && "$PY" -c "import numpy" >/dev/null 2>&1; then
    echo "$PY"
    exit 0
fi
BASE=${PYTHON:-python3}
if ! "$BASE" -m venv --help >/dev/null 2>&1; then
    echo "setup-python: '$BASE -m venv' is unavailable; install python3-venv (apt-get install python3-venv)" >&2
    exit 1
fi
[[ -x "$VENV/bin/pip" ]] || "$BASE" -m venv "$VENV" >&2
"$VENV/bin/pip" install --quiet --disable-pip-version-check "numpy>=1.22" >&2
"$PY" -c "import numpy; print('setup-python: numpy', numpy.__version__)" >&2
echo "$PY"
