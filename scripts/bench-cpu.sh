#!/usr/bin/env bash
# The cpu-device benchmark of issue 5 (see docs/benchmarks.md).
#
#   scripts/bench-cpu.sh            full sizes, RUNS=3 processes per program
#   scripts/bench-cpu.sh --small    CI sizes, RUNS=1 (a smoke test: seconds)
#   RUNS=5 scripts/bench-cpu.sh     more repetitions on a noisy machine
#
# Builds `strata` in release, compiles the hand-written C baselines (bench/baseline/*.c) with
# the same flags as the cpu device (cc -O3 -march=native -fwrapv -ffp-contract=off -fopenmp), then runs every Strata
# program of bench/ with STRATA_TIME=1 and its baseline RUNS times each, alternating, and takes
# the median of all per-launch kernel times (each process launches its kernel REPS times). It
# prints a markdown table: kernel, Strata time, C time, ratio Strata/C, bytes moved per launch,
# GB/s of both, and the Strata GB/s as a fraction of the measured STREAM copy bandwidth of C.
# Finally it compares `--device cpu` with `--device sim --no-race-check` on a small transpose.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
SMALL=0
if [[ "${1:-}" == "--small" ]]; then SMALL=1; fi
RUNS=${RUNS:-$([[ $SMALL == 1 ]] && echo 1 || echo 3)}
CC=${CC:-cc}
CFLAGS="-O3 -march=native -fwrapv -ffp-contract=off -fopenmp"
OUT="$ROOT/target/bench-cpu"
mkdir -p "$OUT"
rm -f "$OUT"/*.log

echo "building strata (release)..." >&2
cargo build --release -q -p strata-cli
STRATA="$ROOT/target/release/strata"

# name | kernel label in STRATA-TIME | full-size defines | small defines | bytes moved per launch (bash arithmetic over the defines)
KERNELS=(
  "stream_copy|copy|LOG_N=25 REPS=10|LOG_N=16 REPS=3|2 * (1 << LOG_N) * 8"
  "transpose|transpose|N=2048 REPS=10|N=256 REPS=3|2 * N * N * 8"
  "reduce|reduce|LOG_N=26 REPS=5|LOG_N=16 REPS=3|(1 << LOG_N) * 4 + (1 << (LOG_N - 8)) * 4"
  "scan|scan|LOG_N=24 REPS=10|LOG_N=16 REPS=3|2 * (1 << LOG_N) * 4"
  "scan_lookback|scan|LOG_N=24 REPS=10|LOG_N=16 REPS=3|2 * (1 << LOG_N) * 4"
  "histogram|histogram|NB=4096 REPS=10|NB=16 REPS=3|NB * 256 * 64 * 4 + NB * 256 * 4"
  "matmul|matmul|N=1024 NB=16 REPS=2|N=128 NB=4 REPS=3|3 * N * N * 4"
  "matmul_ikj|matmul|N=1024 NB=16 REPS=5|N=128 NB=4 REPS=3|3 * N * N * 4"
  "matmul_element|matmul|N=1024 REPS=2|N=64 REPS=2|3 * N * N * 4"
)

median() {
  sort -g | awk '{a[NR] = $1} END { if (NR == 0) print "nan"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

# run LOG CMD...: runs a program, appends its stderr to LOG, fails loudly if it fails.
run() {
  local log=$1; shift
  local out
  if ! out=$("$@" 2>>"$log"); then
    echo "FAILED: $*" >&2
    echo "$out" >&2
    tail -20 "$log" >&2
    return 1
  fi
  [[ "$out" == *ok* ]] || { echo "unexpected output of $*: $out" >&2; return 1; }
}

declare -A ST CT BY
ORDER=()
for spec in "${KERNELS[@]}"; do
  IFS='|' read -r name label full small bytes <<<"$spec"
  defs=$([[ $SMALL == 1 ]] && echo "$small" || echo "$full")
  sargs=() cargs=()
  for d in $defs; do sargs+=(-D "$d"); cargs+=("-D$d"); done
  # bytes: evaluate the expression with the defines as shell variables
  BY[$name]=$( ( for d in $defs; do eval "${d%%=*}=${d#*=}"; done; echo $(( bytes )) ) )
  $CC $CFLAGS "${cargs[@]}" -o "$OUT/$name" "bench/baseline/$name.c" -lm
  "$STRATA" check "${sargs[@]}" "bench/$name.strata" >&2
  echo "running $name ($defs) x$RUNS..." >&2
  for ((r = 0; r < RUNS; r++)); do
    STRATA_TIME=1 run "$OUT/$name.strata.log" "$STRATA" run "${sargs[@]}" "bench/$name.strata"
    run "$OUT/$name.c.log" "$OUT/$name"
  done
  ST[$name]=$(grep "^STRATA-TIME $label " "$OUT/$name.strata.log" | awk '{print $3}' | median)
  CT[$name]=$(grep "^C-TIME $label " "$OUT/$name.c.log" | awk '{print $3}' | median)
  ORDER+=("$name")
done

STREAM_GBS=$(awk -v b="${BY[stream_copy]}" -v t="${CT[stream_copy]}" 'BEGIN { printf "%.3f", b / t / 1e9 }')
echo
echo "| kernel | Strata (ms) | C (ms) | Strata/C | bytes/launch | Strata GB/s | C GB/s | Strata / STREAM |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for name in "${ORDER[@]}"; do
  awk -v n="$name" -v s="${ST[$name]}" -v c="${CT[$name]}" -v b="${BY[$name]}" -v m="$STREAM_GBS" 'BEGIN {
    printf "| %s | %.2f | %.2f | %.2f | %.1f MB | %.3g | %.3g | %.2g%% |\n", n, s * 1e3, c * 1e3, s / c, b / 1e6, b / s / 1e9, b / c / 1e9, 100 * b / s / 1e9 / m
  }'
done
for name in matmul matmul_ikj matmul_element; do
  [[ -n "${ST[$name]:-}" ]] || continue
  awk -v n="$name" -v s="${ST[$name]}" -v c="${CT[$name]}" -v b="${BY[$name]}" 'BEGIN {
    f = 2 * (b / 12) ^ 1.5   # 2 N^3 flops, N^2 = bytes / 12
    printf "%s: Strata %.2f GFLOP/s, C %.2f GFLOP/s (GB/s of the compulsory traffic is not its measure)\n", n, f / s / 1e9, f / c / 1e9
  }'
done
echo
echo "STREAM copy (C, OpenMP): $STREAM_GBS GB/s; medians over $RUNS process(es) x REPS launches."

# cpu vs sim: transpose of SIM_N x SIM_N, sim without race checks. Per-launch sim time is the
# difference of the wall times of REPS=SIM_REPS and REPS=1 runs divided by SIM_REPS - 1
# (so checking, lowering and the host part cancel out).
SIM_N=${SIM_N:-$([[ $SMALL == 1 ]] && echo 128 || echo 512)}
SIM_REPS=4
wall() {
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >/dev/null 2>&1
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }'
}
sim_samples=()
for ((r = 0; r < RUNS; r++)); do
  w1=$(wall "$STRATA" run --device sim --no-race-check -D N="$SIM_N" -D REPS=1 bench/transpose.strata)
  wn=$(wall "$STRATA" run --device sim --no-race-check -D N="$SIM_N" -D REPS=$SIM_REPS bench/transpose.strata)
  sim_samples+=("$(awk -v a="$w1" -v b="$wn" -v n=$SIM_REPS 'BEGIN { print (b - a) / (n - 1) }')")
done
SIM_T=$(printf '%s\n' "${sim_samples[@]}" | median)
: >"$OUT/sim_cpu.log"
for ((r = 0; r < RUNS; r++)); do
  STRATA_TIME=1 run "$OUT/sim_cpu.log" "$STRATA" run -D N="$SIM_N" -D REPS=10 bench/transpose.strata
done
CPU_T=$(grep "^STRATA-TIME transpose " "$OUT/sim_cpu.log" | awk '{print $3}' | median)
awk -v s="$SIM_T" -v c="$CPU_T" -v n="$SIM_N" 'BEGIN {
  printf "cpu vs sim (transpose %dx%d f64, sim --no-race-check): sim %.2f ms/launch, cpu %.3f ms/launch: cpu is %.0fx faster\n", n, n, s * 1e3, c * 1e3, s / c
}'
