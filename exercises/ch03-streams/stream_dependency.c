/* stream_dependency.c - make the consumer stream wait for the producer's copy, on the GPU.
 *
 * Work on two streams may run in any order. An event recorded on one stream
 * marks a point in it; cudaStreamWaitEvent holds another stream there until
 * the first reaches that point, while the host goes on. Run
 *     make check EX=ch03-streams/stream_dependency
 * to see how you are doing.
 */
#include "stream_dependency.h"

cudaError_t copy_through_two_streams(const float *h_in, float *d_buffer, float *h_out, size_t n,
                                     cudaStream_t producer, cudaStream_t consumer)
{
    (void)h_in;
    (void)d_buffer;
    (void)h_out;
    (void)n;
    (void)producer;
    (void)consumer;
    /* TODO: create an event; copy h_in up to d_buffer on the producer; record the event on the
     * producer; make the consumer wait for it (cudaStreamWaitEvent); copy d_buffer back into
     * h_out on the consumer; destroy the event (on the error paths too); return the first
     * error. The host never waits. */
    return cudaErrorNotYetImplemented;
}
