#!/usr/bin/env bash
# Code-quality report for the cuda target (issue 6): compares ptxas statistics (registers, spills,
# shared memory) and static SASS instruction counts of the CUDA that `strata emit --target cuda`
# produces for each benchmark in bench/*.strata against a straightforward hand-written CUDA
# version of the same algorithm (bench/cuda/<name>.cu), for sm_80 and sm_90.
#
# Usage: scripts/cuda-quality.sh [--what-if]
# --what-if also prints (to stdout, not into the report) the sm_80 statistics of the emitted CUDA
# after two mechanical edits that model emitter changes: R = `__restrict__` on every pointer
# parameter of the kernel; S = signed 32-bit (`int32_t`) index arithmetic in the kernel body;
# RS = both. Valid for these benchmarks only because every index fits in 31 bits.
# Writes the generated part of docs/cuda-quality.md (between the `<!-- table:begin -->` and
# `<!-- table:end -->` markers); the hand-written analysis outside the markers is preserved.
# Needs no GPU: nvcc and ptxas come from scripts/setup-nvcc.sh (PyPI wheels). Where `nvidia-smi`
# lists a GPU, it also runs both versions of every benchmark, checks the Strata program's output
# against the cpu device and reports the median launch time of each (section "Runtime timing").
# Instruction counts come from nvdisasm (the nvidia-cuda-nvdisasm wheel, installed into .venv when
# missing); without it the script falls back to counting PTX instructions and says so in the report.
set -euo pipefail
WHAT_IF=0
[[ "${1:-}" == "--what-if" ]] && WHAT_IF=1

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
DOC=docs/cuda-quality.md
WORK=target/cuda-quality
ARCHS=(sm_80 sm_90)
BENCHES=(transpose reduce scan matmul matmul_ikj histogram stream_copy)
mkdir -p "$WORK"

NVCC=$(scripts/setup-nvcc.sh 2>/dev/null | tail -1)
[[ -x "$NVCC" ]] || { echo "cuda-quality: setup-nvcc.sh gave no nvcc" >&2; exit 1; }
CU=$(ls -d .venv/lib/python3*/site-packages/nvidia/cu13 | head -1)
NVDISASM="$CU/bin/nvdisasm"
if [[ ! -x "$NVDISASM" ]]; then
    .venv/bin/pip install --quiet --disable-pip-version-check "nvidia-cuda-nvdisasm==13.*" >&2 || true
fi
if [[ -x "$NVDISASM" ]]; then
    MEASURE="static SASS instructions from \`nvdisasm\` (all instructions of the kernel's .text section except NOP padding)"
else
    NVDISASM=""
    MEASURE="PTX instructions from \`nvcc -ptx\` (lines ending in ';' inside the entry, excluding declarations) — nvdisasm was not available"
fi

[[ -x target/release/strata ]] || cargo build --release >&2
STRATA=target/release/strata

# ptxas -v stderr -> "name regs spill_st spill_ld smem" per entry function.
parse_ptxas() {
    awk '
        /Compiling entry function/ { match($0, /function .[^'"'"']*/); fn = substr($0, RSTART + 10, RLENGTH - 10); next }
        /Function properties for/ { cur = $NF; next }
        /bytes spill stores/ && cur != "" { st[cur] = $5; ld[cur] = $9; next }
        /Used [0-9]+ registers/ && fn != "" {
            regs = $0; sub(/.*Used /, "", regs); sub(/ registers.*/, "", regs)
            smem = 0; if (match($0, /[0-9]+ bytes smem/)) { smem = substr($0, RSTART, RLENGTH); sub(/ .*/, "", smem) }
            printf "%s %s %s %s %s\n", fn, regs, st[fn] + 0, ld[fn] + 0, smem
            fn = ""
        }' "$1"
}

# Instruction count of entry function $2 in cubin/ptx file $1.
count_instrs() {
    if [[ -n "$NVDISASM" ]]; then
        "$NVDISASM" -c "$1" | awk -v fn="$2" '
            /^[ \t]*\.section[ \t]+\.text\./ { split($2, a, ","); on = (a[1] == ".text." fn); next }
            /^[ \t]*\.section[ \t]/ { on = 0; next }
            on && /\/\*[0-9a-f]+\*\/[ \t]+[^ .\t]/ && !/[ \t]NOP[ \t;]/ { n++ }
            END { print n + 0 }'
    else
        awk -v fn="$2" '
            $0 ~ "\\.entry " fn "\\(" { on = 1; next }
            on && /^}/ { on = 0 }
            on && /;[ \t]*$/ && !/^[ \t]*\.(reg|shared|local|param|pragma)/ && !/^[ \t]*\/\// { n++ }
            END { print n + 0 }' "${1%.cubin}.ptx"
    fi
}

# Global loads of entry function $2 in cubin $1 as "read-only/all": read-only = LDG.E...CONSTANT,
# the non-coherent path nvcc uses for `const T *__restrict__` data. "-" without nvdisasm.
count_loads() {
    [[ -n "$NVDISASM" ]] || { echo "-"; return; }
    "$NVDISASM" -c "$1" | awk -v fn="$2" '
        /^[ \t]*\.section[ \t]+\.text\./ { split($2, a, ","); on = (a[1] == ".text." fn); next }
        /^[ \t]*\.section[ \t]/ { on = 0; next }
        on && /[ \t]LDG\./ { all++; if (/CONSTANT/) ro++ }
        END { printf "%d/%d\n", ro, all }'
}

# compile SRC ARCH OUTBASE: cubin (+ptx when needed) with -Werror all-warnings; ptxas log in OUTBASE.log
compile() {
    local src=$1 arch=$2 out=$3
    "$NVCC" -Werror all-warnings -arch="$arch" -cubin -Xptxas -v "$src" -o "$out.cubin" 2>"$out.log" \
        || { cat "$out.log" >&2; echo "cuda-quality: nvcc failed on $src for $arch" >&2; exit 1; }
    if [[ -z "$NVDISASM" ]]; then "$NVCC" -arch="$arch" -ptx "$src" -o "$out.ptx"; fi
}

# Emit every benchmark once; build all (bench, arch, version) combinations in parallel.
for b in "${BENCHES[@]}"; do
    "$STRATA" emit --target cuda "bench/$b.strata" -o "$WORK/$b.strata.cu"
    [[ -f "bench/cuda/$b.cu" ]] || { echo "cuda-quality: missing bench/cuda/$b.cu" >&2; exit 1; }
done
pids=()
for arch in "${ARCHS[@]}"; do
    for b in "${BENCHES[@]}"; do
        compile "$WORK/$b.strata.cu" "$arch" "$WORK/$b.strata.$arch" & pids+=($!)
        compile "bench/cuda/$b.cu" "$arch" "$WORK/$b.hand.$arch" & pids+=($!)
    done
done
for p in "${pids[@]}"; do wait "$p"; done

# Median of the STRATA-TIME lines (seconds) in file $1, in milliseconds; "-" when there are none.
median_ms() {
    awk '$1 == "STRATA-TIME" { print $3 }' "$1" | sort -g | awk '
        { v[n++] = $1 }
        END { if (n == 0) { print "-"; exit } m = (n % 2) ? v[(n - 1) / 2] : (v[n / 2 - 1] + v[n / 2]) / 2; printf "%.4f\n", m * 1000 }'
}

# With a GPU: run both versions of every benchmark at its default size, check the outputs and time
# every launch the same way (STRATA_TIME: wall clock from the launch to cudaDeviceSynchronize).
gpu_timing() {
    local cc arch
    cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d ' .')
    arch="sm_${cc:-80}"
    echo "Measured on $GPU ($arch), one run per program at its default size after building both"
    echo "versions with \`-O3 -arch=$arch\`. Every launch is timed from the launch to the end of"
    echo "\`cudaDeviceSynchronize()\` (\`STRATA_TIME=1\`; bench/cuda/common.h's \`TIMED\` for the hand-written"
    echo "mains); the table gives the median over the program's launches. Output: the Strata program's"
    echo "standard output on the GPU compared with \`strata run --device cpu\` of the same program; the"
    echo "hand-written mains check their own results."
    echo
    echo "| benchmark | launches | Strata median ms | hand median ms | Strata / hand | Strata output | hand check |"
    echo "|---|---:|---:|---:|---:|---|---|"
    for b in "${BENCHES[@]}"; do
        local s_exe="$WORK/$b.strata.gpu" h_exe="$WORK/$b.hand.gpu" out check hcheck sm hm ratio n
        "$STRATA" build --target cuda --arch "$arch" "bench/$b.strata" -o "$s_exe" >&2 || { echo "| $b | build failed | | | | | |"; continue; }
        "$NVCC" -O3 -arch="$arch" "bench/cuda/$b.cu" -o "$h_exe" >&2 || { echo "| $b | hand build failed | | | | | |"; continue; }
        if STRATA_TIME=1 "$s_exe" >"$WORK/$b.gpu.out" 2>"$WORK/$b.gpu.times"; then
            "$STRATA" run --device cpu "bench/$b.strata" >"$WORK/$b.cpu.out" 2>/dev/null || true
            if cmp -s "$WORK/$b.gpu.out" "$WORK/$b.cpu.out"; then check="same as cpu"; else check="**differs from cpu**"; fi
        else
            check="**failed**: $(grep -m1 . "$WORK/$b.gpu.times" | tr '|' '/')"
        fi
        if STRATA_TIME=1 "$h_exe" >"$WORK/$b.hand.out" 2>"$WORK/$b.hand.times"; then hcheck=ok; else hcheck="**failed**"; fi
        sm=$(median_ms "$WORK/$b.gpu.times"); hm=$(median_ms "$WORK/$b.hand.times")
        n=$(grep -c '^STRATA-TIME' "$WORK/$b.gpu.times" || true)
        ratio=$(awk -v s="$sm" -v h="$hm" 'BEGIN { if (s == "-" || h == "-" || h == 0) print "-"; else printf "%.2f\n", s / h }')
        echo "| $b | $n | $sm | $hm | $ratio | $check | $hcheck |"
    done
}

GPU=""
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    GPU=$(nvidia-smi -L | head -1)
fi

TABLE=$(mktemp)
{
    echo "_Generated by \`scripts/cuda-quality.sh\` on $(date -u +%Y-%m-%d) with $("$NVCC" --version | grep -o 'release [0-9.]*' | head -1) (ptxas -v, \`-Werror all-warnings\`); do not edit between the markers._"
    echo
    echo "Instruction counts: $MEASURE."
    echo "Shared memory is the static \`__shared__\` size ptxas reports; the last column gives the"
    echo "dynamic shared memory each version requests at launch (Strata: the \`<kernel>_smem_bytes()\` helper;"
    echo "hand-written: the third launch argument, which none of them uses)."
    echo "Spills are spill-store + spill-load bytes, Strata / hand. Read-only loads: global loads that"
    echo 'use the read-only (non-coherent, `LDG.E.CONSTANT`) path out of all global loads (`LDG`).'
    for arch in "${ARCHS[@]}"; do
        echo
        echo "### $arch"
        echo
        echo "| kernel | Strata regs | hand regs | Strata smem | hand smem | spills | Strata instrs | hand instrs | read-only loads | dynamic smem |"
        echo "|---|---:|---:|---:|---:|---|---:|---:|---|---|"
        for b in "${BENCHES[@]}"; do
            s_log="$WORK/$b.strata.$arch.log"; h_log="$WORK/$b.hand.$arch.log"
            # Strata kernels keep their Strata names: the C++ symbol is _Z<length><name><parameters>.
            while read -r fn sregs sst sld ssmem; do
                name=$(sed -E 's/^_Z([0-9]+).*/\1/' <<<"$fn")
                if [[ "$name" =~ ^[0-9]+$ ]]; then name=${fn:$((2 + ${#name})):$name}; else name=$fn; fi
                # Dynamic shared memory: the kernel has a `<name>_smem_bytes` helper.
                if grep -q "size_t ${name}_smem_bytes(" "$WORK/$b.strata.cu"; then dyn=yes; else dyn=no; fi
                read -r hfn hregs hst hld hsmem < <(parse_ptxas "$h_log" | head -1)
                sins=$(count_instrs "$WORK/$b.strata.$arch.cubin" "$fn")
                hins=$(count_instrs "$WORK/$b.hand.$arch.cubin" "$hfn")
                if grep -q 'extern __shared__' "bench/cuda/$b.cu"; then hdyn=yes; else hdyn=no; fi
                echo "| $b (\`$name\`) | $sregs | $hregs | $ssmem | $hsmem | $((sst + sld)) / $((hst + hld)) | $sins | $hins | Strata $(count_loads "$WORK/$b.strata.$arch.cubin" "$fn"), hand $(count_loads "$WORK/$b.hand.$arch.cubin" "$hfn") | Strata ${dyn:-no}, hand $hdyn |"
            done < <(parse_ptxas "$s_log")
        done
    done
    echo
    echo "### Runtime timing"
    echo
    if [[ -n "$GPU" ]]; then
        gpu_timing
    else
        echo "No GPU is present on the machine that generated this report (\`nvidia-smi\` is missing or"
        echo "lists no device), so runtime timing is skipped: the numbers above are static ptxas/SASS"
        echo "statistics only."
    fi
} >"$TABLE"

BEGIN='<!-- table:begin -->'
END='<!-- table:end -->'
if [[ -f "$DOC" ]] && grep -qF "$BEGIN" "$DOC" && grep -qF "$END" "$DOC"; then
    awk -v b="$BEGIN" -v e="$END" -v t="$TABLE" '
        $0 == b { print; while ((getline l < t) > 0) print l; skip = 1; next }
        $0 == e { skip = 0 }
        !skip { print }' "$DOC" >"$DOC.tmp"
    mv "$DOC.tmp" "$DOC"
else
    { echo "# CUDA code quality: Strata vs hand-written CUDA"; echo; echo "$BEGIN"; cat "$TABLE"; echo "$END"; } >"$DOC"
fi
rm -f "$TABLE"
echo "cuda-quality: wrote $DOC" >&2

if (( WHAT_IF )); then
    to_i32='/^__global__ void [A-Za-z_][A-Za-z0-9_]*\(.*\{$/ { on = 1 } on && /^}/ { on = 0 }
            on { gsub(/uint64_t/, "int32_t"); gsub(/UINT64_C/, "INT32_C"); gsub(/< 64 \?/, "< 31 ?") } { print }'
    echo "what-if (sm_80): variant = regs / SASS instrs / read-only loads"
    for b in "${BENCHES[@]}"; do
        src="$WORK/$b.strata.cu"
        cp "$src" "$WORK/$b.wi.R.cu"
        # The emitter writes `__restrict__` itself now: R is the emitted code.
        awk "$to_i32" "$src" >"$WORK/$b.wi.S.cu"
        awk "$to_i32" "$WORK/$b.wi.R.cu" >"$WORK/$b.wi.RS.cu"
        line="$b:"
        for v in R S RS; do
            compile "$WORK/$b.wi.$v.cu" sm_80 "$WORK/$b.wi.$v"
            read -r fn regs _ _ _ < <(parse_ptxas "$WORK/$b.wi.$v.log" | head -1)
            line="$line  $v=$regs/$(count_instrs "$WORK/$b.wi.$v.cubin" "$fn")/$(count_loads "$WORK/$b.wi.$v.cubin" "$fn")"
        done
        echo "$line"
    done
fi
