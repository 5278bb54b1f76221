/* time_copy--no-destroy-on-error.c - known mistake: an error returns past the destroys.
 *
 * Right while nothing fails; each failure leaves the events behind.
 * expect: after the test made the first cudaEventRecord fail, created an event
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
    if ((err = cudaEventRecord(start, 0)) != cudaSuccess)
        return err;
    if ((err = cudaMemcpy(dst, src, bytes, kind)) != cudaSuccess)
        return err;
    if ((err = cudaEventRecord(stop, 0)) != cudaSuccess)
        return err;
    if ((err = cudaEventSynchronize(stop)) != cudaSuccess)
        return err;
    if ((err = cudaEventElapsedTime(elapsed_ms, start, stop)) != cudaSuccess)
        return err;
    cudaEventDestroy(stop);
    return cudaEventDestroy(start);
}
