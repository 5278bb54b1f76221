# pinning_cost.gp - what getting and giving back pinned memory costs, per GiB, each way.
categories = 1
load "book/plots/common.gp"
set ylabel "ms per GiB (median)"
stats data using "get_ms_per_gib" nooutput
set yrange [0:STATS_max * 1.3]  # room for the key above the bars
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set xtics rotate by 35 right nomirror
set grid noxtics
set key top center horizontal
# Short names, so that the labels fit below the bars on a phone.
short(m) = m eq "malloc" ? "malloc+touch" : m eq "cudaMallocHost" ? "MallocHost" : \
           m eq "cudaHostAlloc_default" ? "HostAlloc" : m eq "cudaHostAlloc_portable" ? "Portable" : \
           m eq "cudaHostAlloc_mapped" ? "Mapped" : m eq "cudaHostAlloc_writecombined" ? "WriteComb." : \
           m eq "malloc_register" ? "malloc+Reg." : m eq "mmap_register" ? "mmap+Reg." : m
plot data using "get_ms_per_gib":xtic(short(stringcolumn(1))) lc "#1f5fa8" title "get", \
     data using "release_ms_per_gib" lc "#c8551b" title "give back"
