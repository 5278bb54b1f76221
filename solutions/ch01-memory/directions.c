/* directions.c - copy n floats host to device, device to device, device to host, host to host. */
#include "directions.h"

cudaError_t copy_four_ways(const float *h_src, float *d_a, float *d_b, float *h_mid, float *h_dst,
                           size_t n)
{
    const size_t bytes = n * sizeof(float); /* cudaMemcpy counts bytes, not elements */

    cudaError_t err = cudaMemcpy(d_a, h_src, bytes, cudaMemcpyHostToDevice);
    if (err == cudaSuccess)
        err = cudaMemcpy(d_b, d_a, bytes, cudaMemcpyDeviceToDevice);
    if (err == cudaSuccess)
        err = cudaMemcpy(h_mid, d_b, bytes, cudaMemcpyDeviceToHost);
    if (err == cudaSuccess)
        err = cudaMemcpy(h_dst, h_mid, bytes, cudaMemcpyHostToHost);
    return err;
}
