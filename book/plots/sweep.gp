# sweep.gp - utilisation against the step's time, a panel for each batch size, a line for each
# variant, and the ideal (the step over the longest stage) dotted: the loader ring's, which is
# also the naive loop's (the same work, converted on the CPU), and the compact loop's
# (sweep.csv: variant, batch_samples, step_ms, loop_ms_per_batch, ideal_ms_per_batch,
# utilisation, ideal_utilisation). Up to three batch sizes: the smallest, the largest and the
# smallest of those between.
categories = 1
height = 1020  # three panels, one above the other, and the key on top
load "book/plots/common.gp"
stats data using "batch_samples" nooutput
sizes = STATS_min == STATS_max ? 1 : 2
first = STATS_min
last = STATS_max
middle = 0
stats data using (column("batch_samples") > first && column("batch_samples") < last ? \
                  column("batch_samples") : NaN) nooutput
if (STATS_records > 0) { middle = STATS_min; sizes = 3 }
stats data using "step_ms" nooutput
set logscale x 2
set xrange [STATS_min / 1.3 : STATS_max * 1.3]
set xtics 2 nomirror
set yrange [0:105]
set ytics 0, 25, 100
set ylabel "GPU in the step (%)"
set title ""
set key at screen 0.55, screen 0.955 center top vertical maxrows 3 samplen 1.2 width -1 nobox
set style line 5 lc "#2e8b57" lw 2 dt 1 pt 13 ps 0.6
pick(variant, samples, column) = (strcol(1) eq variant && column("batch_samples") == samples) ? \
                                 100 * column(column) : NaN
# The GPU's line and the key at the top of the page; the panels share the rest equally.
set label 2 gpu at screen 0.5, screen 0.975 center noenhanced
set multiplot layout sizes, 1 margins 0.17, 0.96, 0.09, 0.83 spacing 0, 0.075
do for [p = 1:sizes] {
    samples = p == 1 ? first : p == sizes ? last : middle
    set title sprintf("%d samples a batch (%.0f MiB of bytes)", samples, samples * 196608 / 1048576.0) \
        font ",15" offset 0, -0.5
    if (p == sizes) { set xlabel "milliseconds of GPU work per step" } else { unset xlabel }
    if (p > 1) { unset key; unset label 2 }
    plot data using "step_ms":(pick("naive", samples, "utilisation")) with linespoints ls 4 \
             title "naive", \
         data using "step_ms":(pick("loader_ring", samples, "utilisation")) with linespoints ls 1 \
             title "loader ring", \
         data using "step_ms":(pick("compact", samples, "utilisation")) with linespoints ls 5 \
             title "compact", \
         data using "step_ms":(pick("loader_ring", samples, "ideal_utilisation")) with lines \
             lc "#1f5fa8" dt 3 lw 1.5 title "ideal, CPU converting", \
         data using "step_ms":(pick("compact", samples, "ideal_utilisation")) with lines \
             lc "#2e8b57" dt 3 lw 1.5 title "ideal, GPU converting"
}
unset multiplot
