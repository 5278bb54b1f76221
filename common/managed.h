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
