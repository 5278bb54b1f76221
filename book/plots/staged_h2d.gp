# staged_h2d.gp - the staged pageable copy to the device against the number of host threads, a
# line for each chunk size, with the ring's size of the fastest combination; plain pageable and
# pinned cudaMemcpy for reference (staged_h2d.csv: rank 1 is the fastest; the rows by ring, chunk, threads).
categories = 1
height = 520  # the key below the plot, off the lines (on a phone it covered them)
load "book/plots/common.gp"
stats data using 2 nooutput
set xrange [0:STATS_max + 1]
set xtics (1, 2, 4, 8, 12, 16)
set xlabel "host threads"
set ylabel "GB/s (median)"
# The fastest row (rank 1) names the ring's size drawn; every row repeats the plain copies'.
ring = 0
stats data using ($1 == 1 ? $3 : NaN) nooutput
ring = STATS_min
stats data using 8 nooutput
pinned = STATS_max
stats data using 7 nooutput
pageable = STATS_max
set yrange [0:pinned * 1.15]
set key below horizontal maxcols 1 samplen 1.5 nobox
set arrow from graph 0, first pinned to graph 1, first pinned nohead lc "#555555" dt 3 lw 1.5
set label sprintf("pinned cudaMemcpy: %.1f GB/s", pinned) at graph 0.98, first pinned right \
    offset 0, 0.8 font ",15" tc "#555555"
set arrow from graph 0, first pageable to graph 1, first pageable nohead lc "#c8551b" dt 3 lw 1.5
set label sprintf("pageable cudaMemcpy: %.1f GB/s", pageable) at graph 0.98, first pageable right \
    offset 0, 0.8 font ",15" tc "#c8551b"
# The rows run by ring, chunk and threads, so each line's points are next to each other.
pick(chunk, column) = ($3 == ring && $4 == chunk) ? column(column) : NaN
plot data using 2:(pick(4194304, 5)) with linespoints ls 2 \
         title sprintf("4 MiB chunks, %d buffers", ring), \
     data using 2:(pick(16777216, 5)) with linespoints ls 1 title "16 MiB chunks", \
     data using 2:(pick(67108864, 5)) with linespoints ls 3 title "64 MiB chunks", \
     data using 2:(pick(67108864, 6)) with linespoints ls 4 \
         title "64 MiB, threads per chunk"
