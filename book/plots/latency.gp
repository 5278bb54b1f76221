# latency.gp - what one cudaMemcpy call costs its caller, for small copies.
load "book/plots/common.gp"
set ylabel "microseconds per call (median)"
set logscale y 10
# The time axis spans the data, not whole decades.
lo = 1e30; hi = 0
do for [c = 2:5] {
    stats data using c nooutput
    lo = STATS_min < lo ? STATS_min : lo
    hi = STATS_max > hi ? STATS_max : hi
}
set yrange [lo / 1.4 : hi * 1.4]
set ytics ("1" 1, "2" 2, "5" 5, "10" 10, "20" 20, "50" 50, "100" 100, "200" 200, "500" 500, \
           "1000" 1000)
set xtics ("4 B" 4, "64 B" 64, "1 KiB" 1024, "16 KiB" 16384, "1 MiB" 1048576)
set key top left
plot data using 1:"h2d_pinned" with linespoints ls 1 title "host to device, pinned", \
     data using 1:"d2h_pinned" with linespoints ls 3 title "device to host, pinned", \
     data using 1:"d2h_pageable" with linespoints ls 4 title "device to host, pageable", \
     data using 1:"h2d_pageable" with linespoints ls 2 title "host to device, pageable"
