/* staging_copy.h - Exercise: a pageable copy done by hand, the way the driver does it.
 *
 * The GPU's copy engines reach only pinned memory, so a cudaMemcpy from pageable memory is two
 * copies: the CPU copies the data into a pinned staging buffer of the driver's, and the copy
 * engine copies it from there to the device, a buffer's worth at a time. staged_copy_to_device
 * does the same with a staging buffer the caller provides:
 *
 *     for each chunk of h_src, in order, from offset 0:
 *         memcpy the chunk from h_src + offset into h_staging        (the CPU)
 *         cudaMemcpy it from h_staging to d_dst + offset, host to device  (the copy engine)
 *
 * Every chunk is chunk_bytes long except the last, which holds what is left: bytes is not
 * always a multiple of chunk_bytes, and chunk_bytes may be larger than bytes (then one copy of
 * `bytes` bytes is all). That makes ceil(bytes / chunk_bytes) copies, each from the start of
 * h_staging, which is never written past its chunk_bytes; d_dst is never written past its
 * `bytes`. Synchronous: each cudaMemcpy returns once h_staging may be reused.
 *
 * h_src is pageable host memory of `bytes` bytes, h_staging pinned host memory of chunk_bytes
 * bytes, d_dst device memory of `bytes` bytes; the caller owns all three.
 *
 * Returns cudaSuccess at once when bytes is 0. Otherwise cudaErrorInvalidValue, before any
 * copy, when d_dst, h_src or h_staging is NULL or chunk_bytes is 0; else cudaSuccess, or the
 * first error a cudaMemcpy returned: it stops at that error (no copy after a failed one).
 */
#ifndef STAGING_COPY_H
#define STAGING_COPY_H

#include <cuda_runtime_api.h>
#include <stddef.h>

cudaError_t staged_copy_to_device(void *d_dst, const void *h_src, size_t bytes, void *h_staging,
                                  size_t chunk_bytes);

#endif
