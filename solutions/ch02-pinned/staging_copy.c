/* staging_copy.c - copy pageable memory to the device through a pinned buffer, chunk by chunk. */
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
        cudaError_t err = cudaMemcpy(to + offset, h_staging, this_chunk, cudaMemcpyHostToDevice);
        if (err != cudaSuccess)
            return err;
    }
    return cudaSuccess;
}
