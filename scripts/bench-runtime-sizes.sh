#!/usr/bin/env bash
# The run-time-size benchmark of issue 13 (see docs/benchmarks.md, "Run-time sizes").
#
#   scripts/bench-runtime-sizes.sh            full sizes, ROUNDS=5
#   scripts/bench-runtime-sizes.sh --small    small sizes, ROUNDS=1 (a smoke test: seconds)
#   ROUNDS=9 scripts/bench-runtime-sizes.sh   more rounds on a noisy machine
#
#   ONLY="matmul scan" scripts/bench-runtime-sizes.sh   only these kernels in part 1
#
# Part 1: for every benchmark of bench/ and its run-time-size twin in bench/runtime/, at the
# size of the constant version, ROUNDS rounds of `strata bench --device cpu --warmup 0 --runs 1`
# of both versions (each run launches its kernel REPS times; the version that goes first
# alternates from round to round), then the median (and the minimum) of all launches of each.
# Prints a markdown table: kernel, size, constant-size ms, run-time-size ms, ratio run-time /
# constant of the medians, of the minima, and paired (the median over the rounds of each
# round's ratio of medians).
# Part 2: runs one run-time-size program (bench/runtime/reduce.strata) on 10 different sizes
# with `strata run --device cpu -- SIZE` and STRATA_CACHE_DIR set to a fresh directory, then
# counts the compiled executables in it (must be 1: the program is compiled once, whatever the
# size) and prints the wall time of the first (compiling) run and the median of the others.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
SMALL=0
if [[ "${1:-}" == "--small" ]]; then SMALL=1; fi
ROUNDS=${ROUNDS:-$([[ $SMALL == 1 ]] && echo 1 || echo 5)}
OUT="$ROOT/target/bench-runtime-sizes"
rm -rf "$OUT"
mkdir -p "$OUT"

echo "building strata (release)..." >&2
cargo build --release -q -p strata-cli
STRATA="$ROOT/target/release/strata"

# name | size argument of the run-time version | -D defines of the constant version giving the
# same size (empty: its own constants) | the same two for --small
KERNELS=(
  "stream_copy|33554432||65536|LOG_N=16"
  "transpose|2048||256|N=256"
  "reduce|67108864||65536|LOG_N=16"
  "scan|16777216||65536|LOG_N=16"
  "histogram|67108864||262144|NB=16"
  "matmul|1024||128|N=128"
  "matmul_ikj|1024||128|N=128"
)

median() {
  sort -g | awk '{a[NR] = $1} END { if (NR == 0) print "nan"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

# samples JSON...: every launch time (seconds) in `strata bench --json` files, one per line.
samples() {
  cat "$@" | grep -o '"samples_s": \[[^]]*\]' | sed 's/.*\[//; s/\]//' | tr ',' '\n' | tr -d ' ' | grep -v '^$'
}

# bench JSON ARGS...: one `strata bench` round; fails loudly if the program fails.
bench() {
  local json=$1; shift
  if ! "$STRATA" bench --device cpu --warmup 0 --runs 1 --json "$json" "$@" >"$json.out" 2>"$json.err"; then
    echo "FAILED: strata bench $*" >&2
    cat "$json.err" >&2
    return 1
  fi
  if grep -q "no kernel launches" "$json.out"; then
    echo "no kernel launches: strata bench $*" >&2
    return 1
  fi
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| kernel | size | constant size (ms) | run-time size (ms) | ratio (medians) | ratio (minima) | ratio (paired) |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for spec in "${KERNELS[@]}"; do
  IFS='|' read -r name size defs small_size small_defs <<<"$spec"
  if [[ -n "${ONLY:-}" && " $ONLY " != *" $name "* ]]; then continue; fi
  if [[ $SMALL == 1 ]]; then size=$small_size defs=$small_defs; fi
  dargs=()
  for d in $defs; do dargs+=(-D "$d"); done
  echo "running $name (size $size) x$ROUNDS..." >&2
  for ((r = 0; r < ROUNDS; r++)); do
    # Constant first in even rounds, run-time first in odd ones, so that neither always follows
    # the other.
    if ((r % 2 == 0)); then
      bench "$OUT/$name.const.$r.json" "${dargs[@]}" "bench/$name.strata"
      bench "$OUT/$name.runtime.$r.json" "bench/runtime/$name.strata" -- "$size"
    else
      bench "$OUT/$name.runtime.$r.json" "bench/runtime/$name.strata" -- "$size"
      bench "$OUT/$name.const.$r.json" "${dargs[@]}" "bench/$name.strata"
    fi
  done
  c=$(samples "$OUT/$name".const.*.json | median)
  rt=$(samples "$OUT/$name".runtime.*.json | median)
  cmin=$(samples "$OUT/$name".const.*.json | sort -g | head -1)
  rmin=$(samples "$OUT/$name".runtime.*.json | sort -g | head -1)
  # Paired: the ratio of the two versions' medians within each round, then the median of those
  # (the load of a shared machine drifts between rounds more than within one).
  paired=$(for ((r = 0; r < ROUNDS; r++)); do
    a=$(samples "$OUT/$name.const.$r.json" | median)
    b=$(samples "$OUT/$name.runtime.$r.json" | median)
    awk -v a="$a" -v b="$b" 'BEGIN { print b / a }'
  done | median)
  awk -v n="$name" -v s="$size" -v c="$c" -v r="$rt" -v cm="$cmin" -v rm="$rmin" -v p="$paired" 'BEGIN {
    printf "| %s | %s | %.3f | %.3f | %.3f | %.3f | %.3f |\n", n, s, c * 1e3, r * 1e3, r / c, rm / cm, p
  }'
done
echo
echo "Medians and minima over $ROUNDS round(s) x REPS launches per version, the first version"
echo "alternating; 'paired' is the median over the rounds of each round's ratio of medians."
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg) (other jobs on the machine inflate and spread the times)"

# Part 2: one program, 10 sizes, one compilation.
CACHE="$OUT/cache"
mkdir -p "$CACHE"
SIZES=(4096 8192 12288 65536 100096 262144 524288 1048576 2000128 4194304)
if [[ $SMALL == 1 ]]; then SIZES=(256 512 768 1024 1280 1536 1792 2048 2304 4096); fi
walls=()
for size in "${SIZES[@]}"; do
  t0=$(date +%s.%N)
  out=$(STRATA_CACHE_DIR="$CACHE" "$STRATA" run --device cpu bench/runtime/reduce.strata -- "$size")
  t1=$(date +%s.%N)
  [[ "$out" == "reduce ok" ]] || { echo "unexpected output for size $size: $out" >&2; exit 1; }
  walls+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')")
done
exes=$(find "$CACHE" -maxdepth 1 -type f -name 'prog-*' ! -name '*.*' | wc -l)
first=${walls[0]}
rest=$(printf '%s\n' "${walls[@]:1}" | median)
echo
awk -v n="${#SIZES[@]}" -v e="$exes" -v f="$first" -v r="$rest" -v s="${SIZES[*]}" 'BEGIN {
  printf "bench/runtime/reduce.strata on %d sizes (%s) with a fresh STRATA_CACHE_DIR:\n", n, s
  printf "  executables in the cache: %d\n", e
  printf "  wall time of strata run: first (compiles) %.3f s, median of the other %d %.3f s\n", f, n - 1, r
}'
if [[ $exes != 1 ]]; then
  echo "error: expected exactly 1 compiled executable, found $exes" >&2
  exit 1
fi
