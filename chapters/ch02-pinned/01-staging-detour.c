/* 01-staging-detour.c - a pageable cudaMemcpy is a host copy plus a DMA transfer, measured.
 *
 * The GPU's copy engines read and write host memory by physical address, on
 * their own, so they can only be given pages that stay put: pinned pages. A
 * cudaMemcpy from pageable memory (malloc) therefore takes a detour: the CPU
 * copies the data into a pinned staging buffer of the driver's, and a copy
 * engine carries it across the link from there; to the host, the other way
 * round. This program measures each stage alone, a memcpy between pageable
 * and pinned memory (a) and a cudaMemcpy from or to pinned memory (b), then
 * the pageable cudaMemcpy itself, and sets it beside two models of the detour:
 *     in series    1 / (1/a + 1/b)  one stage after the other;
 *     overlapped   min(a, b)         the stages work on different chunks at
 *                                    once, and the slower one sets the pace.
 *
 *     01-staging-detour [--min SIZE] [--max SIZE] [--reps N] [--csv DIR]
 *
 * By default it measures 64 MiB to 256 MiB, doubling, in a few seconds; `make
 * measure` runs --min 1M --max 1G --csv DIR, which writes DIR/staging.csv. Last
 * it copies the largest buffer up and back from pageable memory into a
 * poisoned one and checks every byte: "PASSED" (exit 0) or "FAILED: why".
 */
#include "chapter.h"
#include "copy_timing.h"
#include "cuda_check.h"
#include "device_info.h"
#include "measure_csv.h"
#include "timing.h"
#include "units.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "[--min SIZE] [--max SIZE] [--reps N] [--csv DIR]\n"
    "       --min, --max  the smallest and largest copy, doubling between them; K, M, G\n"
    "                     multiply by 1024 (default 64M to 256M; make measure: 1M to 1G)\n"
    "       --reps        timed copies of each kind and size, the median is kept (default 5)\n"
    "       --csv         also write DIR/staging.csv";

enum { MAX_SIZES = 48, DIRECTIONS = 2 };

/* One direction's three measurements, in GB/s, and the two models made of the first two. */
typedef struct stages {
    double host_copy; /* a: memcpy between pageable and pinned host memory */
    double dma;       /* b: cudaMemcpy between pinned host memory and the device */
    double pageable;  /* cudaMemcpy between pageable host memory and the device */
} stages;

static const char *const direction_names[DIRECTIONS] = {"h2d", "d2h"};
static const char *const direction_labels[DIRECTIONS] = {"host to device", "device to host"};

/* listing: models */
/* Two stages of a GB/s and b GB/s that each move every byte: one after the other, a byte
 * takes 1/a + 1/b seconds per GB; side by side on different chunks, the slower one sets the
 * pace. */
static double in_series(double a, double b)
{
    return a > 0 && b > 0 ? 1 / (1 / a + 1 / b) : 0;
}

static double overlapped(double a, double b)
{
    return a < b ? a : b;
}
/* end listing: models */

/* How many times the larger of two figures is the smaller one. */
static double times_apart(double x, double y)
{
    return x > 0 && y > 0 ? (x > y ? x / y : y / x) : 1e300;
}

typedef struct buffers {
    unsigned char *h_pageable_in;  /* malloc: the source of copies to the device */
    unsigned char *h_pageable_out; /* malloc: the destination of copies to the host */
    unsigned char *h_pinned;       /* cudaMallocHost: plays the driver's staging buffer */
    unsigned char *d_buffer;
} buffers;

/* listing: stages */
/* Host to device: the driver's detour is memcpy(pinned <- pageable), then DMA(device <- pinned).
 * Device to host: DMA(pinned <- device), then memcpy(pageable <- pinned). */
static stages measure_direction(const buffers *b, int direction, size_t bytes, int reps,
                                event_timer *timer)
{
    stages s;
    if (direction == 0) {
        s.host_copy = host_copy_median_gb_per_s(b->h_pinned, b->h_pageable_in, bytes, reps);
        s.dma = copy_median_gb_per_s(b->d_buffer, b->h_pinned, bytes, cudaMemcpyHostToDevice, reps,
                                     timer);
        s.pageable = copy_median_gb_per_s(b->d_buffer, b->h_pageable_in, bytes,
                                          cudaMemcpyHostToDevice, reps, timer);
    } else {
        s.dma = copy_median_gb_per_s(b->h_pinned, b->d_buffer, bytes, cudaMemcpyDeviceToHost, reps,
                                     timer);
        s.host_copy = host_copy_median_gb_per_s(b->h_pageable_out, b->h_pinned, bytes, reps);
        s.pageable = copy_median_gb_per_s(b->h_pageable_out, b->d_buffer, bytes,
                                          cudaMemcpyDeviceToHost, reps, timer);
    }
    return s;
}
/* end listing: stages */

/* Up from pageable memory into a poisoned device buffer, and back into a poisoned pageable
 * one: true when every byte arrived. */
static bool round_trip_intact(const buffers *b, size_t bytes)
{
    memset(b->h_pageable_out, 0xFF, bytes);
    CUDA_CHECK(cudaMemset(b->d_buffer, 0xFF, bytes));
    CUDA_CHECK(cudaMemcpy(b->d_buffer, b->h_pageable_in, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(b->h_pageable_out, b->d_buffer, bytes, cudaMemcpyDeviceToHost));
    return memcmp(b->h_pageable_out, b->h_pageable_in, bytes) == 0;
}

typedef struct results {
    int count, reps;
    size_t bytes[MAX_SIZES];
    stages measured[MAX_SIZES][DIRECTIONS];
} results;

static void write_csv(const char *dir, const results *r)
{
    measure_csv csv;
    FILE *f =
        measure_csv_create(&csv, dir, "staging.csv",
                           "the staging detour: host memcpy, pinned DMA and pageable cudaMemcpy",
                           "chapters/ch02-pinned/01-staging-detour");
    fprintf(f,
            "# unit: GB/s (10^9 bytes per second), median of %d copies; memcpy by one thread, "
            "host clock; cudaMemcpy by CUDA events; series = 1/(1/memcpy + 1/dma), overlap = "
            "min(memcpy, dma)\nbytes",
            r->reps);
    static const char *const columns[] = {"memcpy", "dma", "pageable", "series", "overlap"};
    for (int d = 0; d < DIRECTIONS; d++)
        for (size_t c = 0; c < sizeof columns / sizeof columns[0]; c++)
            fprintf(f, ",%s_%s", direction_names[d], columns[c]);
    fprintf(f, "\n");
    for (int i = 0; i < r->count; i++) {
        fprintf(f, "%zu", r->bytes[i]);
        for (int d = 0; d < DIRECTIONS; d++) {
            const stages *s = &r->measured[i][d];
            fprintf(f, ",%.3f,%.3f,%.3f,%.3f,%.3f", s->host_copy, s->dma, s->pageable,
                    in_series(s->host_copy, s->dma), overlapped(s->host_copy, s->dma));
        }
        fprintf(f, "\n");
    }
    measure_csv_close(&csv);
}

int main(int argc, char **argv)
{
    sweep_options opt = {.min_bytes = (size_t)64 << 20, .max_bytes = (size_t)256 << 20, .reps = 5};
    sweep_options_parse(argc, argv, usage, &opt);
    results *r = calloc(1, sizeof *r);
    if (r == NULL)
        return verdict("no host memory for the results");
    r->reps = opt.reps;
    r->count = doubling_sizes(opt.min_bytes, opt.max_bytes, r->bytes, MAX_SIZES);
    const size_t largest = r->bytes[r->count - 1];
    const int reps = opt.reps;
    const char *csv_dir = opt.csv_dir;

    buffers b;
    b.h_pageable_in = host_alloc(largest);
    b.h_pageable_out = host_alloc(largest);
    CUDA_CHECK(cudaMallocHost((void **)&b.h_pinned, largest));
    CUDA_CHECK(cudaMalloc((void **)&b.d_buffer, largest));
    fill_pattern(b.h_pageable_in, largest);
    memset(b.h_pageable_out, 0, largest); /* first touch now, not during a timed copy */
    memset(b.h_pinned, 0, largest);
    event_timer timer;
    CUDA_CHECK(event_timer_create(&timer));

    char size[32];
    for (int d = 0; d < DIRECTIONS; d++) {
        printf("%s%s, median GB/s of %d copies (memcpy: one CPU thread, host clock)\n",
               d ? "\n" : "", direction_labels[d], reps);
        printf("%10s %9s %9s %9s   %9s %9s   %s\n", "size", "memcpy a", "DMA b", "pageable",
               "series", "overlap", "pageable / overlap");
        for (int i = 0; i < r->count; i++) {
            stages s = measure_direction(&b, d, r->bytes[i], reps, &timer);
            r->measured[i][d] = s;
            double over = overlapped(s.host_copy, s.dma);
            printf("%10s %9.2f %9.2f %9.2f   %9.2f %9.2f   %.2f\n",
                   format_bytes(r->bytes[i], size, sizeof size), s.host_copy, s.dma, s.pageable,
                   in_series(s.host_copy, s.dma), over, over > 0 ? s.pageable / over : 0);
            fflush(stdout);
        }
    }

    printf("\nAt %s:\n", format_bytes(largest, size, sizeof size));
    for (int d = 0; d < DIRECTIONS; d++) {
        const stages *s = &r->measured[r->count - 1][d];
        double series = in_series(s->host_copy, s->dma), over = overlapped(s->host_copy, s->dma);
        bool nearer_series = times_apart(s->pageable, series) < times_apart(s->pageable, over);
        printf("  %s: pageable %.1f GB/s, nearer the stages %s (%.1f) than %s (%.1f).\n",
               direction_labels[d], s->pageable, nearer_series ? "in series" : "overlapped",
               nearer_series ? series : over, nearer_series ? "overlapped" : "in series",
               nearer_series ? over : series);
    }
    printf("  The pinned copy (b) skips the CPU's copy (a): that stage is all that pinning saves.\n"
           "  Where the pageable copy comes near min(a, b), the driver overlaps its memcpy with\n"
           "  the DMA; where it comes near the series figure, one waits for the other. Sizes\n"
           "  that fit in the CPU's caches make the memcpy, and so the detour, look faster.\n");

    bool intact = round_trip_intact(&b, largest);
    CUDA_CHECK(event_timer_destroy(&timer));
    free(b.h_pageable_in);
    free(b.h_pageable_out);
    CUDA_CHECK(cudaFreeHost(b.h_pinned));
    CUDA_CHECK(cudaFree(b.d_buffer));
    if (!intact) {
        free(r);
        return verdict("the largest pageable round trip did not arrive intact");
    }
    printf("verified: %s up and back from pageable memory arrived intact\n",
           format_bytes(largest, size, sizeof size));
    if (csv_dir != NULL)
        write_csv(csv_dir, r);
    free(r);
    return verdict(NULL);
}
