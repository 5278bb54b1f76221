/* copy_timing.h - how fast a copy runs: cudaMemcpy timed by CUDA events, memcpy by the host clock.
 *
 * Both make one untimed copy first, which pays for first touches of pages and
 * the driver's lazy set-up, then time `reps` copies and return the median in
 * GB/s (10^9 bytes per second). A CUDA error goes through CUDA_CHECK, which
 * ends a chapter program.
 */
#ifndef COURSE_COPY_TIMING_H
#define COURSE_COPY_TIMING_H

#include "timing.h"

#include <cuda_runtime_api.h>
#include <stddef.h>

/* cudaMemcpy(dst, src, bytes, kind), each copy timed by `timer`'s events on the default stream. */
double copy_median_gb_per_s(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind,
                            int reps, event_timer *timer);

/* memcpy(dst, src, bytes) by one CPU thread, each copy timed by the host clock. */
double host_copy_median_gb_per_s(void *dst, const void *src, size_t bytes, int reps);

#endif
