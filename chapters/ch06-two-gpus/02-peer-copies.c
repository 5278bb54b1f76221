/* 02-peer-copies.c - one buffer from GPU 0 to GPU 1, three ways, then both directions at once.
 *
 * Three ways to move the same bytes from one GPU's memory to another's, each timed by CUDA
 * events on GPU 0's stream (median of --reps copies):
 *
 *   peer access     cudaMemcpyPeerAsync with peer access enabled both ways
 *                   (cudaDeviceEnablePeerAccess): the copy goes straight over the link
 *                   between the GPUs, NVLink or PCIe;
 *   no peer access  the same call with peer access disabled: the driver stages the copy
 *                   through host memory of its own, crossing PCIe twice;
 *   staged by hand  GPU 0 to pinned host memory, then pinned memory to GPU 1, in chunks of
 *                   STAGING_CHUNK through two buffers, on a stream of each GPU, so that one
 *                   chunk goes up while the next comes down (chapter 3's pipeline).
 *
 * Then, peer access on, a copy from 0 to 1 and one from 1 to 0 at the same time on a stream of
 * each GPU: each direction's rate while the other runs (its own events), and the total (every
 * byte either way over the host's time for both). A link carries both directions at once, as
 * PCIe does for host copies (chapter 3).
 *
 *     02-peer-copies [--size SIZE] [--reps N] [--csv DIR]
 *
 * Where the two GPUs cannot have peer access (cudaDeviceCanAccessPeer says no: PCIe paths that
 * meet only across CPU sockets, say), "peer access" is the driver's staged copy as well, and the
 * program says so. It needs two GPUs or more (it uses 0 and 1); with fewer it says so and exits
 * 77 (skipped). Every way's copy is checked byte for byte after its timed copies, into a
 * destination poisoned before them; its last line is "PASSED" or "FAILED: which way".
 */
#include "chapter.h"
#include "cuda_check.h"
#include "measure_csv.h"
#include "peer.h"
#include "timing.h"
#include "units.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#define STAGING_CHUNK ((size_t)32 << 20)
#define MAX_REPS 100

static const char usage[] =
    "[--size SIZE] [--reps N] [--csv DIR]\n"
    "       --size  bytes to copy, K/M/G = 1024/1024^2/1024^3 (default 256M; make measure\n"
    "               passes 1G)\n"
    "       --reps  timed copies per way; the median is reported (default 5)\n"
    "       --csv   also write peer_copies.csv into DIR";

/* The ways, in the order the program takes them and the CSV's columns. */
enum way {
    PEER_ACCESS,
    NO_PEER_ACCESS,
    STAGED_BY_HAND,
    BOTH_0_TO_1,
    BOTH_1_TO_0,
    BOTH_TOTAL,
    WAYS
};
static const char *const way_columns[WAYS] = {"peer_access", "no_peer_access", "staged_by_hand",
                                              "both_0_to_1", "both_1_to_0",    "both_total"};
static const char *const way_words[WAYS] = {
    "cudaMemcpyPeerAsync, peer access enabled",
    "cudaMemcpyPeerAsync, peer access disabled (the driver stages it)",
    "staged by hand through pinned memory, two streams",
    "0 -> 1 while 1 -> 0 runs",
    "1 -> 0 while 0 -> 1 runs",
    "both directions together"};

/* The staging buffers of the copy by hand: buffer k is filled from GPU 0 (filled[k], an event
 * of GPU 0) and emptied into GPU 1 (emptied[k], of GPU 1) by turns. */
typedef struct staging {
    unsigned char *h_buffer[2]; /* pinned: with unified addressing any GPU can reach it */
    cudaEvent_t filled[2], emptied[2];
} staging;

static void staging_create(staging *s, const gpu_pair *p)
{
    for (int k = 0; k < 2; k++) {
        CUDA_CHECK(cudaMallocHost((void **)&s->h_buffer[k], STAGING_CHUNK));
        CUDA_CHECK(cudaSetDevice(p->gpu[0])); /* an event belongs to the current device */
        CUDA_CHECK(cudaEventCreateWithFlags(&s->filled[k], cudaEventDisableTiming));
        CUDA_CHECK(cudaSetDevice(p->gpu[1]));
        CUDA_CHECK(cudaEventCreateWithFlags(&s->emptied[k], cudaEventDisableTiming));
    }
    CUDA_CHECK(cudaSetDevice(p->gpu[0]));
}

static void staging_destroy(staging *s)
{
    for (int k = 0; k < 2; k++) {
        CUDA_CHECK(cudaFreeHost(s->h_buffer[k]));
        CUDA_CHECK(cudaEventDestroy(s->filled[k]));
        CUDA_CHECK(cudaEventDestroy(s->emptied[k]));
    }
}

/* listing: staged-by-hand */
/* One copy of p->bytes from GPU 0 to GPU 1 through the two pinned buffers: chunk i goes up on
 * GPU 0's stream into buffer i % 2, once GPU 1 has emptied that buffer of chunk i - 2, and down
 * on GPU 1's stream once it is there. Timed on GPU 0's stream, whose stop event waits for the
 * last chunk's arrival. Returns milliseconds. */
static double staged_copy_ms(gpu_pair *p, staging *s)
{
    cudaStream_t up = p->stream[0], down = p->stream[1];
    size_t chunks = (p->bytes + STAGING_CHUNK - 1) / STAGING_CHUNK;
    CUDA_CHECK(event_timer_start(&p->timer[0], up));
    for (size_t i = 0; i < chunks; i++) {
        int k = (int)(i % 2);
        size_t offset = i * STAGING_CHUNK;
        size_t bytes = p->bytes - offset < STAGING_CHUNK ? p->bytes - offset : STAGING_CHUNK;
        CUDA_CHECK(cudaSetDevice(p->gpu[0]));
        if (i >= 2)
            CUDA_CHECK(cudaStreamWaitEvent(up, s->emptied[k], 0)); /* GPU 1's event: allowed */
        CUDA_CHECK(cudaMemcpyAsync(s->h_buffer[k], p->d_source[0] + offset, bytes,
                                   cudaMemcpyDeviceToHost, up));
        CUDA_CHECK(cudaEventRecord(s->filled[k], up));
        CUDA_CHECK(cudaSetDevice(p->gpu[1]));
        CUDA_CHECK(cudaStreamWaitEvent(down, s->filled[k], 0));
        CUDA_CHECK(cudaMemcpyAsync(p->d_received[1] + offset, s->h_buffer[k], bytes,
                                   cudaMemcpyHostToDevice, down));
        CUDA_CHECK(cudaEventRecord(s->emptied[k], down));
    }
    CUDA_CHECK(cudaSetDevice(p->gpu[0]));
    CUDA_CHECK(cudaStreamWaitEvent(up, s->emptied[(chunks - 1) % 2], 0));
    float ms;
    CUDA_CHECK(event_timer_stop(&p->timer[0], up, &ms));
    return ms;
}
/* end listing: staged-by-hand */

/* What a staged copy's run needs: peer_medians' context. */
typedef struct staged_run {
    gpu_pair *p;
    staging *s;
} staged_run;

static void run_staged(void *context, double *gb_per_s)
{
    const staged_run *run = context;
    *gb_per_s = bandwidth_gb_per_s(run->p->bytes, staged_copy_ms(run->p, run->s));
}

/* listing: both-directions */
/* One copy each way at once, each on its own GPU's stream between its own events (events of
 * two GPUs cannot be compared); the total over the host's clock around both. */
static void both_directions(gpu_pair *p, double *there_ms, double *back_ms, double *total_ms)
{
    double start_ms = host_clock_ms();
    for (int from = 0; from < 2; from++) {
        CUDA_CHECK(cudaSetDevice(p->gpu[from]));
        CUDA_CHECK(cudaEventRecord(p->timer[from].start, p->stream[from]));
        CUDA_CHECK(cudaMemcpyPeerAsync(p->d_received[1 - from], p->gpu[1 - from], p->d_source[from],
                                       p->gpu[from], p->bytes, p->stream[from]));
        CUDA_CHECK(cudaEventRecord(p->timer[from].stop, p->stream[from]));
    }
    double *ms[2] = {there_ms, back_ms};
    for (int from = 0; from < 2; from++) {
        float elapsed;
        CUDA_CHECK(cudaEventSynchronize(p->timer[from].stop));
        CUDA_CHECK(cudaEventElapsedTime(&elapsed, p->timer[from].start, p->timer[from].stop));
        *ms[from] = elapsed;
    }
    *total_ms = host_clock_ms() - start_ms;
    CUDA_CHECK(cudaSetDevice(p->gpu[0]));
}
/* end listing: both-directions */

/* One run of both_directions, its three figures in GB/s. */
static void run_both_directions(void *context, double *gb_per_s)
{
    gpu_pair *p = context;
    double there_ms, back_ms, total_ms;
    both_directions(p, &there_ms, &back_ms, &total_ms);
    gb_per_s[0] = bandwidth_gb_per_s(p->bytes, there_ms);
    gb_per_s[1] = bandwidth_gb_per_s(p->bytes, back_ms);
    gb_per_s[2] = bandwidth_gb_per_s(2 * p->bytes, total_ms);
}

/* Every way, each into a poisoned destination and checked after its copies; the first way whose
 * bytes did not arrive, or NULL. */
static const char *measure_ways(gpu_pair *p, int reps, double gb_per_s[WAYS], bool *peer_possible)
{
    staging s;
    staging_create(&s, p);
    const char *failure = NULL;

    *peer_possible = gpu_pair_peer_access(p, true);
    gpu_pair_poison(p, 1);
    gb_per_s[PEER_ACCESS] = gpu_pair_copy_median_gb_per_s(p, 0, p->bytes, reps);
    verdict_require(gpu_pair_arrived(p, 1, p->bytes),
                    "the copy with peer access did not deliver GPU 0's bytes", &failure);

    gpu_pair_peer_access(p, false);
    gpu_pair_poison(p, 1);
    gb_per_s[NO_PEER_ACCESS] = gpu_pair_copy_median_gb_per_s(p, 0, p->bytes, reps);
    verdict_require(gpu_pair_arrived(p, 1, p->bytes),
                    "the copy without peer access did not deliver GPU 0's bytes", &failure);

    gpu_pair_poison(p, 1);
    peer_medians(run_staged, &(staged_run){p, &s}, reps, 1, &gb_per_s[STAGED_BY_HAND]);
    verdict_require(gpu_pair_arrived(p, 1, p->bytes),
                    "the copy staged by hand did not deliver GPU 0's bytes", &failure);

    gpu_pair_peer_access(p, true);
    gpu_pair_poison(p, 0);
    gpu_pair_poison(p, 1);
    peer_medians(run_both_directions, p, reps, 3, &gb_per_s[BOTH_0_TO_1]);
    verdict_require(gpu_pair_arrived(p, 1, p->bytes) && gpu_pair_arrived(p, 0, p->bytes),
                    "the copies both ways at once did not deliver each GPU's bytes", &failure);
    staging_destroy(&s);
    return failure;
}

static void write_csv(const peer_options *opt, const double gb_per_s[WAYS], bool peer_possible)
{
    measure_csv csv;
    FILE *f = gpu_pair_csv_create(&csv, 0, 1, peer_possible, opt->csv_dir, "peer_copies.csv",
                                  "copies from GPU 0 to GPU 1 three ways, and both ways at once",
                                  "chapters/ch06-two-gpus/02-peer-copies");
    fprintf(f,
            "# unit: GB/s (10^9 bytes per second), median of %d; both_*: each direction while "
            "the other runs, by its events, and the total by the host clock\n"
            "bytes,peer_access_possible",
            opt->reps);
    for (int w = 0; w < WAYS; w++)
        fprintf(f, ",%s", way_columns[w]);
    fprintf(f, "\n%zu,%d", opt->bytes, peer_possible);
    for (int w = 0; w < WAYS; w++)
        fprintf(f, ",%.2f", gb_per_s[w]);
    fprintf(f, "\n");
    measure_csv_close(&csv);
}

int main(int argc, char **argv)
{
    peer_options opt = {.bytes = (size_t)256 << 20, .reps = 5};
    peer_options_parse(argc, argv, usage, &opt, 1, MAX_REPS);

    device_info first, second;
    CUDA_CHECK(device_info_query(0, &first));
    CUDA_CHECK(device_info_query(1, &second));
    char link[64], size[32];
    printf("From GPU 0 (%s, %s) to GPU 1 (%s, %s), linked by %s: %s, median of %d\n\n", first.name,
           first.pci_bus_id, second.name, second.pci_bus_id,
           gpu_pair_link_words(0, 1, link, sizeof link), format_bytes(opt.bytes, size, sizeof size),
           opt.reps);

    gpu_pair p;
    gpu_pair_create(&p, 0, 1, opt.bytes);
    double gb_per_s[WAYS];
    bool peer_possible;
    const char *failure = measure_ways(&p, opt.reps, gb_per_s, &peer_possible);
    for (int w = 0; w < WAYS; w++)
        printf("  %-62s %8.1f GB/s\n", way_words[w], gb_per_s[w]);
    if (!peer_possible)
        printf("\nThese GPUs cannot have peer access (cudaDeviceCanAccessPeer): every way was "
               "staged through host memory.\n");
    gpu_pair_destroy(&p);
    if (failure == NULL && opt.csv_dir != NULL) /* figures from a broken copy are no figures */
        write_csv(&opt, gb_per_s, peer_possible);
    return verdict(failure);
}
