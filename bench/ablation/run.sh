#!/usr/bin/env bash
# Ablation of the cpu device's emitted C (see docs/benchmarks.md): for each bench program, emit
# its C, apply the hand edits of xform.py cumulatively (A, AB, ABC, ...), compile each variant
# like the cpu device does and report the median kernel time over RUNS processes.
#   bench/ablation/run.sh [kernel...]      RUNS=3 by default
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
RUNS=${RUNS:-3}
STRATA="$ROOT/target/release/strata"
[[ -x "$STRATA" ]] || cargo build --release -q -p strata-cli
OUT="$ROOT/target/bench-ablation"
mkdir -p "$OUT"
declare -A DIMS=([stream_copy]="256 1 1" [transpose]="32 8 1" [reduce]="256 1 1" [scan]="256 1 1"
                 [histogram]="256 1 1" [matmul_ikj]="64 1 1")
KERNELS=("$@")
[[ ${#KERNELS[@]} -gt 0 ]] || KERNELS=(stream_copy transpose reduce scan histogram)
VARIANTS=(base A AB ABC ABCD ABCDE ABCDEF ABCDEFG)
printf '| kernel |'; for v in "${VARIANTS[@]}"; do printf ' %s |' "$v"; done; echo
printf '|---|'; for v in "${VARIANTS[@]}"; do printf -- '---:|'; done; echo
for k in "${KERNELS[@]}"; do
  "$STRATA" emit --target c "bench/$k.strata" >"$OUT/$k.base.c"
  printf '| %s |' "$k"
  for v in "${VARIANTS[@]}"; do
    [[ $v == base ]] || python3 bench/ablation/xform.py "$OUT/$k.base.c" "$OUT/$k.$v.c" "$v" ${DIMS[$k]}
    cc -O3 -march=native -fopenmp -w -o "$OUT/$k.$v" "$OUT/$k.$v.c" -lm
    : >"$OUT/$k.$v.log"
    for ((r = 0; r < RUNS; r++)); do
      STRATA_TIME=1 "$OUT/$k.$v" 2>>"$OUT/$k.$v.log" | grep -q ok || { echo "variant $v of $k failed" >&2; exit 1; }
    done
    t=$(awk '/^STRATA-TIME/ {print $3}' "$OUT/$k.$v.log" | sort -g | awk '{a[NR] = $1} END { print a[int((NR + 1) / 2)] }')
    printf ' %.1f |' "$(awk -v t="$t" 'BEGIN { print t * 1e3 }')"
  done
  echo
done
echo "(median kernel time in ms over $RUNS processes; each column adds one edit)"
