/* roundtrip--direction-swapped.c - known mistake: each copy's kind names the other direction.
 *
 * With pageable host memory the runtime rejects the copy up with
 * cudaErrorInvalidValue, so nothing arrives.
 * expect: the kind must name the direction the data moves
 */
#include "roundtrip.h"

cudaError_t roundtrip_floats(const float *h_in, float *h_out, size_t n)
{
    const size_t bytes = n * sizeof(float);
    float *d_buffer = NULL;
    cudaError_t err = cudaMalloc((void **)&d_buffer, bytes);
    if (err != cudaSuccess)
        return err;
    err = cudaMemcpy(d_buffer, h_in, bytes, cudaMemcpyDeviceToHost);
    if (err == cudaSuccess)
        err = cudaMemcpy(h_out, d_buffer, bytes, cudaMemcpyHostToDevice);
    cudaError_t freed = cudaFree(d_buffer);
    return err != cudaSuccess ? err : freed;
}
