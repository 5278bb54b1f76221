/* both_directions--legacy-default-stream.c - known mistake: the copy up goes on stream 0.
 *
 * Two streams in name, but the legacy default stream waits for every blocking
 * stream and they wait for it: the copies run one after the other.
 * expect: was queued on the legacy default stream
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
    cudaStream_t down = NULL;
    cudaError_t err = cudaStreamCreate(&down);
    if (err != cudaSuccess)
        return err;
    err = cudaMemcpyAsync(d_up_dst, h_up_src, up_bytes, cudaMemcpyHostToDevice, 0);
    if (err == cudaSuccess)
        err = cudaMemcpyAsync(h_down_dst, d_down_src, down_bytes, cudaMemcpyDeviceToHost, down);
    cudaError_t waited = cudaDeviceSynchronize();
    cudaError_t destroyed = cudaStreamDestroy(down);
    return err != cudaSuccess ? err : waited != cudaSuccess ? waited : destroyed;
}
