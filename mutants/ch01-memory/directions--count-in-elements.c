/* directions--count-in-elements.c - known mistake: each copy's count is n, not n * sizeof(float).
 *
 * Every copy succeeds and moves a quarter of the floats.
 * expect: cudaMemcpy's count is in bytes
 */
#include "directions.h"

cudaError_t copy_four_ways(const float *h_src, float *d_a, float *d_b, float *h_mid, float *h_dst,
                           size_t n)
{
    cudaError_t err = cudaMemcpy(d_a, h_src, n, cudaMemcpyHostToDevice);
    if (err == cudaSuccess)
        err = cudaMemcpy(d_b, d_a, n, cudaMemcpyDeviceToDevice);
    if (err == cudaSuccess)
        err = cudaMemcpy(h_mid, d_b, n, cudaMemcpyDeviceToHost);
    if (err == cudaSuccess)
        err = cudaMemcpy(h_dst, h_mid, n, cudaMemcpyHostToHost);
    return err;
}
