#!/usr/bin/env bash
# placeholder-data.sh - made-up CSV files shaped like 07-bandwidth-sweep's, for working on the
# book without a GPU.
#
#   book/placeholder-data.sh DIR     writes DIR/bandwidth.csv, latency.csv and summary.csv
#
# The numbers follow a simple model (a fixed cost per copy plus bytes over a bandwidth), not a
# measurement: every file says "PLACEHOLDER" where the GPU's name goes, the plots show it in
# their titles and the book opens with a warning. `make book-placeholder` writes them under
# build/ only; measured files come from `make measure` and go in measurements/.
set -euo pipefail
dir=${1:?usage: $0 DIR}
mkdir -p "$dir"
header() {
    printf '# %s\n# gpu: PLACEHOLDER (made-up numbers, not measured), driver 0.0, runtime 0.0, date %s\n' \
        "$1" "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    printf '# host: none\n# made by: book/placeholder-data.sh\n'
}
# Columns: h2d_pageable h2d_pinned d2h_pageable d2h_pinned; GB/s at large sizes, fixed cost in us.
model='split("8.5 55.2 15.6 55.3", rate); split("4 1.5 3 1.5", fixed); split("7 6 7 6", call)'
{
    header "cudaMemcpy bandwidth against transfer size"
    echo "# unit: GB/s (10^9 bytes per second), median of reps copies timed by CUDA events"
    echo "bytes,reps,h2d_pageable,h2d_pinned,d2h_pageable,d2h_pinned"
    awk "BEGIN { $model"'; for (b = 4; b <= 2^30; b *= 2) { line = b ",5";
        for (c = 1; c <= 4; c++) line = line sprintf(",%.4f", b / (fixed[c] * 1e3 + b / rate[c]));
        print line } }'
} >"$dir/bandwidth.csv"
{
    header "what one cudaMemcpy call costs its caller"
    echo "# unit: microseconds per call, host clock, median of 200 calls"
    echo "bytes,h2d_pageable,h2d_pinned,d2h_pageable,d2h_pinned"
    awk "BEGIN { $model"'; for (b = 4; b <= 2^20; b *= 2) { line = b;
        for (c = 1; c <= 4; c++) line = line sprintf(",%.2f", call[c] + b / (rate[c] * 1e3));
        print line } }'
} >"$dir/latency.csv"
{
    header "the figures the book quotes"
    printf 'key,value\ngpu,PLACEHOLDER (made-up numbers, not measured)\n'
    printf 'driver,0.0\nruntime,0.0\ndate,%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    cat <<'CSV'
largest_bytes,1073741824
h2d_pageable_gb_per_s,8.50
h2d_pinned_gb_per_s,55.20
d2h_pageable_gb_per_s,15.60
d2h_pinned_gb_per_s,55.30
d2d_gb_per_s,4200.0
smallest_bytes,4
smallest_h2d_pageable_us,7.00
smallest_h2d_pinned_us,6.00
smallest_d2h_pageable_us,7.00
smallest_d2h_pinned_us,6.00
context_ms,300
memory_total_bytes,150000000000
memory_peak_gb_per_s,4800
copy_engines,7
pcie_generation,5
pcie_lanes,16
pcie_gb_per_s,63.0
CSV
} >"$dir/summary.csv"
echo "placeholder data (not measured) in $dir"
