/* roundtrip--count-in-elements.c - known mistake: the copies' count is n, not n * sizeof(float).
 *
 * Only the first quarter of the floats arrives; the rest of h_out keeps
 * whatever it held. The runtime cannot tell: n bytes is a valid count.
 * expect: cudaMemcpy's count is in bytes
 */
#include "roundtrip.h"

cudaError_t roundtrip_floats(const float *h_in, float *h_out, size_t n)
{
    float *d_buffer = NULL;
    cudaError_t err = cudaMalloc((void **)&d_buffer, n * sizeof(float));
    if (err != cudaSuccess)
        return err;
    err = cudaMemcpy(d_buffer, h_in, n, cudaMemcpyHostToDevice);
    if (err == cudaSuccess)
        err = cudaMemcpy(h_out, d_buffer, n, cudaMemcpyDeviceToHost);
    cudaError_t freed = cudaFree(d_buffer);
    return err != cudaSuccess ? err : freed;
}
