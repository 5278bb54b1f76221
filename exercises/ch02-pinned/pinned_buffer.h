/* pinned_buffer.h - Exercise: a pinned host buffer, from allocation to cudaFreeHost.
 *
 * add_one_on_host is the host's turn in a GPU pipeline: the data comes down from the GPU, the
 * CPU works on it, and it goes back up. It
 *
 *   1. allocates a host buffer of `bytes` bytes of pinned memory, with cudaMallocHost (or
 *      cudaHostAlloc): memory the GPU's copy engines can reach directly, so that neither copy
 *      takes the detour through the driver's staging buffer that pageable memory needs. Not
 *      write-combined (cudaHostAllocWriteCombined): the CPU reads this buffer, and its reads
 *      of write-combined memory, which the CPU does not cache, are many times slower;
 *   2. copies `bytes` bytes from the device buffer d_src into it (cudaMemcpy, device to host);
 *   3. adds 1 to every byte, on the host (unsigned arithmetic: 255 becomes 0);
 *   4. copies the buffer into the device buffer d_dst (cudaMemcpy, host to device);
 *   5. gives the buffer back with cudaFreeHost. Not free(): malloc never returned it. Not
 *      cudaFree: that gives back device memory.
 *
 * d_src and d_dst are device buffers of at least `bytes` bytes each; the caller owns them.
 *
 * Returns cudaSuccess at once, allocating nothing, when bytes is 0. Otherwise cudaSuccess, or
 * the first error a runtime call returned: it stops at that error (no copy after a failed one)
 * and gives the pinned buffer back on every path on which it was allocated.
 */
#ifndef PINNED_BUFFER_H
#define PINNED_BUFFER_H

#include <cuda_runtime_api.h>
#include <stddef.h>

cudaError_t add_one_on_host(const unsigned char *d_src, unsigned char *d_dst, size_t bytes);

#endif
