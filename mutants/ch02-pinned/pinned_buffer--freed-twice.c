/* pinned_buffer--freed-twice.c - known mistake: cudaFreeHost on the error path, and again.
 *
 * The error path frees the buffer and falls through to the common exit, which frees it again:
 * by then the memory may belong to another allocation.
 * expect: gave back the same pinned host memory twice
 */
#include "pinned_buffer.h"

cudaError_t add_one_on_host(const unsigned char *d_src, unsigned char *d_dst, size_t bytes)
{
    if (bytes == 0)
        return cudaSuccess;
    unsigned char *h_buffer = NULL;
    cudaError_t err = cudaMallocHost((void **)&h_buffer, bytes);
    if (err != cudaSuccess)
        return err;
    err = cudaMemcpy(h_buffer, d_src, bytes, cudaMemcpyDeviceToHost);
    if (err != cudaSuccess)
        cudaFreeHost(h_buffer); /* freed here... */
    else {
        for (size_t i = 0; i < bytes; i++)
            h_buffer[i]++;
        err = cudaMemcpy(d_dst, h_buffer, bytes, cudaMemcpyHostToDevice);
    }
    cudaError_t freed = cudaFreeHost(h_buffer); /* ...and here again, after a failed copy down */
    return err != cudaSuccess ? err : freed;
}
