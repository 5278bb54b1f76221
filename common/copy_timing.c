/* copy_timing.c - median bandwidth of cudaMemcpy (events) and of memcpy (host clock). */
#include "copy_timing.h"

#include "chapter.h"
#include "cuda_check.h"
#include "units.h"

#include <stdlib.h>
#include <string.h>

/* listing: timed-copy */
/* Copies `bytes` reps times, each timed by events on the default stream, after one untimed
 * copy that pays for first touches and lazy set-up. Returns the median in GB/s. */
double copy_median_gb_per_s(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind,
                            int reps, event_timer *timer)
{
    double *gb_per_s = host_alloc((size_t)reps * sizeof *gb_per_s);
    CUDA_CHECK(cudaMemcpy(dst, src, bytes, kind));
    for (int r = 0; r < reps; r++) {
        float elapsed_ms;
        CUDA_CHECK(event_timer_start(timer, 0));
        CUDA_CHECK(cudaMemcpy(dst, src, bytes, kind));
        CUDA_CHECK(event_timer_stop(timer, 0, &elapsed_ms));
        gb_per_s[r] = bandwidth_gb_per_s(bytes, elapsed_ms);
    }
    double median = median_of(gb_per_s, (size_t)reps);
    free(gb_per_s);
    return median;
}
/* end listing: timed-copy */

double host_copy_median_gb_per_s(void *dst, const void *src, size_t bytes, int reps)
{
    double *gb_per_s = host_alloc((size_t)reps * sizeof *gb_per_s);
    memcpy(dst, src, bytes);
    for (int r = 0; r < reps; r++) {
        double start_ms = host_clock_ms();
        memcpy(dst, src, bytes);
        gb_per_s[r] = bandwidth_gb_per_s(bytes, host_clock_ms() - start_ms);
    }
    double median = median_of(gb_per_s, (size_t)reps);
    free(gb_per_s);
    return median;
}
