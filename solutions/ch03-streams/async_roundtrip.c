/* async_roundtrip.c - copy up and back with cudaMemcpyAsync on a stream of one's own. */
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
    /* Queued is not done: h_out is only written once the stream gets there. After an error
     * too, what was queued may still be running: wait for it before the caller goes on. */
    cudaError_t waited = cudaStreamSynchronize(stream);
    if (err == cudaSuccess)
        err = waited;

    /* Destroy on every path; report the first error, or the destroy's own. */
    cudaError_t destroyed = cudaStreamDestroy(stream);
    return err != cudaSuccess ? err : destroyed;
}
