/* directions--error-ignored.c - known mistake: only the last copy's result is returned.
 *
 * When an early copy fails, the later ones copy what never arrived, and the
 * caller hears cudaSuccess.
 * expect: check every return value and pass the error on
 */
#include "directions.h"

cudaError_t copy_four_ways(const float *h_src, float *d_a, float *d_b, float *h_mid, float *h_dst,
                           size_t n)
{
    const size_t bytes = n * sizeof(float);
    cudaMemcpy(d_a, h_src, bytes, cudaMemcpyHostToDevice);
    cudaMemcpy(d_b, d_a, bytes, cudaMemcpyDeviceToDevice);
    cudaMemcpy(h_mid, d_b, bytes, cudaMemcpyDeviceToHost);
    return cudaMemcpy(h_dst, h_mid, bytes, cudaMemcpyHostToHost);
}
