# naive_loop.gp - the naive training loop's utilisation, batch by batch: the step's time (events
# around it) over the time from one step's start to the next (naive_loop.csv: batch, loop_ms,
# step_ms, utilisation), with the whole run's (the steps' time over the loops') drawn across.
categories = 1
load "book/plots/common.gp"
stats data using "batch" nooutput
set xrange [STATS_min - 0.5 : STATS_max + 0.5]
set xtics auto
set xlabel "batch"
stats data using "step_ms" nooutput
steps = STATS_sum
stats data using "loop_ms" nooutput
overall = steps / STATS_sum
set ylabel "GPU in the step (%)"
set yrange [0:100]
set key top right
plot data using "batch":(100 * column("utilisation")) with linespoints ls 2 title "each batch", \
     100 * overall with lines lc "#555555" dt 3 lw 1.5 title sprintf("the whole run: %.0f%%", 100 * overall)
