/* 04-zero-copy.c - a kernel reading pinned host memory across the link, against copying first.
 *
 * Pinned memory allocated with cudaHostAllocMapped (with unified addressing,
 * any pinned memory) has a device pointer too, from cudaHostGetDevicePointer:
 * a kernel can read it where it lies, each read crossing the PCIe link. No
 * copy, no device buffer: "zero-copy". The alternative is the usual one, copy
 * the data to device memory, then let the kernel read it there. Which is
 * faster depends on how often the kernel reads each byte: a kernel that reads
 * the data once moves it across the link once either way, but one that reads
 * it again and again pays the link every time with zero-copy, and the GPU's
 * own memory, some fifty times faster, after a copy.
 *
 * The kernel is the course's checksum (common/gpu_work.h), which reads every
 * word of the buffer `passes` times. For passes = 1, 2, 4, ... it times both
 * ways with events, and checks both sums against the host's.
 *
 *     04-zero-copy [--size SIZE] [--max-passes N] [--reps N] [--csv DIR]
 *
 * By default 64 MiB and 1 to 8 passes; `make measure` runs --size 256M
 * --max-passes 64 --csv DIR, which writes DIR/zero_copy.csv. It needs a CUDA
 * runtime that can run the course's kernels.
 */
#include "chapter.h"
#include "cuda_check.h"
#include "device_info.h"
#include "gpu_work.h"
#include "measure_csv.h"
#include "timing.h"
#include "units.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "[--size SIZE] [--max-passes N] [--reps N] [--csv DIR]\n"
    "       --size        the buffer the kernel reads; K, M, G multiply by 1024 (default 64M)\n"
    "       --max-passes  the most times it reads each byte, doubling from 1 (default 8)\n"
    "       --reps        timed runs of each way and count of passes; the median is kept\n"
    "                     (default 5)\n"
    "       --csv         also write DIR/zero_copy.csv";

enum { MAX_ROWS = 32 };

typedef struct buffers {
    unsigned char *h_mapped;   /* cudaHostAlloc(..., cudaHostAllocMapped) */
    void *d_mapped;            /* the same memory, as the GPU addresses it */
    unsigned char *d_data;     /* cudaMalloc: where the copy goes */
    unsigned long long *d_sum; /* the kernel's result */
} buffers;

/* listing: two-ways */
/* The kernel reads the host's memory where it lies, across the link on every pass. */
static void zero_copy(const buffers *b, size_t bytes, unsigned passes)
{
    CUDA_CHECK(gpu_work_checksum(0, b->d_mapped, bytes, passes, b->d_sum));
}

/* The data crosses the link once, and the kernel reads device memory. */
static void copy_then_read(const buffers *b, size_t bytes, unsigned passes)
{
    CUDA_CHECK(cudaMemcpy(b->d_data, b->h_mapped, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(gpu_work_checksum(0, b->d_data, bytes, passes, b->d_sum));
}
/* end listing: two-ways */

typedef void (*way)(const buffers *b, size_t bytes, unsigned passes);

/* The median of reps runs, in milliseconds, each timed by events around the whole of it. */
static double median_ms(way run, const buffers *b, size_t bytes, unsigned passes, int reps,
                        event_timer *timer)
{
    double *ms = host_alloc((size_t)reps * sizeof *ms);
    for (int r = 0; r < reps; r++) {
        float elapsed_ms;
        CUDA_CHECK(event_timer_start(timer, 0));
        run(b, bytes, passes);
        CUDA_CHECK(event_timer_stop(timer, 0, &elapsed_ms));
        ms[r] = elapsed_ms;
    }
    double median = median_of(ms, (size_t)reps);
    free(ms);
    return median;
}

/* One more run, with the sum and the device buffer poisoned first: true when the kernel's sum
 * is the host's over the same bytes. */
static bool sum_right(way run, const buffers *b, size_t bytes, unsigned passes)
{
    unsigned long long sum = 0;
    CUDA_CHECK(cudaMemset(b->d_sum, 0xFF, sizeof *b->d_sum));
    CUDA_CHECK(cudaMemset(b->d_data, 0xFF, bytes));
    run(b, bytes, passes);
    CUDA_CHECK(cudaMemcpy(&sum, b->d_sum, sizeof sum, cudaMemcpyDeviceToHost));
    return sum == gpu_work_checksum_host(b->h_mapped, bytes, passes);
}

typedef struct row {
    unsigned passes;
    double zero_copy_ms, copy_then_read_ms;
} row;

static void write_csv(const char *dir, size_t bytes, int reps, const row *rows, int count)
{
    measure_csv csv;
    FILE *f =
        measure_csv_create(&csv, dir, "zero_copy.csv",
                           "a kernel reading mapped pinned host memory, against copying first",
                           "chapters/ch02-pinned/04-zero-copy");
    fprintf(f,
            "# unit: milliseconds, median of %d runs timed by CUDA events; each pass reads every "
            "4-byte word of the buffer once\npasses,bytes,zero_copy_ms,copy_then_read_ms\n",
            reps);
    for (int i = 0; i < count; i++)
        fprintf(f, "%u,%zu,%.4f,%.4f\n", rows[i].passes, bytes, rows[i].zero_copy_ms,
                rows[i].copy_then_read_ms);
    measure_csv_close(&csv);
}

/* Zero-copy against copying first, at 1 to max_passes passes over the data, into rows;
 * *count of them. Returns what went wrong, or NULL. */
static const char *compare_passes(buffers *b, size_t bytes, int max_passes, int reps,
                                  event_timer *timer, row rows[MAX_ROWS], int *count_out)
{
    char size[32];
    printf("A checksum kernel reading %s, 1 to %d passes over it (ms, median of %d runs)\n",
           format_bytes(bytes, size, sizeof size), max_passes, reps);
    printf("%8s %14s %16s %18s   %s\n", "passes", "zero-copy", "copy, then read", "zero-copy GB/s",
           "faster");
    int count = 0;
    const char *failure = NULL;
    unsigned last_zero_copy_win = 0;
    for (unsigned passes = 1; passes <= (unsigned)max_passes && count < MAX_ROWS; passes *= 2) {
        row *r = &rows[count++];
        r->passes = passes;
        r->zero_copy_ms = median_ms(zero_copy, b, bytes, passes, reps, timer);
        r->copy_then_read_ms = median_ms(copy_then_read, b, bytes, passes, reps, timer);
        bool zero_copy_wins = r->zero_copy_ms < r->copy_then_read_ms;
        if (zero_copy_wins)
            last_zero_copy_win = passes;
        printf("%8u %14.3f %16.3f %18.1f   %s\n", passes, r->zero_copy_ms, r->copy_then_read_ms,
               bandwidth_gb_per_s(bytes * passes, r->zero_copy_ms),
               zero_copy_wins ? "zero-copy" : "copy first");
        fflush(stdout);
        if (failure == NULL && !sum_right(zero_copy, b, bytes, passes))
            failure = "the zero-copy kernel's sum is not the host's";
        if (failure == NULL && !sum_right(copy_then_read, b, bytes, passes))
            failure = "the sum after copying is not the host's";
    }
    unsigned most = rows[count - 1].passes;
    if (last_zero_copy_win == 0)
        printf("\nCopying first was faster at every count of passes, even one: the copy engine\n"
               "moved the data faster than the kernel's own reads across the link.\n");
    else if (last_zero_copy_win == most)
        printf(
            "\nZero-copy was faster at every count of passes up to %u: the kernel's reads kept\n"
            "up with the link. Try more passes (--max-passes): each one crosses the link again.\n",
            most);
    else
        printf("\nZero-copy was faster at %u pass%s at most, copying first beyond: each pass over\n"
               "mapped memory crosses the link again, while after one copy every pass reads the\n"
               "GPU's own memory.\n",
               last_zero_copy_win, last_zero_copy_win == 1 ? "" : "es");

    *count_out = count;
    return failure;
}

int main(int argc, char **argv)
{
    size_t bytes = (size_t)64 << 20;
    int max_passes = 8, reps = 5;
    const char *csv_dir = NULL;
    const option_spec specs[] = {
        {"--size", OPTION_SIZE, &bytes, 0, 0},
        {"--max-passes", OPTION_COUNT, &max_passes, 1, 1 << 20},
        {"--reps", OPTION_COUNT, &reps, 1, 1000},
        {"--csv", OPTION_TEXT, &csv_dir, 0, 0},
    };
    options_parse(argc, argv, usage, specs, sizeof specs / sizeof specs[0]);
    if (bytes % 4 != 0)
        usage_error(argv[0], usage, "--size: the kernel reads 4-byte words: give a multiple of 4");

    cudaError_t loaded = gpu_work_load();
    if (loaded != cudaSuccess) {
        char why[128];
        printf("This CUDA runtime cannot run the course's kernels (gpu_work_load: %s), and\n"
               "zero-copy needs a kernel to read the host's memory: nothing to measure here.\n",
               cuda_error_describe(loaded, why, sizeof why));
        return verdict("the course's kernels cannot run on this CUDA runtime");
    }

    /* listing: mapped */
    buffers b;
    CUDA_CHECK(cudaHostAlloc((void **)&b.h_mapped, bytes, cudaHostAllocMapped));
    CUDA_CHECK(cudaHostGetDevicePointer(&b.d_mapped, b.h_mapped, 0));
    /* end listing: mapped */
    CUDA_CHECK(cudaMalloc((void **)&b.d_data, bytes));
    CUDA_CHECK(cudaMalloc((void **)&b.d_sum, sizeof *b.d_sum));
    fill_pattern(b.h_mapped, bytes);
    event_timer timer;
    CUDA_CHECK(event_timer_create(&timer));
    /* The first launch may load the kernel into the context: not inside a timing. */
    zero_copy(&b, bytes, 1);
    copy_then_read(&b, bytes, 1);
    CUDA_CHECK(cudaDeviceSynchronize());

    row rows[MAX_ROWS];
    int count = 0;
    const char *failure = compare_passes(&b, bytes, max_passes, reps, &timer, rows, &count);

    CUDA_CHECK(event_timer_destroy(&timer));
    CUDA_CHECK(cudaFree(b.d_sum));
    CUDA_CHECK(cudaFree(b.d_data));
    CUDA_CHECK(cudaFreeHost(b.h_mapped));
    if (failure != NULL)
        return verdict(failure);
    printf("verified: both ways' sums equal the host's, for every count of passes\n");
    if (csv_dir != NULL)
        write_csv(csv_dir, bytes, reps, rows, count);
    return verdict(NULL);
}
