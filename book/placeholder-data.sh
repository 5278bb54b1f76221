#!/usr/bin/env bash
# placeholder-data.sh - made-up CSV files shaped like `make measure`'s, for working on the book
# without a GPU.
#
#   book/placeholder-data.sh DIR     writes DIR/bandwidth.csv, latency.csv and summary.csv (as
#                                    chapter 1's 07-bandwidth-sweep would), staging.csv,
#                                    pinning_cost.csv, break_even.csv, zero_copy.csv and
#                                    limits.csv (as chapter 2's programs would), and
#                                    bidirectional.csv, overlap.csv, timeline.csv,
#                                    staged_h2d.csv and staged_d2h.csv (as chapter 3's would),
#                                    page_faults.csv, prefetch.csv and advice.csv (as chapter
#                                    4's 02-page-faults, 03-prefetch and 04-advice would), and
#                                    naive_loop.csv, stages.csv, cure.csv and sweep.csv (as
#                                    chapter 5's programs would) with against_pytorch.csv (as
#                                    `make bench-ch5` would), and peer_copies.csv,
#                                    remote_read.csv and peer_sweep.csv (as chapter 6's
#                                    02-peer-copies, 03-remote-read and 04-sweep would, on
#                                    two GPUs), and nvbandwidth_peer.csv (as make measure's
#                                    nvbandwidth run would there)
#
# The numbers follow a simple model (a fixed cost per copy plus bytes over a bandwidth), not a
# measurement: every file says "PLACEHOLDER" where the GPU's name goes, the plots show it in
# their titles and the book opens with a warning. `make book-placeholder` writes them under
# build/ only; measured files come from `make measure` and go in measurements/.
set -euo pipefail
dir=${1:?usage: $0 DIR}
mkdir -p "$dir"
header() {
    printf '# %s\n# gpu: PLACEHOLDER (made-up numbers, not measured), driver 0.0, runtime 0.0, date %s\n' \
        "$1" "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    printf '# host: none\n# made by: book/placeholder-data.sh\n'
}
# Columns: h2d_pageable h2d_pinned d2h_pageable d2h_pinned; GB/s at large sizes, fixed cost in us.
model='split("8.5 55.2 15.6 55.3", rate); split("4 1.5 3 1.5", fixed); split("7 6 7 6", call)'
{
    header "cudaMemcpy bandwidth against transfer size"
    echo "# unit: GB/s (10^9 bytes per second), median of reps copies timed by CUDA events"
    echo "bytes,reps,h2d_pageable,h2d_pinned,d2h_pageable,d2h_pinned"
    awk "BEGIN { $model"'; for (b = 4; b <= 2^30; b *= 2) { line = b ",5";
        for (c = 1; c <= 4; c++) line = line sprintf(",%.4f", b / (fixed[c] * 1e3 + b / rate[c]));
        print line } }'
} >"$dir/bandwidth.csv"
{
    header "what one cudaMemcpy call costs its caller"
    echo "# unit: microseconds per call, host clock, median of 200 calls"
    echo "bytes,h2d_pageable,h2d_pinned,d2h_pageable,d2h_pinned"
    awk "BEGIN { $model"'; for (b = 4; b <= 2^20; b *= 2) { line = b;
        for (c = 1; c <= 4; c++) line = line sprintf(",%.2f", call[c] + b / (rate[c] * 1e3));
        print line } }'
} >"$dir/latency.csv"
{
    header "the figures the book quotes"
    printf 'key,value\ngpu,PLACEHOLDER (made-up numbers, not measured)\n'
    printf 'driver,0.0\nruntime,0.0\ndate,%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    cat <<'CSV'
largest_bytes,1073741824
h2d_pageable_gb_per_s,8.50
h2d_pinned_gb_per_s,55.20
d2h_pageable_gb_per_s,15.60
d2h_pinned_gb_per_s,55.30
d2d_gb_per_s,4200.0
smallest_bytes,4
smallest_h2d_pageable_us,7.00
smallest_h2d_pinned_us,6.00
smallest_d2h_pageable_us,7.00
smallest_d2h_pinned_us,6.00
context_ms,300
memory_total_bytes,150000000000
memory_peak_gb_per_s,4800
copy_engines,7
pcie_generation,5
pcie_lanes,16
pcie_gb_per_s,63.0
CSV
} >"$dir/summary.csv"
# Chapter 2. The staging detour: memcpy a, DMA b, pageable near min(a, b); a fixed cost per copy.
{
    header "the staging detour: host memcpy, pinned DMA and pageable cudaMemcpy"
    echo "# unit: GB/s (10^9 bytes per second), made up"
    echo "bytes,h2d_memcpy,h2d_dma,h2d_pageable,h2d_series,h2d_overlap,d2h_memcpy,d2h_dma,d2h_pageable,d2h_series,d2h_overlap"
    awk 'function rate(b, peak, us) { return b / (us * 1e3 + b / peak) }
         function side(b, m, d, p) { m = rate(b, m, 2); d = rate(b, d, 2)
             return sprintf(",%.3f,%.3f,%.3f,%.3f,%.3f", m, d, p * (m < d ? m : d),
                            1 / (1 / m + 1 / d), m < d ? m : d) }
         BEGIN { for (b = 2^20; b <= 2^30; b *= 2)
                     print b side(b, b < 2^25 ? 20 : 9.1, 55.2, 0.95) side(b, 17, 55.3, 0.92) }'
} >"$dir/staging.csv"
{
    header "every way to get pinned host memory: its cost, copies and CPU speed"
    echo "# unit: milliseconds and GB/s, made up"
    echo "method,bytes,prepare_ms,get_ms,release_ms,get_ms_per_gib,release_ms_per_gib,h2d_gb_per_s,d2h_gb_per_s,cpu_read_gb_per_s,cpu_write_gb_per_s"
    cat <<'CSV'
malloc,1073741824,0,250,40,250,40,8.5,15.6,11,12
cudaMallocHost,1073741824,0,507,99,507,99,55.2,55.3,11,12
cudaHostAlloc_default,1073741824,0,505,98,505,98,55.2,55.3,11,12
cudaHostAlloc_portable,1073741824,0,508,99,508,99,55.2,55.3,11,12
cudaHostAlloc_mapped,1073741824,0,510,99,510,99,55.2,55.3,11,12
cudaHostAlloc_writecombined,1073741824,0,512,100,512,100,55.1,55.2,0.08,12
malloc_register,1073741824,250,49.5,18,49.5,18,55.2,55.3,11,12
mmap_register,1073741824,245,49,18,49,18,55.2,55.3,11,12
CSV
} >"$dir/pinning_cost.csv"
{
    header "after how many copies to the device pinning a buffer pays"
    echo "# unit: microseconds, made up"
    echo "bytes,pageable_us,pinned_us,register_us,malloc_host_us,malloc_us,register_copies,malloc_host_copies"
    awk 'function copies(cost, saved) { if (saved <= 0) return ""; if (cost <= 0) return 1
                                        return cost / saved == int(cost / saved) ? cost / saved : int(cost / saved) + 1 }
         BEGIN { for (b = 4096; b <= 2^30; b *= 2) {
             pageable = 3 + b / 8.5e3; pinned = 4 + b / 55.2e3
             reg = 20 + b * 67.5e3 / 2^30; host = 30 + b * 606e3 / 2^30; mall = 1 + b * 290e3 / 2^30
             printf "%d,%.3f,%.3f,%.3f,%.3f,%.3f,%s,%s\n", b, pageable, pinned, reg, host, mall,
                    copies(reg, pageable - pinned), copies(host - mall, pageable - pinned) } }'
} >"$dir/break_even.csv"
{
    header "a kernel reading mapped pinned host memory, against copying first"
    echo "# unit: milliseconds, made up"
    echo "passes,bytes,zero_copy_ms,copy_then_read_ms"
    awk 'BEGIN { b = 2^28; for (p = 1; p <= 64; p *= 2)
                     printf "%d,%d,%.4f,%.4f\n", p, b, p * b / 54.5e6, b / 55.2e6 + p * b / 3000e6 }'
} >"$dir/zero_copy.csv"
{
    header "how much a process may pin, and where pinned memory lives"
    printf '# unit: bytes and milliseconds, made up\nkey,value\n'
    cat <<'CSV'
memlock_soft_bytes,8388608
mem_total_bytes,2000000000000
available_before_bytes,1900000000000
available_pinned_bytes,1898900000000
available_after_bytes,1900000000000
pinned_bytes,1073741824
pin_ms_per_gib,510
absurd_bytes,1125899906842624
absurd_refused_as_allocation,1
numa_nodes,1
gpu_numa_node,-1
buffer_numa_node,0
CSV
} >"$dir/limits.csv"
# --- Chapter 3, shaped like 03-both-directions', 04-pipeline's and 06-staged-pageable's files ---
{
    header "copies one way and both ways at once, pinned memory, two streams"
    echo "# unit: GB/s (10^9 bytes per second), made up"
    echo "bytes,h2d_alone,d2h_alone,h2d_loaded,d2h_loaded,total_both"
    # A fixed cost of 10 us per copy before each rate: alone, while the other way runs, and both.
    awk 'function rate(b, r) { return b / (10e3 + b / r) }
         BEGIN { for (b = 2^22; b <= 2^30; b *= 4)
             printf "%d,%.2f,%.2f,%.2f,%.2f,%.2f\n", b, rate(b, 55.2), rate(b, 55.3),
                    rate(b, 50.6), rate(b, 50.4), rate(b, 50.6) + rate(b, 50.4) }'
} >"$dir/bidirectional.csv"
# The pipeline: 1 GiB each way at 55 GB/s alone, 50.5 both ways at once, a 0.5 ms kernel.
{
    header "a chunked pipeline (copy up, y = 2 x + 1, copy down) over 1 to 8 streams"
    echo "# unit: milliseconds, made up"
    echo "streams,serial_ms,pipelined_ms,ideal_ms,h2d_ms,kernel_ms,d2h_ms,bytes,chunks"
    awk 'BEGIN { h = 19.45; k = 0.5; d = 19.42; serial = h + k + d
         for (s = 1; s <= 8; s++)
             printf "%d,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%d,32\n", s, serial,
                    s == 1 ? serial * 1.01 : 21.3 + 0.8 / s, h, h, k, d, 2^30 }'
} >"$dir/overlap.csv"
# Its timeline: 32 chunks on 4 streams, each engine (copy up, compute, copy down) one chunk at a
# time, a chunk waiting for its stream's previous chunk.
{
    header "the timeline of one pipeline run over 4 streams, 32 chunks"
    echo "# unit: milliseconds after the run's start event, made up"
    echo "stream,stage,chunk,start_ms,end_ms"
    awk 'BEGIN { n = 32; streams = 4; up = 0.66; compute = 0.016; down = 0.66
         for (c = 0; c < n; c++) {
             s = c % streams
             ready = stream_free[s] + 0
             h0 = ready; h1 = (h0 > up_free ? h0 : up_free) + up; up_free = h1
             k1 = h1 + compute
             d1 = (k1 > down_free ? k1 : down_free) + down; down_free = d1
             stream_free[s] = d1
             printf "%d,h2d,%d,%.4f,%.4f\n%d,kernel,%d,%.4f,%.4f\n%d,d2h,%d,%.4f,%.4f\n",
                    s, c, h0, h1, s, c, h1, k1, s, c, k1, d1 } }'
} >"$dir/timeline.csv"
# The staged copy: host threads copy at 9.1 GB/s alone, 34 with 8 of them, 46 with 16; the link
# at 52 or 50; each chunk costs 40 us of synchronisation, and 30 us per thread created for it.
staged() { # DIRECTION-WORDS LINK-GB/S PAGEABLE-GB/S PINNED-GB/S
    header "a copy $1 staged by host threads through a ring of pinned buffers"
    echo "# unit: GB/s (10^9 bytes per second), made up"
    echo "rank,threads,buffers,chunk_bytes,pool_gb_per_s,per_chunk_gb_per_s,pageable_gb_per_s,pinned_gb_per_s"
    awk -v link="$2" -v pageable="$3" -v pinned="$4" '
        function gbps(i, b, chunk, created,   host, ms) {
            host = host_rate[i]
            ms = b == 1 ? chunk / host / 1e6 + chunk / link / 1e6 \
                        : chunk / (host < link ? host : link) / 1e6
            ms += 0.04 + created * 0.03 * threads[i]
            return chunk / ms / 1e6 }
        BEGIN { split("1 2 4 8 12 16", threads); split("9.1 17 26 34 40 46.2", host_rate)
            split("4194304 16777216 67108864", chunks)
            for (i = 1; i <= 6; i++) for (b = 1; b <= 4; b++) for (c = 1; c <= 3; c++)
                printf "%d,%d,%d,%.2f,%.2f,%.2f,%.2f\n", threads[i], b, chunks[c],
                       gbps(i, b, chunks[c], 0), gbps(i, b, chunks[c], 1), pageable, pinned }' |
        sort -t, -k4,4 -g -r | awk '{ print NR "," $0 }' | sort -t, -k3,3n -k4,4n -k2,2n
}
staged "to the device" 52 8.3 55.2 >"$dir/staged_h2d.csv"
staged "to pageable host memory" 50 14.9 55.3 >"$dir/staged_d2h.csv"
# --- Chapter 4, shaped like 02-page-faults' file ---
# 1 GiB: faults move it at 9 GB/s, the GPU reads it at 1200, a pinned copy at 55, the host writes
# it at 2.5 and brings its pages back at 7.
{
    header "managed memory: a kernel's first touch, once resident, and copying first"
    echo "# unit: milliseconds, made up"
    echo "step,bytes,ms,gb_per_s"
    awk 'BEGIN { b = 2^30; split("host_write kernel_first_read kernel_resident_read " \
                 "host_reads_one_word_a_page copy_from_pinned kernel_after_copy", step)
                 split("2.5 9 1200 7 55 1200", rate)
                 for (i = 1; i <= 6; i++) printf "%s,%d,%.4f,%.3f\n", step[i], b, b / rate[i] / 1e6,
                                               rate[i] }'
} >"$dir/page_faults.csv"
# 03-prefetch's: prefetches at 50 and 17 GB/s, pinned copies at 54 and 55, a kernel beside.
{
    header "managed memory prefetched to the GPU and back, against pinned copies"
    echo "# unit: milliseconds, made up"
    echo "step,bytes,ms,gb_per_s"
    awk 'BEGIN { b = 2^30; split("host_write prefetch_to_gpu prefetch_to_gpu_call " \
                 "kernel_after_prefetch prefetch_to_host prefetch_to_host_call " \
                 "host_touch_after_prefetch busy_kernel_alone " \
                 "beside_busy_kernel_prefetch_queued_first beside_busy_kernel_kernel_queued_first " \
                 "copy_to_gpu_from_pinned copy_to_pinned_from_gpu", step)
                 split("3.3 50 60 1200 12 15 300 50 28 49 55 55", rate)
                 for (i = 1; i <= 12; i++) {
                     ms = b / rate[i] / 1e6; moves = step[i] !~ /_call$|^busy/
                     printf "%s,%d,%.4f,%s\n", step[i], b, ms, moves ? sprintf("%.3f", rate[i]) : "" } }'
} >"$dir/prefetch.csv"
# 04-advice's: each pattern without advice and with the advice it is for.
{
    header "managed memory with and without cudaMemAdvise, on the pattern each advice is for"
    echo "# unit: milliseconds, made up"
    echo "measure,pattern,advice,step,bytes,ms,gb_per_s"
    awk 'BEGIN { b = 2^30
                 n = split("read_by_both none first_kernel_read 7|read_by_both none kernel_read 7|" \
                     "read_by_both none host_read 7|read_by_both read_mostly first_kernel_read 12|" \
                     "read_by_both read_mostly kernel_read 1200|read_by_both read_mostly host_read 300|" \
                     "host_writes_gpu_reads none first_kernel_read 7|host_writes_gpu_reads none kernel_read 7|" \
                     "host_writes_gpu_reads none host_write 3|" \
                     "host_writes_gpu_reads preferred_host first_kernel_read 20|" \
                     "host_writes_gpu_reads preferred_host kernel_read 40|" \
                     "host_writes_gpu_reads preferred_host host_write 8|" \
                     "host_writes_gpu_reads preferred_host_accessed_by first_kernel_read 40|" \
                     "host_writes_gpu_reads preferred_host_accessed_by kernel_read 40|" \
                     "host_writes_gpu_reads preferred_host_accessed_by host_write 8", row, "|")
                 for (i = 1; i <= n; i++) { split(row[i], f, " ")
                     printf "%s_%s_%s,%s,%s,%s,%d,%.4f,%.3f\n", f[1], f[2], f[3], f[1], f[2], f[3], b,
                            b / f[4] / 1e6, f[4] } }'
} >"$dir/advice.csv"

# --- Chapter 5, shaped like its four programs' files and make bench-ch5's ---
# One batch of 64 samples of 256 x 256 x 3 bytes (12 MiB, 48 MiB as floats), an 8 ms step, 4
# loaders. One thread reads 6 GB/s from the page cache and converts 2.5 GB/s of bytes; pageable
# copies 8.5 GB/s, pinned 54; the GPU converts a batch in 0.05 ms. feed_model prints, for a batch
# of SAMPLES and a step of STEP ms: read convert pageable pinned compact gpu_convert, in ms.
feed_model='function stages(samples, step,   b) { b = samples * 196608
                read = b / 6e6; convert = b / 2.5e6; pageable = 4 * b / 8.5e6
                pinned = 4 * b / 54e6; compact = b / 52e6; gpu_convert = b / 250e6
                naive = read + convert + pageable + step + 0.2
                ring_ideal = max3(step, pinned, (read + convert) / 4)
                compact_ideal = max3(step + gpu_convert, compact, read / 4) }
            function max3(a, b, c) { return a > b ? (a > c ? a : c) : (b > c ? b : c) }'
{
    header "the naive training loop: read, convert, cudaMemcpy from pageable memory, step, batch by batch"
    echo "# unit: milliseconds, made up"
    echo "batch,loop_ms,step_ms,utilisation"
    awk "$feed_model"'BEGIN { stages(64, 8)
         for (i = 0; i < 40; i++) { step = 8 + 0.02 * sin(i); loop = naive + 0.4 * sin(3 * i)
             if (i == 0) loop += 14  # the first batch: first touches, the driver setting up
             printf "%d,%.4f,%.4f,%.4f\n", i, loop, step, step / loop } }'
} >"$dir/naive_loop.csv"
{
    header "each stage of the training loop timed alone, one batch of 64 samples"
    echo "# unit: milliseconds per batch, medians, made up"
    echo "stage,ms_per_batch,bytes"
    awk "$feed_model"'BEGIN { stages(64, 8); b = 64 * 196608
         printf "read,%.4f,%d\nconvert,%.4f,%d\ncopy_pageable,%.4f,%d\ncopy_pinned,%.4f,%d\n",
                read, b, convert, b, pageable, 4 * b, pinned, 4 * b
         printf "copy_compact,%.4f,%d\ngpu_convert,%.4f,%d\nstep,%.4f,%d\n",
                compact, b, gpu_convert, b, 8, 4 * b
         printf "naive_loop,%.4f,%d\nideal,%.4f,%d\n", naive, 4 * b, ring_ideal, 4 * b }'
} >"$dir/stages.csv"
{
    header "the training loop cured one step at a time, each variant over the same batches"
    echo "# unit: milliseconds per batch, utilisation 0 to 1, made up"
    echo "variant,batches,loop_ms_per_batch,ideal_ms_per_batch,utilisation,link_bytes_per_batch"
    awk "$feed_model"'BEGIN { stages(64, 8); b = 64 * 196608
         async = max3(8, pinned, read + convert) + 0.5
         printf "naive,40,%.4f,%.4f,%.4f,%d\n", naive, ring_ideal, 8 / naive, 4 * b
         printf "pinned_async,40,%.4f,%.4f,%.4f,%d\n", async, ring_ideal, 8 / async, 4 * b
         printf "loader_ring,40,%.4f,%.4f,%.4f,%d\n", ring_ideal * 1.02, ring_ideal, 8 / (ring_ideal * 1.02), 4 * b
         printf "compact,40,%.4f,%.4f,%.4f,%d\n", compact_ideal * 1.01, compact_ideal,
                8 / (compact_ideal * 1.01), b }'
} >"$dir/cure.csv"
{
    header "utilisation against the step time and the batch size, for three variants"
    echo "# unit: milliseconds per batch, utilisation 0 to 1, made up"
    echo "variant,batch_samples,step_ms,loop_ms_per_batch,ideal_ms_per_batch,utilisation,ideal_utilisation"
    awk "$feed_model"'function row(variant, samples, step, loop, ideal) {
             printf "%s,%d,%g,%.4f,%.4f,%.4f,%.4f\n", variant, samples, step, loop, ideal, step / loop,
                    step / ideal < 1 ? step / ideal : 1 }
         BEGIN { split("16 64 256", sizes); split("1 2 4 8 16", steps)
             for (v = 1; v <= 3; v++) for (i = 1; i <= 3; i++) for (j = 1; j <= 5; j++) {
                 stages(sizes[i], steps[j])
                 if (v == 1) row("naive", sizes[i], steps[j], naive, ring_ideal)
                 if (v == 2) row("loader_ring", sizes[i], steps[j], ring_ideal * 1.03 + 0.05, ring_ideal)
                 if (v == 3) row("compact", sizes[i], steps[j], compact_ideal * 1.03 + 0.05, compact_ideal) } }'
} >"$dir/sweep.csv"
{
    header "the course's loader ring against PyTorch's DataLoader, the same data, batch and step"
    echo "# unit: batches per second, utilisation 0 to 1, made up"
    echo "loop,batches_per_s,utilisation"
    printf 'course_loader_ring,121.0,0.968\ncourse_compact,123.5,0.988\npytorch_dataloader,104.2,0.834\n'
} >"$dir/against_pytorch.csv"
# Chapter 6: two GPUs on PCIe, peer access possible; GB/s at large sizes, a fixed cost in us.
{
    header "copies from GPU 0 to GPU 1 three ways, and both ways at once"
    echo "# second gpu: PLACEHOLDER; link: PCIe, one PCIe switch; peer access: enabled"
    echo "# unit: GB/s (10^9 bytes per second), median of 5, made up"
    echo "bytes,peer_access_possible,peer_access,no_peer_access,staged_by_hand,both_0_to_1,both_1_to_0,both_total"
    echo "1073741824,1,50.10,11.80,24.60,41.20,40.70,81.30"
} >"$dir/peer_copies.csv"
{
    header "nvbandwidth's tests between GPUs: each test's SUM line, its cells and their mean"
    echo "test,sum_gb_per_s,cells,mean_gb_per_s"
    echo "device_to_device_memcpy_read_ce,101.40,2,50.70"
    echo "device_to_device_bidirectional_memcpy_read_ce,82.00,2,41.00"
} >"$dir/nvbandwidth_peer.csv"
{
    header "a kernel on GPU 1 reading GPU 0's memory, against copying first"
    echo "# second gpu: PLACEHOLDER; link: PCIe, one PCIe switch; peer access: enabled"
    echo "# unit: ms, median of 5, by GPU 1's events, made up"
    echo "bytes,peer_access_possible,direct_ms,copy_ms,copy_kernel_ms,copy_total_ms,local_ms"
    echo "1073741824,1,24.1000,21.4300,0.7600,22.1900,0.7500"
} >"$dir/remote_read.csv"
{
    header "peer copy bandwidth between two GPUs against transfer size"
    echo "# second gpu: PLACEHOLDER; link: PCIe, one PCIe switch; peer access: enabled"
    echo "# unit: GB/s (10^9 bytes per second), median of reps copies timed by CUDA events, made up"
    echo "bytes,reps,gpu0_to_gpu1,gpu1_to_gpu0"
    awk 'BEGIN { for (b = 4096; b <= 2^30; b *= 2) { reps = 2^30 / b; reps = reps < 5 ? 5 : reps > 50 ? 50 : reps
        printf "%d,%d,%.6g,%.6g\n", b, reps, b / (8e3 + b / 50.1), b / (8e3 + b / 49.6) } }'
} >"$dir/peer_sweep.csv"

echo "placeholder data (not measured) in $dir"
