/* pinned_buffer--cudafree-not-cudafreehost.c - known mistake: pinned memory given to cudaFree.
 *
 * cudaFree gives back device memory; the pinned buffer stays allocated (or, where the runtime
 * accepts it, is released by the wrong call). The release scan names the right partner.
 * expect: which gives back device memory, not pinned host memory: release it with cudaFreeHost
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
    if (err == cudaSuccess) {
        for (size_t i = 0; i < bytes; i++)
            h_buffer[i]++;
        err = cudaMemcpy(d_dst, h_buffer, bytes, cudaMemcpyHostToDevice);
    }
    cudaFree(h_buffer);
    return err;
}
