/* both_directions.c - one copy up and one copy down, on two streams, at the same time.
 *
 * Run
 *     make check EX=ch03-streams/both_directions
 * to see how you are doing.
 */
#include "both_directions.h"

cudaError_t both_directions_host_alloc(void **h_buffer, size_t bytes)
{
    (void)h_buffer;
    (void)bytes;
    /* TODO: host memory that copies can run from asynchronously: which kind is that? */
    return cudaErrorNotYetImplemented;
}

cudaError_t both_directions_host_free(void *h_buffer)
{
    (void)h_buffer;
    /* TODO: give back what both_directions_host_alloc allocated. */
    return cudaErrorNotYetImplemented;
}

cudaError_t copy_both_directions(void *d_up_dst, const void *h_up_src, size_t up_bytes,
                                 void *h_down_dst, const void *d_down_src, size_t down_bytes)
{
    (void)d_up_dst;
    (void)h_up_src;
    (void)up_bytes;
    (void)h_down_dst;
    (void)d_down_src;
    (void)down_bytes;
    /* TODO: create two streams; queue the copy up on one and the copy down on the other with
     * cudaMemcpyAsync; wait for both; destroy both streams on every path; return the first
     * error. */
    return cudaErrorNotYetImplemented;
}
