/* time_copy--no-synchronize.c - known mistake: the elapsed time is read without waiting for stop.
 *
 * cudaEventRecord only queues the stop event. Read too soon, the time is not
 * there yet (cudaErrorNotReady); if the copy happened to finish first it is,
 * so the code works by luck, and the trace is what shows the mistake.
 * expect: read the elapsed time without waiting for the stop event
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
        err = cudaMemcpy(dst, src, bytes, kind);
    if (err == cudaSuccess)
        err = cudaEventRecord(stop, 0);
    if (err == cudaSuccess)
        err = cudaEventElapsedTime(elapsed_ms, start, stop);
    cudaEventDestroy(stop);
    cudaEventDestroy(start);
    return err;
}
