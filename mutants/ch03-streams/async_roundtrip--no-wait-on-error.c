/* async_roundtrip--no-wait-on-error.c - known mistake: after a failed copy back it returns
 * without waiting for the copy up it had queued.
 *
 * cudaStreamDestroy does not wait for the stream's work: the copy up goes on writing d_buffer
 * after the function has returned its error.
 * expect: returned while work it had queued was still running
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
    /* Queued is not done: h_out is only written once the stream gets there. */
    if (err == cudaSuccess)
        err = cudaStreamSynchronize(stream);

    /* Destroy on every path; report the first error, or the destroy's own. */
    cudaError_t destroyed = cudaStreamDestroy(stream);
    return err != cudaSuccess ? err : destroyed;
}
