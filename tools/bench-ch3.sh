#!/usr/bin/env bash
# bench-ch3.sh - chapter 3's figures against their references, on the GPU of this machine.
#
#   tools/bench-ch3.sh BUILD     (make bench-ch3 builds the programs first, then runs this)
#
# A benchmark, not a test: it prints, and fails only when a program fails or there is no GPU.
#   1. both directions at once (03-both-directions) against nvbandwidth's bidirectional figures,
#      when nvbandwidth is on the PATH or named by NVBANDWIDTH=path (a skip line otherwise);
#   2. the pipeline (04-pipeline) against its ideal and its serial version;
#   3. the staged pageable copy (06-staged-pageable) against plain pageable and pinned cudaMemcpy.
# Each program measures its own reference in the same run, from its --csv files.
set -uo pipefail
build=${1:-build}
programs=$build/chapters/ch03-streams
gpu=$("$build/tools/gpu_probe") || { echo "bench-ch3: no CUDA device: $gpu" >&2; exit 1; }
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
echo "bench-ch3: $gpu"

# run NAME ARGS...: runs a chapter 3 program quietly into $work; stops the benchmark if it fails.
run() {
    local name=$1
    shift
    if ! "$programs/$name" "$@" --csv "$work" >"$work/$name.txt" 2>&1; then
        echo "bench-ch3: $name failed:" >&2
        tail -n 5 "$work/$name.txt" >&2
        exit 1
    fi
}

# value FILE COLUMN ROW: COLUMN's value in the row whose first cell is ROW (last: the last row).
value() {
    awk -F, -v column="$2" -v row="$3" '
        /^#/ { next }
        !header { for (i = 1; i <= NF; i++) at[$i] = i; header = 1; next }
        row == "last" || $1 == row { found = $at[column] }
        END { print found }' "$1"
}

# --- 1. Both directions ---------------------------------------------------------------------
size=${BENCH_BYTES:-1G}
run 03-both-directions --sizes "$size"
csv=$work/bidirectional.csv
total=$(value "$csv" total_both last)
h2d_loaded=$(value "$csv" h2d_loaded last)
d2h_loaded=$(value "$csv" d2h_loaded last)
awk -v t="$total" -v h="$(value "$csv" h2d_alone last)" -v d="$(value "$csv" d2h_alone last)" \
    -v hl="$h2d_loaded" -v dl="$d2h_loaded" -v size="$size" 'BEGIN {
    printf "both directions, %s copies from pinned memory:\n", size
    printf "  course, one way alone:              H2D %6.1f  D2H %6.1f GB/s\n", h, d
    printf "  course, each while the other runs:  H2D %6.1f  D2H %6.1f GB/s, sum %6.1f\n", hl, dl, hl + dl
    printf "  course, both at once, total:                             %6.1f GB/s\n", t }'

nvbandwidth=${NVBANDWIDTH:-$(command -v nvbandwidth 2>/dev/null)}
# nvbandwidth_gpu0 TESTCASE: the figure of device 0 (the first cell of row 0 of its matrix).
nvbandwidth_gpu0() {
    "$nvbandwidth" -t "$1" 2>&1 | tee -a "$work/nvbandwidth.txt" |
        awk '/^Running / { inside = 1; next } inside && $1 == "0" && NF >= 2 { print $2; exit }'
}
if [[ -z $nvbandwidth || ! -x $nvbandwidth ]]; then
    echo "  nvbandwidth: skipped: not installed (put it on the PATH, or NVBANDWIDTH=path/to/nvbandwidth)"
else
    h2d=$(nvbandwidth_gpu0 host_to_device_memcpy_ce)
    d2h=$(nvbandwidth_gpu0 device_to_host_memcpy_ce)
    h2d_bi=$(nvbandwidth_gpu0 host_to_device_bidirectional_memcpy_ce)
    d2h_bi=$(nvbandwidth_gpu0 device_to_host_bidirectional_memcpy_ce)
    if [[ -z $h2d || -z $d2h || -z $h2d_bi || -z $d2h_bi ]]; then
        echo "  nvbandwidth ($nvbandwidth): could not read its figures; its output:"
        sed 's/^/    /' "$work/nvbandwidth.txt" | tail -n 20
    else
        awk -v h="$h2d" -v d="$d2h" -v hb="$h2d_bi" -v db="$d2h_bi" -v t="$total" \
            -v hl="$h2d_loaded" -v dl="$d2h_loaded" 'BEGIN {
            printf "  nvbandwidth, one way:               H2D %6.1f  D2H %6.1f GB/s\n", h, d
            printf "  nvbandwidth, bidirectional tests:   H2D %6.1f  D2H %6.1f GB/s, sum %6.1f\n", hb, db, hb + db
            printf "  each bidirectional figure is one direction while the other runs: the course'"'"'s\n"
            printf "  total is %.2f times their sum; its own figures of that kind are %.2f (H2D) and\n", t / (hb + db), hl / hb
            printf "  %.2f (D2H) times nvbandwidth'"'"'s\n", dl / db }'
    fi
fi

# --- 2. The pipeline ----------------------------------------------------------------------------
run 04-pipeline --floats 256M --chunks 32
csv=$work/overlap.csv
awk -F, '/^#/ || /^streams/ { next }
    { serial = $2; ideal = $4; if ($1 >= 2 && (best == "" || $3 < best)) { best = $3; k = $1 } }
    END {
        printf "pipeline, 1 GiB in 32 chunks (copy up, compute, copy down):\n"
        printf "  best %.2f ms with %d streams: %.2f times the ideal (the longest stage alone, %.2f ms),\n", best, k, best / ideal, ideal
        printf "  %.2f times faster than serial (%.2f ms)\n", serial / best, serial }' "$csv"

# --- 3. The staged pageable copy -------------------------------------------------------------
run 06-staged-pageable --size 1G --threads 8,12 --buffers 2,4 --chunks 16M,64M
for direction in h2d d2h; do
    csv=$work/staged_$direction.csv
    awk -F, -v direction="$direction" '/^#/ || /^rank/ { next }
        $1 == 1 {
            printf "staged pageable copy, %s, 1 GiB: %.1f GB/s (%d threads, %d buffers of %d MiB),\n", \
                   direction == "h2d" ? "to the device" : "to the host", $5, $2, $3, $4 / 1048576
            printf "  %.2f times plain pageable cudaMemcpy (%.1f GB/s), %.0f%% of pinned (%.1f GB/s);\n", \
                   $5 / $7, $7, 100 * $5 / $8, $8
            printf "  threads created per chunk instead: %.1f GB/s\n", $6 }' "$csv"
done
