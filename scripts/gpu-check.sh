#!/usr/bin/env bash
# Checks the CUDA output on a real GPU (docs/gpu-check.md). Two steps, so that the GPU machine
# spends its time running rather than compiling:
#
#   scripts/gpu-check.sh prepare [DIR]    # here: nvcc from scripts/setup-nvcc.sh, no GPU needed
#   scripts/gpu-check.sh run [DIR] OUT    # on the GPU machine: runs what `prepare` built
#   ONLY=REGEX scripts/gpu-check.sh run DIR OUT   # only the executables whose names match
#
# `prepare` builds, for one architecture ($ARCH, default sm_90), every program the cuda_compile
# test compiles (examples, bench/*.strata and the corpus's run-pass programs, each with its
# `//@ program-args`; the `//@ cpu-large` size as a second build), the correct CUDA-C corpus
# programs with a `main` (nvcc straight from the .cu file) and the hand-written benchmark mains
# (bench/cuda/*.cu). It records what each must print: the cpu device's output for a Strata program,
# sim's for a CUDA-C one. Executables link the CUDA runtime dynamically (`-cudart shared`, the
# library copied into DIR/lib) to keep DIR small enough to travel.
#
# `run` runs every executable on the GPU and compares its standard output and exit status with the
# expectation; times the benchmarks (STRATA_TIME=1: every launch from the launch to the end of
# `cudaDeviceSynchronize`) against the hand-written CUDA; and runs every Strata program under
# compute-sanitizer (racecheck, synccheck, memcheck with --leak-check full and initcheck), where
# Strata's promise is that none of them finds anything. It writes OUT/report.md and OUT/logs.tar.gz.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
MODE=${1:-}
DIR=${2:-target/gpu-check}
ARCH=${ARCH:-sm_90}
STRATA=${STRATA:-target/release/strata}

prepare() {
    set -e
    local nvcc
    nvcc=$(scripts/setup-nvcc.sh 2>/dev/null | tail -1)
    [[ -x "$STRATA" ]] || cargo build --release -p strata-cli >&2
    rm -rf "$DIR"
    mkdir -p "$DIR/bin" "$DIR/expect" "$DIR/lib" "$DIR/src"
    cp "$(ls -d .venv/lib/python3*/site-packages/nvidia/cu13/lib)/libcudart.so.13" "$DIR/lib/"
    # The wheel has no unversioned name for the linker; it stays out of the folder that travels.
    mkdir -p "$DIR.link"
    ln -sf "$ROOT/$DIR/lib/libcudart.so.13" "$DIR.link/libcudart.so"
    local jobs="$DIR/jobs.sh"
    : > "$jobs"
    : > "$DIR/manifest.tsv"
    # kind, name, executable, program arguments, expected-output file
    # (`-` for no arguments: `read` would merge two tabs.)
    add() { printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "${4:--}" "$5" >> "$DIR/manifest.tsv"; }
    local nvflags="-O3 -Werror all-warnings -arch $ARCH -cudart shared -L$DIR.link"
    local f name args pargs large
    local programs
    programs=$(
        for f in examples/*.strata bench/*.strata; do grep -q 'fn main(' "$f" && echo "$f"; done
        grep -l '^//@ run-pass' -r tests/corpus --include='*.strata' | sort |
            while read -r f; do grep -q '^//@ \(known-bug\|sim-only\)' "$f" || echo "$f"; done
    )
    for f in $programs; do
        name=$(echo "${f%.strata}" | tr '/' '_')
        args=$(sed -n 's|^//@ args:||p' "$f" | grep -o -- '-D *[A-Za-z_0-9]*=[^ ]*' | tr '\n' ' ' || true)
        pargs=$(sed -n 's|^//@ program-args:||p' "$f" | head -1 | xargs || true)
        local kind=strata
        [[ $f == bench/* ]] && kind=bench
        echo "$STRATA emit --target cuda --arch $ARCH $args -o $DIR/src/$name.cu $f && $nvcc $nvflags -o $DIR/bin/$name $DIR/src/$name.cu && $STRATA run --device cpu $args $f -- $pargs > $DIR/expect/$name" >> "$jobs"
        add "$kind" "$name" "$DIR/bin/$name" "$pargs" "$DIR/expect/$name"
        large=$(sed -n 's|^//@ cpu-large:||p' "$f" | head -1 | xargs || true)
        if [[ -n "$large" ]]; then
            echo "$STRATA emit --target cuda --arch $ARCH $large -o $DIR/src/$name.large.cu $f && $nvcc $nvflags -o $DIR/bin/$name.large $DIR/src/$name.large.cu && $STRATA run --device cpu $large $f -- $pargs > $DIR/expect/$name.large" >> "$jobs"
            add strata-large "$name.large" "$DIR/bin/$name.large" "$pargs" "$DIR/expect/$name.large"
        fi
    done
    # Correct CUDA-C programs with a main: `// expect: clean` (the Figure 1 program is unlabelled).
    for f in $(grep -l -r '^// expect: clean' tests/cuda_c --include='*.cu' | sort) tests/cuda_c/fig1.cu; do
        grep -q 'int main' "$f" || continue
        name=cudac_$(basename "${f%.cu}")
        echo "$nvcc -O2 -arch $ARCH -cudart shared -L$DIR.link -w -o $DIR/bin/$name $f && $STRATA run $f > $DIR/expect/$name" >> "$jobs"
        add cudac "$name" "$DIR/bin/$name" "" "$DIR/expect/$name"
    done
    # Buggy CUDA-C programs: only for compute-sanitizer, against the finding sim reports.
    for f in $(grep -l -r '^// expect: E09' tests/cuda_c --include='*.cu' | sort); do
        grep -q 'int main' "$f" || continue
        name=cudacbug_$(basename "${f%.cu}")
        echo "$nvcc -O2 -arch $ARCH -cudart shared -L$DIR.link -w -o $DIR/bin/$name $f && grep -m1 '^// expect:' $f > $DIR/expect/$name" >> "$jobs"
        add cudac-buggy "$name" "$DIR/bin/$name" "" "$DIR/expect/$name"
    done
    for f in bench/cuda/*.cu; do
        name=hand_$(basename "${f%.cu}")
        echo "$nvcc -O3 -arch $ARCH -cudart shared -L$DIR.link -w -o $DIR/bin/$name $f && : > $DIR/expect/$name" >> "$jobs"
        add hand "$name" "$DIR/bin/$name" "" "$DIR/expect/$name"
    done
    # The benchmarks again at sizes where a launch takes long enough (0.2 ms and up on an H200)
    # that the launch overhead inside the timing no longer decides the ratio: `.big`, both versions.
    local b d
    for b in "transpose:-D N=8192" "reduce:-D LOG_N=28" "scan:-D LOG_N=28" "stream_copy:-D LOG_N=28" \
        "histogram:-D NB=32768"; do
        d=${b#*:}; b=${b%%:*}
        echo "$STRATA emit --target cuda --arch $ARCH $d -o $DIR/src/bench_$b.big.cu bench/$b.strata && $nvcc $nvflags -o $DIR/bin/bench_$b.big $DIR/src/bench_$b.big.cu && $STRATA run --device cpu $d bench/$b.strata > $DIR/expect/bench_$b.big" >> "$jobs"
        add bench "bench_$b.big" "$DIR/bin/bench_$b.big" "" "$DIR/expect/bench_$b.big"
        echo "$nvcc -O3 -arch $ARCH -cudart shared -L$DIR.link -w ${d//-D /-D} -o $DIR/bin/hand_$b.big bench/cuda/$b.cu && : > $DIR/expect/hand_$b.big" >> "$jobs"
    done
    set +e
    local failed=0
    # Every job's output goes to its own log; a failed build is reported and left out of the run.
    tr '\n' '\0' < "$jobs" | xargs -0 -P "${JOBS:-2}" -I{} bash -c '( {} ) > /dev/null 2>&1 || echo "FAILED: {}"' \
        > "$DIR/prepare.failures"
    failed=$(grep -c '^FAILED' "$DIR/prepare.failures")
    # Keep only what built.
    awk -F'\t' '{ if (system("test -x " $3) == 0) print }' "$DIR/manifest.tsv" > "$DIR/manifest.ok"
    mv "$DIR/manifest.ok" "$DIR/manifest.tsv"
    rm -rf "$DIR/src"
    echo "prepared $(wc -l < "$DIR/manifest.tsv") executables in $DIR ($(du -sh "$DIR" | cut -f1)); $failed jobs failed (see $DIR/prepare.failures)"
}

# run_one KIND NAME EXE ARGS EXPECT LOGDIR: one line "NAME KIND verdict".
run_one() {
    local kind=$1 name=$2 exe=$3 pargs=$4 expect=$5 logs=$6 rc verdict
    [[ $pargs == - ]] && pargs=
    # shellcheck disable=SC2086
    timeout 120 "$exe" $pargs > "$logs/$name.out" 2> "$logs/$name.err"
    rc=$?
    if [[ $rc -ne 0 ]]; then
        verdict="FAIL exit $rc: $(head -c 200 "$logs/$name.err" | tr '\n\t' '  ')"
    elif [[ $kind == hand ]]; then
        verdict=ok
    elif cmp -s "$logs/$name.out" "$expect"; then
        verdict=same
    elif cmp -s <(sort "$logs/$name.out") <(sort "$expect"); then
        verdict="same lines, other order"
    else
        verdict="DIFFERS"
    fi
    printf '%s\t%s\t%s\n' "$name" "$kind" "$verdict"
}
export -f run_one

# sanitize_one TOOL NAME EXE ARGS LOGDIR: one line "NAME TOOL verdict".
sanitize_one() {
    local tool=$1 name=$2 exe=$3 pargs=$4 logs=$5 extra=() log rc
    [[ $pargs == - ]] && pargs=
    log="$logs/$name.$tool.log"
    # Past the deadline (seconds since the epoch) no new run starts, so the report always comes back.
    if [[ -n ${DEADLINE:-} && $(date +%s) -ge $DEADLINE ]]; then
        printf '%s\t%s\t%s\n' "$name" "$tool" "skipped (deadline)"
        return
    fi
    case $tool in
        memcheck) extra=(--leak-check full) ;;
        racecheck) extra=(--racecheck-report all) ;;
    esac
    # shellcheck disable=SC2086
    timeout 60 compute-sanitizer --tool "$tool" "${extra[@]}" --error-exitcode 99 "$exe" $pargs > "$log" 2>&1
    rc=$?
    if [[ $rc -eq 0 ]]; then
        printf '%s\t%s\t%s\n' "$name" "$tool" clean
    elif [[ $rc -eq 124 ]]; then
        printf '%s\t%s\t%s\n' "$name" "$tool" "timed out"
    else
        printf '%s\t%s\t%s\n' "$name" "$tool" "FOUND (exit $rc): $(grep -m1 -E 'ERROR SUMMARY|Hazard|Race|Invalid|Barrier|Uninit|leak' "$log" | tr '\t' ' ')"
    fi
}
export -f sanitize_one

run() {
    START=$(date +%s)
    # ONLY=REGEX runs just the executables whose names match (a short recheck of a few programs).
    MANIFEST=$DIR/manifest.tsv
    if [[ -n ${ONLY:-} ]]; then
        MANIFEST=$(mktemp)
        awk -F'\t' -v re="$ONLY" '$2 ~ re' "$DIR/manifest.tsv" > "$MANIFEST"
    fi
    local out=${3:?usage: scripts/gpu-check.sh run DIR OUT}
    local logs="$out/logs"
    mkdir -p "$logs"
    export LD_LIBRARY_PATH="$ROOT/$DIR/lib:${LD_LIBRARY_PATH:-}"
    local report="$out/report.md"
    {
        echo "# GPU check, $(date -u '+%Y-%m-%d %H:%M UTC')"
        echo
        nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv 2>&1 | sed 's/^/    /'
        echo
    } > "$report"
    # 1. Output: every executable once, eight at a time (outputs do not depend on timing).
    awk -F'\t' '$1 != "bench" && $1 != "cudac-buggy" { print }' "$MANIFEST" |
        while IFS=$'\t' read -r kind name exe pargs expect; do
            printf '%s\0%s\0%s\0%s\0%s\0%s\0' "$kind" "$name" "$exe" "$pargs" "$expect" "$logs"
        done | xargs -0 -n 6 -P 8 bash -c 'run_one "$@"' _ | sort > "$out/outputs.tsv"
    # 2. Benchmarks one at a time, timed, each twice; the Strata program's output checked too.
    : > "$out/bench.tsv"
    awk -F'\t' '$1 == "bench" { print }' "$MANIFEST" |
        while IFS=$'\t' read -r kind name exe pargs expect; do
            for rep in 1 2; do
                STRATA_TIME=1 run_one bench "$name.$rep" "$exe" "$pargs" "$expect" "$logs" >> "$out/outputs.tsv"
                local h="$DIR/bin/hand_${name#bench_}"
                [[ -x $h ]] && STRATA_TIME=1 run_one hand "hand_${name#bench_}.$rep" "$h" - /dev/null "$logs" >> "$out/outputs.tsv"
            done
        done
    {
        echo "## Output of every program on the GPU"
        echo
        echo "Expected: the cpu device's output (Strata programs), sim's (CUDA-C programs); exit status 0."
        echo
        awk -F'\t' '{ n[$2]++; if ($3 ~ /^same$|^ok$/) s[$2]++; else if ($3 ~ /other order/) o[$2]++ }
            END { for (k in n) printf "- %s: %d programs, %d exactly as expected, %d same lines in another order, %d wrong\n", k, n[k], s[k], o[k], n[k] - s[k] - o[k] }' "$out/outputs.tsv" | sort
        echo
        awk -F'\t' '$3 !~ /^same$|^ok$/ { printf "- `%s` (%s): %s\n", $1, $2, $3 }' "$out/outputs.tsv"
        echo
        echo "## Benchmarks: median kernel time per launch (ms), Strata's emitted CUDA against hand-written CUDA"
        echo
        echo "| benchmark | launches | Strata | hand | Strata / hand |"
        echo "|---|---:|---:|---:|---:|"
        for s in "$logs"/bench_*.2.err; do
            [[ -e $s ]] || continue
            local b h sm hm n
            b=$(basename "$s" .2.err); b=${b#bench_}
            h="$logs/hand_$b.2.err"
            sm=$(grep '^STRATA-TIME' "$s" | awk '{print $3 * 1000}' | sort -g | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print "-"}')
            hm=$(grep '^STRATA-TIME' "$h" 2>/dev/null | awk '{print $3 * 1000}' | sort -g | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print "-"}')
            n=$(grep -c '^STRATA-TIME' "$s")
            echo "| $b | $n | $sm | $hm | $(awk -v s="$sm" -v h="$hm" 'BEGIN { if (s == "-" || h == "-" || h == 0) print "-"; else printf "%.2f", s / h }') |"
        done
        echo
    } >> "$report"
    # 3. compute-sanitizer on the Strata programs (not the timed benchmarks: they are large).
    if command -v compute-sanitizer > /dev/null; then
        # In the order of what Strata promises most; no run starts later than $BUDGET seconds after
        # the check began, so that the report comes back from a machine lent for a limited time.
        export DEADLINE=$((START + ${BUDGET:-400}))
        for tool in racecheck memcheck synccheck initcheck; do
            awk -F'\t' '$1 == "strata" || $1 == "cudac-buggy" { print }' "$MANIFEST" |
                while IFS=$'\t' read -r kind name exe pargs expect; do
                    printf '%s\0%s\0%s\0%s\0%s\0' "$tool" "$name" "$exe" "$pargs" "$logs"
                done | xargs -0 -n 5 -P 8 bash -c 'sanitize_one "$@"' _
        done | sort > "$out/sanitizer.tsv"
        {
            echo "## compute-sanitizer on every Strata program (no finding expected)"
            grep -v '^cudacbug_' "$out/sanitizer.tsv" > "$out/sanitizer.strata.tsv"
            echo
            awk -F'\t' '{ n[$2]++; if ($3 == "clean") c[$2]++; if ($3 ~ /^skipped/) k2[$2]++ } END { for (k in n) printf "- %s: %d programs, %d clean, %d skipped at the deadline\n", k, n[k], c[k], k2[k] }' "$out/sanitizer.strata.tsv" | sort
            echo
            awk -F'\t' '$3 != "clean" && $3 !~ /^skipped/ { printf "- `%s` (%s): %s\n", $1, $2, $3 }' "$out/sanitizer.strata.tsv"
            echo
            echo "## compute-sanitizer on the buggy CUDA-C programs (sim's finding in brackets)"
            echo
            grep '^cudacbug_' "$out/sanitizer.tsv" | while IFS=$'\t' read -r name tool verdict; do
                echo "- \`$name\` [$(cat "$DIR/expect/$name" 2>/dev/null | sed 's|// expect: ||')] $tool: $verdict"
            done
        } >> "$report"
    else
        echo "compute-sanitizer: not installed" >> "$report"
    fi
    tar -czf "$out/logs.tar.gz" -C "$out" logs && rm -rf "$logs"
    cat "$report"
}

case $MODE in
    prepare) prepare ;;
    run) run "$@" ;;
    *) echo "usage: scripts/gpu-check.sh prepare [DIR] | run DIR OUT" >&2; exit 2 ;;
esac
