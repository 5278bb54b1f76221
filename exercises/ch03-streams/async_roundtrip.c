/* async_roundtrip.c - copy up and back with cudaMemcpyAsync on a stream of your own.
 *
 * A stream is a queue of work for the GPU: what you queue on it runs in order,
 * while your code goes on. So the copies are not done when cudaMemcpyAsync
 * returns; wait for the stream before anyone reads h_out. Run
 *     make check EX=ch03-streams/async_roundtrip
 * to see how you are doing.
 */
#include "async_roundtrip.h"

cudaError_t async_roundtrip(const float *h_in, float *h_out, float *d_buffer, size_t n)
{
    (void)h_in;
    (void)h_out;
    (void)d_buffer;
    (void)n;
    /* TODO: create a stream, cudaMemcpyAsync h_in up to d_buffer and d_buffer back into h_out
     * on it, cudaStreamSynchronize it, destroy it (on the error paths too), and return the
     * first error. */
    return cudaErrorNotYetImplemented;
}
