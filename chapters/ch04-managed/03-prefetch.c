/* 03-prefetch.c - moving managed pages before the work needs them: cudaMemPrefetchAsync to the
 * GPU and back, on a stream, against a pinned cudaMemcpy of the same bytes.
 *
 * A prefetch tells the driver where pages will be wanted, and it moves them there in bulk, as
 * a copy on a stream, instead of a few pages at each fault. Each round the host writes the
 * managed buffer (so its pages are on the host), then, timed with CUDA events on one stream:
 * a prefetch to the GPU, the checksum kernel on the pages there, a prefetch back to the host;
 * then, on the host clock, the host touches one word of every page, which no longer faults.
 * For comparison, the same bytes go each way by cudaMemcpy between pinned memory and a
 * cudaMalloc buffer, in the same round.
 *
 * A prefetch is work queued on a stream like a copy: it runs beside kernels on other streams.
 * The round shows that too: a prefetch to the GPU queued beside a kernel that keeps another
 * stream busy as long as the prefetch took alone, the two timed from one start.
 *
 * CUDA 13 names where pages go with a struct cudaMemLocation (a device and its number, or the
 * host) and takes flags; CUDA 12's cudaMemPrefetchAsync took a device number, cudaCpuDeviceId
 * for the host. Code written for the old signature does not compile against the new one.
 *
 *     03-prefetch [--size SIZE] [--reps N] [--csv DIR]
 *
 * Its verdict is on the checksums, which must all equal the host's; the times are printed, not
 * judged. Like every chapter 4 program it refuses a buffer of more than a quarter of the free
 * device memory.
 */
#include "chapter.h"
#include "cuda_check.h"
#include "gpu_work.h"
#include "managed.h"
#include "measure_csv.h"
#include "timing.h"
#include "units.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static const char usage[] = MANAGED_USAGE("prefetch.csv");

/* The steps a round times, in its order; their names in the CSV file and in the output. The
 * two *_CALL steps are how long the host waited in cudaMemPrefetchAsync before it returned. */
enum step {
    HOST_WRITE,
    PREFETCH_TO_GPU,
    PREFETCH_TO_GPU_CALL,
    KERNEL_AFTER_PREFETCH,
    PREFETCH_TO_HOST,
    PREFETCH_TO_HOST_CALL,
    HOST_TOUCH_AFTER_PREFETCH,
    BUSY_ALONE,
    BESIDE_BUSY_PREFETCH_FIRST,
    BESIDE_BUSY_KERNEL_FIRST,
    COPY_TO_GPU,
    COPY_TO_HOST,
    STEPS
};
static const char *const step_names[STEPS] = {"host_write",
                                              "prefetch_to_gpu",
                                              "prefetch_to_gpu_call",
                                              "kernel_after_prefetch",
                                              "prefetch_to_host",
                                              "prefetch_to_host_call",
                                              "host_touch_after_prefetch",
                                              "busy_kernel_alone",
                                              "beside_busy_kernel_prefetch_queued_first",
                                              "beside_busy_kernel_kernel_queued_first",
                                              "copy_to_gpu_from_pinned",
                                              "copy_to_pinned_from_gpu"};
static const char *const step_words[STEPS] = {
    "the host writes the managed buffer",
    "cudaMemPrefetchAsync to the GPU",
    "  of which the host waited in the call",
    "the checksum kernel on the prefetched pages",
    "cudaMemPrefetchAsync back to the host",
    "  of which the host waited in the call",
    "the host reads one word of every 4 KiB page",
    "a kernel that keeps another stream busy, alone",
    "the kernel and a prefetch, the prefetch queued first",
    "the kernel and a prefetch, the kernel queued first",
    "cudaMemcpy from pinned memory to a cudaMalloc buffer",
    "cudaMemcpy from the cudaMalloc buffer to pinned memory"};
/* The steps that move no bytes of the buffer, whose GB/s would mean nothing. */
static bool moves_the_buffer(enum step s)
{
    return s != BUSY_ALONE && s != PREFETCH_TO_GPU_CALL && s != PREFETCH_TO_HOST_CALL;
}

typedef struct buffers {
    uint32_t *managed, *h_pinned;
    void *d_copy;
    unsigned long long *d_sum;
    cudaStream_t stream, other;
    struct cudaMemLocation gpu, host;
} buffers;

/* listing: prefetch-round */
/* A prefetch of the whole buffer to `where`, on b->stream, timed by its events; *call_ms gets
 * how long the call itself took to return, on the host clock. */
static double timed_prefetch(const buffers *b, size_t bytes, struct cudaMemLocation where,
                             event_timer *timer, double *call_ms)
{
    float elapsed = 0;
    CUDA_CHECK(event_timer_start(timer, b->stream));
    const double called = host_clock_ms();
    CUDA_CHECK(cudaMemPrefetchAsync(b->managed, bytes, where, 0, b->stream));
    *call_ms = host_clock_ms() - called;
    CUDA_CHECK(event_timer_stop(timer, b->stream, &elapsed));
    return elapsed;
}

/* The managed half of a round: written on the host, prefetched to the GPU, read there by a
 * kernel, prefetched back, touched on the host. Returns false when the checksum is wrong. */
static bool prefetch_round(const buffers *b, size_t bytes, uint32_t round, event_timer *timer,
                           double ms[STEPS])
{
    const double start = host_clock_ms();
    managed_fill_words(b->managed, bytes / sizeof(uint32_t), round); /* pages on the host */
    ms[HOST_WRITE] = host_clock_ms() - start;
    const unsigned long long want = gpu_work_checksum_host(b->managed, bytes, 1);

    ms[PREFETCH_TO_GPU] = timed_prefetch(b, bytes, b->gpu, timer, &ms[PREFETCH_TO_GPU_CALL]);
    const bool right = managed_timed_checksum(b->stream, b->managed, bytes, b->d_sum, want, timer,
                                              &ms[KERNEL_AFTER_PREFETCH]);
    ms[PREFETCH_TO_HOST] = timed_prefetch(b, bytes, b->host, timer, &ms[PREFETCH_TO_HOST_CALL]);
    ms[HOST_TOUCH_AFTER_PREFETCH] = managed_touch_pages(b->managed, bytes); /* no faults now */
    return right;
}
/* end listing: prefetch-round */

/* The kernel on b->other and a prefetch of the whole buffer (its pages on the host) to the GPU
 * on b->stream, both after one start event, queued in the order asked: how long until both
 * were done. The pages end on the GPU, where a checksum must find them right (`want`). */
static bool beside_busy(const buffers *b, size_t bytes, double busy_ms, bool kernel_first,
                        unsigned long long want, event_timer *timer, double *ms)
{
    cudaEvent_t start, prefetched, kept_busy;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&prefetched));
    CUDA_CHECK(cudaEventCreate(&kept_busy));
    CUDA_CHECK(cudaEventRecord(start, b->stream));
    CUDA_CHECK(cudaStreamWaitEvent(b->other, start, 0));
    if (kernel_first)
        CUDA_CHECK(gpu_work_keep_busy(b->other, busy_ms));
    CUDA_CHECK(cudaMemPrefetchAsync(b->managed, bytes, b->gpu, 0, b->stream));
    if (!kernel_first)
        CUDA_CHECK(gpu_work_keep_busy(b->other, busy_ms));
    CUDA_CHECK(cudaEventRecord(prefetched, b->stream));
    CUDA_CHECK(cudaEventRecord(kept_busy, b->other));
    CUDA_CHECK(cudaEventSynchronize(prefetched));
    CUDA_CHECK(cudaEventSynchronize(kept_busy));
    float prefetch_ms = 0, busy_done_ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&prefetch_ms, start, prefetched));
    CUDA_CHECK(cudaEventElapsedTime(&busy_done_ms, start, kept_busy));
    *ms = prefetch_ms > busy_done_ms ? prefetch_ms : busy_done_ms;
    CUDA_CHECK(cudaEventDestroy(kept_busy));
    CUDA_CHECK(cudaEventDestroy(prefetched));
    CUDA_CHECK(cudaEventDestroy(start));

    double unused;
    const bool right =
        managed_timed_checksum(b->stream, b->managed, bytes, b->d_sum, want, timer, &unused);
    CUDA_CHECK(cudaMemPrefetchAsync(b->managed, bytes, b->host, 0, b->stream));
    CUDA_CHECK(cudaStreamSynchronize(b->stream));
    return right;
}

/* A kernel holding b->other busy for busy_ms, timed alone, then beside a prefetch to the GPU,
 * queued after it and before it. The host may wait in cudaMemPrefetchAsync while the driver
 * does its part of the work: a kernel queued after the call starts only once it has returned.
 * h_pinned holds the round's pattern, as the managed buffer does. */
static bool overlap_round(const buffers *b, size_t bytes, double busy_ms, event_timer *timer,
                          double ms[STEPS])
{
    float elapsed = 0;
    CUDA_CHECK(event_timer_start(timer, b->other));
    CUDA_CHECK(gpu_work_keep_busy(b->other, busy_ms));
    CUDA_CHECK(event_timer_stop(timer, b->other, &elapsed));
    ms[BUSY_ALONE] = elapsed;
    const unsigned long long want = gpu_work_checksum_host(b->h_pinned, bytes, 1);
    bool right =
        beside_busy(b, bytes, busy_ms, false, want, timer, &ms[BESIDE_BUSY_PREFETCH_FIRST]);
    right &= beside_busy(b, bytes, busy_ms, true, want, timer, &ms[BESIDE_BUSY_KERNEL_FIRST]);
    return right;
}

/* The explicit way, for comparison: the same bytes each way between pinned memory and a
 * cudaMalloc buffer. h_pinned holds the round's pattern, as the managed buffer does, so the
 * copy's checksum must equal the managed one's. Returns false when it does not. */
static bool explicit_round(const buffers *b, size_t bytes, uint32_t round, event_timer *timer,
                           double ms[STEPS])
{
    managed_fill_words(b->h_pinned, bytes / sizeof(uint32_t), round);
    float elapsed = 0;
    CUDA_CHECK(event_timer_start(timer, b->stream));
    CUDA_CHECK(cudaMemcpyAsync(b->d_copy, b->h_pinned, bytes, cudaMemcpyHostToDevice, b->stream));
    CUDA_CHECK(event_timer_stop(timer, b->stream, &elapsed));
    ms[COPY_TO_GPU] = elapsed;
    double unused;
    const bool right =
        managed_timed_checksum(b->stream, b->d_copy, bytes, b->d_sum,
                               gpu_work_checksum_host(b->h_pinned, bytes, 1), timer, &unused);
    CUDA_CHECK(event_timer_start(timer, b->stream));
    CUDA_CHECK(cudaMemcpyAsync(b->h_pinned, b->d_copy, bytes, cudaMemcpyDeviceToHost, b->stream));
    CUDA_CHECK(event_timer_stop(timer, b->stream, &elapsed));
    ms[COPY_TO_HOST] = elapsed;
    return right;
}

static void write_csv(const char *dir, size_t bytes, int reps, const double ms[STEPS])
{
    measure_csv csv;
    FILE *f = measure_csv_create(&csv, dir, "prefetch.csv",
                                 "managed memory prefetched to the GPU and back, against pinned "
                                 "copies",
                                 "chapters/ch04-managed/03-prefetch");
    fprintf(f,
            "# unit: milliseconds, median of %d rounds; the GPU's steps timed by CUDA events, "
            "the host's by its clock (the *_call steps: how long the call took to return); "
            "gb_per_s empty where a step moves no bytes\nstep,bytes,ms,gb_per_s\n",
            reps);
    for (int s = 0; s < STEPS; s++) {
        fprintf(f, "%s,%zu,%.4f,", step_names[s], bytes, ms[s]);
        if (moves_the_buffer((enum step)s))
            fprintf(f, "%.3f", bandwidth_gb_per_s(bytes, ms[s]));
        fprintf(f, "\n");
    }
    measure_csv_close(&csv);
}

int main(int argc, char **argv)
{
    const managed_options opt = managed_options_parse(argc, argv, usage);
    gpu_work_require("the kernels beside the prefetches");
    managed_refuse_oversubscription(opt.bytes, argv[0]);

    buffers b;
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    b.gpu = (struct cudaMemLocation){.type = cudaMemLocationTypeDevice, .id = device};
    b.host = (struct cudaMemLocation){.type = cudaMemLocationTypeHost, .id = 0};
    CUDA_CHECK(cudaMallocManaged((void **)&b.managed, opt.bytes, cudaMemAttachGlobal));
    CUDA_CHECK(cudaMallocHost((void **)&b.h_pinned, opt.bytes));
    CUDA_CHECK(cudaMalloc(&b.d_copy, opt.bytes));
    CUDA_CHECK(cudaMalloc((void **)&b.d_sum, sizeof *b.d_sum));
    CUDA_CHECK(cudaStreamCreateWithFlags(&b.stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&b.other, cudaStreamNonBlocking));
    event_timer timer;
    CUDA_CHECK(event_timer_create(&timer));

    double samples[STEPS][MANAGED_MAX_REPS];
    const char *failure = NULL;
    for (int r = 0; r < opt.reps; r++) {
        double ms[STEPS];
        verdict_require(prefetch_round(&b, opt.bytes, (uint32_t)r, &timer, ms),
                        "a checksum after the prefetch differs from the host's", &failure);
        verdict_require(explicit_round(&b, opt.bytes, (uint32_t)r, &timer, ms),
                        "the checksum of the copy differs from the host's", &failure);
        verdict_require(overlap_round(&b, opt.bytes, ms[PREFETCH_TO_GPU], &timer, ms),
                        "a checksum after the prefetch beside a kernel differs from the host's",
                        &failure);
        for (int s = 0; s < STEPS; s++)
            samples[s][r] = ms[s];
    }
    double median[STEPS];
    for (int s = 0; s < STEPS; s++)
        median[s] = median_of(samples[s], (size_t)opt.reps);

    char size[32];
    printf("A managed buffer of %s, medians of %d rounds\n",
           format_bytes(opt.bytes, size, sizeof size), opt.reps);
    for (int s = 0; s < STEPS; s++) {
        if (s == BUSY_ALONE)
            printf("A prefetch beside a kernel on another stream\n");
        else if (s == COPY_TO_GPU)
            printf("The explicit way, for comparison\n");
        printf("  %-54s %10.3f ms", step_words[s], median[s]);
        if (moves_the_buffer((enum step)s))
            printf(" %9.1f GB/s", bandwidth_gb_per_s(opt.bytes, median[s]));
        printf("\n");
    }
    const double longer_alone =
        median[PREFETCH_TO_GPU] > median[BUSY_ALONE] ? median[PREFETCH_TO_GPU] : median[BUSY_ALONE];
    printf("\nThe prefetch to the GPU moved %.0f%% of what the pinned copy moved, and the one "
           "back\n%.0f%% of the copy back. Beside the kernel, the two took %.2f times as long as "
           "the\nlonger of them alone with the prefetch queued first, %.2f times with the kernel "
           "queued\nfirst (1: they overlapped entirely; 2: not at all).\n",
           100 * median[COPY_TO_GPU] / median[PREFETCH_TO_GPU],
           100 * median[COPY_TO_HOST] / median[PREFETCH_TO_HOST],
           median[BESIDE_BUSY_PREFETCH_FIRST] / longer_alone,
           median[BESIDE_BUSY_KERNEL_FIRST] / longer_alone);
    if (opt.csv_dir != NULL)
        write_csv(opt.csv_dir, opt.bytes, opt.reps, median);

    CUDA_CHECK(event_timer_destroy(&timer));
    CUDA_CHECK(cudaStreamDestroy(b.other));
    CUDA_CHECK(cudaStreamDestroy(b.stream));
    CUDA_CHECK(cudaFree(b.d_sum));
    CUDA_CHECK(cudaFree(b.d_copy));
    CUDA_CHECK(cudaFreeHost(b.h_pinned));
    CUDA_CHECK(cudaFree(b.managed));
    return verdict(failure);
}
