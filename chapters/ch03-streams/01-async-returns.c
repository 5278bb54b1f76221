/* 01-async-returns.c - cudaMemcpyAsync queues a copy and returns; what the host may touch before
 * it synchronises.
 *
 * First it times one copy to the device two ways at once: the host clock around the call,
 * which says when the call returned, and CUDA events around the copy in its stream, which say
 * how long the copy took. From pinned memory the call returns almost at once: it only queued
 * the copy. From pageable memory it returns only once the data has been staged, nearly the
 * whole copy: the copy engines cannot read pageable memory (chapter 1).
 *
 * Then it shows what "queued" means for the buffers, with the stream held busy for a while by
 * a kernel (gpu_work_keep_busy) so that the queued copies cannot start at once: a copy back to
 * the host has not written its destination when the call returns (the destination still holds
 * the poison it was filled with), and a copy to the device reads its source when it runs, not
 * when it is called (bytes overwritten after the call are the ones that arrive).
 *
 *     01-async-returns [--size SIZE] [--busy MS]
 *
 * Its verdict is on what arrived once the host synchronised, which must be exact; the
 * timings and the early looks are printed, not judged: a runtime that runs copies at once
 * (or a very fast machine) shows another picture, and says so.
 */
#include "chapter.h"
#include "cuda_check.h"
#include "gpu_work.h"
#include "timing.h"
#include "units.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POISON 0xFF
#define OVERWRITTEN_BYTES 4096 /* what the host changes after queuing the copy up */
#define EARLY_LOOK_BYTES 65536 /* what it reads too early: little, so that it reads in time */

static const char usage[] =
    "[--size SIZE] [--busy MS]\n"
    "       --size  bytes per copy; K, M, G multiply by 1024 (default 256M)\n"
    "       --busy  how long the stream is held busy before the copies of the second part,\n"
    "               in milliseconds, 1 to 5000 (default 50)";

typedef struct options {
    size_t bytes;
    int busy_ms;
} options;

static options parse_options(int argc, char **argv)
{
    options opt = {.bytes = (size_t)256 << 20, .busy_ms = 50};
    const option_spec specs[] = {
        {"--size", OPTION_SIZE, &opt.bytes, 0, 0},
        {"--busy", OPTION_COUNT, &opt.busy_ms, 1, 5000},
    };
    options_parse(argc, argv, usage, specs, sizeof specs / sizeof specs[0]);
    if (opt.bytes < OVERWRITTEN_BYTES)
        usage_error(argv[0], usage, "--size: %zu bytes is less than 4K", opt.bytes);
    return opt;
}

/* A pattern with no short period and no byte equal to POISON, so that a byte that holds
 * the pattern has arrived and one that holds the poison has not. */
static void fill_seeded_pattern(unsigned char *h_bytes, size_t bytes, uint32_t seed)
{
    for (size_t i = 0; i < bytes; i++)
        h_bytes[i] = (unsigned char)(((((uint32_t)i + seed) * 2654435761u) >> 24) % POISON);
}

static size_t bytes_equal(const unsigned char *a, const unsigned char *b, size_t bytes)
{
    size_t same = 0;
    for (size_t i = 0; i < bytes; i++)
        same += a[i] == b[i];
    return same;
}

/* listing: call-and-copy */
/* Queues one copy on `stream` between two events: *call_ms is how long the call kept the host
 * (host clock), *copy_ms how long the copy took in the stream (events). */
static void time_async_copy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind,
                            cudaStream_t stream, event_timer *timer, double *call_ms,
                            double *copy_ms)
{
    CUDA_CHECK(cudaEventRecord(timer->start, stream));
    double before = host_clock_ms();
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, stream));
    *call_ms = host_clock_ms() - before; /* the call has returned; the copy may not be done */
    float elapsed_ms;
    CUDA_CHECK(event_timer_stop(timer, stream, &elapsed_ms)); /* record, wait, subtract */
    *copy_ms = elapsed_ms;
}
/* end listing: call-and-copy */

/* The buffers of the demonstrations: pinned and pageable sources, a pinned destination, what
 * the device should end up with, and the device's buffer. */
typedef struct buffers {
    unsigned char *h_pinned_src, *h_pageable_src, *h_pinned_dst, *h_expected, *d_buffer;
    size_t bytes;
} buffers;

/* Part 1: how long cudaMemcpyAsync keeps the host, from pinned and from pageable memory, against
 * how long the copy takes. */
static void when_the_call_returns(const buffers *b, cudaStream_t stream, event_timer *timer)
{
    const size_t bytes = b->bytes;
    char size[32];
    printf("Part 1: when does cudaMemcpyAsync return? One %s copy to the device, each kind of "
           "host memory\n",
           format_bytes(bytes, size, sizeof size));
    printf("  %-10s %16s %14s %10s\n", "source", "call returned", "copy took", "returned");
    const struct {
        const char *name;
        const unsigned char *h_src;
    } sources[] = {{"pinned", b->h_pinned_src}, {"pageable", b->h_pageable_src}};
    double call_ms[2], copy_ms[2];
    for (int s = 0; s < 2; s++) {
        double ignored_call, ignored_copy; /* the first copy pays for setting things up */
        time_async_copy(b->d_buffer, sources[s].h_src, bytes, cudaMemcpyHostToDevice, stream, timer,
                        &ignored_call, &ignored_copy);
        time_async_copy(b->d_buffer, sources[s].h_src, bytes, cudaMemcpyHostToDevice, stream, timer,
                        &call_ms[s], &copy_ms[s]);
        printf("  %-10s %13.3f ms %11.3f ms %9.0f%%\n", sources[s].name, call_ms[s], copy_ms[s],
               copy_ms[s] > 0 ? 100 * call_ms[s] / copy_ms[s] : 0);
    }
    printf("  (\"returned\": the call's time as a share of the copy's.)\n");
    if (call_ms[0] < 0.1 * copy_ms[0])
        printf("  From pinned memory the call returned after %.0f%% of the copy: it queued the "
               "copy\n  and left it to a copy engine.",
               100 * call_ms[0] / copy_ms[0]);
    else
        printf("  From pinned memory the call kept the host for most of the copy: this runtime\n"
               "  (or this size) copies before it returns, which real GPUs do not for pinned\n"
               "  memory and sizes past a few kilobytes.");
    printf(" From pageable memory it returned\n  after %.0f%%: it must first stage the data "
           "through the driver's pinned buffers,\n  and a large copy waits for most of that.\n",
           copy_ms[1] > 0 ? 100 * call_ms[1] / copy_ms[1] : 0);
}

/* Part 2, the copy back: what the destination holds right after the call, and after the
 * stream is synchronised. Returns what went wrong, or NULL. */
static const char *read_too_early(const buffers *b, cudaStream_t stream, int busy_ms)
{
    const size_t bytes = b->bytes;
    unsigned char *h_pinned_dst = b->h_pinned_dst, *d_buffer = b->d_buffer;
    const unsigned char *h_pinned_src = b->h_pinned_src;
    /* listing: too-early */
    /* The device holds the pattern; the copy back is queued behind a busy stream. */
    memset(h_pinned_dst, POISON, bytes);
    CUDA_CHECK(gpu_work_keep_busy(stream, busy_ms));
    CUDA_CHECK(cudaMemcpyAsync(h_pinned_dst, d_buffer, bytes, cudaMemcpyDeviceToHost, stream));
    size_t arrived_early = bytes_equal(h_pinned_dst, h_pinned_src, EARLY_LOOK_BYTES); /* early */
    CUDA_CHECK(cudaStreamSynchronize(stream));
    size_t arrived = bytes_equal(h_pinned_dst, h_pinned_src, bytes); /* now it is done */
    /* end listing: too-early */
    printf("  copy back: right after the call, %zu of the first %d bytes had arrived; after\n"
           "  cudaStreamSynchronize, %zu of all %zu\n",
           arrived_early, EARLY_LOOK_BYTES, arrived, bytes);
    if (arrived != bytes)
        return "the copy back did not deliver every byte, even after synchronising";
    if (arrived_early < EARLY_LOOK_BYTES)
        printf("  The destination still held its poison when the call returned: until the "
               "stream\n  is synchronised, a copy's destination is not yours to read.\n");
    else
        printf("  The data was already there when the call returned: this runtime ran the copy "
               "at\n  once. Real GPUs do not; read only after synchronising.\n");

    return NULL;
}

/* Part 2, the copy up: the host changes the source after queuing the copy, before it has run.
 * Returns what went wrong, or NULL. */
static const char *source_reused(const buffers *b, cudaStream_t stream, int busy_ms)
{
    const size_t bytes = b->bytes;
    unsigned char *h_pinned_src = b->h_pinned_src, *h_pinned_dst = b->h_pinned_dst;
    unsigned char *h_expected = b->h_expected, *d_buffer = b->d_buffer;
    /* listing: source-reused */
    /* The copy up is queued behind a busy stream; the host then changes the source. */
    memcpy(h_expected, h_pinned_src, bytes);
    CUDA_CHECK(gpu_work_keep_busy(stream, busy_ms));
    CUDA_CHECK(cudaMemcpyAsync(d_buffer, h_pinned_src, bytes, cudaMemcpyHostToDevice, stream));
    fill_seeded_pattern(h_pinned_src, OVERWRITTEN_BYTES, 2); /* too soon: the copy has not run */
    CUDA_CHECK(cudaStreamSynchronize(stream));
    /* end listing: source-reused */
    memset(h_pinned_dst, POISON, bytes);
    CUDA_CHECK(cudaMemcpy(h_pinned_dst, d_buffer, bytes, cudaMemcpyDeviceToHost));
    bool got_new = memcmp(h_pinned_dst, h_pinned_src, OVERWRITTEN_BYTES) == 0;
    bool got_old = memcmp(h_pinned_dst, h_expected, OVERWRITTEN_BYTES) == 0;
    bool rest_intact = memcmp(h_pinned_dst + OVERWRITTEN_BYTES, h_expected + OVERWRITTEN_BYTES,
                              bytes - OVERWRITTEN_BYTES) == 0;
    if (!rest_intact || (!got_new && !got_old))
        return "the copy up delivered neither the old bytes nor the new ones";
    if (got_new)
        printf("  copy up: the first %d bytes, overwritten by the host after the call, arrived "
               "as\n  overwritten: the copy read its source when it ran, not when it was "
               "called.\n  Leave the source alone until the copy is done.\n",
               OVERWRITTEN_BYTES);
    else
        printf("  copy up: the device got the bytes as they were at the call: this runtime "
               "copied\n  at once. On a GPU the copy reads its source when it runs.\n");

    return NULL;
}

int main(int argc, char **argv)
{
    options opt = parse_options(argc, argv);
    const size_t bytes = opt.bytes;
    const char *failure = NULL;

    buffers b = {.bytes = bytes};
    b.h_pageable_src = host_alloc(bytes);
    b.h_expected = host_alloc(bytes);
    CUDA_CHECK(cudaMallocHost((void **)&b.h_pinned_src, bytes));
    CUDA_CHECK(cudaMallocHost((void **)&b.h_pinned_dst, bytes));
    CUDA_CHECK(cudaMalloc((void **)&b.d_buffer, bytes));
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreate(&stream));
    event_timer timer;
    CUDA_CHECK(event_timer_create(&timer));
    fill_seeded_pattern(b.h_pinned_src, bytes, 1);
    memcpy(b.h_pageable_src, b.h_pinned_src, bytes); /* touches every pageable page now */

    when_the_call_returns(&b, stream, &timer);
    gpu_work_require("to hold the stream busy in part 2");
    printf("\nPart 2: what the host may touch before it synchronises (the stream held busy for "
           "%d ms first)\n",
           opt.busy_ms);
    failure = read_too_early(&b, stream, opt.busy_ms);
    const char *reused = source_reused(&b, stream, opt.busy_ms);
    if (failure == NULL)
        failure = reused;

    CUDA_CHECK(event_timer_destroy(&timer));
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaFree(b.d_buffer));
    CUDA_CHECK(cudaFreeHost(b.h_pinned_dst));
    CUDA_CHECK(cudaFreeHost(b.h_pinned_src));
    free(b.h_expected);
    free(b.h_pageable_src);
    if (failure == NULL)
        printf("verified: after synchronising, every copy delivered exactly what it should\n");
    return verdict(failure);
}
