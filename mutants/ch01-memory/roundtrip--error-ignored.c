/* roundtrip--error-ignored.c - known mistake: the copies' return values are thrown away.
 *
 * Works while nothing goes wrong; when a copy fails, the caller is told all
 * is well and reads a buffer that was never filled.
 * expect: check every return value and pass the error on
 */
#include "roundtrip.h"

cudaError_t roundtrip_floats(const float *h_in, float *h_out, size_t n)
{
    const size_t bytes = n * sizeof(float);
    float *d_buffer = NULL;
    cudaError_t err = cudaMalloc((void **)&d_buffer, bytes);
    if (err != cudaSuccess)
        return err;
    cudaMemcpy(d_buffer, h_in, bytes, cudaMemcpyHostToDevice);
    cudaMemcpy(h_out, d_buffer, bytes, cudaMemcpyDeviceToHost);
    return cudaFree(d_buffer);
}
