/* 07-bandwidth-sweep.c - cudaMemcpy bandwidth against transfer size, pageable and pinned.
 *
 * For every size from --min to --max, doubling, it times copies host to device
 * and device to host, from pageable memory (malloc) and from pinned memory
 * (cudaMallocHost), with CUDA events, and prints the median bandwidth of each.
 * Then the time one small cudaMemcpy call costs its caller (host clock), and
 * one device-to-device copy for the bandwidth of the GPU's own memory. Last,
 * it checks that the largest copy arrived intact each way.
 *
 *     07-bandwidth-sweep [--min SIZE] [--max SIZE] [--reps N] [--csv DIR]
 *
 * With no arguments it sweeps 4 B to 64 MiB in a few seconds. With --csv it
 * also writes bandwidth.csv, latency.csv and summary.csv into DIR, each headed
 * by the GPU's name, the driver and runtime versions and the date: `make
 * measure` runs --max 1G --csv measurements/GPU, the data behind the book's
 * figures. Its last line is "PASSED" (exit 0) or "FAILED: why" (exit 1).
 */
#include "chapter.h"
#include "copy_timing.h"
#include "cuda_check.h"
#include "device_info.h"
#include "measure_csv.h"
#include "nvml_link.h"
#include "pcie.h"
#include "timing.h"
#include "units.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Small copies are cheap to repeat; large ones are capped to about this many bytes per size. */
#define BYTES_PER_SIZE (1024.0 * 1024 * 1024)
#define MIN_REPS 5
#define MAX_REPS 50
#define LATENCY_REPS 200
#define LATENCY_MAX_BYTES ((size_t)1 << 20) /* past 1 MiB the call's fixed cost is noise */

/* One column of the tables: a direction and the kind of host memory. */
typedef struct copy_case {
    const char *column; /* in the CSV files */
    const char *label;  /* in the printed tables */
    enum cudaMemcpyKind kind;
    bool pinned;
} copy_case;

enum { CASES = 4 };
static const copy_case cases[CASES] = {
    {"h2d_pageable", "H2D pageable", cudaMemcpyHostToDevice, false},
    {"h2d_pinned", "H2D pinned", cudaMemcpyHostToDevice, true},
    {"d2h_pageable", "D2H pageable", cudaMemcpyDeviceToHost, false},
    {"d2h_pinned", "D2H pinned", cudaMemcpyDeviceToHost, true},
};

typedef struct buffers {
    unsigned char *h_pageable_src, *h_pageable_dst; /* malloc: the OS may move or swap them */
    unsigned char *h_pinned_src, *h_pinned_dst;     /* cudaMallocHost: page-locked */
    unsigned char *d_buffer, *d_other;              /* cudaMalloc */
} buffers;

typedef struct options {
    size_t min_bytes, max_bytes;
    int reps; /* 0: chosen per size */
    const char *csv_dir;
} options;

static const char usage[] =
    "[--min SIZE] [--max SIZE] [--reps N] [--csv DIR]\n"
    "       --min, --max  the smallest and largest copy, doubling between them; K, M, G\n"
    "                     multiply by 1024 (default 4 to 64M; make measure uses --max 1G)\n"
    "       --reps        timed copies per size (default: 50 for small sizes, fewer for\n"
    "                     large ones, at least 5)\n"
    "       --csv         also write bandwidth.csv, latency.csv and summary.csv into DIR";

static options parse_options(int argc, char **argv)
{
    options opt = {.min_bytes = 4, .max_bytes = (size_t)64 << 20};
    for (int a = 1; a < argc; a++) {
        const char *arg = argv[a];
        usage_exit_on_help(arg, argv[0], usage);
        if (strcmp(arg, "--min") != 0 && strcmp(arg, "--max") != 0 && strcmp(arg, "--reps") != 0 &&
            strcmp(arg, "--csv") != 0)
            usage_error(argv[0], usage, "unexpected argument '%s'", arg);
        if (a + 1 == argc)
            usage_error(argv[0], usage, "%s needs a value", arg);
        const char *value = argv[++a];
        if (strcmp(arg, "--min") == 0 && !parse_size(value, &opt.min_bytes))
            usage_error(argv[0], usage, "--min: '%s' is not a size (e.g. 4, 64K, 1G)", value);
        if (strcmp(arg, "--max") == 0 && !parse_size(value, &opt.max_bytes))
            usage_error(argv[0], usage, "--max: '%s' is not a size (e.g. 64M, 1G)", value);
        if (strcmp(arg, "--reps") == 0) {
            char *end;
            long reps = strtol(value, &end, 10);
            if (end == value || *end != '\0' || reps < 1 || reps > 1000)
                usage_error(argv[0], usage, "--reps: '%s' is not a count from 1 to 1000", value);
            opt.reps = (int)reps;
        }
        if (strcmp(arg, "--csv") == 0)
            opt.csv_dir = value;
    }
    if (opt.min_bytes > opt.max_bytes)
        usage_error(argv[0], usage, "--min is larger than --max");
    return opt;
}

/* The largest size the sweep reaches: min_bytes doubled while it stays within max_bytes. */
static size_t largest_size(const options *opt)
{
    size_t bytes = opt->min_bytes;
    while (bytes <= opt->max_bytes / 2)
        bytes *= 2;
    return bytes;
}

static int reps_for(const options *opt, size_t bytes)
{
    if (opt->reps > 0)
        return opt->reps;
    double reps = BYTES_PER_SIZE / (double)bytes;
    return reps < MIN_REPS ? MIN_REPS : reps > MAX_REPS ? MAX_REPS : (int)reps;
}

/* listing: allocate */
static void allocate(buffers *b, size_t bytes)
{
    b->h_pageable_src = host_alloc(bytes); /* malloc, or exit */
    b->h_pageable_dst = host_alloc(bytes);
    CUDA_CHECK(cudaMallocHost((void **)&b->h_pinned_src, bytes));
    CUDA_CHECK(cudaMallocHost((void **)&b->h_pinned_dst, bytes));
    CUDA_CHECK(cudaMalloc((void **)&b->d_buffer, bytes));
    CUDA_CHECK(cudaMalloc((void **)&b->d_other, bytes));
}
/* end listing: allocate */

static void release(buffers *b)
{
    free(b->h_pageable_src);
    free(b->h_pageable_dst);
    CUDA_CHECK(cudaFreeHost(b->h_pinned_src));
    CUDA_CHECK(cudaFreeHost(b->h_pinned_dst));
    CUDA_CHECK(cudaFree(b->d_buffer));
    CUDA_CHECK(cudaFree(b->d_other));
}

/* The source and destination of a case: host memory of its kind on one side, d_buffer on the
 * other. */
static void endpoints(const buffers *b, const copy_case *c, void **dst, const void **src)
{
    unsigned char *h_src = c->pinned ? b->h_pinned_src : b->h_pageable_src;
    unsigned char *h_dst = c->pinned ? b->h_pinned_dst : b->h_pageable_dst;
    *dst = c->kind == cudaMemcpyHostToDevice ? (void *)b->d_buffer : (void *)h_dst;
    *src = c->kind == cudaMemcpyHostToDevice ? (const void *)h_src : (const void *)b->d_buffer;
}

/* listing: call-time */
/* What one cudaMemcpy call costs the thread that makes it, in microseconds: the host clock
 * around the call, median of reps calls. A synchronous copy returns when it is done, so this
 * is the call's fixed cost plus the transfer. */
static double median_call_us(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind,
                             int reps)
{
    double *us = host_alloc((size_t)reps * sizeof *us);
    CUDA_CHECK(cudaMemcpy(dst, src, bytes, kind));
    for (int r = 0; r < reps; r++) {
        double start_ms = host_clock_ms();
        CUDA_CHECK(cudaMemcpy(dst, src, bytes, kind));
        us[r] = (host_clock_ms() - start_ms) * 1e3;
    }
    double median = median_of(us, (size_t)reps);
    free(us);
    return median;
}
/* end listing: call-time */

/* Device to device: the copy reads and writes GPU memory, so it moves 2 * bytes. */
static double device_gb_per_s(const buffers *b, size_t bytes, int reps, event_timer *timer)
{
    return 2 * copy_median_gb_per_s(b->d_other, b->d_buffer, bytes, cudaMemcpyDeviceToDevice, reps,
                                    timer);
}

/* listing: verify */
/* Copies h_src up and back into a poisoned h_dst, then from one device buffer to the other and
 * back again; true when every byte arrived both times. */
static bool round_trip_intact(const buffers *b, bool pinned, size_t bytes)
{
    const unsigned char *h_src = pinned ? b->h_pinned_src : b->h_pageable_src;
    unsigned char *h_dst = pinned ? b->h_pinned_dst : b->h_pageable_dst;

    memset(h_dst, 0xFF, bytes);
    CUDA_CHECK(cudaMemcpy(b->d_buffer, h_src, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(h_dst, b->d_buffer, bytes, cudaMemcpyDeviceToHost));
    if (memcmp(h_dst, h_src, bytes) != 0)
        return false;

    memset(h_dst, 0xFF, bytes);
    CUDA_CHECK(cudaMemset(b->d_other, 0xFF, bytes));
    CUDA_CHECK(cudaMemcpy(b->d_other, b->d_buffer, bytes, cudaMemcpyDeviceToDevice));
    CUDA_CHECK(cudaMemcpy(h_dst, b->d_other, bytes, cudaMemcpyDeviceToHost));
    return memcmp(h_dst, h_src, bytes) == 0;
}
/* end listing: verify */

/* --- Results ------------------------------------------------------------------------------- */

#define MADE_BY "chapters/ch01-memory/07-bandwidth-sweep"

typedef struct sweep_results {
    int count;
    size_t bytes[64];
    int reps[64];
    double gb_per_s[64][CASES];
    int latency_count;
    size_t latency_bytes[64];
    double call_us[64][CASES];
    double device_gb_per_s, context_ms;
    pcie_link link; /* max_generation 0: NVML could not say */
} sweep_results;

static void write_csv_files(const char *dir, const sweep_results *r, const device_info *info)
{
    char date[32], driver[16], runtime[16];
    measure_csv csv;
    measure_date_now(date, sizeof date);
    measure_dir_create(dir);

    FILE *f = measure_csv_open(&csv, dir, "bandwidth.csv",
                               "cudaMemcpy bandwidth against transfer size", info, date, MADE_BY);
    fprintf(f, "# unit: GB/s (10^9 bytes per second), median of reps copies timed by CUDA "
               "events\nbytes,reps");
    for (int c = 0; c < CASES; c++)
        fprintf(f, ",%s", cases[c].column);
    fprintf(f, "\n");
    for (int s = 0; s < r->count; s++) {
        fprintf(f, "%zu,%d", r->bytes[s], r->reps[s]);
        for (int c = 0; c < CASES; c++)
            fprintf(f, ",%.6g", r->gb_per_s[s][c]); /* 4 B copies run at 0.0005 GB/s */
        fprintf(f, "\n");
    }
    measure_csv_close(&csv);

    f = measure_csv_open(&csv, dir, "latency.csv", "what one cudaMemcpy call costs its caller",
                         info, date, MADE_BY);
    fprintf(f, "# unit: microseconds per call, host clock, median of %d calls\nbytes",
            LATENCY_REPS);
    for (int c = 0; c < CASES; c++)
        fprintf(f, ",%s", cases[c].column);
    fprintf(f, "\n");
    for (int s = 0; s < r->latency_count; s++) {
        fprintf(f, "%zu", r->latency_bytes[s]);
        for (int c = 0; c < CASES; c++)
            fprintf(f, ",%.2f", r->call_us[s][c]);
        fprintf(f, "\n");
    }
    measure_csv_close(&csv);

    /* The figures the book's text quotes, one per line. */
    f = measure_csv_open(&csv, dir, "summary.csv", "the figures the book quotes", info, date,
                         MADE_BY);
    int last = r->count - 1;
    fprintf(f, "key,value\n");
    fprintf(f, "gpu,%s\n", info->name);
    fprintf(f, "driver,%s\n", cuda_version_string(info->driver_version, driver, sizeof driver));
    fprintf(f, "runtime,%s\n", cuda_version_string(info->runtime_version, runtime, sizeof runtime));
    fprintf(f, "date,%s\n", date);
    fprintf(f, "largest_bytes,%zu\n", r->bytes[last]);
    for (int c = 0; c < CASES; c++)
        fprintf(f, "%s_gb_per_s,%.2f\n", cases[c].column, r->gb_per_s[last][c]);
    fprintf(f, "d2d_gb_per_s,%.1f\n", r->device_gb_per_s);
    fprintf(f, "smallest_bytes,%zu\n", r->latency_bytes[0]);
    for (int c = 0; c < CASES; c++)
        fprintf(f, "smallest_%s_us,%.2f\n", cases[c].column, r->call_us[0][c]);
    fprintf(f, "context_ms,%.0f\n", r->context_ms);
    fprintf(f, "memory_total_bytes,%zu\n", info->total_bytes);
    fprintf(f, "memory_peak_gb_per_s,%.0f\n", info->memory_gb_per_s);
    fprintf(f, "copy_engines,%d\n", info->copy_engines);
    /* The link's theory is its maximum's: an idle GPU slows its link until the next copy. */
    double link_gb_per_s = pcie_gb_per_s((int)r->link.max_generation, (int)r->link.max_width);
    if (link_gb_per_s > 0) {
        fprintf(f, "pcie_generation,%u\n", r->link.max_generation);
        fprintf(f, "pcie_lanes,%u\n", r->link.max_width);
        fprintf(f, "pcie_gb_per_s,%.1f\n", link_gb_per_s);
    }
    measure_csv_close(&csv);
}

/* --- The sweep ----------------------------------------------------------------------------- */

static void print_header(const char *first, const char *unit)
{
    printf("%10s", first);
    for (int c = 0; c < CASES; c++)
        printf("  %12s", cases[c].label);
    printf("   (%s)\n", unit);
}

/* The two tables: each case's bandwidth at each size (events, median), then the host's time
 * for one call at the small sizes, into r. */
static void sweep(const options *opt, buffers *b, event_timer *timer, sweep_results *r)
{
    const size_t largest = largest_size(opt);
    char size_text[32];
    print_header("size", "GB/s, median");
    for (size_t bytes = opt->min_bytes; bytes <= largest; bytes *= 2) {
        int s = r->count++;
        r->bytes[s] = bytes;
        r->reps[s] = reps_for(opt, bytes);
        printf("%10s", format_bytes(bytes, size_text, sizeof size_text));
        for (int c = 0; c < CASES; c++) {
            void *dst;
            const void *src;
            endpoints(b, &cases[c], &dst, &src);
            r->gb_per_s[s][c] =
                copy_median_gb_per_s(dst, src, bytes, cases[c].kind, r->reps[s], timer);
            printf("  %12.3f", r->gb_per_s[s][c]);
        }
        printf("\n");
        fflush(stdout);
    }

    printf("\n");
    print_header("size", "us per call, host clock, median");
    for (size_t bytes = opt->min_bytes; bytes <= largest && bytes <= LATENCY_MAX_BYTES;
         bytes *= 2) {
        int s = r->latency_count++;
        r->latency_bytes[s] = bytes;
        printf("%10s", format_bytes(bytes, size_text, sizeof size_text));
        for (int c = 0; c < CASES; c++) {
            void *dst;
            const void *src;
            endpoints(b, &cases[c], &dst, &src);
            r->call_us[s][c] = median_call_us(dst, src, bytes, cases[c].kind, LATENCY_REPS);
            printf("  %12.1f", r->call_us[s][c]);
        }
        printf("\n");
    }
}

int main(int argc, char **argv)
{
    options opt = parse_options(argc, argv);
    const size_t largest = largest_size(&opt);
    char size_text[32], text[32];

    int devices = 0;
    CUDA_CHECK(cudaGetDeviceCount(&devices));
    /* The first call that needs a context creates it: part of every program's start-up. */
    double start_ms = host_clock_ms();
    CUDA_CHECK(cudaFree(NULL));
    double context_ms = host_clock_ms() - start_ms;
    sweep_results *r = calloc(1, sizeof *r);
    device_info info;
    if (r == NULL || device_info_query(0, &info) != cudaSuccess)
        return EXIT_FAILURE;
    r->context_ms = context_ms;

    char driver[16], runtime[16];
    printf("cudaMemcpy bandwidth from %s to %s on %s (driver %s, runtime %s)\n",
           format_bytes(opt.min_bytes, size_text, sizeof size_text),
           format_bytes(largest, text, sizeof text), info.name,
           cuda_version_string(info.driver_version, driver, sizeof driver),
           cuda_version_string(info.runtime_version, runtime, sizeof runtime));
    printf("runtime start-up and context creation: %.0f ms\n\n", r->context_ms);

    buffers b;
    allocate(&b, largest);
    fill_pattern(b.h_pageable_src, largest);
    memcpy(b.h_pinned_src, b.h_pageable_src, largest);
    memset(b.h_pageable_dst, 0, largest); /* first touch now, not during a timed copy */
    memset(b.h_pinned_dst, 0, largest);
    event_timer timer;
    CUDA_CHECK(event_timer_create(&timer));

    sweep(&opt, &b, &timer, r);

    r->device_gb_per_s = device_gb_per_s(&b, largest, reps_for(&opt, largest), &timer);
    printf("\ndevice to device, %s: %.0f GB/s (read + write)\n",
           format_bytes(largest, size_text, sizeof size_text), r->device_gb_per_s);
    printf("GPU memory: %.1f GB, %.0f GB/s in theory (memory clock x 2 x bus width)\n",
           info.total_bytes / BYTES_PER_GB, info.memory_gb_per_s);
    char why[256];
    if (!pcie_link_query(0, &r->link, why, sizeof why))
        printf("PCIe link: unknown (%s)\n", why);
    else if (pcie_gb_per_s((int)r->link.max_generation, (int)r->link.max_width) > 0)
        printf("PCIe link: Gen%u x%u at most, %.1f GB/s each way in theory\n",
               r->link.max_generation, r->link.max_width,
               pcie_gb_per_s((int)r->link.max_generation, (int)r->link.max_width));

    bool intact = round_trip_intact(&b, false, largest) && round_trip_intact(&b, true, largest);
    CUDA_CHECK(event_timer_destroy(&timer));
    release(&b);
    if (!intact) /* and no CSV files: figures from a broken copy are no figures */
        return verdict("the largest copy did not arrive intact");
    printf("verified: %s copied up, across and back arrived intact, pageable and pinned\n",
           format_bytes(largest, size_text, sizeof size_text));
    if (opt.csv_dir != NULL)
        write_csv_files(opt.csv_dir, r, &info);
    free(r);
    return verdict(NULL);
}
