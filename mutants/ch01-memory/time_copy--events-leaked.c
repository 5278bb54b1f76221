/* time_copy--events-leaked.c - known mistake: the two events are never destroyed.
 *
 * Each call leaves two events behind; a program that times in a loop piles
 * them up until the driver runs out.
 * expect: returned without cudaEventDestroy on it
 */
#include "time_copy.h"

cudaError_t time_copy_ms(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind,
                         float *elapsed_ms)
{
    cudaEvent_t start, stop;
    cudaError_t err = cudaEventCreate(&start);
    if (err == cudaSuccess)
        err = cudaEventCreate(&stop);
    if (err == cudaSuccess)
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
