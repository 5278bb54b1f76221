# break_even.gp - the copies to the device after which pinning a buffer pays, against its size.
load "book/plots/common.gp"
set xlabel "bytes per buffer (and per copy)"
set xtics ("4 KiB" 4096, "64 KiB" 65536, "1 MiB" 1048576, "16 MiB" 16777216, \
           "256 MiB" 268435456)
set ylabel "copies to break even"
set logscale y 10
set yrange [0.7:*]
set key top right
# A size where pinning never pays has no point: its cell is empty.
plot data using 1:"register_copies" with linespoints ls 1 title "cudaHostRegister", \
     data using 1:"malloc_host_copies" with linespoints ls 3 title "cudaMallocHost"
