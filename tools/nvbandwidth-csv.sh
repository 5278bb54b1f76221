#!/usr/bin/env bash
# nvbandwidth-csv.sh DIR - NVIDIA's nvbandwidth, run beside the course's own measurements.
#
# `make measure` calls it after the course's programs have written DIR/bandwidth.csv, so that
# the book can say how the course's pinned copies compare with NVIDIA's benchmark on the same
# machine in the same session. It writes DIR/nvbandwidth.csv (one row per test: its name and
# the GB/s of its SUM line) and DIR/nvbandwidth.txt (what nvbandwidth printed). The course
# does not depend on nvbandwidth: where it is not found (NVBANDWIDTH=PATH, or `nvbandwidth` on
# the PATH) this says so and writes nothing.
#
# Then its two tests between GPUs, for chapter 6 (device_to_device_memcpy_read_ce: each pair's copy
# alone; device_to_device_bidirectional_memcpy_read_ce: each direction while the other runs), into
# DIR/nvbandwidth_peer.csv: per test the sum of its matrix, its cells (one per ordered pair of
# GPUs) and their mean, which for two GPUs is one direction's figure. Where nvbandwidth waives them
# (one GPU, or GPUs without peer access) this says so and writes no such file: the book says its
# comparison was not measured.
set -uo pipefail
dir=${1:?usage: nvbandwidth-csv.sh DIR}
tool=${NVBANDWIDTH:-$(command -v nvbandwidth || true)}
if [[ -z $tool || ! -x $tool ]]; then
    echo "measure: nvbandwidth not found (NVBANDWIDTH=PATH, or on the PATH): no comparison with it this time"
    exit 0
fi
if [[ ! -f $dir/bandwidth.csv ]]; then
    echo "measure: $dir/bandwidth.csv is missing: nvbandwidth is run beside chapter 1's sweep" >&2
    exit 1
fi
# The copy engines' tests: one way each, then each way while the other direction runs.
tests=(host_to_device_memcpy_ce device_to_host_memcpy_ce
       host_to_device_bidirectional_memcpy_ce device_to_host_bidirectional_memcpy_ce)
if ! "$tool" -t "${tests[@]}" >"$dir/.nvbandwidth.txt" 2>&1; then
    echo "measure: $tool failed; its output:" >&2
    cat "$dir/.nvbandwidth.txt" >&2
    rm -f "$dir/.nvbandwidth.txt"
    exit 1
fi
mv "$dir/.nvbandwidth.txt" "$dir/nvbandwidth.txt"
rows=$(awk '$1 == "SUM" && $3 ~ /^[0-9.]+$/ { print $2 "," $3 }' "$dir/nvbandwidth.txt")
for test in "${tests[@]}"; do
    if ! grep -q "^$test," <<<"$rows"; then
        echo "measure: nvbandwidth printed no SUM line for $test (see $dir/nvbandwidth.txt)" >&2
        exit 1
    fi
done
version=$(sed -n 's/^nvbandwidth Version: *//p' "$dir/nvbandwidth.txt" | head -n 1)
{
    echo "# nvbandwidth's copy-engine bandwidths (its SUM lines), run after the course's programs"
    grep -E '^# (gpu|host):' "$dir/bandwidth.csv" # the same machine, the same session
    echo "# made by: nvbandwidth ${version:-(version not printed)}, $(basename "$tool") (make measure)"
    echo "test,gb_per_s"
    echo "$rows"
} >"$dir/nvbandwidth.csv"
echo "measure: nvbandwidth's figures in $dir/nvbandwidth.csv:"
sed 's/^/  /' <<<"$rows"

# Between GPUs. A waived test prints no matrix and no SUM line; its exit status then says nothing.
peer_tests=(device_to_device_memcpy_read_ce device_to_device_bidirectional_memcpy_read_ce)
rm -f "$dir/nvbandwidth_peer.csv"
"$tool" -t "${peer_tests[@]}" >"$dir/nvbandwidth_peer.txt" 2>&1
# Each test's matrix (the numeric cells after its "Running" line; N/A is a GPU with itself) and
# its SUM line: "test,sum,cells,mean".
peer_rows=$(awk '
    /^Running / { test = $2; sub(/\.$/, "", test); next }
    $1 == "SUM" && $3 ~ /^[0-9.]+$/ {
        if (cells[$2] > 0) printf "%s,%s,%d,%.2f\n", $2, $3, cells[$2], total[$2] / cells[$2]
        next }
    test != "" && $1 ~ /^[0-9]+$/ && NF >= 3 {
        for (i = 2; i <= NF; i++) if ($i ~ /^[0-9.]+$/) { cells[test]++; total[test] += $i } }
    ' "$dir/nvbandwidth_peer.txt")
missing=()
for test in "${peer_tests[@]}"; do
    grep -q "^$test," <<<"$peer_rows" || missing+=("$test")
done
if ((${#missing[@]} > 0)); then
    why="it printed no matrix or SUM line for them"
    grep -qi waived "$dir/nvbandwidth_peer.txt" &&
        why="it waived them: fewer than two GPUs, or no peer access between them"
    echo "measure: no nvbandwidth figures between GPUs (${missing[*]}): $why; its output is in"
    echo "         $dir/nvbandwidth_peer.txt"
    exit 0
fi
{
    echo "# nvbandwidth's tests between GPUs, run after the course's programs: each test's SUM line,"
    echo "# how many cells its matrix has (one per ordered pair of GPUs) and their mean"
    grep -E '^# (gpu|host):' "$dir/bandwidth.csv"
    echo "# made by: nvbandwidth ${version:-(version not printed)}, $(basename "$tool") (make measure)"
    echo "test,sum_gb_per_s,cells,mean_gb_per_s"
    echo "$peer_rows"
} >"$dir/nvbandwidth_peer.csv"
echo "measure: nvbandwidth's figures between GPUs in $dir/nvbandwidth_peer.csv:"
sed 's/^/  /' <<<"$peer_rows"
