/* 03-when-pinning-pays.c - after how many copies pinning a buffer beats copying it pageable.
 *
 * A program holds a buffer of n bytes that it will copy to the device k times.
 * Copied from pageable memory, each copy takes t_pageable; pinned, t_pinned,
 * which is less for all but the smallest copies. But pinning costs something
 * first:
 *   - registering the buffer it has: cudaHostRegister, and cudaHostUnregister
 *     when done;
 *   - or allocating it pinned in the first place: cudaMallocHost and
 *     cudaFreeHost, less the malloc, first touch and free they replace.
 * Pinning has won from the smallest k with cost + k * t_pinned < k * t_pageable,
 * that is the first whole k above cost / (t_pageable - t_pinned) (at a tie it has
 * only paid for itself), and never where a pinned copy saves nothing: the model
 * of exercises/ch02-pinned/break_even.h. This program measures all of it for each
 * size, host to device, and prints that k.
 *
 *     03-when-pinning-pays [--min SIZE] [--max SIZE] [--reps N] [--csv DIR]
 *
 * By default 4 KiB to 64 MiB, doubling, in a few seconds; `make measure` runs
 * --min 4K --max 1G --csv DIR, which writes DIR/break_even.csv. Last, it copies
 * the largest buffer up while registered and checks what arrived.
 */
#include "chapter.h"
#include "copy_timing.h"
#include "cuda_check.h"
#include "device_info.h"
#include "measure_csv.h"
#include "timing.h"
#include "units.h"

#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "[--min SIZE] [--max SIZE] [--reps N] [--csv DIR]\n"
    "       --min, --max  the smallest and largest buffer, doubling between them; K, M, G\n"
    "                     multiply by 1024 (default 4K to 64M; make measure: 4K to 1G)\n"
    "       --reps        timed copies, registrations and allocations of each size; the\n"
    "                     medians are kept (default 5)\n"
    "       --csv         also write DIR/break_even.csv";

enum { MAX_SIZES = 48 };
#define NEVER 0 /* a break-even count of 0: pinning never pays at that size */

typedef struct size_costs {
    size_t bytes;
    double pageable_us, pinned_us;            /* one copy to the device */
    double register_us;                       /* cudaHostRegister + cudaHostUnregister */
    double malloc_host_us;                    /* cudaMallocHost + cudaFreeHost */
    double malloc_us;                         /* malloc + touching every page + free */
    long register_copies, malloc_host_copies; /* NEVER, or from 1 up */
} size_costs;

/* listing: break-even */
/* The smallest number of copies after which paying `cost_us` once to make each copy
 * `saved_us` faster has won: the first whole number above cost / saving (at a tie pinning has
 * only paid for itself), 1 when the cost is nothing; NEVER when a copy saves nothing, or when
 * the count would not fit in a long. */
static long break_even_copies(double cost_us, double saved_us)
{
    if (!(saved_us > 0))
        return NEVER;
    const double x = cost_us > 0 ? cost_us / saved_us : 0;
    if (!(x < (double)LONG_MAX))
        return NEVER;
    return (long)floor(x) + 1;
}
/* end listing: break-even */

/* The median of reps runs of `step` over a buffer of `bytes`, in microseconds (host clock). */
typedef void (*timed_step)(unsigned char *h_buffer, size_t bytes);

static double median_us(timed_step step, unsigned char *h_buffer, size_t bytes, int reps)
{
    double *us = host_alloc((size_t)reps * sizeof *us);
    for (int r = 0; r < reps; r++) {
        double start = host_clock_ms();
        step(h_buffer, bytes);
        us[r] = (host_clock_ms() - start) * 1e3;
    }
    double median = median_of(us, (size_t)reps);
    free(us);
    return median;
}

/* memset through a pointer the compiler cannot see through: a malloc, memset and free of
 * memory nobody reads is otherwise removed altogether. */
static void *(*volatile first_touch)(void *, int, size_t) = memset;

/* listing: costs */
/* Pinning the program's own buffer, which it has touched already, and unpinning it. */
static void register_and_unregister(unsigned char *h_buffer, size_t bytes)
{
    CUDA_CHECK(cudaHostRegister(h_buffer, bytes, cudaHostRegisterDefault));
    CUDA_CHECK(cudaHostUnregister(h_buffer));
}

/* A pinned buffer from the start... */
static void malloc_host_and_free(unsigned char *unused, size_t bytes)
{
    (void)unused;
    void *h_pinned;
    CUDA_CHECK(cudaMallocHost(&h_pinned, bytes));
    CUDA_CHECK(cudaFreeHost(h_pinned));
}

/* ...instead of a pageable one, which gets its pages when the program first writes them. */
static void malloc_touch_and_free(unsigned char *unused, size_t bytes)
{
    (void)unused;
    unsigned char *h_pageable = host_alloc(bytes);
    first_touch(h_pageable, 1, bytes);
    free(h_pageable);
}
/* end listing: costs */

static double copy_us(void *dst, const void *src, size_t bytes, int reps, event_timer *timer)
{
    double gb_per_s = copy_median_gb_per_s(dst, src, bytes, cudaMemcpyHostToDevice, reps, timer);
    return gb_per_s > 0 ? (double)bytes / (gb_per_s * 1e3) : 0; /* bytes / (GB/s) = ns */
}

static void print_copies(long copies)
{
    if (copies == NEVER)
        printf(" %10s", "never");
    else
        printf(" %10ld", copies);
}

static void write_csv_copies(FILE *f, long copies)
{
    if (copies == NEVER)
        fprintf(f, ","); /* empty: gnuplot leaves the point out, the book says "never" */
    else
        fprintf(f, ",%ld", copies);
}

static void write_csv(const char *dir, const size_costs *c, int count, int reps)
{
    measure_csv csv;
    FILE *f = measure_csv_create(&csv, dir, "break_even.csv",
                                 "after how many copies to the device pinning a buffer pays",
                                 "chapters/ch02-pinned/03-when-pinning-pays");
    fprintf(f,
            "# unit: microseconds, medians of %d (copies: CUDA events; the rest: host clock); "
            "register = cudaHostRegister + cudaHostUnregister; malloc_host = cudaMallocHost + "
            "cudaFreeHost; malloc = malloc + touching every page + free; *_copies = the "
            "smallest number of copies from which pinning is faster, empty where it never is\n"
            "bytes,pageable_us,pinned_us,register_us,malloc_host_us,malloc_us,register_copies,"
            "malloc_host_copies\n",
            reps);
    for (int i = 0; i < count; i++) {
        fprintf(f, "%zu,%.3f,%.3f,%.3f,%.3f,%.3f", c[i].bytes, c[i].pageable_us, c[i].pinned_us,
                c[i].register_us, c[i].malloc_host_us, c[i].malloc_us);
        write_csv_copies(f, c[i].register_copies);
        write_csv_copies(f, c[i].malloc_host_copies);
        fprintf(f, "\n");
    }
    measure_csv_close(&csv);
}

/* The largest buffer, registered, up to a poisoned device buffer and back into a poisoned
 * pinned one: true when every byte arrived. */
static bool registered_copy_intact(unsigned char *h_pageable, unsigned char *h_pinned,
                                   unsigned char *d_buffer, size_t bytes)
{
    memset(h_pinned, 0xFF, bytes);
    CUDA_CHECK(cudaMemset(d_buffer, 0xFF, bytes));
    CUDA_CHECK(cudaHostRegister(h_pageable, bytes, cudaHostRegisterDefault));
    CUDA_CHECK(cudaMemcpy(d_buffer, h_pageable, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaHostUnregister(h_pageable));
    CUDA_CHECK(cudaMemcpy(h_pinned, d_buffer, bytes, cudaMemcpyDeviceToHost));
    return memcmp(h_pinned, h_pageable, bytes) == 0;
}

int main(int argc, char **argv)
{
    sweep_options opt = {.min_bytes = (size_t)4 << 10, .max_bytes = (size_t)64 << 20, .reps = 5};
    sweep_options_parse(argc, argv, usage, &opt);
    size_t sizes[MAX_SIZES];
    size_costs c[MAX_SIZES];
    const int count = doubling_sizes(opt.min_bytes, opt.max_bytes, sizes, MAX_SIZES);
    for (int i = 0; i < count; i++)
        c[i].bytes = sizes[i];
    const size_t largest = sizes[count - 1];
    const int reps = opt.reps;
    const char *csv_dir = opt.csv_dir;

    unsigned char *h_pageable = host_alloc(largest), *h_pinned, *d_buffer;
    fill_pattern(h_pageable, largest); /* touched: the program's own data */
    CUDA_CHECK(cudaMallocHost((void **)&h_pinned, largest));
    memcpy(h_pinned, h_pageable, largest);
    CUDA_CHECK(cudaMalloc((void **)&d_buffer, largest));
    event_timer timer;
    CUDA_CHECK(event_timer_create(&timer));
    malloc_host_and_free(NULL, 1 << 20); /* the process's first pinned allocation: untimed */
    register_and_unregister(h_pageable, 1 << 12);

    char size[32];
    printf("Host to device, microseconds (medians of %d): a copy from pageable and from pinned\n"
           "memory; registering and unregistering the buffer; cudaMallocHost and cudaFreeHost\n"
           "less malloc, first touch and free; and the copies after which each way of pinning\n"
           "has paid for itself\n\n",
           reps);
    printf("%10s %11s %11s %11s %10s %12s %10s\n", "size", "pageable", "pinned", "register",
           "copies", "MallocHost+", "copies");
    for (int i = 0; i < count; i++) {
        size_costs *s = &c[i];
        s->pageable_us = copy_us(d_buffer, h_pageable, s->bytes, reps, &timer);
        s->pinned_us = copy_us(d_buffer, h_pinned, s->bytes, reps, &timer);
        s->register_us = median_us(register_and_unregister, h_pageable, s->bytes, reps);
        s->malloc_host_us = median_us(malloc_host_and_free, NULL, s->bytes, reps);
        s->malloc_us = median_us(malloc_touch_and_free, NULL, s->bytes, reps);
        double saved_us = s->pageable_us - s->pinned_us;
        s->register_copies = break_even_copies(s->register_us, saved_us);
        s->malloc_host_copies = break_even_copies(s->malloc_host_us - s->malloc_us, saved_us);
        printf("%10s %11.1f %11.1f %11.1f", format_bytes(s->bytes, size, sizeof size),
               s->pageable_us, s->pinned_us, s->register_us);
        print_copies(s->register_copies);
        printf(" %12.1f", s->malloc_host_us - s->malloc_us);
        print_copies(s->malloc_host_copies);
        printf("\n");
        fflush(stdout);
    }

    const size_costs *last = &c[count - 1];
    printf("\nAt %s, registering cost as much as %.1f pageable copies, and each pinned copy\n"
           "saved %.0f%% of a pageable one. \"never\" marks the sizes where a pinned copy saved\n"
           "nothing (the smallest, whose time is the call's fixed cost): there pinning cannot\n"
           "pay. Elsewhere it pays from the number of copies shown; pinning costs about the same\n"
           "per byte at every size, and so does the time a pinned copy saves.\n",
           format_bytes(last->bytes, size, sizeof size),
           last->pageable_us > 0 ? last->register_us / last->pageable_us : 0,
           last->pageable_us > 0 ? 100 * (last->pageable_us - last->pinned_us) / last->pageable_us
                                 : 0);

    bool intact = registered_copy_intact(h_pageable, h_pinned, d_buffer, largest);
    CUDA_CHECK(event_timer_destroy(&timer));
    CUDA_CHECK(cudaFree(d_buffer));
    CUDA_CHECK(cudaFreeHost(h_pinned));
    free(h_pageable);
    if (!intact)
        return verdict("the copy from the registered buffer did not arrive intact");
    printf("verified: %s copied up from the registered buffer and back arrived intact\n",
           format_bytes(largest, size, sizeof size));
    if (csv_dir != NULL)
        write_csv(csv_dir, c, count, reps);
    return verdict(NULL);
}
