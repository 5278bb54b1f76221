/* 05-stream-dependencies.c - one stream waits for another's copy: by the host, or by an event.
 *
 * A producer stream copies data up, late (it is held busy first, as if by earlier work); a
 * consumer stream computes on that data (y = 2 x + 1, gpu_work_scale_add) and copies the
 * result down. Three ways to order them:
 *
 *   none        the consumer is queued at once: it computes on whatever the device buffer
 *               holds, here the poison it was filled with. A race, shown.
 *   host waits  cudaStreamSynchronize(producer) before queuing the consumer: correct, but the
 *               host thread sits idle until the copy is done, and can queue nothing else.
 *   event       cudaEventRecord after the copy on the producer, cudaStreamWaitEvent on the
 *               consumer: correct, and the host queues everything at once and goes on.
 *
 * Last, polling: cudaEventQuery and cudaStreamQuery answer cudaErrorNotReady, "not yet",
 * without waiting, so the host can do something else between questions.
 *
 *     05-stream-dependencies [--floats N] [--busy MS]
 *
 * The verdict is on the two ordered ways, whose results must be exact; the race is shown,
 * not judged (a runtime that runs everything at once has none to show, and says so).
 */
#include "chapter.h"
#include "cuda_check.h"
#include "gpu_work.h"
#include "timing.h"
#include "units.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POISON 0xFF /* as floats: NaN, which no correct result is */

static const char usage[] =
    "[--floats N] [--busy MS]\n"
    "       --floats  floats copied and computed; K and M multiply by 1024 (default 4M)\n"
    "       --busy    how long the producer is held busy before its copy, in milliseconds,\n"
    "                 10 to 5000 (default 50)";

typedef struct options {
    size_t floats;
    int busy_ms;
} options;

static options parse_options(int argc, char **argv)
{
    options opt = {.floats = (size_t)4 << 20, .busy_ms = 50};
    const option_spec specs[] = {
        {"--floats", OPTION_SIZE, &opt.floats, 0, 0}, /* a count: K and M multiply by 1024 */
        {"--busy", OPTION_COUNT, &opt.busy_ms, 10, 5000},
    };
    options_parse(argc, argv, usage, specs, sizeof specs / sizeof specs[0]);
    if (opt.floats > SIZE_MAX / sizeof(float))
        usage_error(argv[0], usage, "--floats: %zu floats do not fit in memory", opt.floats);
    return opt;
}

enum ordering { NONE, HOST_WAITS, EVENT };
static const char *const ordering_names[] = {"none", "host waits", "event"};

typedef struct rig {
    float *h_in, *h_out, *h_expected; /* h_in, h_out pinned */
    float *d_in, *d_out;
    size_t floats;
    cudaStream_t producer, consumer;
    cudaEvent_t copied;
} rig;

/* Queues the producer's late copy and the consumer's work, ordered as asked; returns how long
 * the host spent queuing it all (ms), and leaves the result in h_out once synchronised. */
static double run(rig *r, enum ordering ordering, double busy_ms)
{
    size_t bytes = r->floats * sizeof(float);
    CUDA_CHECK(cudaMemset(r->d_in, POISON, bytes)); /* what a consumer that is early reads */
    memset(r->h_out, POISON, bytes);
    CUDA_CHECK(cudaDeviceSynchronize());

    double start = host_clock_ms();
    CUDA_CHECK(gpu_work_keep_busy(r->producer, busy_ms)); /* earlier work on the producer */
    CUDA_CHECK(cudaMemcpyAsync(r->d_in, r->h_in, bytes, cudaMemcpyHostToDevice, r->producer));
    if (ordering == HOST_WAITS) {
        /* listing: host-waits */
        CUDA_CHECK(cudaStreamSynchronize(r->producer)); /* the host thread stops here */
        /* end listing: host-waits */
    } else if (ordering == EVENT) {
        /* listing: event-wait */
        CUDA_CHECK(cudaEventRecord(r->copied, r->producer));
        CUDA_CHECK(cudaStreamWaitEvent(r->consumer, r->copied, 0)); /* the consumer waits */
        /* end listing: event-wait */
    }
    CUDA_CHECK(gpu_work_scale_add(r->consumer, r->d_out, r->d_in, r->floats, 2.0f, 1.0f));
    CUDA_CHECK(cudaMemcpyAsync(r->h_out, r->d_out, bytes, cudaMemcpyDeviceToHost, r->consumer));
    double queued_ms = host_clock_ms() - start;
    CUDA_CHECK(cudaStreamSynchronize(r->consumer));
    CUDA_CHECK(cudaStreamSynchronize(r->producer));
    return queued_ms;
}

static size_t correct_results(const rig *r)
{
    size_t correct = 0;
    for (size_t i = 0; i < r->floats; i++)
        correct += memcmp(&r->h_out[i], &r->h_expected[i], sizeof(float)) == 0;
    return correct;
}

int main(int argc, char **argv)
{
    options opt = parse_options(argc, argv);
    const char *failure = NULL;
    rig r = {.floats = opt.floats};
    size_t bytes = r.floats * sizeof(float);
    r.h_expected = host_alloc(bytes);
    CUDA_CHECK(cudaMallocHost((void **)&r.h_in, bytes));
    CUDA_CHECK(cudaMallocHost((void **)&r.h_out, bytes));
    CUDA_CHECK(cudaMalloc((void **)&r.d_in, bytes));
    CUDA_CHECK(cudaMalloc((void **)&r.d_out, bytes));
    for (size_t i = 0; i < r.floats; i++) {
        r.h_in[i] = (float)(i % 1021) - 510.0f;
        r.h_expected[i] = fmaf(2.0f, r.h_in[i], 1.0f);
    }
    CUDA_CHECK(cudaStreamCreateWithFlags(&r.producer, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&r.consumer, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreateWithFlags(&r.copied, cudaEventDisableTiming)); /* ordering only */
    gpu_work_require("to delay the producer and to compute");
    CUDA_CHECK(gpu_work_keep_busy(r.producer, 0)); /* loads the kernels, untimed */
    CUDA_CHECK(gpu_work_scale_add(r.consumer, r.d_out, r.d_in, r.floats, 2.0f, 1.0f));
    CUDA_CHECK(cudaDeviceSynchronize());

    char size[32];
    printf("The producer is busy for %d ms, then copies %s up; the consumer computes on it and\n"
           "copies the result down.\n\n",
           opt.busy_ms, format_bytes(bytes, size, sizeof size));
    printf("  %-11s %22s %24s\n", "ordering", "host busy queuing", "correct results");
    for (int o = NONE; o <= EVENT; o++) {
        double queued_ms = run(&r, (enum ordering)o, opt.busy_ms);
        size_t correct = correct_results(&r);
        printf("  %-11s %19.3f ms %14zu of %zu\n", ordering_names[o], queued_ms, correct, r.floats);
        if (o != NONE && correct != r.floats && failure == NULL)
            failure = o == HOST_WAITS ? "with the host waiting, some results were wrong"
                                      : "with an event between the streams, some results were "
                                        "wrong";
        if (o == NONE)
            printf("  %-11s %s\n", "",
                   correct < r.floats
                       ? "the race: the consumer computed on the poison the copy had not yet "
                         "replaced"
                       : "no race this time: this runtime ran the copy before the consumer "
                         "started");
    }
    printf("Both orderings are correct. With cudaStreamSynchronize the host waited for the copy\n"
           "before it could queue the consumer; with cudaStreamWaitEvent the GPU did the "
           "waiting,\nand the host was free as soon as it had queued everything.\n");

    /* listing: polling */
    /* Queue the late copy, then ask without waiting, doing other work between questions. */
    CUDA_CHECK(gpu_work_keep_busy(r.producer, opt.busy_ms));
    CUDA_CHECK(cudaMemcpyAsync(r.d_in, r.h_in, bytes, cudaMemcpyHostToDevice, r.producer));
    CUDA_CHECK(cudaEventRecord(r.copied, r.producer));
    long questions = 0;
    double polling_start = host_clock_ms();
    cudaError_t answer;
    while ((answer = cudaEventQuery(r.copied)) == cudaErrorNotReady)
        questions++;    /* a real program would do some of its own work here */
    CUDA_CHECK(answer); /* anything but cudaSuccess now is a real error */
    double polled_ms = host_clock_ms() - polling_start;
    CUDA_CHECK(cudaStreamQuery(r.producer)); /* nothing left in it: cudaSuccess */
    /* end listing: polling */
    printf("\nPolling: cudaEventQuery said cudaErrorNotReady %ld times in %.1f ms before the copy "
           "was done;\nthe host was free to work between the questions. cudaStreamQuery then "
           "found the producer\nidle.\n",
           questions, polled_ms);

    CUDA_CHECK(cudaEventDestroy(r.copied));
    CUDA_CHECK(cudaStreamDestroy(r.consumer));
    CUDA_CHECK(cudaStreamDestroy(r.producer));
    CUDA_CHECK(cudaFree(r.d_out));
    CUDA_CHECK(cudaFree(r.d_in));
    CUDA_CHECK(cudaFreeHost(r.h_out));
    CUDA_CHECK(cudaFreeHost(r.h_in));
    free(r.h_expected);
    if (failure == NULL)
        printf("verified: both ordered ways gave every one of the %zu results exactly\n", r.floats);
    return verdict(failure);
}
