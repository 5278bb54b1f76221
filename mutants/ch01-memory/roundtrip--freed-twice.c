/* roundtrip--freed-twice.c - an error path that frees the buffer, and then frees it again.
 *
 * When a copy fails, the buffer is freed on the spot, and once more on the way out: the second
 * cudaFree gives back memory that is no longer this function's. The release scan names it.
 * expect: gave back the same device memory twice
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
        cudaFree(d_buffer); /* freed here... */
    else
        err = cudaMemcpy(h_out, d_buffer, bytes, cudaMemcpyDeviceToHost);
    cudaError_t freed = cudaFree(d_buffer); /* ...and here again, after a failed copy up */
    return err != cudaSuccess ? err : freed;
}
