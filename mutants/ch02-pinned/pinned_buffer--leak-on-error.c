/* pinned_buffer--leak-on-error.c - known mistake: an early return skips cudaFreeHost.
 *
 * Right when every call succeeds; when a copy fails, the pinned buffer stays allocated, and
 * pinned memory is memory the operating system can no longer page out.
 * expect: after the test made the first cudaMemcpy fail, allocated 4099 bytes with cudaMallocHost
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
        return err;
    for (size_t i = 0; i < bytes; i++)
        h_buffer[i]++;
    err = cudaMemcpy(d_dst, h_buffer, bytes, cudaMemcpyHostToDevice);
    if (err != cudaSuccess)
        return err;
    return cudaFreeHost(h_buffer);
}
