/* async_roundtrip--no-synchronize.c - known mistake: returns as soon as the copies are queued.
 *
 * cudaMemcpyAsync returns before its copy runs, so h_out is read before the
 * copy back wrote it. With an idle GPU and small buffers the copies may win
 * the race; the test holds the stream up, and the trace shows no wait.
 * expect: returned without waiting for its stream after the copy back
 */
#include "async_roundtrip.h"

cudaError_t async_roundtrip(const float *h_in, float *h_out, float *d_buffer, size_t n)
{
    const size_t bytes = n * sizeof(float);
    cudaStream_t stream;
    cudaError_t err = cudaStreamCreate(&stream);
    if (err != cudaSuccess)
        return err;
    err = cudaMemcpyAsync(d_buffer, h_in, bytes, cudaMemcpyHostToDevice, stream);
    if (err == cudaSuccess)
        err = cudaMemcpyAsync(h_out, d_buffer, bytes, cudaMemcpyDeviceToHost, stream);
    cudaError_t destroyed = cudaStreamDestroy(stream);
    return err != cudaSuccess ? err : destroyed;
}
