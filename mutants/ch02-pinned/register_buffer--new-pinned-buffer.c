/* register_buffer--new-pinned-buffer.c - known mistake: a new pinned buffer instead of h_data.
 *
 * The bytes all arrive, through a pinned copy of h_data: a second allocation of the whole size
 * and two extra passes over it on the CPU, where registering pins the memory the caller has.
 * expect: exchange_registered never registered h_data
 */
#include "register_buffer.h"

#include <string.h>

cudaError_t exchange_registered(void *h_data, const void *d_in, void *d_out, size_t bytes)
{
    if (h_data == NULL || d_in == NULL || d_out == NULL || bytes == 0)
        return cudaErrorInvalidValue;
    void *h_pinned = NULL;
    cudaError_t err = cudaMallocHost(&h_pinned, bytes);
    if (err != cudaSuccess)
        return err;
    memcpy(h_pinned, h_data, bytes);
    err = cudaMemcpy(d_out, h_pinned, bytes, cudaMemcpyHostToDevice);
    if (err == cudaSuccess)
        err = cudaMemcpy(h_pinned, d_in, bytes, cudaMemcpyDeviceToHost);
    if (err == cudaSuccess)
        memcpy(h_data, h_pinned, bytes);
    cudaError_t freed = cudaFreeHost(h_pinned);
    return err != cudaSuccess ? err : freed;
}
