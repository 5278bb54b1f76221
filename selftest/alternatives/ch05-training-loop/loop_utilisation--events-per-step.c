/* loop_utilisation.c - another way: a pair of events for every step, all read at the end, the
 * host's work a busy wait on its own clock, one cleanup label. */
#include "loop_utilisation.h"

#include "gpu_work.h"

#include <stdlib.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Busy, as a host converting pixels would be, for `ms`. */
static void spin_for(double ms)
{
    const double until = now_ms() + ms;
    while (now_ms() < until) {
    }
}

cudaError_t loop_utilisation(cudaStream_t stream, int steps, double host_ms, double step_ms,
                             double *utilisation)
{
    /* Events 0 and 1 bracket the loop; 2 + 2s and 3 + 2s step s. */
    const int count = 2 + 2 * steps;
    cudaEvent_t *ev = calloc((size_t)count, sizeof *ev);
    if (ev == NULL)
        return cudaErrorMemoryAllocation;
    int made = 0;
    cudaError_t err = cudaSuccess;
    while (made < count && (err = cudaEventCreate(&ev[made])) == cudaSuccess)
        made++;
    if (err != cudaSuccess)
        goto out;
    if ((err = cudaEventRecord(ev[0], stream)) != cudaSuccess)
        goto out;
    for (int s = 0; s < steps; s++) {
        spin_for(host_ms);
        if ((err = cudaEventRecord(ev[2 + 2 * s], stream)) != cudaSuccess ||
            (err = gpu_work_keep_busy(stream, step_ms)) != cudaSuccess ||
            (err = cudaEventRecord(ev[3 + 2 * s], stream)) != cudaSuccess ||
            /* The naive loop: the next batch is loaded only once this step is done. */
            (err = cudaEventSynchronize(ev[3 + 2 * s])) != cudaSuccess)
            goto out;
    }
    if ((err = cudaEventRecord(ev[1], stream)) != cudaSuccess ||
        (err = cudaEventSynchronize(ev[1])) != cudaSuccess)
        goto out;
    double busy = 0;
    float ms;
    for (int s = 0; s < steps; s++) {
        if ((err = cudaEventElapsedTime(&ms, ev[2 + 2 * s], ev[3 + 2 * s])) != cudaSuccess)
            goto out;
        busy += ms;
    }
    if ((err = cudaEventElapsedTime(&ms, ev[0], ev[1])) == cudaSuccess)
        *utilisation = busy / ms;
out:
    for (int e = made - 1; e >= 0; e--) {
        cudaError_t destroyed = cudaEventDestroy(ev[e]);
        if (err == cudaSuccess)
            err = destroyed;
    }
    free(ev);
    return err;
}
