/* pinned_buffer--pageable-fallback.c - known mistake: a failed cudaMallocHost hidden behind malloc.
 *
 * When pinned memory runs out, the code quietly carries on with pageable memory: the caller
 * asked for pinned copies, gets slow ones, and is never told. The contract is to return the
 * error and let the caller decide.
 * expect: the test made the first cudaMallocHost fail with cudaErrorMemoryAllocation, but
 */
#include "pinned_buffer.h"

#include <stdbool.h>
#include <stdlib.h>

cudaError_t add_one_on_host(const unsigned char *d_src, unsigned char *d_dst, size_t bytes)
{
    if (bytes == 0)
        return cudaSuccess;
    unsigned char *h_buffer = NULL;
    const bool pinned = cudaMallocHost((void **)&h_buffer, bytes) == cudaSuccess;
    if (!pinned && (h_buffer = malloc(bytes)) == NULL)
        return cudaErrorMemoryAllocation;
    cudaError_t err = cudaMemcpy(h_buffer, d_src, bytes, cudaMemcpyDeviceToHost);
    if (err == cudaSuccess) {
        for (size_t i = 0; i < bytes; i++)
            h_buffer[i]++;
        err = cudaMemcpy(d_dst, h_buffer, bytes, cudaMemcpyHostToDevice);
    }
    cudaError_t freed = cudaSuccess;
    if (pinned)
        freed = cudaFreeHost(h_buffer);
    else
        free(h_buffer);
    return err != cudaSuccess ? err : freed;
}
