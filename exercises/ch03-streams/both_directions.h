/* both_directions.h - Exercise: copy to the device and back from it at the same time.
 *
 * The PCIe link carries data both ways at once, and a GPU has a copy engine for
 * each direction; the two copies only overlap when they are queued on two
 * different streams, from pinned host memory, and neither stream waits for the
 * other.
 *
 * both_directions_host_alloc gives *h_buffer host memory of `bytes` bytes that
 * copies can run from and into asynchronously; both_directions_host_free gives
 * it back. Each returns cudaSuccess or the runtime's error.
 *
 * copy_both_directions copies up_bytes from h_up_src (host) to d_up_dst
 * (device) and, at the same time, down_bytes from d_down_src (device) to
 * h_down_dst (host), each on a stream of its own that it creates, and returns
 * once both copies have arrived, having destroyed its streams. The host
 * buffers it is given are pinned (the timed test's come from
 * both_directions_host_alloc). Returns cudaSuccess, or the first error a
 * runtime call returned; on an error it still waits for what it queued and
 * destroys every stream it created.
 */
#ifndef BOTH_DIRECTIONS_H
#define BOTH_DIRECTIONS_H

#include <cuda_runtime_api.h>
#include <stddef.h>

cudaError_t both_directions_host_alloc(void **h_buffer, size_t bytes);
cudaError_t both_directions_host_free(void *h_buffer);

cudaError_t copy_both_directions(void *d_up_dst, const void *h_up_src, size_t up_bytes,
                                 void *h_down_dst, const void *d_down_src, size_t down_bytes);

#endif
