#!/usr/bin/env bash
# Threads as SIMD lanes on the cpu device (issue 27): every program whose emitted C interchanges
# a loop with its thread loop, run with the lanes (default) and without (`STRATA_LANES=0`, the
# emitter before issue 27), alternating, RUNS times each, and its hand-written C baseline where
# there is one. Prints the median per-launch time of each and the ratios.
#
#   bench/lanes.sh              RUNS=3
#   RUNS=5 bench/lanes.sh
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
RUNS=${RUNS:-3}
CFLAGS="-O3 -march=native -fwrapv -ffp-contract=off -fopenmp"
OUT="$ROOT/target/bench-lanes"
mkdir -p "$OUT"
rm -f "$OUT"/*.log
cargo build --release -q -p strata-cli
STRATA="$ROOT/target/release/strata"

# program | kernel label | defines | C baseline (bench/baseline/*.c, or -)
PROGRAMS=(
  "bench/matmul_element.strata|matmul|N=1024 REPS=2|matmul_element"
  "examples/obsidian_red5.strata|red5|NB=16384|-"
  "examples/obsidian_red6.strata|red6|NB=16384|-"
  "examples/obsidian_red7.strata|red7|NB=16384|-"
  "examples/sgemm_coalesced.strata|sgemm|N=1024|-"
)
median() { sort -g | awk '{a[NR] = $1} END { if (NR == 0) print "nan"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

echo "| program | lanes (ms) | no lanes (ms) | C (ms) | lanes / no lanes | lanes / C |"
echo "|---|---:|---:|---:|---:|---:|"
for spec in "${PROGRAMS[@]}"; do
  IFS='|' read -r prog label defs base <<<"$spec"
  name=$(basename "$prog" .strata)
  sargs=() cargs=()
  if [[ "$defs" != - ]]; then for d in $defs; do sargs+=(-D "$d"); cargs+=("-D$d"); done; fi
  if [[ "$base" != - ]]; then cc $CFLAGS "${cargs[@]}" -o "$OUT/$base" "bench/baseline/$base.c" -lm; fi
  for ((r = 0; r < RUNS; r++)); do
    STRATA_TIME=1 "$STRATA" run "${sargs[@]}" "$prog" >/dev/null 2>>"$OUT/$name.lanes.log"
    STRATA_LANES=0 STRATA_TIME=1 "$STRATA" run "${sargs[@]}" "$prog" >/dev/null 2>>"$OUT/$name.off.log"
    if [[ "$base" != - ]]; then "$OUT/$base" >/dev/null 2>>"$OUT/$name.c.log"; fi
  done
  l=$(grep "^STRATA-TIME $label " "$OUT/$name.lanes.log" | awk '{print $3 * 1000}' | median)
  o=$(grep "^STRATA-TIME $label " "$OUT/$name.off.log" | awk '{print $3 * 1000}' | median)
  c=nan
  if [[ "$base" != - ]]; then c=$(grep "^C-TIME $label " "$OUT/$name.c.log" | awk '{print $3 * 1000}' | median); fi
  awk -v n="$name" -v l="$l" -v o="$o" -v c="$c" 'BEGIN {
    printf "| %s | %.2f | %.2f | %s | %.2f | %s |\n", n, l, o, (c == "nan" ? "–" : sprintf("%.2f", c)), l / o,
      (c == "nan" ? "–" : sprintf("%.2f", l / c)) }'
done
