/* pinned_buffer.c - bring bytes down into pinned memory, add 1 to each, send them back up.
 *
 * The header says what to do, step by step. Check every call's result; on the first failure
 * give back the pinned buffer if you have it, and return that error. Run
 *     make check EX=ch02-pinned/pinned_buffer
 * to see how you are doing.
 */
#include "pinned_buffer.h"

cudaError_t add_one_on_host(const unsigned char *d_src, unsigned char *d_dst, size_t bytes)
{
    (void)d_src;
    (void)d_dst;
    (void)bytes;
    /* TODO: return cudaSuccess when bytes is 0; cudaMallocHost a buffer of bytes bytes,
     * cudaMemcpy d_src into it, add 1 to each byte, cudaMemcpy it into d_dst, cudaFreeHost it,
     * and return the first error. */
    return cudaErrorNotYetImplemented;
}
