/* bandwidth.h - Exercise: measure how fast copies cross the PCIe link, in GB/s.
 *
 * Two small helpers, then the measurement that uses them.
 *
 * median_ms(ms, n): the median of n >= 1 times: the middle one once sorted,
 * or for an even n the mean of the two middle ones. One slow run (a page
 * fault, another process) moves the mean a lot and the median hardly at all.
 * It may reorder ms.
 *
 * gb_per_s(bytes, ms): `bytes` moved in `ms` milliseconds, in GB/s, where a
 * GB is 10^9 bytes, as in PCIe and memory datasheets (not a GiB, 2^30).
 *
 * measure_bandwidth_gb_per_s(bytes, kind, runs, result): kind is
 * cudaMemcpyHostToDevice or cudaMemcpyDeviceToHost.
 *   1. allocates `bytes` of pinned host memory (cudaMallocHost) and of device
 *      memory (cudaMalloc);
 *   2. makes one warm-up copy, not timed: the first copy pays one-time costs
 *      that the others do not;
 *   3. times `runs` copies, each between two CUDA events (record, cudaMemcpy,
 *      record, synchronise, cudaEventElapsedTime);
 *   4. stores gb_per_s(bytes, median_ms(times, runs)) in *result;
 *   5. destroys its events and frees both buffers, on every path.
 * Returns cudaErrorInvalidValue, before allocating anything, for any other
 * kind, bytes == 0, runs < 1 or a NULL result; otherwise cudaSuccess or the
 * first error (cudaErrorMemoryAllocation if it cannot allocate the times).
 */
#ifndef BANDWIDTH_H
#define BANDWIDTH_H

#include <cuda_runtime_api.h>
#include <stddef.h>

double median_ms(double *ms, int n);
double gb_per_s(size_t bytes, double ms);
cudaError_t measure_bandwidth_gb_per_s(size_t bytes, enum cudaMemcpyKind kind, int runs,
                                       double *result);

#endif
