/* split_copy.h - Exercise: one copy between two GPUs, split over both GPUs' copy engines.
 *
 * split_peer_copy copies `bytes` bytes from `src`, device memory of GPU `src_device`, to `dst`,
 * device memory of GPU `dst_device`, in two halves that cross at the same time, each moved by the
 * copy engine of another GPU:
 *
 *     the first half: bytes / 2 bytes (rounded down) from the start, on a stream of the sending
 *     GPU, whose copy engine pushes them across;
 *     the rest: bytes - bytes / 2 bytes from offset bytes / 2 of both buffers, on a stream of the
 *     receiving GPU, whose copy engine pulls them across.
 *
 * For an odd count the second half is the longer by one byte; for a count of 1 the first half is
 * empty (a copy of 0 bytes may be queued or left out). Every one of the `bytes` bytes arrives.
 *
 *     remember the caller's device        cudaGetDevice(&caller)
 *     a stream of the sender              cudaSetDevice(src_device); cudaStreamCreate(&push)
 *     the first half on it                cudaMemcpyPeerAsync(dst, dst_device, src, src_device,
 *                                                             half, push)
 *     a stream of the receiver            cudaSetDevice(dst_device); cudaStreamCreate(&pull)
 *     the rest on it                      cudaMemcpyPeerAsync(dst + half, dst_device, src + half,
 *                                                             src_device, bytes - half, pull)
 *     then wait for both                  cudaStreamSynchronize(push); cudaStreamSynchronize(pull)
 *     destroy both streams, and make the caller's device current again
 *
 * A stream belongs to the GPU that was current when it was made, and the copies queued on it
 * are that GPU's copy engine's work: two streams of one GPU share its engines, so make each
 * stream with its own GPU current. (Offsets are in bytes: do the arithmetic on char pointers.)
 *
 * Queue both halves before waiting for either: a wait in between leaves the second engine idle
 * until the first half has crossed, and the split copy takes as long as one engine doing it all.
 * cudaMemcpyPeerAsync only queues its copy, and cudaStreamDestroy does not wait for it, so the
 * function waits for both streams before it returns: its caller reads dst next.
 *
 * On every path the streams made are destroyed and the device that was current when the
 * function was called is current again. On an error it stops queuing, but first waits for what
 * it had queued (a half on its way still writes into dst after the streams are gone), then
 * returns the first error; otherwise cudaSuccess.
 *
 * dst and src hold at least `bytes` bytes (any count from 1 up), on two different GPUs. Peer
 * access need not be enabled: without it the driver stages each half through host memory of
 * its own, slower, and the same bytes arrive.
 */
#ifndef SPLIT_COPY_H
#define SPLIT_COPY_H

#include <cuda_runtime_api.h>
#include <stddef.h>

cudaError_t split_peer_copy(void *dst, int dst_device, const void *src, int src_device,
                            size_t bytes);

#endif
