/* 02-page-faults.c - what managed memory costs: a kernel's first touch of pages that live on
 * the host, the same kernel once they are on the GPU, and copying first instead.
 *
 * The host writes a managed buffer, so its pages live in host memory. Then, timed with CUDA
 * events, a kernel reads it (gpu_work_checksum, one pass over every 4-byte word): each page
 * it touches faults, and the driver moves it to the GPU while the kernel waits. The same
 * kernel again finds every page there and reads at the GPU's own speed. For comparison, the
 * same bytes go the explicit way: cudaMemcpy from pinned memory into a cudaMalloc buffer,
 * then the same kernel. Last, on the host clock, the host reads one word of every 4 KiB page
 * of the managed buffer: each page it touches comes back. Every figure is quoted as an
 * effective bandwidth, the buffer's bytes over the time.
 *
 * Each round writes the buffer again on the host (which brings every page back), so each
 * round's first read faults afresh; the medians of --reps rounds are printed.
 *
 * Managed memory can be asked for beyond what the GPU has (oversubscription): the driver then
 * evicts pages to make room, on a shared GPU other programs' as well. This program never does:
 * it refuses a size of more than a quarter of the device's free memory.
 *
 *     02-page-faults [--size SIZE] [--reps N] [--csv DIR]
 *
 * Its verdict is on the checksums, which must all equal the host's; the times are printed, not
 * judged.
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

static const char usage[] = MANAGED_USAGE("page_faults.csv");

/* The steps each round times, in the order it takes them: four on the managed buffer
 * (managed_round), then two the explicit way (explicit_round). Their names in the CSV file, and
 * in the program's output. */
enum step {
    HOST_WRITE,
    FIRST_READ,
    RESIDENT_READ,
    HOST_READS_BACK,
    COPY_FROM_PINNED,
    KERNEL_AFTER_COPY,
    STEPS
};
static const char *const step_names[STEPS] = {"host_write",           "kernel_first_read",
                                              "kernel_resident_read", "host_reads_one_word_a_page",
                                              "copy_from_pinned",     "kernel_after_copy"};
static const char *const step_words[STEPS] = {
    "the host writes the managed buffer",
    "a kernel's first read (pages on the host: faults)",
    "the same kernel again (pages on the GPU)",
    "the host reads one word of every 4 KiB page",
    "cudaMemcpy from pinned memory to a cudaMalloc buffer",
    "the same kernel on the copy"};

typedef struct buffers {
    uint32_t *managed, *h_pinned;
    void *d_copy;
    unsigned long long *d_sum;
} buffers;

/* listing: managed-round */
/* One round on the managed buffer: the host writes it, a kernel reads it twice, the host reads
 * a word of each page; ms[] gets each step's time. Returns false when a checksum is wrong. */
static bool managed_round(const buffers *b, size_t bytes, uint32_t round, event_timer *timer,
                          double ms[STEPS])
{
    const size_t words = bytes / sizeof(uint32_t);
    const double start = host_clock_ms();
    managed_fill_words(b->managed, words, round); /* the pages come to, or are made on, the host */
    ms[HOST_WRITE] = host_clock_ms() - start;
    const unsigned long long want = gpu_work_checksum_host(b->managed, bytes, 1);

    bool right =
        managed_timed_checksum(0, b->managed, bytes, b->d_sum, want, timer, &ms[FIRST_READ]);
    right &=
        managed_timed_checksum(0, b->managed, bytes, b->d_sum, want, timer, &ms[RESIDENT_READ]);
    ms[HOST_READS_BACK] = managed_touch_pages(b->managed, bytes); /* each page comes back */
    return right;
}
/* end listing: managed-round */

/* The explicit way, for comparison: the same bytes copied from pinned memory, then read by
 * the same kernel; ms[] gets each step's time. Returns false when the checksum is wrong. */
static bool explicit_round(const buffers *b, size_t bytes, uint32_t round, event_timer *timer,
                           double ms[STEPS])
{
    managed_fill_words(b->h_pinned, bytes / sizeof(uint32_t), round);
    const unsigned long long want = gpu_work_checksum_host(b->h_pinned, bytes, 1);
    float elapsed = 0;
    CUDA_CHECK(event_timer_start(timer, 0));
    CUDA_CHECK(cudaMemcpy(b->d_copy, b->h_pinned, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(event_timer_stop(timer, 0, &elapsed));
    ms[COPY_FROM_PINNED] = elapsed;
    return managed_timed_checksum(0, b->d_copy, bytes, b->d_sum, want, timer,
                                  &ms[KERNEL_AFTER_COPY]);
}

static void write_csv(const char *dir, size_t bytes, int reps, const double ms[STEPS])
{
    measure_csv csv;
    FILE *f = measure_csv_create(&csv, dir, "page_faults.csv",
                                 "managed memory: a kernel's first touch, once resident, and "
                                 "copying first",
                                 "chapters/ch04-managed/02-page-faults");
    fprintf(f,
            "# unit: milliseconds, median of %d rounds; kernels timed by CUDA events, the host "
            "by its clock\nstep,bytes,ms,gb_per_s\n",
            reps);
    for (int s = 0; s < STEPS; s++)
        fprintf(f, "%s,%zu,%.4f,%.3f\n", step_names[s], bytes, ms[s],
                bandwidth_gb_per_s(bytes, ms[s]));
    measure_csv_close(&csv);
}

static void print_row(const char *what, size_t bytes, double ms)
{
    printf("  %-52s %10.3f ms %9.1f GB/s\n", what, ms, bandwidth_gb_per_s(bytes, ms));
}

int main(int argc, char **argv)
{
    const managed_options opt = managed_options_parse(argc, argv, usage);
    gpu_work_require("the kernel that reads the managed buffer");
    managed_refuse_oversubscription(opt.bytes, argv[0]);

    buffers b;
    CUDA_CHECK(cudaMallocManaged((void **)&b.managed, opt.bytes, cudaMemAttachGlobal));
    CUDA_CHECK(cudaMallocHost((void **)&b.h_pinned, opt.bytes));
    CUDA_CHECK(cudaMalloc(&b.d_copy, opt.bytes));
    CUDA_CHECK(cudaMalloc((void **)&b.d_sum, sizeof *b.d_sum));
    event_timer timer;
    CUDA_CHECK(event_timer_create(&timer));

    double samples[STEPS][MANAGED_MAX_REPS];
    bool right = true;
    for (int r = 0; r < opt.reps; r++) {
        double ms[STEPS];
        right &= managed_round(&b, opt.bytes, (uint32_t)r, &timer, ms);
        right &= explicit_round(&b, opt.bytes, (uint32_t)r, &timer, ms);
        for (int s = 0; s < STEPS; s++)
            samples[s][r] = ms[s];
    }
    double median[STEPS];
    for (int s = 0; s < STEPS; s++)
        median[s] = median_of(samples[s], (size_t)opt.reps);

    char size[32];
    printf("A managed buffer of %s, medians of %d rounds\n",
           format_bytes(opt.bytes, size, sizeof size), opt.reps);
    const double explicit_ms = median[COPY_FROM_PINNED] + median[KERNEL_AFTER_COPY];
    for (int s = 0; s < STEPS; s++) {
        if (s == COPY_FROM_PINNED)
            printf("The explicit way, for comparison\n");
        print_row(step_words[s], opt.bytes, median[s]);
    }
    print_row("both together", opt.bytes, explicit_ms);
    printf("\nThe first read took %.1f times as long as the same read once the pages were on the\n"
           "GPU, and %.1f times as long as copying first and reading the copy.\n",
           median[FIRST_READ] / median[RESIDENT_READ], median[FIRST_READ] / explicit_ms);
    if (opt.csv_dir != NULL)
        write_csv(opt.csv_dir, opt.bytes, opt.reps, median);

    CUDA_CHECK(event_timer_destroy(&timer));
    CUDA_CHECK(cudaFree(b.d_sum));
    CUDA_CHECK(cudaFree(b.d_copy));
    CUDA_CHECK(cudaFreeHost(b.h_pinned));
    CUDA_CHECK(cudaFree(b.managed));
    return verdict(right ? NULL : "a checksum differs from the host's");
}
