/* async_roundtrip--copies-on-default-stream.c - known mistake: the stream is created, not used.
 *
 * The copies pass 0 as their stream, so they go to the legacy default stream,
 * which every blocking stream waits for: the stream of one's own buys nothing.
 * expect: the copy up went to the legacy default stream (0), not to the stream async_roundtrip
 * created
 */
#include "async_roundtrip.h"

cudaError_t async_roundtrip(const float *h_in, float *h_out, float *d_buffer, size_t n)
{
    const size_t bytes = n * sizeof(float);
    cudaStream_t stream;
    cudaError_t err = cudaStreamCreate(&stream);
    if (err != cudaSuccess)
        return err;
    err = cudaMemcpyAsync(d_buffer, h_in, bytes, cudaMemcpyHostToDevice, 0);
    if (err == cudaSuccess)
        err = cudaMemcpyAsync(h_out, d_buffer, bytes, cudaMemcpyDeviceToHost, 0);
    if (err == cudaSuccess)
        err = cudaStreamSynchronize(0);
    cudaError_t destroyed = cudaStreamDestroy(stream);
    return err != cudaSuccess ? err : destroyed;
}
