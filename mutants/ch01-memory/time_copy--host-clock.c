/* time_copy--host-clock.c - known mistake: the copy is timed with the host's clock.
 *
 * For one large blocking copy the figure comes out close, which is why the
 * mistake survives; but it measures what the CPU waited, call overhead
 * included, and for asynchronous work it measures nothing at all.
 * expect: recorded no CUDA events
 */
#include "time_copy.h"

#include <time.h>

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

cudaError_t time_copy_ms(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind,
                         float *elapsed_ms)
{
    double start = now_ms();
    cudaError_t err = cudaMemcpy(dst, src, bytes, kind);
    if (err == cudaSuccess)
        err = cudaDeviceSynchronize();
    if (err == cudaSuccess)
        *elapsed_ms = (float)(now_ms() - start);
    return err;
}
