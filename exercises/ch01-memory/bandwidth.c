/* bandwidth.c - measure host-device copy bandwidth: warm up, time several copies, take the median.
 *
 * Write the two helpers first; the tests check them exactly, without a GPU's
 * noise. Run
 *     make check EX=ch01-memory/bandwidth
 * to see how you are doing.
 */
#include "bandwidth.h"

double median_ms(double *ms, int n)
{
    (void)ms;
    (void)n;
    /* TODO: sort the n times (qsort) and return the middle one, or for an even n the mean
     * of the two middle ones. */
    return 0.0;
}

double gb_per_s(size_t bytes, double ms)
{
    (void)bytes;
    (void)ms;
    /* TODO: bytes per second, in units of 10^9 bytes. */
    return 0.0;
}

cudaError_t measure_bandwidth_gb_per_s(size_t bytes, enum cudaMemcpyKind kind, int runs,
                                       double *result)
{
    (void)bytes;
    (void)kind;
    (void)runs;
    (void)result;
    /* TODO: check the arguments; cudaMallocHost and cudaMalloc the buffers; one untimed
     * warm-up copy; time `runs` copies with events; store gb_per_s of the median time;
     * free everything on every path; return the first error. */
    return cudaErrorNotYetImplemented;
}
