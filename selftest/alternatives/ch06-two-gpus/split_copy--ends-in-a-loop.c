/* split_copy--ends-in-a-loop - a correct split_peer_copy written another way: the two ends of the
 * copy as an array walked by loops, the receiver's half queued first, non-blocking streams, and
 * byte offsets on uint8_t pointers. */
#include "split_copy.h"

#include <stdint.h>

enum { RECEIVER, SENDER, ENDS };

cudaError_t split_peer_copy(void *dst, int dst_device, const void *src, int src_device,
                            size_t bytes)
{
    const int gpu[ENDS] = {[RECEIVER] = dst_device, [SENDER] = src_device};
    /* Where each end's part starts, and how long it is: the sender's is the first bytes / 2. */
    const size_t from[ENDS] = {[RECEIVER] = bytes / 2, [SENDER] = 0};
    const size_t length[ENDS] = {[RECEIVER] = bytes - bytes / 2, [SENDER] = bytes / 2};
    cudaStream_t stream[ENDS] = {NULL, NULL};
    int before;
    cudaError_t first = cudaGetDevice(&before);
    if (first != cudaSuccess)
        return first;
    for (int end = 0; end < ENDS && first == cudaSuccess; end++) {
        first = cudaSetDevice(gpu[end]);
        if (first == cudaSuccess)
            first = cudaStreamCreateWithFlags(&stream[end], cudaStreamNonBlocking);
        if (first == cudaSuccess)
            first = cudaMemcpyPeerAsync((uint8_t *)dst + from[end], dst_device,
                                        (const uint8_t *)src + from[end], src_device, length[end],
                                        stream[end]);
    }
    for (int end = 0; end < ENDS; end++) {
        if (stream[end] == NULL)
            continue;
        /* What was queued, on an error too; a stream needs no device of its own current. */
        const cudaError_t err = cudaStreamSynchronize(stream[end]);
        (void)cudaStreamDestroy(stream[end]);
        if (first == cudaSuccess)
            first = err;
    }
    const cudaError_t restored = cudaSetDevice(before);
    return first != cudaSuccess ? first : restored;
}
