/* staging_copy--copies-on-after-error.c - known mistake: the loop goes on after a failed copy.
 *
 * The first error is kept and returned, but the remaining chunks are still copied, after a
 * copy that did not happen.
 * expect: more cudaMemcpy calls after the test made the second one fail
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

    cudaError_t first_error = cudaSuccess;
    const unsigned char *from = h_src;
    unsigned char *to = d_dst;
    for (size_t offset = 0; offset < bytes; offset += chunk_bytes) {
        /* The last chunk holds what is left, which may be less than a whole one. */
        const size_t this_chunk = bytes - offset < chunk_bytes ? bytes - offset : chunk_bytes;
        memcpy(h_staging, from + offset, this_chunk);
        cudaError_t err = cudaMemcpy(to + offset, h_staging, this_chunk, cudaMemcpyHostToDevice);
        if (first_error == cudaSuccess)
            first_error = err;
    }
    return first_error;
}
