#!/usr/bin/env bash
# nvbandwidth-csv.sh DIR - NVIDIA's nvbandwidth, run beside the course's own measurements.
#
# `make measure` calls it after the course's programs have written DIR/bandwidth.csv, so that
# the book can say how the course's pinned copies compare with NVIDIA's benchmark on the same
# machine in the same session. It writes DIR/nvbandwidth.csv (one row per test: its name and
# the GB/s of its SUM line) and DIR/nvbandwidth.txt (what nvbandwidth printed). The course
# does not depend on nvbandwidth: where it is not found (NVBANDWIDTH=PATH, or `nvbandwidth` on
# the PATH) this says so and writes nothing.
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
