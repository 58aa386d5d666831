#!/usr/bin/env bash
# Regenerates crates/strata-emit/src/reserved_{globals,macros}.txt: every name the headers of the emitted programs
# declare at global scope (functions, variables, types, enumerators) or define as macros, for C
# (gcc, the cpu device) and CUDA C++ (nvcc, the cuda target). The emitter renames a Strata function
# with one of these names (see src/names.rs). Needs gcc, python3 and nvcc (scripts/setup-nvcc.sh).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NVCC=${NVCC:-$HERE/../../../.venv/bin/nvcc}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
HEADERS='#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>
#include <stdarg.h>'
printf '%s\n' "$HEADERS" >"$WORK/h.c"
printf '#include <cuda_runtime.h>\n%s\nint main(void) { return 0; }\n' "$HEADERS" >"$WORK/h.cu"
# Names declared at global scope (a Strata function must not redeclare them).
{
    gcc -std=gnu11 -E "$WORK/h.c" | python3 "$HERE/global_names.py"
    "$NVCC" -E -x cu "$WORK/h.cu" | python3 "$HERE/global_names.py"
} | grep -E '^[A-Za-z][A-Za-z0-9_]*$' | LC_ALL=C sort -u >"$HERE/../src/reserved_globals.txt"
# Macros (no name in the emitted code may be one).
{
    gcc -std=gnu11 -dM -E "$WORK/h.c"
    "$NVCC" -E -x cu -Xcompiler -dM "$WORK/h.cu"
} | awk '{ sub(/\(.*/, "", $2); print $2 }' | grep -E '^[A-Za-z][A-Za-z0-9_]*$' | LC_ALL=C sort -u \
    >"$HERE/../src/reserved_macros.txt"
wc -l "$HERE/../src/reserved_globals.txt" "$HERE/../src/reserved_macros.txt"
