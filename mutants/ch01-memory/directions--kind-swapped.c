/* directions--kind-swapped.c - known mistake: the copy down says cudaMemcpyHostToDevice.
 *
 * On pageable memory the runtime rejects it with cudaErrorInvalidValue; on
 * pinned memory it goes through, since the runtime can reach both ends, so
 * the mistake hides until the code meets pageable memory.
 * expect: the kind must name the direction the data moves
 */
#include "directions.h"

cudaError_t copy_four_ways(const float *h_src, float *d_a, float *d_b, float *h_mid, float *h_dst,
                           size_t n)
{
    const size_t bytes = n * sizeof(float);
    cudaError_t err = cudaMemcpy(d_a, h_src, bytes, cudaMemcpyHostToDevice);
    if (err == cudaSuccess)
        err = cudaMemcpy(d_b, d_a, bytes, cudaMemcpyDeviceToDevice);
    if (err == cudaSuccess)
        err = cudaMemcpy(h_mid, d_b, bytes, cudaMemcpyHostToDevice);
    if (err == cudaSuccess)
        err = cudaMemcpy(h_dst, h_mid, bytes, cudaMemcpyHostToHost);
    return err;
}
