/* both_directions--streams-leaked.c - known mistake: the streams are never destroyed.
 *
 * Everything arrives; each call leaves two streams behind, which hold driver
 * resources until the process ends.
 * expect: created a stream with cudaStreamCreate and returned without cudaStreamDestroy
 */
#include "both_directions.h"

cudaError_t both_directions_host_alloc(void **h_buffer, size_t bytes)
{
    return cudaMallocHost(h_buffer, bytes);
}

cudaError_t both_directions_host_free(void *h_buffer)
{
    return cudaFreeHost(h_buffer);
}

cudaError_t copy_both_directions(void *d_up_dst, const void *h_up_src, size_t up_bytes,
                                 void *h_down_dst, const void *d_down_src, size_t down_bytes)
{
    cudaStream_t up = NULL, down = NULL;
    cudaError_t err = cudaStreamCreate(&up);
    if (err == cudaSuccess)
        err = cudaStreamCreate(&down);
    if (err == cudaSuccess)
        err = cudaMemcpyAsync(d_up_dst, h_up_src, up_bytes, cudaMemcpyHostToDevice, up);
    if (err == cudaSuccess)
        err = cudaMemcpyAsync(h_down_dst, d_down_src, down_bytes, cudaMemcpyDeviceToHost, down);
    if (err == cudaSuccess)
        err = cudaStreamSynchronize(up);
    if (err == cudaSuccess)
        err = cudaStreamSynchronize(down);
    return err;
}
