/* time_copy.c - time one cudaMemcpy with two CUDA events.
 *
 * An event is a marker in the GPU's stream of work: the GPU notes the time
 * when it gets there. Record one before the copy and one after, wait for the
 * second, and the time between them is the copy's. Run
 *     make check EX=ch01-memory/time_copy
 * to see how you are doing.
 */
#include "time_copy.h"

cudaError_t time_copy_ms(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind,
                         float *elapsed_ms)
{
    (void)dst;
    (void)src;
    (void)bytes;
    (void)kind;
    (void)elapsed_ms;
    /* TODO: create start and stop events, record start, cudaMemcpy, record stop,
     * cudaEventSynchronize(stop), cudaEventElapsedTime, destroy both events (on the error
     * paths too), and return the first error. */
    return cudaErrorNotYetImplemented;
}
