/* managed.h - what chapter 4's programs share: a managed buffer's pattern, the host's touch of
 * its pages, a timed read by the GPU, and the rule that keeps them inside the free memory. */
#ifndef COURSE_MANAGED_H
#define COURSE_MANAGED_H

#include "timing.h"

#include <cuda_runtime_api.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MANAGED_PAGE_BYTES 4096
#define MANAGED_MAX_REPS 50

/* The command line of a program that measures one managed buffer: its size, the rounds whose
 * medians it prints, and a folder for its CSV file, CSV_FILE. */
#define MANAGED_USAGE(csv_file)                                                                    \
    "[--size SIZE] [--reps N] [--csv DIR]\n"                                                       \
    "       --size  bytes of the managed buffer; K, M, G multiply by 1024\n"                       \
    "               (default 256M; make measure uses 1G)\n"                                        \
    "       --reps  rounds, 1 to 50, whose medians are printed (default 5)\n"                      \
    "       --csv   also write DIR/" csv_file
typedef struct managed_options {
    size_t bytes;
    int reps;
    const char *csv_dir; /* NULL: no CSV file */
} managed_options;

/* Parses MANAGED_USAGE's options (options_parse's rules): 256 MiB, 5 rounds and no CSV file by
 * default; a size that is not a whole number of 4 KiB pages is a usage error. */
managed_options managed_options_parse(int argc, char **argv, const char *usage);

/* Writes `count` words of no short period, different for each `round`, so that no round's
 * checksum is another's. Written through a managed pointer, it brings every page to the host. */
void managed_fill_words(uint32_t *words, size_t count, uint32_t round);

/* Reads one word of every 4 KiB page of the `bytes` at `words`, on the host clock: where the
 * pages are on the GPU, each read brings its page back. Returns the milliseconds. */
double managed_touch_pages(const uint32_t *words, size_t bytes);

/* One pass of gpu_work_checksum over `bytes` at d_data on `stream`, timed by `timer`'s events
 * into *ms; whether it summed to `want`. d_sum is device memory for the sum. CUDA_CHECK's
 * handler deals with a failed call. */
bool managed_timed_checksum(cudaStream_t stream, const void *d_data, size_t bytes,
                            unsigned long long *d_sum, unsigned long long want, event_timer *timer,
                            double *ms);

/* Managed memory can be asked for beyond what the GPU holds: the driver then evicts pages to
 * make room, on a shared GPU other programs' too. Exits with the FAILED verdict, saying why,
 * when `bytes` is more than a quarter of the device's free memory (a program holds it a few
 * times over). */
void managed_refuse_oversubscription(size_t bytes, const char *argv0);

#endif
