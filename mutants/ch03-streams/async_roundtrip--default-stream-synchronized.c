/* async_roundtrip--default-stream-synchronized.c - known mistake: waits for the wrong stream.
 *
 * The stream is created non-blocking, so the legacy default stream does not
 * wait for it, and cudaStreamSynchronize(0) returns at once while the copies
 * are still queued.
 * expect: synchronised the legacy default stream (0), but its copies were on a stream created with
 * cudaStreamNonBlocking
 */
#include "async_roundtrip.h"

cudaError_t async_roundtrip(const float *h_in, float *h_out, float *d_buffer, size_t n)
{
    const size_t bytes = n * sizeof(float);
    cudaStream_t stream;
    cudaError_t err = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    if (err != cudaSuccess)
        return err;
    err = cudaMemcpyAsync(d_buffer, h_in, bytes, cudaMemcpyHostToDevice, stream);
    if (err == cudaSuccess)
        err = cudaMemcpyAsync(h_out, d_buffer, bytes, cudaMemcpyDeviceToHost, stream);
    if (err == cudaSuccess)
        err = cudaStreamSynchronize(0);
    cudaError_t destroyed = cudaStreamDestroy(stream);
    return err != cudaSuccess ? err : destroyed;
}
