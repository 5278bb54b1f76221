/* read_mostly.h - Exercise: a managed input that the GPU and the host both keep reading.
 *
 * read_mostly_sums writes the n words of h_data once into a managed buffer, then `rounds`
 * times over has both processors read all of it: a kernel, gpu_work_checksum (gpu_work.h),
 * sums it into d_sums[r], and meanwhile the host sums it too, with gpu_work_checksum_host,
 * into h_sums[r]. Left alone, each side's reads pull the pages over from the other, round
 * after round; advised read-mostly, every processor that reads a page keeps a read-only copy
 * of its own, and after the first round both read at full speed:
 *
 *     a managed buffer of n words     cudaMallocManaged
 *     the host writes h_data into it  memcpy: the one write
 *     advise it read-mostly           cudaMemAdvise(buffer, bytes, cudaMemAdviseSetReadMostly, ...)
 *     rounds times                    gpu_work_checksum(stream, buffer, bytes, 1, &d_sums[r]);
 *                                     h_sums[r] = gpu_work_checksum_host(buffer, bytes, 1)
 *     wait for the kernels            cudaStreamSynchronize (or cudaDeviceSynchronize)
 *     free the buffer                 cudaFree
 *
 * The advice covers the whole buffer, bytes = n * sizeof(unsigned), and comes before the first
 * kernel. Read-mostly names no processor: the runtime ignores the location with this advice
 * (pass the current device's, {.type = cudaMemLocationTypeDevice, .id = device}). Advice is a
 * hint about how memory will be used, not a copy: the results are the same without it, only
 * slower. The kernels may go to any stream; a launch only queues the kernel.
 *
 * h_data is host memory of n words (n >= 1), d_sums device memory of `rounds` sums and h_sums
 * host memory of as many (rounds >= 1), all given by the caller. It returns once every sum is
 * written. Returns cudaSuccess or the first error; it stops at that error. On every path it
 * waits for the kernels it queued and frees the buffer.
 */
#ifndef READ_MOSTLY_H
#define READ_MOSTLY_H

#include <cuda_runtime_api.h>
#include <stddef.h>

cudaError_t read_mostly_sums(const unsigned *h_data, size_t n, unsigned rounds,
                             unsigned long long *d_sums, unsigned long long *h_sums);

#endif
