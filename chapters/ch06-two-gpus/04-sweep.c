/* 04-sweep.c - peer copy bandwidth between two GPUs against transfer size, each way.
 *
 * Chapter 1's sweep, between GPUs: for every size from --min to --max, doubling, it times
 * cudaMemcpyPeerAsync from GPU 0 to GPU 1 and from GPU 1 to GPU 0, peer access enabled both
 * ways, with CUDA events on the sending GPU's stream, and prints the median of each. Small
 * copies are ruled by the call's fixed cost, large ones by the link, as with PCIe copies from
 * the host; where the curve flattens is the size a program must move at once to get the link's
 * bandwidth.
 *
 *     04-sweep [--min SIZE] [--max SIZE] [--reps N] [--csv DIR]
 *
 * With no arguments it sweeps 4 KiB to 1 GiB. With --csv it also writes peer_sweep.csv into DIR
 * (`make measure`). It needs two GPUs or more (it uses 0 and 1); with fewer it says so and exits
 * 77 (skipped). Its last line is "PASSED" when the largest copy arrived intact each way, poisoned
 * destinations first, or "FAILED: why".
 */
#include "chapter.h"
#include "cuda_check.h"
#include "measure_csv.h"
#include "peer.h"
#include "units.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

/* Small copies are cheap to repeat; large ones are capped to about this many bytes per size. */
#define BYTES_PER_SIZE (1024.0 * 1024 * 1024)
#define MIN_REPS 5
#define MAX_REPS 50
#define MAX_SIZES 64

static const char usage[] =
    "[--min SIZE] [--max SIZE] [--reps N] [--csv DIR]\n"
    "       --min, --max  the smallest and largest copy, doubling between them; K, M, G\n"
    "                     multiply by 1024 (default 4K to 1G)\n"
    "       --reps        timed copies per size (default: 50 for small sizes, fewer for\n"
    "                     large ones, at least 5)\n"
    "       --csv         also write peer_sweep.csv into DIR";

typedef struct sweep_results {
    int count;
    size_t bytes[MAX_SIZES];
    int reps[MAX_SIZES];
    double gb_per_s[MAX_SIZES][2]; /* [size][from] */
} sweep_results;

static int reps_for(const sweep_options *opt, size_t bytes)
{
    if (opt->reps > 0)
        return opt->reps;
    double reps = BYTES_PER_SIZE / (double)bytes;
    return reps < MIN_REPS ? MIN_REPS : reps > MAX_REPS ? MAX_REPS : (int)reps;
}

static void sweep(gpu_pair *p, const sweep_options *opt, sweep_results *r)
{
    char size[32];
    printf("%10s  %12s  %12s   (GB/s, median)\n", "size", "GPU 0 -> 1", "GPU 1 -> 0");
    for (int s = 0; s < r->count; s++) {
        r->reps[s] = reps_for(opt, r->bytes[s]);
        printf("%10s", format_bytes(r->bytes[s], size, sizeof size));
        for (int from = 0; from < 2; from++) {
            r->gb_per_s[s][from] = gpu_pair_copy_median_gb_per_s(p, from, r->bytes[s], r->reps[s]);
            printf("  %12.2f", r->gb_per_s[s][from]);
        }
        printf("\n");
        fflush(stdout);
    }
}

static void write_csv(const sweep_options *opt, const sweep_results *r, bool peer_possible)
{
    measure_csv csv;
    FILE *f = gpu_pair_csv_create(&csv, 0, 1, peer_possible, opt->csv_dir, "peer_sweep.csv",
                                  "peer copy bandwidth between two GPUs against transfer size",
                                  "chapters/ch06-two-gpus/04-sweep");
    fprintf(f, "# unit: GB/s (10^9 bytes per second), median of reps copies timed by CUDA events\n"
               "bytes,reps,gpu0_to_gpu1,gpu1_to_gpu0\n");
    for (int s = 0; s < r->count; s++)
        fprintf(f, "%zu,%d,%.6g,%.6g\n", r->bytes[s], r->reps[s], r->gb_per_s[s][0],
                r->gb_per_s[s][1]);
    measure_csv_close(&csv);
}

int main(int argc, char **argv)
{
    sweep_options opt = {.min_bytes = 4096, .max_bytes = (size_t)1 << 30};
    sweep_options_parse(argc, argv, usage, &opt);
    (void)gpus_or_skip(2, argv[0]);

    sweep_results *r = calloc(1, sizeof *r);
    if (r == NULL)
        return verdict("no host memory for the results");
    r->count = doubling_sizes(opt.min_bytes, opt.max_bytes, r->bytes, MAX_SIZES);
    const size_t largest = r->bytes[r->count - 1];

    device_info second;
    CUDA_CHECK(device_info_query(1, &second));
    char link[64];
    gpu_pair p;
    gpu_pair_create(&p, 0, 1, largest);
    bool peer_possible = gpu_pair_peer_access(&p, true);
    printf("Peer copies between GPU 0 and GPU 1 (%s), linked by %s, peer access %s\n\n",
           second.name, gpu_pair_link_words(0, 1, link, sizeof link),
           peer_possible ? "enabled" : "impossible: the driver stages them");

    sweep(&p, &opt, r);

    /* The largest copy once more each way, into poisoned destinations. */
    const char *failure = NULL;
    for (int from = 0; from < 2; from++) {
        gpu_pair_poison(&p, 1 - from);
        (void)gpu_pair_copy_median_gb_per_s(&p, from, largest, 1);
        verdict_require(gpu_pair_arrived(&p, 1 - from, largest),
                        from == 0 ? "the largest copy from GPU 0 to GPU 1 did not arrive intact"
                                  : "the largest copy from GPU 1 to GPU 0 did not arrive intact",
                        &failure);
    }
    gpu_pair_destroy(&p);
    if (failure == NULL && opt.csv_dir != NULL)
        write_csv(&opt, r, peer_possible);
    free(r);
    return verdict(failure);
}
