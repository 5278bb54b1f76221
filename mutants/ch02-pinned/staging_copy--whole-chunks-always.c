/* staging_copy--whole-chunks-always.c - known mistake: every copy is a whole chunk_bytes long.
 *
 * The last chunk reads past the end of h_src and writes past the end of the data in d_dst; a
 * chunk larger than the data copies chunk_bytes where there are fewer. (The runtime refuses a
 * copy past the end of a device allocation when it is exactly the data's size; the test's d_dst
 * has room to spare, to show what was written.)
 * expect: here the chunk is larger than all the data
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
        const size_t this_chunk = chunk_bytes;
        memcpy(h_staging, from + offset, this_chunk);
        cudaError_t err = cudaMemcpy(to + offset, h_staging, this_chunk, cudaMemcpyHostToDevice);
        if (err != cudaSuccess)
            return err;
    }
    return cudaSuccess;
}
