/* directions--kind-default.c - known mistake: every copy says cudaMemcpyDefault.
 *
 * The data arrives (with unified addressing the runtime infers each direction
 * from the pointers), but the exercise asks for the kind that names each
 * direction, which is what it teaches.
 * expect: asks for the kind that names its direction, cudaMemcpyHostToDevice
 */
#include "directions.h"

cudaError_t copy_four_ways(const float *h_src, float *d_a, float *d_b, float *h_mid, float *h_dst,
                           size_t n)
{
    const size_t bytes = n * sizeof(float);
    cudaError_t err = cudaMemcpy(d_a, h_src, bytes, cudaMemcpyDefault);
    if (err == cudaSuccess)
        err = cudaMemcpy(d_b, d_a, bytes, cudaMemcpyDefault);
    if (err == cudaSuccess)
        err = cudaMemcpy(h_mid, d_b, bytes, cudaMemcpyDefault);
    if (err == cudaSuccess)
        err = cudaMemcpy(h_dst, h_mid, bytes, cudaMemcpyDefault);
    return err;
}
