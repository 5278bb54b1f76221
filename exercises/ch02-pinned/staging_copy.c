/* staging_copy.c - copy pageable memory to the device through a pinned buffer, chunk by chunk.
 *
 * The header says what to do and what to return. Step through the source one chunk at a time:
 * memcpy (from <string.h>) into the staging buffer, then cudaMemcpy from it. Run
 *     make check EX=ch02-pinned/staging_copy
 * to see how you are doing.
 */
#include "staging_copy.h"

cudaError_t staged_copy_to_device(void *d_dst, const void *h_src, size_t bytes, void *h_staging,
                                  size_t chunk_bytes)
{
    (void)d_dst;
    (void)h_src;
    (void)bytes;
    (void)h_staging;
    (void)chunk_bytes;
    /* TODO: succeed at once when bytes is 0; refuse NULL pointers and a chunk_bytes of 0 with
     * cudaErrorInvalidValue; then, for each chunk, memcpy it into h_staging and cudaMemcpy it
     * from there to its place in d_dst, returning the first error. */
    return cudaErrorNotYetImplemented;
}
