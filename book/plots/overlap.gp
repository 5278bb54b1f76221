# overlap.gp - the chunked pipeline's time against the number of streams, with the serial time
# and the ideal (the longest stage alone).
categories = 1
load "book/plots/common.gp"
set xrange [0.5:8.5]
set xtics 1
set xlabel "streams"
set ylabel "milliseconds (median)"
set yrange [0:*]
set key top right
plot data using 1:"serial_ms" with lines ls 3 title "serial: up, compute, down", \
     data using 1:"pipelined_ms" with linespoints ls 1 title "pipelined, in chunks", \
     data using 1:"ideal_ms" with lines ls 2 title "ideal: the longest stage"
