/* 06-timing.c - timing a copy with CUDA events and with the host clock, and what each one sees.
 *
 * Three things to look at. First, the very first CUDA call of a process is
 * slow: it creates the context, the driver's state for this process on the
 * GPU; never let it into a measurement. Second, a cudaMemcpy from pageable
 * memory blocks the calling thread until its data has been staged for the
 * copy (NVIDIA's "API synchronization behavior"), which for a host-to-device
 * copy of any size is nearly all of it, so for large copies the host clock and
 * the events agree; for small ones the fixed cost of the call dominates, and
 * each clock sees a different part of it. Third,
 * events are timestamped by the GPU when its stream reaches them: ask for the
 * time between two events before the second has happened and the answer is
 * cudaErrorNotReady, not a number.
 */
#include "chapter.h"
#include "cuda_check.h"
#include "device_info.h"
#include "timing.h"
#include "units.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char usage[] =
    "[--sizes LIST] [--reps N] [--csv FILE]\n"
    "       --sizes  comma-separated copy sizes, K/M/G = 1024/1024^2/1024^3 (default 4,4K,1M,64M)\n"
    "       --reps   timed copies per size and clock; the median is reported (default 7)\n"
    "       --csv    also write size_bytes,event_ms,host_ms,event_gb_per_s,host_gb_per_s to FILE";

#define MAX_SIZES 32
#define MAX_REPS 1000
#define ASYNC_BYTES ((size_t)256 << 20) /* long enough for the host to ask too early */
#define AGREEMENT_FACTOR 2.0            /* events and host clock, on the largest copy */

typedef struct options {
    size_t sizes[MAX_SIZES];
    size_t size_count;
    int reps;
    const char *csv_path;
    char csv_partial[4096]; /* written here, renamed to csv_path once complete */
    FILE *csv;
} options;

static void parse_sizes(const char *argv0, char *list, options *opt)
{
    opt->size_count = 0;
    for (char *item = list, *end; item != NULL; item = end) {
        end = strchr(item, ',');
        if (end != NULL)
            *end++ = '\0';
        if (opt->size_count == MAX_SIZES)
            usage_error(argv0, usage, "--sizes: at most %d sizes", MAX_SIZES);
        if (!parse_size(item, &opt->sizes[opt->size_count++]))
            usage_error(argv0, usage, "--sizes: '%s' is not a size (e.g. 4,4K,1M,1G)", item);
    }
}

static options parse_options(int argc, char **argv)
{
    options opt = {.sizes = {4, 4 << 10, 1 << 20, 64 << 20}, .size_count = 4, .reps = 7};
    for (int a = 1; a < argc; a++) {
        const char *arg = argv[a];
        usage_exit_on_help(arg, argv[0], usage);
        bool known =
            strcmp(arg, "--sizes") == 0 || strcmp(arg, "--reps") == 0 || strcmp(arg, "--csv") == 0;
        if (!known)
            usage_error(argv[0], usage, "unexpected argument '%s'", arg);
        if (a + 1 == argc)
            usage_error(argv[0], usage, "%s needs a value", arg);
        char *value = argv[++a];
        if (strcmp(arg, "--sizes") == 0)
            parse_sizes(argv[0], value, &opt);
        else if (strcmp(arg, "--reps") == 0) {
            char *end;
            errno = 0;
            long reps = strtol(value, &end, 10);
            if (errno != 0 || end == value || *end != '\0' || reps < 1 || reps > MAX_REPS)
                usage_error(argv[0], usage, "--reps: '%s' is not a count from 1 to %d", value,
                            MAX_REPS);
            opt.reps = (int)reps;
        } else {
            /* Opened now, so that a path that cannot be written stops the
             * program before it measures; a run that dies half-way leaves
             * FILE.tmp and never a truncated FILE. */
            if (opt.csv != NULL)
                usage_error(argv[0], usage, "--csv given twice");
            opt.csv_path = value;
            snprintf(opt.csv_partial, sizeof opt.csv_partial, "%s.tmp", value);
            opt.csv = fopen(opt.csv_partial, "w");
            if (opt.csv == NULL)
                usage_error(argv[0], usage, "--csv: cannot write '%s': %s", opt.csv_partial,
                            strerror(errno));
        }
    }
    return opt;
}

/* The same header as 07-bandwidth-sweep's files: what, on which GPU, when. */
static void write_csv_header(FILE *csv, const options *opt)
{
    device_info info;
    char date[32];
    CUDA_CHECK(device_info_query(0, &info));
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    csv_write_provenance(
        csv, "host-to-device cudaMemcpy from pageable memory, CUDA events against the host clock",
        &info, date);
    fprintf(csv,
            "# unit: milliseconds and GB/s (10^9 bytes per second), median of %d copies each\n"
            "# made by: chapters/ch01-memory/06-timing\n"
            "size_bytes,event_ms,host_ms,event_gb_per_s,host_gb_per_s\n",
            opt->reps);
}

/* The first CUDA call of the process against the second: the first creates the context, a
 * one-off cost a measurement must leave out. */
static void first_calls(void)
{
    printf("The first CUDA call of the process, and the second (host clock)\n");
    /* listing: first-call */
    double start = host_clock_ms();
    CUDA_CHECK(cudaFree(0)); /* frees nothing; being first, it creates the context */
    double first_call_ms = host_clock_ms() - start;
    start = host_clock_ms();
    CUDA_CHECK(cudaFree(0));
    double second_call_ms = host_clock_ms() - start;
    /* end listing: first-call */
    printf("  cudaFree(0), first:  %10.3f ms  (creating the context)\n", first_call_ms);
    printf("  cudaFree(0), second: %10.3f ms\n", second_call_ms);
}

/* The first copy pays for setting up the driver's staging buffers; the second does not. */
static void first_copies(char *h_source, char *d_destination)
{
    double first_copy_ms[2];
    for (int i = 0; i < 2; i++) {
        const double start = host_clock_ms();
        CUDA_CHECK(cudaMemcpy(d_destination, h_source, 1, cudaMemcpyHostToDevice));
        first_copy_ms[i] = host_clock_ms() - start;
    }
    printf("  cudaMemcpy of 1 byte, first:  %10.3f ms\n", first_copy_ms[0]);
    printf("  cudaMemcpy of 1 byte, second: %10.3f ms\n", first_copy_ms[1]);
}

/* Each size's copy timed by events and by the host clock, the medians side by side; the
 * host/event ratio of the largest size, which the two clocks must agree on. */
static double compare_clocks(const options *opt, event_timer *timer, char *h_source,
                             char *d_destination, size_t largest)
{
    char size[32];
    printf("\nHost to device from pageable memory, median of %d copies per clock\n", opt->reps);
    printf("  %10s %12s %12s %12s %12s %11s\n", "size", "event ms", "host ms", "event GB/s",
           "host GB/s", "host/event");
    if (opt->csv)
        write_csv_header(opt->csv, opt);
    double *event_ms = host_alloc((size_t)opt->reps * sizeof(double));
    double *host_ms = host_alloc((size_t)opt->reps * sizeof(double));
    double largest_ratio = 0;
    for (size_t s = 0; s < opt->size_count; s++) {
        const size_t bytes = opt->sizes[s];
        CUDA_CHECK(cudaMemcpy(d_destination, h_source, bytes, cudaMemcpyHostToDevice)); /* warm */
        /* A copy timed by events, then one by the host clock, in turn: both clocks see the
         * machine as it is at that moment (on a GPU shared with other programs, the copies
         * of one moment can take twice as long as those of the next). */
        for (int r = 0; r < opt->reps; r++) {
            /* listing: event-timing */
            float elapsed_ms;
            CUDA_CHECK(event_timer_start(timer, 0)); /* records the start event in stream 0 */
            CUDA_CHECK(cudaMemcpy(d_destination, h_source, bytes, cudaMemcpyHostToDevice));
            CUDA_CHECK(event_timer_stop(timer, 0, &elapsed_ms)); /* record, wait, subtract */
            /* end listing: event-timing */
            event_ms[r] = elapsed_ms;
            /* listing: host-timing */
            double before = host_clock_ms();
            CUDA_CHECK(cudaMemcpy(d_destination, h_source, bytes, cudaMemcpyHostToDevice));
            host_ms[r] = host_clock_ms() - before; /* returned: the data is at least staged */
            /* end listing: host-timing */
        }
        double event = median_of(event_ms, (size_t)opt->reps);
        double host = median_of(host_ms, (size_t)opt->reps);
        double ratio = event > 0 ? host / event : 0;
        if (bytes == largest)
            largest_ratio = ratio;
        printf("  %10s %12.4f %12.4f %12.4f %12.4f %11.2f\n",
               format_bytes(bytes, size, sizeof size), event, host,
               bandwidth_gb_per_s(bytes, event), bandwidth_gb_per_s(bytes, host), ratio);
        if (opt->csv)
            fprintf(opt->csv, "%zu,%.6f,%.6f,%.6f,%.6f\n", bytes, event, host,
                    bandwidth_gb_per_s(bytes, event), bandwidth_gb_per_s(bytes, host));
    }
    free(event_ms);
    free(host_ms);
    printf("  For large copies the two clocks agree: a cudaMemcpy from pageable memory\n"
           "  returns once its data is staged, nearly the whole copy. For small ones the\n"
           "  fixed cost of a call dominates, and the clocks see different parts of it: the\n"
           "  host clock the whole call, the events only what the GPU did between them.\n");
    return largest_ratio;
}

/* An event's time asked for while its stream is still copying, then after waiting for it.
 * Returns what went wrong, or NULL. */
static const char *ask_too_early(event_timer *timer)
{
    char size[32];
    const char *failure = NULL;
    printf("\nAsking an event for its time too early (%s from pinned memory, own stream)\n",
           format_bytes(ASYNC_BYTES, size, sizeof size));
    char *h_pinned = NULL, *d_big = NULL;
    CUDA_CHECK(cudaMallocHost((void **)&h_pinned, ASYNC_BYTES));
    memset(h_pinned, 0x5A, ASYNC_BYTES);
    CUDA_CHECK(cudaMalloc((void **)&d_big, ASYNC_BYTES));
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreate(&stream));
    /* listing: event-not-ready */
    float async_ms = 0;
    CUDA_CHECK(cudaEventRecord(timer->start, stream));
    double issued = host_clock_ms();
    CUDA_CHECK(cudaMemcpyAsync(d_big, h_pinned, ASYNC_BYTES, cudaMemcpyHostToDevice, stream));
    double issue_ms = host_clock_ms() - issued; /* returns at once: the copy is queued */
    CUDA_CHECK(cudaEventRecord(timer->stop, stream));
    /* Expected to fail while the copy runs, so not through CUDA_CHECK. */
    cudaError_t too_early = cudaEventElapsedTime(&async_ms, timer->start, timer->stop);
    (void)cudaGetLastError();                      /* clear it: it was planned */
    CUDA_CHECK(cudaEventSynchronize(timer->stop)); /* wait until the GPU passes the stop event */
    CUDA_CHECK(cudaEventElapsedTime(&async_ms, timer->start, timer->stop));
    /* end listing: event-not-ready */
    printf("  cudaMemcpyAsync returned after %.3f ms: it only queued the copy\n", issue_ms);
    printf("  cudaEventElapsedTime right after recording the stop event -> %s\n",
           cudaGetErrorName(too_early));
    if (too_early == cudaErrorNotReady)
        printf("  (expected: the GPU had not reached the stop event yet)\n");
    else if (too_early == cudaSuccess)
        printf("  (the copy happened to finish before the question: no demonstration this time,\n"
               "   but nothing wrong either)\n");
    else
        failure = "cudaEventElapsedTime before the stop event returned neither "
                  "cudaErrorNotReady nor cudaSuccess";
    printf("  after cudaEventSynchronize: %.3f ms, %.1f GB/s\n", async_ms,
           bandwidth_gb_per_s(ASYNC_BYTES, async_ms));
    if (!(async_ms > 0) && failure == NULL)
        failure = "the asynchronous copy's event time is not positive";
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaFree(d_big));
    CUDA_CHECK(cudaFreeHost(h_pinned));
    return failure;
}

int main(int argc, char **argv)
{
    /* Nothing touches CUDA before first_calls, so its first call is the process's first. */
    options opt = parse_options(argc, argv);
    const char *failure = NULL;
    char size[32];

    first_calls();
    size_t largest = 0;
    for (size_t s = 0; s < opt.size_count; s++)
        largest = opt.sizes[s] > largest ? opt.sizes[s] : largest;
    char *h_source = host_alloc(largest);
    memset(h_source, 0x5A, largest); /* touch every page now, not during a timed copy */
    char *d_destination = NULL;
    CUDA_CHECK(cudaMalloc((void **)&d_destination, largest));
    first_copies(h_source, d_destination);

    event_timer timer;
    CUDA_CHECK(event_timer_create(&timer));
    const double largest_ratio = compare_clocks(&opt, &timer, h_source, d_destination, largest);
    if (largest >= ((size_t)1 << 20)) {
        bool agree = largest_ratio >= 1 / AGREEMENT_FACTOR && largest_ratio <= AGREEMENT_FACTOR;
        printf("  Largest copy (%s): host/event = %.2f, %s (within a factor of %.0f)\n",
               format_bytes(largest, size, sizeof size), largest_ratio,
               agree ? "they agree" : "THEY DISAGREE", AGREEMENT_FACTOR);
        if (!agree)
            failure = "events and the host clock disagree on the largest copy";
    } else
        printf("  (The largest copy is under 1 MiB, too small to compare the clocks.)\n");

    const char *too_early = ask_too_early(&timer);
    if (failure == NULL)
        failure = too_early;

    CUDA_CHECK(event_timer_destroy(&timer));
    CUDA_CHECK(cudaFree(d_destination));
    free(h_source);
    if (opt.csv != NULL) {
        if (fclose(opt.csv) != 0 || rename(opt.csv_partial, opt.csv_path) != 0) {
            if (failure == NULL)
                failure = "the CSV file could not be written";
        } else
            printf("\nwrote %s\n", opt.csv_path);
    }
    return verdict(failure);
}
