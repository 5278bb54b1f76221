/* peer_copy.c - copy from one GPU to another, timed by the sending GPU's events on its stream.
 *
 * On a machine with one GPU the tests of this exercise do not run: they need two. Run
 *     make check EX=ch06-two-gpus/peer_copy
 * on a machine with two or more to see how you are doing.
 */
#include "peer_copy.h"

cudaError_t timed_peer_copy(void *dst, int dst_device, const void *src, int src_device,
                            size_t bytes, float *ms)
{
    (void)dst;
    (void)dst_device;
    (void)src;
    (void)src_device;
    (void)bytes;
    (void)ms;
    /* TODO: remember the current device (cudaGetDevice); make src_device current BEFORE creating
     * a stream and two events (they belong to the device current when they are made); record the
     * start event on the stream, queue cudaMemcpyPeerAsync on the same stream, record the stop
     * event; wait for stop (cudaEventSynchronize), then cudaEventElapsedTime(ms, start, stop).
     * Destroy the events and the stream and make the remembered device current again on every
     * path, and return the first error. */
    return cudaErrorNotYetImplemented;
}
