/* time_copy--goto-flags.c - a correct solution written another way: events made with
 * cudaEventCreateWithFlags (cudaEventBlockingSync: the host sleeps while it waits), a macro of
 * its own that keeps the first error, and one goto to the cleanup.
 *
 * An alternative, not a mistake: it must earn every point from make check and make grade
 * alike (selftest/sections/64-agreement.sh).
 */
#include "time_copy.h"

#define TRY(call)                  \
    do {                           \
        if ((err = (call)) != cudaSuccess) \
            goto done;             \
    } while (0)

cudaError_t time_copy_ms(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind,
                         float *elapsed_ms)
{
    cudaEvent_t begin = 0, end = 0;
    cudaError_t err;
    TRY(cudaEventCreateWithFlags(&begin, cudaEventBlockingSync));
    TRY(cudaEventCreateWithFlags(&end, cudaEventBlockingSync));
    TRY(cudaEventRecord(begin, 0));
    TRY(cudaMemcpy(dst, src, bytes, kind));
    TRY(cudaEventRecord(end, 0));
    TRY(cudaEventSynchronize(end));
    TRY(cudaEventElapsedTime(elapsed_ms, begin, end));
done:
    if (end)
        cudaEventDestroy(end);
    if (begin)
        cudaEventDestroy(begin);
    return err;
}
