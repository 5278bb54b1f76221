/* staging_copy--tail-not-copied.c - known mistake: only whole chunks are copied.
 *
 * bytes / chunk_bytes chunks, each whole: right when the size is a multiple of the chunk, and
 * otherwise the last bytes % chunk_bytes bytes never leave h_src (and a chunk larger than the
 * data copies nothing at all).
 * expect: need one more, shorter, copy
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
    for (size_t k = 0; k < bytes / chunk_bytes; k++) {
        const size_t offset = k * chunk_bytes, this_chunk = chunk_bytes;
        memcpy(h_staging, from + offset, this_chunk);
        cudaError_t err = cudaMemcpy(to + offset, h_staging, this_chunk, cudaMemcpyHostToDevice);
        if (err != cudaSuccess)
            return err;
    }
    return cudaSuccess;
}
