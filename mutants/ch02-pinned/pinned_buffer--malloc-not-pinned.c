/* pinned_buffer--malloc-not-pinned.c - known mistake: pageable memory where pinned was asked.
 *
 * Every result is right, and each copy takes the detour through the driver's staging buffer
 * that pinned memory exists to avoid. The trace shows where the host buffer lives.
 * expect: the host buffer is pageable memory
 */
#include "pinned_buffer.h"

#include <stdlib.h>

cudaError_t add_one_on_host(const unsigned char *d_src, unsigned char *d_dst, size_t bytes)
{
    if (bytes == 0)
        return cudaSuccess;
    unsigned char *h_buffer = malloc(bytes);
    if (h_buffer == NULL)
        return cudaErrorMemoryAllocation;
    cudaError_t err = cudaMemcpy(h_buffer, d_src, bytes, cudaMemcpyDeviceToHost);
    if (err == cudaSuccess) {
        for (size_t i = 0; i < bytes; i++)
            h_buffer[i]++;
        err = cudaMemcpy(d_dst, h_buffer, bytes, cudaMemcpyHostToDevice);
    }
    free(h_buffer);
    return err;
}
