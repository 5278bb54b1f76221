/* 04-advice.c - telling the driver how managed memory will be used: cudaMemAdvise, each
 * advice measured on the access pattern it is for.
 *
 * Without advice, a managed page lives on one side at a time and moves to whichever side
 * touches it. Two patterns make that expensive, and each has its advice:
 *
 *   read by both: data that the host and the GPU both read, again and again, and nobody
 *   writes. Each kernel's read brings the pages to the GPU, each host read brings them back.
 *   cudaMemAdviseSetReadMostly lets each side keep a read-only copy of every page it reads
 *   (read duplication): after the first read, each reads its own copy, with no fault.
 *
 *   written by the host, read by the GPU: data that the host refills for every kernel (a
 *   batch of input, say). Each refill brings the pages back to the host, each kernel takes them
 *   over again. cudaMemAdviseSetPreferredLocation with the host keeps the pages in host memory:
 *   a GPU that faults on them maps them where they are, over the link, instead of moving them;
 *   cudaMemAdviseSetAccessedBy with the GPU maps them in its page tables beforehand, so that it
 *   does not fault at all.
 *
 * Each case allocates a buffer, advises it, and takes --reps + 1 rounds of its pattern, timing
 * the kernel's read (the checksum kernel, CUDA events) and the host's read or write (its clock);
 * the first round, which also makes the pages, is left out of the medians except where it is
 * quoted as the first read.
 *
 *     04-advice [--size SIZE] [--reps N] [--csv DIR]
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

static const char usage[] = MANAGED_USAGE("advice.csv");

/* The two patterns, and the advice tried on each (the first of each, none, is the baseline). */
typedef enum pattern { READ_BY_BOTH, HOST_WRITES_GPU_READS } pattern;
typedef enum advice { NO_ADVICE, READ_MOSTLY, PREFERRED_HOST, PREFERRED_HOST_ACCESSED_BY } advice;
typedef struct advice_case {
    pattern pattern;
    advice advice;
    const char *name, *words; /* in the CSV file; in the output */
} advice_case;
static const advice_case cases[] = {
    {READ_BY_BOTH, NO_ADVICE, "none", "no advice"},
    {READ_BY_BOTH, READ_MOSTLY, "read_mostly", "cudaMemAdviseSetReadMostly"},
    {HOST_WRITES_GPU_READS, NO_ADVICE, "none", "no advice"},
    {HOST_WRITES_GPU_READS, PREFERRED_HOST, "preferred_host", "SetPreferredLocation, the host"},
    {HOST_WRITES_GPU_READS, PREFERRED_HOST_ACCESSED_BY, "preferred_host_accessed_by",
     "the same, and SetAccessedBy, the GPU"},
};
#define CASES (sizeof cases / sizeof cases[0])
static const char *const pattern_names[] = {"read_by_both", "host_writes_gpu_reads"};

/* What a case measures: medians of the rounds after the first, and the first kernel read. */
typedef struct case_result {
    double first_kernel_ms, kernel_ms, host_ms;
} case_result;

/* listing: advise */
static void advise(void *managed, size_t bytes, advice advice, int device)
{
    const struct cudaMemLocation gpu = {.type = cudaMemLocationTypeDevice, .id = device};
    const struct cudaMemLocation host = {.type = cudaMemLocationTypeHost, .id = 0};
    if (advice == READ_MOSTLY) /* the location is ignored: each processor that reads gets a copy */
        CUDA_CHECK(cudaMemAdvise(managed, bytes, cudaMemAdviseSetReadMostly, gpu));
    if (advice == PREFERRED_HOST || advice == PREFERRED_HOST_ACCESSED_BY)
        CUDA_CHECK(cudaMemAdvise(managed, bytes, cudaMemAdviseSetPreferredLocation, host));
    if (advice == PREFERRED_HOST_ACCESSED_BY)
        CUDA_CHECK(cudaMemAdvise(managed, bytes, cudaMemAdviseSetAccessedBy, gpu));
}
/* end listing: advise */

typedef struct work {
    uint32_t *managed;
    unsigned long long *d_sum;
    event_timer timer;
    size_t bytes;
    int reps;
} work;

/* One case: a fresh buffer written on the host, advised, then rounds of its pattern. Returns
 * false when a checksum differs from the host's. */
static bool run_case(work *w, const advice_case *c, int device, case_result *result)
{
    const size_t words = w->bytes / sizeof(uint32_t);
    CUDA_CHECK(cudaMallocManaged((void **)&w->managed, w->bytes, cudaMemAttachGlobal));
    managed_fill_words(w->managed, words, 0);
    advise(w->managed, w->bytes, c->advice, device);
    unsigned long long want = gpu_work_checksum_host(w->managed, w->bytes, 1);

    double kernel_ms[MANAGED_MAX_REPS + 1], host_ms[MANAGED_MAX_REPS + 1];
    bool right = true;
    for (int r = 0; r <= w->reps; r++) {
        if (c->pattern == HOST_WRITES_GPU_READS) { /* the host refills it for every kernel */
            const double start = host_clock_ms();
            managed_fill_words(w->managed, words, (uint32_t)r + 1);
            host_ms[r] = host_clock_ms() - start;
            want = gpu_work_checksum_host(w->managed, w->bytes, 1);
        }
        right &= managed_timed_checksum(0, w->managed, w->bytes, w->d_sum, want, &w->timer,
                                        &kernel_ms[r]);
        if (c->pattern == READ_BY_BOTH) /* and the host reads it after every kernel */
            host_ms[r] = managed_touch_pages(w->managed, w->bytes);
    }
    CUDA_CHECK(cudaFree(w->managed));
    result->first_kernel_ms = kernel_ms[0];
    result->kernel_ms = median_of(kernel_ms + 1, (size_t)w->reps);
    result->host_ms = median_of(host_ms + 1, (size_t)w->reps);
    return right;
}

static void write_csv(const char *dir, size_t bytes, int reps, const case_result *results)
{
    measure_csv csv;
    FILE *f = measure_csv_create(&csv, dir, "advice.csv",
                                 "managed memory with and without cudaMemAdvise, on the pattern "
                                 "each advice is for",
                                 "chapters/ch04-managed/04-advice");
    fprintf(f,
            "# measure is pattern_advice_step, the row's name; unit: milliseconds; "
            "first_kernel_read is the first round's, the others the median "
            "of the %d rounds after it; kernels timed by CUDA events, the host by its clock\n"
            "measure,pattern,advice,step,bytes,ms,gb_per_s\n",
            reps);
    for (size_t i = 0; i < CASES; i++) {
        const char *host_step = cases[i].pattern == READ_BY_BOTH ? "host_read" : "host_write";
        const struct {
            const char *step;
            double ms;
        } rows[] = {{"first_kernel_read", results[i].first_kernel_ms},
                    {"kernel_read", results[i].kernel_ms},
                    {host_step, results[i].host_ms}};
        for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++)
            fprintf(f, "%s_%s_%s,%s,%s,%s,%zu,%.4f,%.3f\n", pattern_names[cases[i].pattern],
                    cases[i].name, rows[r].step, pattern_names[cases[i].pattern], cases[i].name,
                    rows[r].step, bytes, rows[r].ms, bandwidth_gb_per_s(bytes, rows[r].ms));
    }
    measure_csv_close(&csv);
}

int main(int argc, char **argv)
{
    const managed_options opt = managed_options_parse(argc, argv, usage);
    gpu_work_require("the kernel that reads the managed buffer");
    managed_refuse_oversubscription(opt.bytes, argv[0]);

    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    work w = {.bytes = opt.bytes, .reps = opt.reps};
    CUDA_CHECK(cudaMalloc((void **)&w.d_sum, sizeof *w.d_sum));
    CUDA_CHECK(event_timer_create(&w.timer));

    char size[32];
    printf("A managed buffer of %s for each case; the first kernel read, then medians of the\n"
           "%d rounds after it\n",
           format_bytes(opt.bytes, size, sizeof size), opt.reps);
    case_result results[CASES];
    const char *failure = NULL;
    for (size_t i = 0; i < CASES; i++) {
        if (i == 0 || cases[i].pattern != cases[i - 1].pattern)
            printf("%s\n  %-38s %14s %14s %14s\n",
                   cases[i].pattern == READ_BY_BOTH
                       ? "Read by both: a kernel reads it, then the host, every round"
                       : "Written by the host, read by the GPU: the host refills it for each "
                         "kernel",
                   "", "first kernel", "kernel",
                   cases[i].pattern == READ_BY_BOTH ? "host read" : "host write");
        verdict_require(run_case(&w, &cases[i], device, &results[i]),
                        "a checksum differs from the host's", &failure);
        printf("  %-38s %11.2f ms %11.2f ms %11.2f ms\n", cases[i].words,
               results[i].first_kernel_ms, results[i].kernel_ms, results[i].host_ms);
    }
    /* The cases in the order of the table: each pattern's first is its baseline, its last the
     * advice it is for. */
    const double none_a = results[0].kernel_ms + results[0].host_ms;
    const double none_b = results[2].kernel_ms + results[2].host_ms;
    printf("\nA round took %.1f times as long without advice as with read duplication, when both\n"
           "read; and %.1f times as long without advice as with the pages kept on the host and\n"
           "mapped for the GPU, when the host writes and the GPU reads.\n",
           none_a / (results[1].kernel_ms + results[1].host_ms),
           none_b / (results[4].kernel_ms + results[4].host_ms));
    if (opt.csv_dir != NULL)
        write_csv(opt.csv_dir, opt.bytes, opt.reps, results);

    CUDA_CHECK(event_timer_destroy(&w.timer));
    CUDA_CHECK(cudaFree(w.d_sum));
    return verdict(failure);
}
