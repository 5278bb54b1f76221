# bandwidth.gp - bandwidth against transfer size, each direction, pinned and pageable.
# Also given: link, the PCIe link's theoretical GB/s each way (0: unknown, no line).
height = 520  # the key below the plot, off the lines (on a phone it covered them)
load "book/plots/common.gp"
set ylabel "GB/s (median)"
set yrange [0:*]
set key below horizontal maxcols 1 samplen 1.5 nobox
if (link > 0) {
    set arrow from graph 0, first link to graph 1, first link nohead lc "#555555" dt 3 lw 1.5
    set label sprintf("PCIe theory: %.1f GB/s each way", link) at graph 0.98, first link \
        right offset 0, 0.8 font ",15" tc "#555555"
    set yrange [0:link * 1.12]
}
plot data using 1:"h2d_pinned" with linespoints ls 1 title "host to device, pinned", \
     data using 1:"d2h_pinned" with linespoints ls 3 title "device to host, pinned", \
     data using 1:"d2h_pageable" with linespoints ls 4 title "device to host, pageable", \
     data using 1:"h2d_pageable" with linespoints ls 2 title "host to device, pageable"
