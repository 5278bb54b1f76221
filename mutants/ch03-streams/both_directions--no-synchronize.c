/* both_directions--no-synchronize.c - known mistake: the function returns without waiting.
 *
 * cudaMemcpyAsync only queues the copies and cudaStreamDestroy does not wait
 * for them: the caller reads h_down_dst before the data is there. The
 * stand-in runtime copies at once, so the trace is what shows it.
 * expect: returned without waiting for the copy
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
    err = cudaMemcpyAsync(d_up_dst, h_up_src, up_bytes, cudaMemcpyHostToDevice, up);
    if (err == cudaSuccess)
        err = cudaMemcpyAsync(h_down_dst, d_down_src, down_bytes, cudaMemcpyDeviceToHost, down);
    cudaError_t destroyed_up = cudaStreamDestroy(up);
    cudaError_t destroyed_down = cudaStreamDestroy(down);
    return err != cudaSuccess ? err : destroyed_up != cudaSuccess ? destroyed_up : destroyed_down;
}
