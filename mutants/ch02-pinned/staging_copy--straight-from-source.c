/* staging_copy--straight-from-source.c - known mistake: the staging buffer never used.
 *
 * Chunk by chunk, but each cudaMemcpy goes from h_src itself, which is pageable: the driver
 * stages every chunk through its own buffer, and the one the caller pinned sits idle.
 * expect: copies straight from h_src
 */
#include "staging_copy.h"

#include <string.h>

cudaError_t staged_copy_to_device(void *d_dst, const void *h_src, size_t bytes, void *h_staging,
                                  size_t chunk_bytes)
{
    if (bytes == 0)
        return cudaSuccess;
    if (d_dst == NULL || h_src == NULL || h_staging == NULL || chunk_bytes == 0)
        return cudaErrorInvalidValue;

    const unsigned char *from = h_src;
    unsigned char *to = d_dst;
    for (size_t offset = 0; offset < bytes; offset += chunk_bytes) {
        /* The last chunk holds what is left, which may be less than a whole one. */
        const size_t this_chunk = bytes - offset < chunk_bytes ? bytes - offset : chunk_bytes;
        cudaError_t err =
            cudaMemcpy(to + offset, from + offset, this_chunk, cudaMemcpyHostToDevice);
        if (err != cudaSuccess)
            return err;
    }
    return cudaSuccess;
}
