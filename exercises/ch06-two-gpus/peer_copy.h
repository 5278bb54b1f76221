/* peer_copy.h - Exercise: a copy from one GPU to another, timed on the GPU that sends it.
 *
 * timed_peer_copy copies `bytes` bytes from `src`, device memory of GPU `src_device`, to `dst`,
 * device memory of GPU `dst_device`, and measures how long the copy took on the GPU:
 *
 *     remember the caller's device          cudaGetDevice(&caller)
 *     make the sending GPU current          cudaSetDevice(src_device)
 *     a stream and two events of it         cudaStreamCreate(&stream), cudaEventCreate twice
 *     mark the start on that stream         cudaEventRecord(start, stream)
 *     the copy, on that stream              cudaMemcpyPeerAsync(dst, dst_device, src, src_device,
 *                                                               bytes, stream)
 *     mark the end on that stream           cudaEventRecord(stop, stream)
 *     wait until the GPU has passed it      cudaEventSynchronize(stop)
 *     the time between the two marks        cudaEventElapsedTime(ms, start, stop)
 *     destroy the events and the stream, and make the caller's device current again
 *
 * A stream and an event belong, for the whole of their lives, to the GPU that was current when
 * they were made, whichever GPU is current later. An event can be recorded only on a stream of
 * its own GPU: recording an event of GPU 0 on a stream of GPU 1 fails with
 * cudaErrorInvalidResourceHandle, and so does cudaEventElapsedTime of two GPUs' events. So make
 * the sending GPU current before creating any of them. The copy goes on the sending GPU's
 * stream: that GPU's copy engine pushes the bytes across, and the two events on the same stream
 * time exactly what the stream did between them, the copy. Events on another stream, or a copy on
 * another stream (the legacy default stream, `0`, say), time something else.
 *
 * Recording an event only queues it: the GPU stamps it when it gets there. Until the stop event
 * has completed, cudaEventElapsedTime has no time to give (it returns cudaErrorNotReady), so
 * wait for it first. The host's clock is no substitute: it measures how long the CPU took to
 * queue the copy, or to wait for it, not what the GPU did.
 *
 * *ms receives the time in milliseconds, as cudaEventElapsedTime gives it; on an error it need
 * not be set. The stream and the events made are destroyed, and the device that was current when
 * the function was called is current again when it returns, on every path: the caller's next
 * cudaMalloc or kernel must land on the GPU the caller chose. Returns cudaSuccess or the first
 * error, at which it stops queuing (the clean-up still runs).
 *
 * dst and src hold at least `bytes` bytes (any count, odd ones included), on two different GPUs.
 * Peer access need not be enabled: without it the driver stages the copy through host memory of
 * its own, slower, and the same bytes arrive.
 */
#ifndef PEER_COPY_H
#define PEER_COPY_H

#include <cuda_runtime_api.h>
#include <stddef.h>

cudaError_t timed_peer_copy(void *dst, int dst_device, const void *src, int src_device,
                            size_t bytes, float *ms);

#endif
