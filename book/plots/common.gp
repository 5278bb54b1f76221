# common.gp - what the book's plots share: an SVG that scales, sizes in binary units on a log axis,
# and one style per copy (colour: direction; dashes: pageable).
#
# Each plot is run as: gnuplot -e "data='FILE.csv'; out='FILE.svg'; gpu='GPU LINE'" PLOT.gp
set terminal svg size 640,430 dynamic font "DejaVu Sans,14" linewidth 1.5 background "white"
set output out
set datafile separator ","
set datafile columnheaders
set title gpu noenhanced font ",13"
set logscale x 2
# The data's own range, a little wider, so that the end points and their tics show.
stats data using 1 nooutput
set xrange [STATS_min / 1.25 : STATS_max * 1.25]
set xlabel "bytes per cudaMemcpy"
set xtics ("4 B" 4, "64 B" 64, "1 KiB" 1024, "16 KiB" 16384, "256 KiB" 262144, "4 MiB" 4194304, \
           "64 MiB" 67108864, "1 GiB" 1073741824)
set mxtics 4
set grid xtics ytics lc "#dddddd" lw 1 dt 1
set border 3
set xtics nomirror
set ytics nomirror
set key top left reverse Left noenhanced samplen 2.5 spacing 1.2 box lc "#cccccc"
set style line 1 lc "#1f5fa8" lw 2 dt 1 pt 7 ps 0.55  # host to device, pinned
set style line 2 lc "#1f5fa8" lw 2 dt 2 pt 9 ps 0.6   # host to device, pageable
set style line 3 lc "#c8551b" lw 2 dt 1 pt 5 ps 0.5   # device to host, pinned
set style line 4 lc "#c8551b" lw 2 dt 2 pt 11 ps 0.6  # device to host, pageable
