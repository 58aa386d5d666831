#!/usr/bin/env bash
# CUDA-C on sim against the Strata transliterations (docs/cuda-c.md, "Figures"): wall time of
# `strata run` on sim with race checking, best of $RUNS, for Figure 1, a tree reduction and a
# stencil over 2^20 elements; the same three on the cpu device against sim; then sim's peak memory
# per element of device memory.
# Usage: scripts/bench-cuda-c.sh   (after `cargo build --release -p strata-cli`)
set -euo pipefail
cd "$(dirname "$0")/.."
S=${STRATA:-target/release/strata}
RUNS=${RUNS:-3}
TMP=$(mktemp)
trap 'rm -f "$TMP"' EXIT

best() { # best wall time in seconds of "$@" over $RUNS runs
    local best=""
    for _ in $(seq "$RUNS"); do
        local t
        /usr/bin/time -o "$TMP" -f %e "$@" > /dev/null 2>&1
        t=$(tail -1 "$TMP")
        if [ -z "$best" ] || awk "BEGIN{exit !($t < $best)}"; then best=$t; fi
    done
    echo "$best"
}

printf '%-12s %10s %10s %7s\n' program cuda-c strata ratio
row() {
    local name=$1; shift
    local cu st
    cu=$(best "$S" run "$1")
    shift
    st=$(best "$S" run --device sim "$@")
    printf '%-12s %9ss %9ss %6.2fx\n' "$name" "$cu" "$st" "$(awk "BEGIN{print $cu / $st}")"
}
row figure-1 bench/cuda_c/fig1_large.cu -D N=1048576 -D NBLOCKS=1024 examples/array_sum.strata
row reduction bench/cuda_c/reduce.cu bench/cuda_c/reduce.strata
row stencil bench/cuda_c/stencil.cu bench/cuda_c/stencil.strata

# The same CUDA-C programs on the cpu device against sim (the first cpu run builds and caches the
# executable; the times are of cached runs, like those of sim).
printf '\n%-12s %10s %10s %8s\n' program sim cpu speedup
cpurow() {
    local sim cpu
    "$S" run --device cpu "$2" > /dev/null 2>&1
    sim=$(best "$S" run --device sim "$2")
    cpu=$(best "$S" run --device cpu "$2")
    printf '%-12s %9ss %9ss %7.1fx\n' "$1" "$sim" "$cpu" "$(awk "BEGIN{print $sim / $cpu}")"
}
cpurow figure-1 bench/cuda_c/fig1_large.cu
cpurow reduction bench/cuda_c/reduce.cu
cpurow stencil bench/cuda_c/stencil.cu

# Peak RSS (kB) of one launch over N elements, minus the same with 1024, per element.
rss() {
    /usr/bin/time -o "$TMP" -f %M "$S" check bench/cuda_c/touch.cu --grid "$(( $1 / 256 ))" --block 256 \
        --buffer-len "$1" --schedules 0 > /dev/null 2>&1
    tail -1 "$TMP"
}
small=$(rss 1024)
N=$((1 << 22))
big=$(rss $N)
awk "BEGIN{printf \"sim memory: %.1f bytes per element of device memory (device buffer and race record; the host copy is freed once the device buffer is made; %d elements)\\n\", ($big - $small) * 1024 / $N, $N}"
