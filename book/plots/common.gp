# common.gp - what the book's plots share: an SVG of a fixed size, which the page scales down on a
# narrow screen; sizes in binary units on a log axis; one style per copy (colour: direction;
# dashes: pageable).
# The size and the font go together: on a phone the book is about 360 px wide, and a plot
# 560 px wide is drawn at 0.64 of its size, so 17 px text is read at 11 px (at 640 px and
# 14 px it was 7 px, too small to read).
#
# Each plot is run as: gnuplot -e "data='FILE.csv'; out='FILE.svg'; gpu='GPU LINE'" PLOT.gp
# A plot whose x axis is not a size in bytes sets categories = 1 before loading this file, and
# draws its own x axis.
# A plot with a long key below it sets height (in px) first.
if (!exists("height")) height = 420
set terminal svg size 560,height fixed font "DejaVu Sans,17" linewidth 1.5 background "white"
set output out
set datafile separator ","
set datafile columnheaders
set title gpu noenhanced
if (!exists("categories")) {
    set logscale x 2
    # The data's own range, a little wider, so that the end points and their tics show.
    stats data using 1 nooutput
    set xrange [STATS_min / 1.25 : STATS_max * 1.25]
    set xlabel "bytes per cudaMemcpy"
    # Few enough labels that they stay apart when a phone shrinks the plot to 60% of its size.
    set xtics ("4 B" 4, "256 B" 256, "16 KiB" 16384, "1 MiB" 1048576, "64 MiB" 67108864, \
               "1 GiB" 1073741824)
    set mxtics 4
}
set grid xtics ytics lc "#dddddd" lw 1 dt 1
set border 3
set xtics nomirror
set ytics nomirror
set key top left reverse Left noenhanced samplen 2.5 spacing 1.2 box lc "#cccccc"
set style line 1 lc "#1f5fa8" lw 2 dt 1 pt 7 ps 0.55  # host to device, pinned
set style line 2 lc "#1f5fa8" lw 2 dt 2 pt 9 ps 0.6   # host to device, pageable
set style line 3 lc "#c8551b" lw 2 dt 1 pt 5 ps 0.5   # device to host, pinned
set style line 4 lc "#c8551b" lw 2 dt 2 pt 11 ps 0.6  # device to host, pageable
