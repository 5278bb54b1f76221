/* directions.c - copy n floats host to device, device to device, device to host, host to host.
 *
 * Four cudaMemcpy calls, one per direction; the last argument, the kind, says
 * which way each goes. Check each result and stop at the first error. Run
 *     make check EX=ch01-memory/directions
 * to see how you are doing.
 */
#include "directions.h"

cudaError_t copy_four_ways(const float *h_src, float *d_a, float *d_b, float *h_mid, float *h_dst,
                           size_t n)
{
    (void)h_src;
    (void)d_a;
    (void)d_b;
    (void)h_mid;
    (void)h_dst;
    (void)n;
    /* TODO: cudaMemcpy h_src into d_a, d_a into d_b, d_b into h_mid and h_mid into h_dst,
     * each with its cudaMemcpyKind, and return the first error. */
    return cudaErrorNotYetImplemented;
}
