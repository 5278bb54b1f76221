/* staging_copy--staging-overrun.c - known mistake: the chunk's offset applied to h_staging too.
 *
 * Each chunk goes to h_staging + offset, as if the staging buffer were as large as the data:
 * from the second chunk on, the code writes past the end of the pinned buffer, over whatever
 * lies there. The bytes arrive, which makes it the more dangerous.
 * expect: past the end of h_staging
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
        memcpy((unsigned char *)h_staging + offset, from + offset, this_chunk);
        cudaError_t err = cudaMemcpy(to + offset, (unsigned char *)h_staging + offset, this_chunk,
                                     cudaMemcpyHostToDevice);
        if (err != cudaSuccess)
            return err;
    }
    return cudaSuccess;
}
