/* pinned_buffer--free-not-cudafreehost.c - known mistake: pinned memory given back with free().
 *
 * free() gets a pointer malloc never returned; the C library may end the program, or corrupt
 * its heap and fail later. The harness stops the free and names the right call.
 * expect: pinned memory from cudaMallocHost or cudaHostAlloc with cudaFreeHost
 */
#include "pinned_buffer.h"

#include <stdlib.h>

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
    free(h_buffer);
    return err;
}
