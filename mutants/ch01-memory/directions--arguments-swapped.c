/* directions--arguments-swapped.c - known mistake: source before destination in the copy up.
 *
 * cudaMemcpy, like memcpy, takes the destination first. With the two swapped
 * and the kind left as HostToDevice, the pointers say device to host: the
 * runtime rejects the copy on pageable memory.
 * expect: the destination is the first argument, the source the second
 */
#include "directions.h"

cudaError_t copy_four_ways(const float *h_src, float *d_a, float *d_b, float *h_mid, float *h_dst,
                           size_t n)
{
    const size_t bytes = n * sizeof(float);
    cudaError_t err = cudaMemcpy((void *)h_src, d_a, bytes, cudaMemcpyHostToDevice);
    if (err == cudaSuccess)
        err = cudaMemcpy(d_b, d_a, bytes, cudaMemcpyDeviceToDevice);
    if (err == cudaSuccess)
        err = cudaMemcpy(h_mid, d_b, bytes, cudaMemcpyDeviceToHost);
    if (err == cudaSuccess)
        err = cudaMemcpy(h_dst, h_mid, bytes, cudaMemcpyHostToHost);
    return err;
}
