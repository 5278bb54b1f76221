/* async_roundtrip--stream-leaked.c - known mistake: the stream is never destroyed.
 *
 * Each call leaves a stream behind; a program that calls it in a loop piles
 * them up, each holding driver resources.
 * expect: created a stream with cudaStreamCreate and returned without cudaStreamDestroy on it
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
    if (err == cudaSuccess)
        err = cudaStreamSynchronize(stream);
    return err;
}
