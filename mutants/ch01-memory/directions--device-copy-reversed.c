/* directions--device-copy-reversed.c - the device-to-device copy with its pointers swapped.
 *
 * cudaMemcpy(d_a, d_b, ...) where cudaMemcpy(d_b, d_a, ...) was meant: the poison in d_b
 * overwrites the data in d_a, and the copy down brings poison to h_mid. The test names the
 * reversed copy, not only the poison that arrived.
 * expect: Copy number 2 copies d_b into d_a, the reverse of d_a into d_b
 */
#include "directions.h"

cudaError_t copy_four_ways(const float *h_src, float *d_a, float *d_b, float *h_mid, float *h_dst,
                           size_t n)
{
    const size_t bytes = n * sizeof(float);
    cudaError_t err = cudaMemcpy(d_a, h_src, bytes, cudaMemcpyHostToDevice);
    if (err == cudaSuccess)
        err = cudaMemcpy(d_a, d_b, bytes, cudaMemcpyDeviceToDevice);
    if (err == cudaSuccess)
        err = cudaMemcpy(h_mid, d_b, bytes, cudaMemcpyDeviceToHost);
    if (err == cudaSuccess)
        err = cudaMemcpy(h_dst, h_mid, bytes, cudaMemcpyHostToHost);
    return err;
}
