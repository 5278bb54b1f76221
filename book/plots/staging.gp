# staging.gp - a pageable cudaMemcpy against its two stages, in series and overlapped, each way.
height = 520
load "book/plots/common.gp"
set ylabel "GB/s (median)"
set yrange [0:*]
set xtics ("1 MiB" 1048576, "16 MiB" 16777216, "256 MiB" 268435456, "1 GiB" 1073741824)
set key below horizontal maxcols 2 samplen 1.5
set xlabel offset 0, 0.3
# Measured: lines with points; the models: the overlapped one dashed, the series one dotted.
set style line 5 lc "#1f5fa8" lw 1.5 dt 2
set style line 6 lc "#1f5fa8" lw 1.5 dt 3
set style line 7 lc "#c8551b" lw 1.5 dt 2
set style line 8 lc "#c8551b" lw 1.5 dt 3
plot data using 1:"h2d_pageable" with linespoints ls 1 title "H2D measured", \
     data using 1:"h2d_overlap" with lines ls 5 title "H2D overlapped", \
     data using 1:"h2d_series" with lines ls 6 title "H2D in series", \
     data using 1:"d2h_pageable" with linespoints ls 3 title "D2H measured", \
     data using 1:"d2h_overlap" with lines ls 7 title "D2H overlapped", \
     data using 1:"d2h_series" with lines ls 8 title "D2H in series"
