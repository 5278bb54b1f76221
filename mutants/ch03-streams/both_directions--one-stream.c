/* both_directions--one-stream.c - known mistake: both copies on one stream.
 *
 * The bytes arrive, but a stream runs its work in order: the copy down starts
 * when the copy up has ended, at one way's bandwidth.
 * expect: were both queued on stream
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
    cudaStream_t stream = NULL;
    cudaError_t err = cudaStreamCreate(&stream);
    if (err != cudaSuccess)
        return err;
    err = cudaMemcpyAsync(d_up_dst, h_up_src, up_bytes, cudaMemcpyHostToDevice, stream);
    if (err == cudaSuccess)
        err = cudaMemcpyAsync(h_down_dst, d_down_src, down_bytes, cudaMemcpyDeviceToHost, stream);
    cudaError_t waited = cudaStreamSynchronize(stream);
    cudaError_t destroyed = cudaStreamDestroy(stream);
    return err != cudaSuccess ? err : waited != cudaSuccess ? waited : destroyed;
}
