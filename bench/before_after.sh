#!/usr/bin/env bash
# Issue 27, second round: each emitter change measured against the emitter without it (an
# environment switch) and against the hand-written C baseline, in one run, alternating
# (before, after, C) RUNS times; prints the median per-launch time of each, the ratios, and the
# spread (min–max of after / C over the rounds).
#
#   bench/before_after.sh          RUNS=5
#   RUNS=3 bench/before_after.sh
#
# Changes: the tiling of interchanged loops by rows of threads (STRATA_LANE_TILE=0 is before),
# the deferred overflow checks of thread loops (STRATA_DEFER_CHECKS=0 is before); and the lanes
# as a whole (STRATA_LANES=0: the emitter before issue 27).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
RUNS=${RUNS:-5}
CFLAGS="-O3 -march=native -fwrapv -ffp-contract=off -fopenmp"
OUT="$ROOT/target/bench-before-after"
mkdir -p "$OUT"
rm -f "$OUT"/*.log
cargo build --release -q -p strata-cli
STRATA="$ROOT/target/release/strata"

# name | program | kernel label | defines | C baseline | environment of "before"
CASES=(
  "matmul_element tile|bench/matmul_element.strata|matmul|N=1024 REPS=2|matmul_ikj|STRATA_LANE_TILE=0"
  "reduce defer|bench/reduce.strata|reduce|LOG_N=26 REPS=5|reduce|STRATA_DEFER_CHECKS=0"
)
if [[ "${LANES_OFF:-0}" == 1 ]]; then
  CASES+=("matmul_element lanes|bench/matmul_element.strata|matmul|N=1024 REPS=2|matmul_ikj|STRATA_LANES=0")
fi
median() { sort -g | awk '{a[NR] = $1} END { if (NR == 0) print "nan"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
# the minimum of the STRATA-TIME / C-TIME lines of one log
best() { grep "^$1 $2 " "$3" | awk '{print $3 * 1000}' | sort -g | head -1; }

echo "| change | before (ms) | after (ms) | C (ms) | before / after | before / C | after / C | after / C per round |"
echo "|---|---:|---:|---:|---:|---:|---:|---|"
for spec in "${CASES[@]}"; do
  IFS='|' read -r name prog label defs base env <<<"$spec"
  tag=${name// /_}
  sargs=() cargs=()
  for d in $defs; do sargs+=(-D "$d"); cargs+=("-D$d"); done
  cc $CFLAGS "${cargs[@]}" -o "$OUT/$tag.c" "bench/baseline/$base.c" -lm
  rounds=()
  for ((r = 0; r < RUNS; r++)); do
    env $env STRATA_TIME=1 "$STRATA" run "${sargs[@]}" "$prog" >/dev/null 2>"$OUT/r.before.log"
    STRATA_TIME=1 "$STRATA" run "${sargs[@]}" "$prog" >/dev/null 2>"$OUT/r.after.log"
    "$OUT/$tag.c" >/dev/null 2>"$OUT/r.c.log"
    cat "$OUT/r.before.log" >>"$OUT/$tag.before.log"
    cat "$OUT/r.after.log" >>"$OUT/$tag.after.log"
    cat "$OUT/r.c.log" >>"$OUT/$tag.c.log"
    rounds+=("$(awk -v a="$(best STRATA-TIME "$label" "$OUT/r.after.log")" -v c="$(best C-TIME "$label" "$OUT/r.c.log")" 'BEGIN { printf "%.2f", a / c }')")
  done
  b=$(grep "^STRATA-TIME $label " "$OUT/$tag.before.log" | awk '{print $3 * 1000}' | median)
  a=$(grep "^STRATA-TIME $label " "$OUT/$tag.after.log" | awk '{print $3 * 1000}' | median)
  c=$(grep "^C-TIME $label " "$OUT/$tag.c.log" | awk '{print $3 * 1000}' | median)
  spread=$(printf '%s\n' "${rounds[@]}" | sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {print lo "–" hi}')
  awk -v n="$name" -v b="$b" -v a="$a" -v c="$c" -v s="$spread" 'BEGIN {
    printf "| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %s |\n", n, b, a, c, b / a, b / c, a / c, s }'
done
