/* both_directions--error-ignored.c - known mistake: the copies' results are thrown away.
 *
 * Works while nothing fails; when a copy fails, the caller is told all is well
 * and reads a buffer that was never filled.
 * expect: check the result of every call and return the first error
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
    if (err != cudaSuccess)
        return err;
    err = cudaStreamCreate(&down);
    if (err != cudaSuccess) {
        cudaStreamDestroy(up);
        return err;
    }
    cudaMemcpyAsync(d_up_dst, h_up_src, up_bytes, cudaMemcpyHostToDevice, up);
    cudaMemcpyAsync(h_down_dst, d_down_src, down_bytes, cudaMemcpyDeviceToHost, down);
    cudaStreamSynchronize(up);
    cudaStreamSynchronize(down);
    cudaStreamDestroy(up);
    cudaStreamDestroy(down);
    return cudaSuccess;
}
