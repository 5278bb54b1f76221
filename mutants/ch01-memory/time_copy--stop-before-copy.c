/* time_copy--stop-before-copy.c - known mistake: both events are recorded before the copy.
 *
 * The two events are back to back, so the time between them is next to
 * nothing, whatever the copy takes.
 * expect: the stop event was recorded before the copy
 */
#include "time_copy.h"

cudaError_t time_copy_ms(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind,
                         float *elapsed_ms)
{
    cudaEvent_t start, stop;
    cudaError_t err = cudaEventCreate(&start);
    if (err != cudaSuccess)
        return err;
    err = cudaEventCreate(&stop);
    if (err != cudaSuccess) {
        cudaEventDestroy(start);
        return err;
    }
    err = cudaEventRecord(start, 0);
    if (err == cudaSuccess)
        err = cudaEventRecord(stop, 0);
    if (err == cudaSuccess)
        err = cudaMemcpy(dst, src, bytes, kind);
    if (err == cudaSuccess)
        err = cudaEventSynchronize(stop);
    if (err == cudaSuccess)
        err = cudaEventElapsedTime(elapsed_ms, start, stop);
    cudaEventDestroy(stop);
    cudaEventDestroy(start);
    return err;
}
