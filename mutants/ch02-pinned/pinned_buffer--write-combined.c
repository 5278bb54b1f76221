/* pinned_buffer--write-combined.c - known mistake: the buffer the CPU reads is write-combined.
 *
 * cudaHostAllocWriteCombined memory is not cached for the CPU: fine for a buffer the CPU only
 * writes, slow for one it reads back, as adding 1 to every byte does. The header says not to.
 * expect: write-combined memory is not cached for the CPU
 */
#include "pinned_buffer.h"

cudaError_t add_one_on_host(const unsigned char *d_src, unsigned char *d_dst, size_t bytes)
{
    if (bytes == 0)
        return cudaSuccess;

    unsigned char *h_buffer = NULL;
    cudaError_t err = cudaHostAlloc((void **)&h_buffer, bytes, cudaHostAllocWriteCombined);
    if (err != cudaSuccess)
        return err; /* nothing was allocated, so there is nothing to give back */

    err = cudaMemcpy(h_buffer, d_src, bytes, cudaMemcpyDeviceToHost);
    if (err == cudaSuccess) {
        for (size_t i = 0; i < bytes; i++)
            h_buffer[i]++;
        err = cudaMemcpy(d_dst, h_buffer, bytes, cudaMemcpyHostToDevice);
    }

    /* Pinned memory goes back with cudaFreeHost, on every path; the first error wins. */
    cudaError_t freed = cudaFreeHost(h_buffer);
    return err != cudaSuccess ? err : freed;
}
