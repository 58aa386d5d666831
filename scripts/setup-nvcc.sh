#!/usr/bin/env bash
# Installs NVIDIA's CUDA compiler (nvcc, ptxas, the runtime and CCCL headers) from PyPI into the
# project's virtual environment `.venv`, without a GPU. Idempotent: a second run only checks.
# Prints the path of nvcc on its last line. Used by scripts/test.sh (the `cuda_compile` test) and
# by `strata build --target cuda`, which look for nvcc at .venv/bin/nvcc.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV="$ROOT/.venv"
NVCC="$VENV/bin/nvcc"
if [[ -x "$NVCC" ]] && "$NVCC" --version >/dev/null 2>&1; then
    echo "$NVCC"
    exit 0
fi
PY=${PYTHON:-python3}
if ! "$PY" -m venv --help >/dev/null 2>&1; then
    echo "setup-nvcc: '$PY -m venv' is unavailable; install python3-venv (apt-get install python3-venv)" >&2
    exit 1
fi
[[ -x "$VENV/bin/pip" ]] || "$PY" -m venv "$VENV" >&2
"$VENV/bin/pip" install --quiet --disable-pip-version-check \
    "nvidia-cuda-nvcc==13.*" "nvidia-cuda-runtime==13.*" "nvidia-cuda-cccl==13.*" >&2
# The wheels put the toolkit under site-packages/nvidia/cu13; nvcc finds its headers and
# libraries relative to itself, so a wrapper in .venv/bin points at the real binary.
CU=$(ls -d "$VENV"/lib/python3*/site-packages/nvidia/cu13 | head -1)
if [[ ! -x "$CU/bin/nvcc" ]]; then
    echo "setup-nvcc: the nvidia-cuda-nvcc wheel did not provide $CU/bin/nvcc" >&2
    exit 1
fi
cat >"$NVCC" <<WRAP
#!/usr/bin/env bash
# nvcc from the PyPI wheels (written by scripts/setup-nvcc.sh).
export PATH="$CU/bin:\$PATH"
exec "$CU/bin/nvcc" -I"$CU/include" -L"$CU/lib" "\$@"
WRAP
chmod +x "$NVCC"
ln -sf "$CU/bin/ptxas" "$VENV/bin/ptxas"
"$NVCC" --version >&2
echo "$NVCC"
