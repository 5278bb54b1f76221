# timeline.gp - one pipeline run: a row per stream, a box per stage of each chunk, from the
# events recorded around it (timeline.csv: stream, stage, chunk, start_ms, end_ms).
categories = 1
load "book/plots/common.gp"
stats data using 5 nooutput
set xrange [0:STATS_max * 1.02]
set xtics auto
set xlabel "milliseconds after the start"
stats data using 1 nooutput
set yrange [STATS_max + 0.6:-0.6]  # stream 0 on top
set ytics 1
set ylabel "stream"
set grid noytics
set key above horizontal reverse Left samplen 1.5
set style fill solid 0.85 border lc "#ffffff"
box(stage) = strcol(2) eq stage ? ($4 + $5) / 2 : 1/0
plot data using (box("h2d")):1:(($5 - $4) / 2):(0.32) with boxxyerror lc "#1f5fa8" title "copy up", \
     data using (box("kernel")):1:(($5 - $4) / 2):(0.32) with boxxyerror lc "#2e8b57" title "compute", \
     data using (box("d2h")):1:(($5 - $4) / 2):(0.32) with boxxyerror lc "#c8551b" title "copy down"
