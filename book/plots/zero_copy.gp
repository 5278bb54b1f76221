# zero_copy.gp - a kernel reading mapped host memory, against copying first, by passes over it.
categories = 1
load "book/plots/common.gp"
set logscale x 2
set logscale y 10
set xlabel "passes over the data"
set ylabel "ms (median)"
stats data using 1 nooutput
set xrange [STATS_min / 1.25 : STATS_max * 1.25]
set xtics 2
set key top left
plot data using 1:"zero_copy_ms" with linespoints ls 1 title "zero-copy", \
     data using 1:"copy_then_read_ms" with linespoints ls 3 title "copy, then read"
