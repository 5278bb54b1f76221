# peer_sweep.gp - peer copy bandwidth between two GPUs against transfer size, each way
# (chapter 6's 04-sweep).
height = 470  # the key below the plot, off the lines
load "book/plots/common.gp"
set xlabel "bytes per cudaMemcpyPeerAsync"
set xtics ("4 KiB" 4096, "64 KiB" 65536, "1 MiB" 1048576, "16 MiB" 16777216, "256 MiB" 268435456, \
           "1 GiB" 1073741824)
set ylabel "GB/s (median)"
set yrange [0:*]
set key below horizontal maxcols 1 samplen 1.5 nobox
plot data using 1:"gpu0_to_gpu1" with linespoints ls 1 title "GPU 0 to GPU 1", \
     data using 1:"gpu1_to_gpu0" with linespoints ls 3 title "GPU 1 to GPU 0"
