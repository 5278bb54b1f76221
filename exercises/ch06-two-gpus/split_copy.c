/* split_copy.c - one copy between two GPUs, half pushed by the sender, half pulled by the receiver.
 *
 * On a machine with one GPU the tests of this exercise do not run: they need two. Run
 *     make check EX=ch06-two-gpus/split_copy
 * on a machine with two or more to see how you are doing.
 */
#include "split_copy.h"

cudaError_t split_peer_copy(void *dst, int dst_device, const void *src, int src_device,
                            size_t bytes)
{
    (void)dst;
    (void)dst_device;
    (void)src;
    (void)src_device;
    (void)bytes;
    /* TODO: remember the current device (cudaGetDevice). Make src_device current, create a
     * stream and queue the first bytes / 2 bytes on it with cudaMemcpyPeerAsync; make dst_device
     * current, create a second stream and queue the rest (from offset bytes / 2, in bytes: use
     * char pointers) on it. Only then wait for both streams (cudaStreamSynchronize), destroy
     * them and make the remembered device current again. On an error stop queuing, but still
     * wait for what you queued, destroy what you made, restore the device and return the first
     * error. */
    return cudaErrorNotYetImplemented;
}
