# bidirectional.gp - pinned copies one way alone, each way while the other runs, and both at once.
# Also given: link, the PCIe link's theoretical GB/s each way (0: unknown, no lines).
height = 580  # the key below the plot, off the lines (on a phone it covered them)
load "book/plots/common.gp"
set xlabel "bytes per copy"
set xtics ("4 MiB" 4194304, "16 MiB" 16777216, "64 MiB" 67108864, "256 MiB" 268435456, \
           "1 GiB" 1073741824)
set ylabel "GB/s (median)"
set yrange [0:*]
set key below horizontal maxcols 1 samplen 1.5 nobox
set style line 5 lc "#333333" lw 2.5 dt 1 pt 13 ps 0.8  # both directions together
if (link > 0) {
    set arrow from graph 0, first 2 * link to graph 1, first 2 * link nohead lc "#555555" dt 3 lw 1.5
    set label sprintf("PCIe theory, both ways: %.0f GB/s", 2 * link) at graph 0.98, first 2 * link \
        right offset 0, 0.8 font ",15" tc "#555555"
    set yrange [0:2 * link * 1.12]
}
plot data using 1:"total_both" with linespoints ls 5 title "both ways at once, total", \
     data using 1:"h2d_alone" with linespoints ls 1 title "host to device, alone", \
     data using 1:"d2h_alone" with linespoints ls 3 title "device to host, alone", \
     data using 1:"h2d_loaded" with linespoints ls 2 title "host to device, other way busy", \
     data using 1:"d2h_loaded" with linespoints ls 4 title "device to host, other way busy"
