#!/usr/bin/env bash
# Re-collects the public CUDA programs that `strata run` runs to their own self-check (issue 26)
# at pinned commits, applies the small-input edits below, and runs each on sim (and with
# `--device cpu` when STRATA_CPU=1). The programs are not vendored: this script is the record.
#
#   tests/cuda_c/public/collect.sh [WORKDIR]        (default: target/public-cuda)
#
# Sources (each cloned from GitHub, or taken from $MIRROR_<NAME> if set to a local git clone):
#   olcf/cuda-training-series           9cd77d539d85ee3457e09a083ba299b787b7a16e  (BSD-3-Clause)
#   CodedK/CUDA-by-Example-source-code-for-the-book-s-examples-
#                                       0824fae6f6c4aba60a5cf339971f698b9d5a9a41  (the book's code)
#
# Small inputs: the sizes the programs define (`const int DSIZE = 8192;`, `N = 8M`) are cut so
# that a run on sim takes seconds; nothing else in a program is changed. The book's
# `common/book.h` is cut to its first 63 lines (`HandleError`, `HANDLE_ERROR`, `HANDLE_NULL`,
# `swap`, `big_random_block`, `big_random_block_int`) and closed with `#endif`: the rest (the
# overloaded `float_to_color` kernels, pthread threads) is what no program below uses and what
# the front end refuses (overloading, pthread).
#
# Each program passes when `strata run` exits 0 and its output holds the program's own success
# text (or, for programs without a self-check, the output written here: what the program
# computes by hand; the four stream and copy programs of chapter 10 check nothing themselves and
# print only times, so for them passing means running with sim's checks clean; the three bitmap
# programs print the checksum of their image, the same on sim and on the cpu device, as do the
# two Julia sets, whose checksum is that of an independent float32 computation of the image;
# `enum_gpu` and `set_gpu` print the device's properties and number, sim's one H100).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
work=${1:-$root/target/public-cuda}
strata=${STRATA:-$root/target/release/strata}
mkdir -p "$work"

fetch() { # NAME URL COMMIT MIRROR
    local dir="$work/$1"
    if [ ! -d "$dir/.git" ]; then
        rm -rf "$dir"
        if [ -n "$4" ]; then git clone -q "$4" "$dir"; else git clone -q "$2" "$dir"; fi || return 1
    fi
    git -C "$dir" checkout -q "$3" || return 1
    git -C "$dir" checkout -q -- . && git -C "$dir" clean -qfd
}

fetch olcf https://github.com/olcf/cuda-training-series 9cd77d539d85ee3457e09a083ba299b787b7a16e \
    "${MIRROR_OLCF:-}" || { echo "cannot fetch olcf/cuda-training-series"; exit 2; }
fetch cbe https://github.com/CodedK/CUDA-by-Example-source-code-for-the-book-s-examples- \
    0824fae6f6c4aba60a5cf339971f698b9d5a9a41 "${MIRROR_CBE:-}" || { echo "cannot fetch CUDA-by-Example"; exit 2; }

# Small inputs.
o=$work/olcf/exercises
sed -i 's/^const int DSIZE = 8192;/const int DSIZE = 64;/' "$o/hw1/matrix_mul_solution.cu" "$o/hw2/matrix_mul_shared_solution.cu"
sed -i 's/^const int DSIZE = 32\*1048576;/const int DSIZE = 4096;/' "$o/hw3/vector_add_solution.cu"
sed -i 's/^const size_t DSIZE = 16384; /const size_t DSIZE = 64; /' "$o/hw4/matrix_sums_solution.cu" "$o/hw5/matrix_sums.cu" "$o/hw5/matrix_sums_solution.cu"
sed -i 's/^const size_t N = 8ULL\*1024ULL\*1024ULL;/const size_t N = 8ULL*1024ULL;/; s/const int blocks = 640;/const int blocks = 4;/' "$o/hw5/max_reduction.cu" "$o/hw5/max_reduction_solution.cu" \
    "$o/hw5/reductions.cu"
sed -i 's/^#define SIZE 4096/#define SIZE 64/' "$o/hw8/task2/task2_solution.cu" "$o/hw8/task3/task3.cu" \
    "$o/hw8/task3/task3_solution.cu"
b=$work/cbe
head -63 "$b/common/book.h" > "$b/common/book.h.cut" && echo '#endif' >> "$b/common/book.h.cut" && mv "$b/common/book.h.cut" "$b/common/book.h"
sed -i 's/^#define N   (33 \* 1024)/#define N   (3 * 1024)/' "$b/chapter05/add_loop_long_blocks.cu"
sed -i 's/^#define N   (32 \* 1024)/#define N   (2 * 1024)/' "$b/chapter04/add_loop_long.cu"
sed -i 's/^const int N = 33 \* 1024;/const int N = 3 * 1024;/' "$b/chapter05/dot.cu"
sed -i 's/^#define SIZE    (64\*1024\*1024)/#define SIZE    (4*1024)/' "$b/chapter10/copy_timed.cu"
# The book's `common/cpu_bitmap.h` draws with OpenGL (GLUT): replaced by a stand-in with the same
# struct, constructor and member functions the programs call, whose `display_and_exit` shows
# nothing but prints the image's size and a checksum of its bytes (the output these programs are
# checked by; they have no self-check of their own). The images are cut from 1024 to 64 pixels
# square.
cat > "$b/common/cpu_bitmap.h" <<'STUB'
/* A stand-in for CUDA by Example's common/cpu_bitmap.h, written by Strata's
 * tests/cuda_c/public/collect.sh: the members and member functions the programs use, without
 * OpenGL. `display_and_exit` shows nothing: it prints a checksum of the image. */
#ifndef __CPU_BITMAP_H__
#define __CPU_BITMAP_H__

struct CPUBitmap {
    unsigned char *pixels;
    int x, y;

    CPUBitmap(int width, int height, ...) {
        pixels = new unsigned char[width * height * 4];
        x = width;
        y = height;
    }

    unsigned char *get_ptr(void) { return pixels; }
    long image_size(void) { return x * y * 4; }

    void display_and_exit(void) {
        unsigned long sum = 0;
        for (int i = 0; i < x * y * 4; i++) sum = (sum * 31 + pixels[i]) % 1000000007;
        printf("bitmap %d x %d, checksum %lu\n", x, y, sum);
        delete[] pixels;
    }
};

#endif
STUB
sed -i 's/^#define DIM 1024/#define DIM 64/' "$b/chapter06/ray.cu" "$b/chapter06/ray_noconst.cu" "$b/chapter05/shared_bitmap.cu"
sed -i 's/^#define DIM 1000/#define DIM 64/' "$b/chapter04/julia_cpu.cu" "$b/chapter04/julia_gpu.cu"
sed -i 's/^#define SIZE    (100\*1024\*1024)/#define SIZE    (64*1024)/' "$b/chapter09/hist_cpu.cu" \
    "$b/chapter09/hist_gpu_gmem_atomics.cu" "$b/chapter09/hist_gpu_shmem_atomics.cu"
for f in basic_single_stream basic_double_stream basic_double_stream_correct; do
    sed -i 's/^#define N   (1024\*1024)/#define N   (1024)/' "$b/chapter10/$f.cu"
done

# PROGRAM|SUCCESS TEXT (a line the program prints only when its check passes)[|FAILURE TEXT (a
# line it prints when its check fails: the histograms print `Failure at i!` for each wrong bin)]
programs="
olcf/exercises/hw1/hello_solution.cu|Hello from block: 1, thread: 1
olcf/exercises/hw1/vector_add_solution.cu|C[0] = 1.234571
olcf/exercises/hw1/matrix_mul_solution.cu|Success!
olcf/exercises/hw2/matrix_mul_shared_solution.cu|Success!
olcf/exercises/hw3/vector_add_solution.cu|C[0] = 1.234571
olcf/exercises/hw4/matrix_sums_solution.cu|column sums correct!
olcf/exercises/hw5/matrix_sums.cu|column sums correct!
olcf/exercises/hw5/matrix_sums_solution.cu|column sums correct!
olcf/exercises/hw5/max_reduction.cu|reduction output: 8196.000000, expected sum reduction output: 8196.000000,
olcf/exercises/hw5/max_reduction_solution.cu|reduction output: 5.000000, expected sum reduction output: 8196.000000, expected max reduction output: 5.000000
olcf/exercises/hw5/reductions.cu|reduction warp shuffle sum correct!
olcf/exercises/hw8/task2/task2_solution.cu|PASS|FAIL
olcf/exercises/hw8/task3/task3.cu|PASS|FAIL
olcf/exercises/hw8/task3/task3_solution.cu|PASS|FAIL
cbe/chapter03/hello_world.cu|Hello, World!
cbe/chapter03/simple_kernel.cu|Hello, World!
cbe/chapter03/simple_kernel_params.cu|2 + 7 = 9
cbe/chapter03/simple_device_call.cu|2 + 7 = 9
cbe/chapter04/add_loop_cpu.cu|-9 + 81 = 72
cbe/chapter04/add_loop_gpu.cu|-9 + 81 = 72
cbe/chapter04/add_loop_long.cu|We did it!
cbe/chapter05/add_loop_blocks.cu|9 + 81 = 90
cbe/chapter05/add_loop_long_blocks.cu|We did it!
cbe/chapter05/dot.cu|Does GPU value 1.93179e+10 = 1.93179e+10?
cbe/chapter10/basic_single_stream.cu|Time taken:  0.0 ms
cbe/chapter10/basic_double_stream.cu|Time taken:  0.0 ms
cbe/chapter10/basic_double_stream_correct.cu|Time taken:  0.0 ms
cbe/chapter10/copy_timed.cu|Time using cudaHostAlloc:  0.0 ms
cbe/chapter05/shared_bitmap.cu|bitmap 64 x 64, checksum 820147954
cbe/chapter06/ray.cu|bitmap 64 x 64, checksum 163092525
cbe/chapter06/ray_noconst.cu|bitmap 64 x 64, checksum 163092525
cbe/chapter03/enum_gpu.cu|Max grid dimensions:  (2147483647, 65535, 65535)
cbe/chapter03/set_gpu.cu|ID of CUDA device closest to revision 1.3:  0
cbe/chapter04/julia_cpu.cu|bitmap 64 x 64, checksum 216319173
cbe/chapter04/julia_gpu.cu|bitmap 64 x 64, checksum 216319173
cbe/chapter09/hist_cpu.cu|Histogram Sum:  65536
cbe/chapter09/hist_gpu_gmem_atomics.cu|Histogram Sum:  65536|Failure at
cbe/chapter09/hist_gpu_shmem_atomics.cu|Histogram Sum:  65536|Failure at
"
pass=0
fail=0
while IFS='|' read -r prog want unwanted; do
    [ -z "$prog" ] && continue
    dir=$(dirname "$work/$prog")
    for dev in sim ${STRATA_CPU:+cpu}; do
        out=$(cd "$dir" && timeout 300 "$strata" run --device "$dev" "$(basename "$prog")" 2>&1)
        rc=$?
        if [ $rc -eq 0 ] && printf '%s\n' "$out" | grep -qF -- "$want" \
            && ! { [ -n "$unwanted" ] && printf '%s\n' "$out" | grep -qF -- "$unwanted"; }; then
            echo "pass  $dev  $prog"
            pass=$((pass + 1))
        else
            echo "FAIL  $dev  $prog (exit $rc)"
            printf '%s\n' "$out" | tail -5 | sed 's/^/      /'
            fail=$((fail + 1))
        fi
    done
done <<< "$programs"
echo "public programs: $pass passed, $fail failed"
[ $fail -eq 0 ]
