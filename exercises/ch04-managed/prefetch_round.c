/* prefetch_round.c - a managed round trip whose pages move ahead of the work, not on faults.
 *
 * Managed memory moves itself, one fault at a time, when a side touches a page that lives on
 * the other: slow. cudaMemPrefetchAsync moves the whole range at once, at copy speed, queued
 * on a stream like a copy. Move the pages to the GPU before the kernel and back to the host
 * after it, and wait before the host reads. Run
 *     make check EX=ch04-managed/prefetch_round
 * to see how you are doing.
 */
#include "gpu_work.h"
#include "prefetch_round.h"

cudaError_t prefetch_round(const float *h_in, float *h_out, size_t n, float a, float b)
{
    (void)h_in;
    (void)h_out;
    (void)n;
    (void)a;
    (void)b;
    /* TODO: cudaMallocManaged a buffer of n floats and memcpy h_in into it; create a stream;
     * cudaMemPrefetchAsync the buffer to the current device (cudaGetDevice) on it,
     * gpu_work_scale_add on it in place, cudaMemPrefetchAsync the buffer back to the host;
     * cudaStreamSynchronize, memcpy the results into h_out; destroy the stream and free the
     * buffer (on the error paths too), and return the first error. */
    return cudaErrorNotYetImplemented;
}
