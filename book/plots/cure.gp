# cure.gp - the training loop cured one step at a time: each variant's milliseconds per batch
# beside its ideal (the longest stage alone, as that variant runs them), with the share of the
# time its GPU spent in the step above its bar (cure.csv: one row per variant, in order).
categories = 1
load "book/plots/common.gp"
stats data using "loop_ms_per_batch" nooutput
set xrange [-0.6 : STATS_records - 0.4]
set yrange [0 : STATS_max * 1.3]  # room for the labels and the key above the bars
set ylabel "milliseconds per batch"
set style fill solid 0.85 border -1
set boxwidth 0.38
set xtics () nomirror rotate by 30 right
set grid noxtics
set key top right
# Short names, so that the labels fit below the bars on a phone.
short(v) = v eq "pinned_async" ? "pinned+async" : v eq "loader_ring" ? "loader ring" : v
plot data using ($0 - 0.2):"loop_ms_per_batch" with boxes lc "#1f5fa8" title "the loop", \
     data using ($0 + 0.2):"ideal_ms_per_batch" with boxes lc "#bbbbbb" title "its ideal", \
     data using ($0 - 0.2):"loop_ms_per_batch":(sprintf("%.0f%%", 100 * column("utilisation"))) \
         with labels offset 0, 0.8 font ",15" notitle, \
     data using 0:(NaN):xtic(short(stringcolumn(1))) notitle
