/* staging_copy--destination-not-advanced.c - known mistake: every chunk copied to d_dst itself.
 *
 * The source moves on, the destination does not: each chunk lands on the one before, and d_dst
 * ends with the last chunk at its start and poison after the first chunk.
 * expect: every chunk was copied to the start of d_dst
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
        memcpy(h_staging, from + offset, this_chunk);
        cudaError_t err = cudaMemcpy(to, h_staging, this_chunk, cudaMemcpyHostToDevice);
        if (err != cudaSuccess)
            return err;
    }
    return cudaSuccess;
}
