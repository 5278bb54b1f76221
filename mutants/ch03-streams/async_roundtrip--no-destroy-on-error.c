/* async_roundtrip--no-destroy-on-error.c - known mistake: an early return skips the destroy.
 *
 * Right on the happy path; when a copy fails, the stream leaks.
 * expect: after the test made the first cudaMemcpyAsync fail, created a stream with
 * cudaStreamCreate and returned without cudaStreamDestroy
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
    if (err != cudaSuccess)
        return err;
    err = cudaMemcpyAsync(h_out, d_buffer, bytes, cudaMemcpyDeviceToHost, stream);
    if (err != cudaSuccess)
        return err;
    err = cudaStreamSynchronize(stream);
    if (err != cudaSuccess)
        return err;
    return cudaStreamDestroy(stream);
}
