/* time_copy--events-kept-static.c - known mistake: the events are made once and kept, in static
 * variables, from one call to the next.
 *
 * They are never destroyed: the harness gives them back after the test whose call made them, so
 * the next test's call records a dangling event. The diagnostic says so, where the runtime
 * would crash or blame something else.
 * expect: kept an event from one call to the next
 */
#include "time_copy.h"

#include <stdbool.h>

cudaError_t time_copy_ms(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind,
                         float *elapsed_ms)
{
    static cudaEvent_t start, stop;
    static bool made;
    cudaError_t err = cudaSuccess;
    if (!made) {
        err = cudaEventCreate(&start);
        if (err == cudaSuccess)
            err = cudaEventCreate(&stop);
        if (err != cudaSuccess)
            return err;
        made = true;
    }
    err = cudaEventRecord(start, 0);
    if (err == cudaSuccess)
        err = cudaMemcpy(dst, src, bytes, kind);
    if (err == cudaSuccess)
        err = cudaEventRecord(stop, 0);
    if (err == cudaSuccess)
        err = cudaEventSynchronize(stop);
    if (err == cudaSuccess)
        err = cudaEventElapsedTime(elapsed_ms, start, stop);
    return err;
}
