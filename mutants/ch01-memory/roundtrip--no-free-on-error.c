/* roundtrip--no-free-on-error.c - known mistake: an early return skips the free.
 *
 * Right on the happy path; when a copy fails, the buffer leaks.
 * expect: after the copy up failed, allocated 4096 bytes with cudaMalloc and returned without
 * cudaFree
 */
#include "roundtrip.h"

cudaError_t roundtrip_floats(const float *h_in, float *h_out, size_t n)
{
    const size_t bytes = n * sizeof(float);
    float *d_buffer = NULL;
    cudaError_t err = cudaMalloc((void **)&d_buffer, bytes);
    if (err != cudaSuccess)
        return err;
    err = cudaMemcpy(d_buffer, h_in, bytes, cudaMemcpyHostToDevice);
    if (err != cudaSuccess)
        return err;
    err = cudaMemcpy(h_out, d_buffer, bytes, cudaMemcpyDeviceToHost);
    if (err != cudaSuccess)
        return err;
    return cudaFree(d_buffer);
}
