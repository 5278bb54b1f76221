/* async_roundtrip--error-ignored.c - known mistake: the copies' results are never looked at.
 *
 * A failed copy leaves h_out unwritten, and the caller is told all went well.
 * expect: check the result of every call and return the first error
 */
#include "async_roundtrip.h"

cudaError_t async_roundtrip(const float *h_in, float *h_out, float *d_buffer, size_t n)
{
    const size_t bytes = n * sizeof(float);
    cudaStream_t stream;
    cudaError_t err = cudaStreamCreate(&stream);
    if (err != cudaSuccess)
        return err;
    cudaMemcpyAsync(d_buffer, h_in, bytes, cudaMemcpyHostToDevice, stream);
    cudaMemcpyAsync(h_out, d_buffer, bytes, cudaMemcpyDeviceToHost, stream);
    err = cudaStreamSynchronize(stream);
    cudaError_t destroyed = cudaStreamDestroy(stream);
    return err != cudaSuccess ? err : destroyed;
}
