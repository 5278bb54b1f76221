/* read_mostly.c - one managed input, read over and over by the GPU and by the host.
 *
 * A managed page lives on one side at a time: when both sides read it, it travels to and fro.
 * cudaMemAdviseSetReadMostly lets each side keep a read-only copy instead. Advise the buffer
 * once, after the host has written it and before the first kernel reads it. Run
 *     make check EX=ch04-managed/read_mostly
 * to see how you are doing.
 */
#include "gpu_work.h"
#include "read_mostly.h"

cudaError_t read_mostly_sums(const unsigned *h_data, size_t n, unsigned rounds,
                             unsigned long long *d_sums, unsigned long long *h_sums)
{
    (void)h_data;
    (void)n;
    (void)rounds;
    (void)d_sums;
    (void)h_sums;
    /* TODO: cudaMallocManaged a buffer of n words and memcpy h_data into it; cudaMemAdvise it
     * cudaMemAdviseSetReadMostly, all n * sizeof(unsigned) bytes; then, for each round r,
     * gpu_work_checksum the buffer into &d_sums[r] and set h_sums[r] to
     * gpu_work_checksum_host of it; wait for the kernels, cudaFree the buffer (on the error
     * paths too), and return the first error. */
    return cudaErrorNotYetImplemented;
}
